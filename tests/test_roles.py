"""Paragraph roles: the certain rules, the shipped model on boilerplate nobody trained it on, the fitting code
(against scikit-learn), alignment of labels, the model artifact, training and evaluating from the CLI."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from compliance.cli import cli
from compliance.connectors import SplitConfig, parse_bytes
from compliance.connectors.assemble import Block, assemble
from compliance.connectors.document import PARAGRAPH_ROLES, ParsedDocument
from compliance.connectors.roles import (
    FEATURE_NAMES,
    MAPPED_ROLES,
    RoleContext,
    RoleModel,
    assign_roles,
    certain_role,
    default_role_model,
    document_features,
    is_lead_in,
    layout_roles,
    packaged_role_model_dir,
    role_counts,
)
from compliance.errors import ConfigurationError, ModelError
from compliance.models.roles import (
    RoleTrainingConfig,
    align_roles,
    evaluate_roles,
    fit_logistic,
    load_role_set,
    role_metrics,
    train_role_model,
)


def _doc(blocks: list[Block], source: str = "mem.docx") -> ParsedDocument:
    return assemble(
        blocks,
        data=source.encode(),
        source=source,
        media_type="application/octet-stream",
        config=SplitConfig(),
    )


def _roles(doc: ParsedDocument) -> dict[str, str | None]:
    return {p.text: p.role for p in doc.paragraphs}


# -- rules --------------------------------------------------------------------------------------------------------
def test_every_parsed_paragraph_gets_a_role() -> None:
    doc = parse_bytes(
        b"# Policy\n\nAccess rights are reviewed every quarter by the owner.\n\nPage 3 of 9\n", "p.md"
    )
    assert all(p.role in PARAGRAPH_ROLES for p in doc.paragraphs)
    assert _roles(doc)["Page 3 of 9"] == "furniture"  # a bare page number: a certain rule
    assert doc.metadata["role_model"] == "structure"


def test_headings_and_layout_roles_are_certain() -> None:
    doc = assemble(
        [
            Block("heading", "2. Workstations", level=1),
            Block("paragraph", "Staff lock their screens when they leave their desks.", role="furniture"),
            Block("paragraph", "Staff must lock their screens whenever they leave their desks."),
        ],
        data=b"x",
        source="m.txt",
        media_type="text/plain",
        config=SplitConfig(include_headings=True),
    )
    assert [p.role for p in doc.paragraphs][:2] == ["heading", "furniture"]
    assert layout_roles(doc) == {1: "furniture"}
    # a second pass (over a batch) keeps the layout role but decides the others again
    again = assign_roles([doc])[0]
    assert again.paragraphs[1].role == "furniture" and again.paragraphs[2].role == "statement"


def test_a_line_repeated_across_a_batch_is_furniture() -> None:
    banner = "Acme Corp | Policy library | Internal"
    docs = [
        parse_bytes(
            f"{banner}\n\n# {topic}\n\nSystem owners review the {topic.lower()} settings every quarter and record "
            "the result in the register.\n".encode(),
            f"{topic}.md",
        )
        for topic in ("Logging", "Backup", "Encryption")
    ]
    batch = assign_roles(docs)
    assert [d.paragraphs[0].role for d in batch] == ["furniture"] * 3
    assert all(d.paragraphs[1].role == "statement" for d in batch)
    # alone, the same line is not known to repeat
    assert RoleContext.from_documents(docs[:1]).documents_with(banner) == 1
    assert RoleContext.from_documents(docs).documents_with(banner.upper()) == 3


# -- the shipped model on the boilerplate of issue 13 -------------------------------------------------------------
BOILERPLATE_DOC = [
    Block("heading", "Information Security Policy", level=0),
    Block("table-row", "Document owner: Head of IT Security (CISO)"),
    Block("table-row", "Version: 2025.1"),
    Block("table-row", "Approved by: Executive Board, 3 February 2025"),
    Block("table-row", "Next review date: February 2026"),
    Block("heading", "1. Purpose", level=1),
    Block(
        "paragraph",
        "This policy describes how the organisation protects the information it holds and the systems it uses.",
    ),
    Block("heading", "2. Controls", level=1),
    Block("paragraph", "Access rights to production systems are reviewed every quarter by the system owner."),
    Block("paragraph", "All laptops use full-disk encryption and lock automatically after five minutes."),
    Block("paragraph", "Details of the logging configuration is documented at https://wiki.example/logging."),
    Block("heading", "3. Definitions", level=1),
    Block(
        "paragraph",
        '"Personal data" means any information relating to an identified or identifiable natural person.',
    ),
    Block("heading", "4. Signatures", level=1),
    Block("paragraph", "SUPPLIER: ________________ By: ________________ Name: ________________"),
]


def test_the_shipped_model_recognises_boilerplate_it_never_saw() -> None:
    roles = _roles(_doc(BOILERPLATE_DOC))
    assert roles["Document owner: Head of IT Security (CISO)"] == "metadata"
    assert roles["Version: 2025.1"] == "metadata"
    assert roles["Next review date: February 2026"] == "metadata"
    assert (
        roles["Access rights to production systems are reviewed every quarter by the system owner."]
        == "statement"
    )
    assert (
        roles["All laptops use full-disk encryption and lock automatically after five minutes."]
        == "statement"
    )
    assert roles[BOILERPLATE_DOC[10].text] == "reference"
    assert roles[BOILERPLATE_DOC[12].text] == "definition"
    assert roles[BOILERPLATE_DOC[14].text] == "form"
    assert roles[BOILERPLATE_DOC[6].text] == "description"
    mapped = [t for t, r in roles.items() if r in MAPPED_ROLES]
    assert len(mapped) == 3


HISTORY_DOC = b"""# Visitor Access Standard

## Requirements

Visitors sign in at reception and are escorted at all times in secure areas.

Visitor badges are returned and deactivated when the visitor leaves.

## Glossary

Emergency change: a change that has to be made at once to restore a service.

## Change log

- 2025-09-02: escorting made mandatory in the server room as well.
- 2024-04-11: first published.

## Document history

| Issue | Date of change | Amended by | Summary of changes |
| --- | --- | --- | --- |
| 2 | September 2025 | Facilities Security | Visitors to the server room are now escorted by IT staff. |
| 1 | April 2024 | Facilities Security | First issue approved by the security committee. |
"""


def test_a_revision_history_and_a_change_log_are_metadata() -> None:
    """The rows of a revision history whose "summary of changes" column reads like a control, and the dated entries
    of a change log, were read as statements and mapped (an open policy template's "Responsible: Policy Team;
    Summary of Change: Updated and converted to new format." got Art. 24 at 0.59); they are document metadata.
    The controls stay statements and a glossary's "Emergency change: …" stays a definition."""
    doc = parse_bytes(HISTORY_DOC, "visitor-access.md")
    roles = {p.text.split(";")[0].split("\n")[0]: p.role for p in doc.paragraphs}
    assert (
        roles["Visitors sign in at reception and are escorted at all times in secure areas."] == "statement"
    )
    assert roles["Visitor badges are returned and deactivated when the visitor leaves."] == "statement"
    assert (
        roles["Emergency change: a change that has to be made at once to restore a service."] == "definition"
    )
    assert roles["- 2025-09-02: escorting made mandatory in the server room as well."] == "metadata"
    assert roles["Issue: 2"] == "metadata"
    assert roles["Issue: 1"] == "metadata"
    keys = np.asarray(document_features(doc))[:, FEATURE_NAMES.index("metadata_keys")]
    assert [round(k, 2) for k, p in zip(keys, doc.paragraphs, strict=True) if p.text.startswith("Issue")] == [
        1.0,
        1.0,
    ]


def test_a_row_of_a_version_table_is_metadata_by_structure() -> None:
    """A held-out procedure's "Version: 1.2; Date: 2025-01-20; Changed by: Platform Team; Description of change:
    Critical patches now deployed within 7 days" was read as a statement and mapped to Art. 5, 32 and 33. A row
    whose columns all name document metadata, one of them a version and one a date, is an entry of the document's
    history, certain without the model; a register with a version column beside its own columns is not."""
    doc = parse_bytes(
        b"""# Patching Procedure

## Revision history

| Version | Date | Changed by | Description of change |
| --- | --- | --- | --- |
| 3.0 | 2026-02-01 | Infrastructure | Servers are patched within 48 hours of a critical advisory. |

## Approved software

| Software | Version | Date approved | Owner |
| --- | --- | --- | --- |
| Web browser | 121 | 2026-01-10 | Workplace team |
""",
        "patching.md",
    )
    rows = [p for p in doc.paragraphs if p.kind == "table-row"]
    assert [p.text.split(";")[0] for p in rows] == ["Version: 3.0", "Software: Web browser"]
    context = RoleContext.from_documents([doc])
    assert certain_role(doc, rows[0], context) == "metadata"
    assert certain_role(doc, rows[1], context) is None  # the model decides
    assert rows[0].role == "metadata"


def test_a_recovery_time_objective_is_not_a_purpose() -> None:
    """ "7.1 Each critical process has a business continuity plan … a recovery time objective of eight hours and a
    recovery point objective of one hour." was read as a description: "objective" counted as a purpose cue. A
    recovery time or point objective is a target; the purpose of a document still is one."""
    cue = FEATURE_NAMES.index("cue_purpose")
    doc = parse_bytes(
        b"""# Continuity Standard

## 1. Objective

The objective of this standard is to keep critical services running through a disruption.

## 2. Recovery

2.1 The payroll system has a recovery time objective of four hours and a recovery point objective of fifteen minutes.
""",
        "continuity.md",
    )
    features = np.asarray(document_features(doc))[:, cue]
    roles = _roles(doc)
    purpose = next(i for i, p in enumerate(doc.paragraphs) if p.text.startswith("The objective"))
    target = next(i for i, p in enumerate(doc.paragraphs) if p.text.startswith("2.1"))
    assert features[purpose] > 0 and features[target] == 0
    assert roles[doc.paragraphs[target].text] == "statement"


def test_a_quick_reference_is_no_section_of_references() -> None:
    """A one-page "Password Quick Reference" printed from its web page keeps its title as a heading, and the
    section cue for references read "Reference" in it: its rules became references, not mapped. A section of
    references ("References", "Normative references", "Reference documents", "Related policies") still is one."""
    doc = parse_bytes(
        b"""# Acme Corp

## Password and Passphrase Quick Reference

Use a passphrase of at least four random words or fifteen characters for your Acme account.

Never use your Acme password on any other website or service, and never write it down unencrypted.

Store all work passwords in the company password manager; browser password storage is disabled on managed devices.
""",
        "quick-reference.md",
    )
    cue = FEATURE_NAMES.index("sec_references")
    assert not np.asarray(document_features(doc))[:, cue].any()
    assert {p.role for p in doc.paragraphs} == {"statement"}
    for heading in ("References", "3 Normative references", "Reference documents", "Related policies"):
        listed = parse_bytes(f"# Policy\n\n## {heading}\n\nISO/IEC 27001:2022\n".encode(), "refs.md")
        assert np.asarray(document_features(listed))[0, cue] > 0


POINTER_DOC = b"""# Physical Security Standard

## Camera surveillance

3.1 Cameras cover every entrance and the server room and record continuously.

3.2 Recordings are kept for 28 days and then overwritten automatically.

3.3 The rules for viewing and disclosing recordings are in the Camera Footage Procedure (PS-PRO-07).

3.4 The agreed camera positions are in the Site Security Register.
"""


def test_a_sentence_that_says_where_the_rules_are_kept_is_a_reference() -> None:
    """ "The rules … are in the CCTV Procedure" and "… is in the GRC portal" were read as statements and mapped
    (the held-out role set's two reference errors); saying where a named document or system holds something is a
    pointer. The controls beside them stay statements, and "are in the" before a lower-case word is no cue."""
    doc = parse_bytes(POINTER_DOC, "physical-security.md")
    roles = {p.text: p.role for p in doc.paragraphs}
    assert roles[next(t for t in roles if t.startswith("3.1"))] == "statement"
    assert roles[next(t for t in roles if t.startswith("3.2"))] == "statement"
    assert roles[next(t for t in roles if t.startswith("3.3"))] == "reference"
    assert roles[next(t for t in roles if t.startswith("3.4"))] == "reference"
    cue = np.asarray(document_features(doc))[:, FEATURE_NAMES.index("cue_reference")]
    assert [c > 0 for c in cue[-4:]] == [False, False, True, True]
    staff = parse_bytes(b"Laptops are in the custody of their users at all times.", "one.md")
    assert np.asarray(document_features(staff))[0, FEATURE_NAMES.index("cue_reference")] == 0


SELF_DESCRIPTION_DOC = b"""# Records Retention Standard

## 2. Retention periods

2.1 The table below gives the retention period of each type of record. Where it conflicts with a contract, the contract prevails.

2.2 Records are kept for the period given in the table below and then destroyed within one month.

| Record | Retention |
| --- | --- |
| Payroll records | 7 years after the tax year |
| Job applications | 6 months after the decision |

## 3. Exceptions

This section explains how a department asks to keep records for longer.

3.1 Requests to keep records beyond their period are approved by the Records Manager and logged in the exceptions register.
"""


def test_a_sentence_about_the_document_itself_is_a_description() -> None:
    """ "3.5.1 The table below summarises the rules for each marketing channel" was read as a statement and mapped
    (the last linked description of the sample policies): a sentence whose subject is a part of the document (a
    table, a section) says what the document holds. A control that points to the same table stays a statement."""
    doc = parse_bytes(SELF_DESCRIPTION_DOC, "retention.md")
    roles = _roles(doc)
    by_start = {t.split(" ", 1)[0] if t[0].isdigit() else t[:12]: r for t, r in roles.items()}
    assert by_start["2.1"] == "description"
    assert by_start["2.2"] == "statement"
    assert by_start["This section"] == "description"
    assert by_start["3.1"] == "statement"
    cue = np.asarray(document_features(doc))[:, FEATURE_NAMES.index("cue_self_description")]
    starts = [p.text[:12] for p in doc.paragraphs]
    assert {s: c > 0 for s, c in zip(starts, cue, strict=True)} == {
        s: s.startswith(("2.1 ", "This section")) for s in starts
    }


LEAD_IN_DOC = [
    Block("heading", "Data Processing Addendum", level=0),
    Block("heading", "A. Processor obligations", level=1),
    Block(
        "paragraph",
        "The parties agree that, to the extent the Supplier processes personal data of the Company in performing "
        "the services, the Supplier is the processor and undertakes the following:",
    ),
    Block("paragraph", "(a) to process the personal data only on the Company's documented instructions;"),
    Block("paragraph", "(b) to keep the personal data confidential."),
    Block("heading", "Signatures", level=1),
    Block("paragraph", "Name and title of the signatory:"),
    Block("paragraph", "COMPANY: ________________ By: ________________"),
]


def test_a_lead_in_sentence_is_a_statement_not_a_form() -> None:
    """The shipped model reads the closing colon of a contract's lead-in as a form label (a real DPA's "Supplier
    undertakes the following as Processor:" was not mapped); a lead-in sentence is a statement, the signature
    block stays a form."""
    doc = _doc(LEAD_IN_DOC)
    lead_in = doc.paragraphs[0]
    features = np.asarray(document_features(doc, RoleContext.from_documents([doc])))
    model = default_role_model()
    assert model.roles[int(model.predict_proba(features)[0].argmax())] == "form"  # the model alone
    assert lead_in.role == "statement"
    assert doc.paragraphs[-1].role == "form"
    assert is_lead_in("Members of staff who handle customer records must ensure that:")
    assert not is_lead_in("Name and title of the signatory:")  # a label, not a sentence
    assert not is_lead_in("Describe the incident, including the date and the systems affected: ________")
    assert not is_lead_in(
        "Chief Operating Officer, deputy of the plan owner:\nHead of Engineering, second deputy:"
    )
    assert not is_lead_in("The following checks are completed for every supplier of [Company Name]:")


DUTY_ITEM = (
    "(b) to engage another processor only with the Company's prior consent, as set out in Section A(e) and "
    "Section A(j) of this Addendum."
)


@pytest.mark.parametrize(
    ("lead_in", "expected"),
    [
        (
            "The Supplier processes personal data for the Company and undertakes the following as processor:",
            "statement",
        ),
        (
            "This addendum was prepared by the legal team and is described in the following sections below:",
            "reference",
        ),
    ],
)
def test_an_item_of_a_list_of_duties_is_a_statement(lead_in: str, expected: str) -> None:
    """The cue words of a contract's own cross-references make the model read an undertaking as a reference; an
    item of a list whose lead-in states a duty ("undertakes") is a statement, one after a lead-in that states
    none keeps the model's role."""
    doc = _doc(
        [
            Block("heading", "Data Processing Addendum", level=0),
            Block("heading", "A. Processing", level=1),
            Block("paragraph", lead_in),
            Block(
                "paragraph", "(a) to process the personal data only on the Company's documented instructions;"
            ),
            Block("paragraph", DUTY_ITEM),
        ]
    )
    features = np.asarray(document_features(doc, RoleContext.from_documents([doc])))
    model = default_role_model()
    assert model.roles[int(model.predict_proba(features)[2].argmax())] == "reference"  # the model alone
    assert doc.paragraphs[2].text == DUTY_ITEM and doc.paragraphs[2].role == expected


def test_role_counts_and_the_model_artifact() -> None:
    doc = _doc(BOILERPLATE_DOC)
    counts = role_counts(doc.paragraphs)
    assert sum(counts.values()) == len(doc.paragraphs) and list(counts) == [
        r for r in PARAGRAPH_ROLES if r in counts
    ]
    model = default_role_model()
    assert model.roles == PARAGRAPH_ROLES and model.feature_names == FEATURE_NAMES
    assert (packaged_role_model_dir() / "MODEL_CARD.md").is_file()
    cfg = json.loads((packaged_role_model_dir() / "config.json").read_text())
    assert cfg["kind"] == "paragraph-roles" and cfg["provenance"]["role_set_sha256"]
    assert sum(f.stat().st_size for f in packaged_role_model_dir().iterdir()) < 64 * 1024  # shipped small


def test_form_rows_of_a_blank_table_are_form_by_layout() -> None:
    from compliance.connectors.assemble import table_blocks

    rows = [["Field", "Entry"], ["Name of the processing activity", ""], ["Owner", "DPO"]]
    assert [b.role for b in table_blocks(rows, header=True)] == ["form", None]
    assert [b.role for b in table_blocks(rows[1:], header=False)] == ["form", None]  # label/value pairs
    assert [b.role for b in table_blocks([["Owner", "CISO"], ["Version", "2"]])] == [None, None]


# -- fitting, alignment, metrics ----------------------------------------------------------------------------------
def test_fit_logistic_matches_scikit_learn() -> None:
    sklearn = pytest.importorskip("sklearn.linear_model")
    rng = np.random.default_rng(3)
    x = rng.normal(size=(300, 5))
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).astype(int) + (x[:, 2] > 1).astype(int)
    l2 = 0.01
    w, b = fit_logistic(x, y, 3, l2=l2, steps=3000, learning_rate=0.05)
    ours = np.exp(x @ w + b)
    ours /= ours.sum(axis=1, keepdims=True)
    # scikit-learn minimises C * sum(loss) + ||w||^2 / 2, ours mean(loss) + l2 * ||w||^2: C = 1 / (2 * l2 * n)
    ref = sklearn.LogisticRegression(C=1 / (2 * l2 * len(x)), max_iter=5000, tol=1e-10).fit(x, y)
    assert np.abs(ours - ref.predict_proba(x)).max() < 0.01


def test_align_roles_by_characters() -> None:
    doc = _doc(
        [
            Block("paragraph", "The following controls apply:"),
            Block("list-item", "backups run every night;", marker="-"),
            Block("list-item", "restores are tested every quarter.", marker="-"),
            Block("table-row", "Owner: IT Operations"),
            Block("paragraph", "Something nobody labelled at all."),
        ]
    )
    pieces = [
        ("description", "The following controls apply:"),
        ("statement", "backups run every night;"),
        ("statement", "restores are tested every quarter."),
        ("metadata", "Owner"),
        ("metadata", "IT Operations"),
    ]
    assert align_roles(doc, pieces) == [
        "statement",
        "metadata",
        None,
    ]  # the list: mostly statement characters


def test_role_metrics() -> None:
    m = role_metrics(
        ["statement", "statement", "form", "metadata"], ["statement", "form", "form", "statement"]
    )
    assert m["per_role"]["statement"] == {
        "precision": 0.5,
        "recall": 0.5,
        "f1": 0.5,
        "support": 2,
        "predicted": 2,
    }
    assert m["per_role"]["form"]["precision"] == 0.5 and m["per_role"]["form"]["recall"] == 1.0
    assert m["mapped"] == {"precision": 0.5, "recall": 0.5, "mapped_but_not_statement_or_definition": 1}
    assert m["accuracy"] == 0.5
    with pytest.raises(ValueError):
        role_metrics(["statement"], [])


# -- training and evaluating from a labelled set -------------------------------------------------------------------
TRAIN_DOCS = {
    "a.md": [
        ("metadata", "Owner", "Security team"),
        ("statement", "Passwords are at least fourteen characters long and are never reused."),
        ("statement", "Administrators use separate privileged accounts that are reviewed every month."),
        ("reference", "The full procedure is described in the Access Control Standard, section 4."),
        ("form", "Signed: ______________ Date: __________"),
    ],
    "b.md": [
        ("metadata", "Version", "3.1"),
        ("statement", "Backups are encrypted and copied to a second region every night."),
        ("definition", '"Backup" means a copy of data kept to restore it after loss.'),
        ("reference", "See the Backup Runbook on the wiki for the restore steps."),
        ("form", "Name: ______________ Signature: ______________"),
    ],
}


def _write_set(folder: Path) -> Path:
    lines = []
    for split, name in (("train", "a.md"), ("train", "b.md"), ("test", "a.md")):
        text: list[str] = ["# Policy", ""]
        pieces = []
        meta_rows = [(k, v) for role, k, *rest in TRAIN_DOCS[name] if role == "metadata" for v in rest]
        if meta_rows:
            text += ["| Field | Value |", "|---|---|", *(f"| {k} | {v} |" for k, v in meta_rows), ""]
            pieces += [{"role": "metadata", "text": t} for kv in meta_rows for t in kv]
        for role, body, *_ in TRAIN_DOCS[name]:
            if role != "metadata":
                text += [body, ""]
                pieces.append({"role": role, "text": body})
        path = folder / f"{split}-{name}"
        path.write_text("\n".join(text), encoding="utf-8")
        lines.append(json.dumps({"file": path.name, "split": split, "pieces": pieces}))
    (folder / "labels.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder / "labels.jsonl"


def test_train_save_load_and_evaluate(tmp_path: Path) -> None:
    labels = _write_set(tmp_path)
    role_set = load_role_set(tmp_path)
    assert [d.split for d in role_set] == ["train", "train", "test"] and role_set[0].path.is_file()
    model, summary = train_role_model(role_set, RoleTrainingConfig(steps=300))
    assert summary["documents"] == 2 and summary["unaligned"] == 0 and summary["per_role"]["form"] == 2
    path = model.save(tmp_path / "model", card="# test")
    loaded = RoleModel.load(path)
    x = np.asarray(document_features(_doc([Block("paragraph", "Signed: ___ Date: ___")])))
    assert np.allclose(loaded.predict_proba(x), model.predict_proba(x))
    result = evaluate_roles(role_set, model=loaded, splits=("test",))["test"]
    assert result["paragraphs"] == 5 and result["accuracy"] >= 0.8
    with pytest.raises(ConfigurationError, match="no documents"):
        evaluate_roles(role_set, model=loaded, splits=("demo",))
    # a model trained on other features is refused with a way out
    cfg = json.loads((path / "config.json").read_text())
    cfg["feature_names"] = cfg["feature_names"][:-1]
    (path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ModelError, match="compliance roles train"):
        RoleModel.load(path)
    assert labels.is_file()


def _bag_of_words(texts: Sequence[str]) -> np.ndarray:
    """A deterministic stand-in for a sentence encoder: hashed bag of words, L2-normalised (16 dims)."""
    out = np.zeros((len(texts), 16), dtype=np.float32)
    for i, text in enumerate(texts):
        for word in text.lower().split():
            out[i, sum(map(ord, word)) % 16] += 1.0
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.maximum(norms, 1e-6)


def test_the_embedding_head_is_used_when_embeddings_are_given(tmp_path: Path) -> None:
    _write_set(tmp_path)
    role_set = load_role_set(tmp_path / "labels.jsonl")
    with pytest.raises(ConfigurationError, match="embedder"):
        train_role_model(role_set, RoleTrainingConfig(embedding=True))
    model, _ = train_role_model(role_set, RoleTrainingConfig(embedding=True, steps=200), embed=_bag_of_words)
    assert model.has_embedding_head and model.encoder == "all-MiniLM-L6-v2"
    loaded = RoleModel.load(model.save(tmp_path / "m"))
    doc = _doc([Block("paragraph", "Backups are encrypted every night.")])
    x = np.asarray(document_features(doc))
    with_embedding = loaded.predict_proba(x, _bag_of_words([doc.paragraphs[0].text]))
    assert with_embedding.shape == (1, len(PARAGRAPH_ROLES))
    assert not np.allclose(with_embedding, loaded.predict_proba(x))
    assert assign_roles([doc], model=loaded, embed=_bag_of_words)[0].metadata["role_model"] == "embedding"


def test_roles_cli_train_and_evaluate(tmp_path: Path) -> None:
    labels = _write_set(tmp_path)
    out = tmp_path / "roles-model"
    runner = CliRunner()
    trained = runner.invoke(cli, ["roles", "train", str(labels), "--out", str(out), "--json"])
    assert trained.exit_code == 0, trained.output
    data = json.loads(trained.stdout)
    assert data["path"] == str(out) and "structure" in data["evaluation"]
    assert (out / "MODEL_CARD.md").read_text().startswith("# Paragraph role model")
    shown = runner.invoke(cli, ["roles", "evaluate", str(tmp_path), "--model", str(out), "--errors"])
    assert shown.exit_code == 0, shown.output
    assert "structure head, test" in shown.stdout and "precision" in shown.stdout
    missing = runner.invoke(cli, ["roles", "evaluate", str(tmp_path), "--model", str(out), "--split", "demo"])
    assert missing.exit_code == 1 and "C101" in missing.stderr


def test_the_trained_model_is_used_from_the_model_directory(tmp_path: Path) -> None:
    from compliance.connectors.roles import user_role_model_dir

    labels = _write_set(tmp_path)
    assert default_role_model().meta["training_set"]["documents"] > 2  # the shipped one
    result = CliRunner().invoke(cli, ["roles", "train", str(labels)])
    assert result.exit_code == 0, result.output
    assert (user_role_model_dir() / "config.json").is_file()
    assert default_role_model().meta["training_set"]["documents"] == 2


def test_the_features_are_the_same_when_an_ascii_paragraph_is_matched_lowercased(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The case-insensitive feature patterns run on an ASCII paragraph's lowercased text without the flag (faster):
    every feature of every paragraph of the sample policies, and of texts in capitals, mixed case and beyond ASCII,
    is what the patterns give with the flag on the text as written."""
    import compliance.connectors.roles as roles
    from compliance.connectors import parse_path

    examples = Path(__file__).resolve().parents[1] / "examples"
    docs = [parse_path(p) for p in sorted(examples.iterdir()) if p.is_file()]
    docs.append(
        _doc(
            [
                Block(
                    "paragraph",
                    "THE SUPPLIER SHALL NOTIFY US WITHIN 24 HOURS; SEE SECTION 4 OF THE POLICY AND ANNEX B.",
                ),
                Block("paragraph", "Name: ____  Date: dd/MM/YYYY  Signature: "),
                Block("paragraph", "We Review Access Every Quarter, For Example At Least Once In 2025."),
                Block(
                    "paragraph",
                    "Die Lieferantin muss Vorfälle binnen 24 Stunden melden. Weekly ſhall reviews.",
                ),
                Block("paragraph", "Is this document Confidential? It Is Intended For Internal Use Only."),
            ]
        )
    )
    context = RoleContext.from_documents(docs)
    fast = [roles.paragraph_features(d, p, context) for d in docs for p in d.paragraphs]
    assert roles._LOWERED and "cue_period" in roles._LOWERED and "cue_reference" not in roles._LOWERED
    monkeypatch.setattr(roles, "_LOWERED", {})
    plain = [roles.paragraph_features(d, p, context) for d in docs for p in d.paragraphs]
    assert len(fast) > 250 and fast == plain
