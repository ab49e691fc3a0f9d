"""Paragraph roles through the product: stored and filtered (SQLite and PostgreSQL), batch roles at ingest, the
audit maps statements and definitions only (and counts the rest), sources relative to the audited folder,
``documents show`` by path and by role, and the labelled role set that the shipped model was trained on."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from compliance.app import audit_documents, document_detail, find_document, ingest_documents
from compliance.cli import cli
from compliance.connectors import parse_bytes, parse_path
from compliance.connectors.document import PARAGRAPH_ROLES
from compliance.errors import NotFoundError

REPO = Path(__file__).resolve().parent.parent

POLICY = """---
title: Encryption Policy
---

| Field | Value |
|---|---|
| Document owner | Head of IT Security (CISO) |
| Version | 2025.1 |
| Next review date | February 2026 |

## Controls

All laptops use full-disk encryption and lock automatically after five minutes.

Personal data sent over public networks is encrypted with TLS 1.2 or higher.

Details of the key management configuration are documented at https://wiki.example/keys.

## Approval

Approved by: ____________________ Date: ____________
"""


def _policy_folder(root: Path) -> Path:
    folder = root / "policies"
    folder.mkdir()
    (folder / "encryption.md").write_text(POLICY, encoding="utf-8")
    return folder


def test_roles_are_stored_and_filtered(store: Any) -> None:
    doc = parse_bytes(POLICY.encode(), "encryption.md")
    saved = store.save_document(doc)
    stored = list(store.iter_paragraphs(document_ids=[saved.document_id]))
    assert [p.role for p in stored] == [p.role for p in doc.paragraphs]
    assert all(p.role in PARAGRAPH_ROLES for p in stored)
    statements = list(store.iter_paragraphs(roles={"statement"}))
    assert len(statements) == 2 and all(p.role == "statement" for p in statements)
    assert {p.role for p in store.iter_paragraphs(roles={"metadata", "form"})} == {"metadata", "form"}
    assert list(store.iter_paragraphs(roles=set())) == []
    assert list(store.iter_paragraphs(roles={None})) == []  # nothing stored without a role


def test_ingest_decides_roles_over_the_batch(store: Any, tmp_path: Path) -> None:
    folder = tmp_path / "batch"
    folder.mkdir()
    banner = "Acme Corp | Policy library | Internal"
    for topic in ("Logging", "Backup"):
        (folder / f"{topic.lower()}.md").write_text(
            f"{banner}\n\n# {topic}\n\nSystem owners review the {topic.lower()} settings every quarter and "
            "record the result in the register.\n",
            encoding="utf-8",
        )
    report = ingest_documents(store, [folder])
    assert [d.source for d in report.documents] == ["backup.md", "logging.md"]  # relative to the folder
    banners = [p for p in store.iter_paragraphs() if p.text == banner]
    assert len(banners) == 2 and {p.role for p in banners} == {"furniture"}


def test_a_batch_decides_each_documents_roles_once(
    store: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ingest (and the audit, through the same loop) decides roles over the window of documents; the parser
    does not decide them per document first (issue 12: that was more than half of a Markdown file's parse)."""
    from compliance.connectors import SplitConfig, roles

    monkeypatch.setenv("COMPLIANCE_PARSE_ISOLATION", "inline")  # the parse runs here, where the spy is
    from compliance.settings import reset_settings

    reset_settings()
    decided: list[str] = []
    real = roles.assign_roles

    def spy(docs: Any, **kwargs: Any) -> Any:
        decided.extend(d.source for d in docs)
        return real(docs, **kwargs)

    monkeypatch.setattr(roles, "assign_roles", spy)
    folder = _policy_folder(tmp_path)
    (folder / "second.md").write_text(POLICY.replace("Encryption", "Second"), encoding="utf-8")
    report = ingest_documents(store, [folder])
    assert sorted(decided) == ["encryption.md", "second.md"]  # once each, in one window
    assert report.run_number == 1 and len(report.documents) == 2
    stored = list(store.iter_paragraphs())
    assert stored and all(p.role in PARAGRAPH_ROLES for p in stored)
    # a document parsed on its own still gets its roles; with assign_roles off it gets none
    decided.clear()
    alone = parse_bytes(POLICY.encode(), "encryption.md")
    assert decided == ["encryption.md"] and all(p.role for p in alone.paragraphs)
    bare = parse_bytes(POLICY.encode(), "encryption.md", config=SplitConfig(assign_roles=False))
    assert all(p.role is None for p in bare.paragraphs)


@pytest.fixture(scope="module")
def model_dir() -> Path:
    pytest.importorskip("torch")
    from tests.fixtures.classifier.tiny import shared_tiny_classifier

    return shared_tiny_classifier()


def test_audit_maps_statements_only_and_counts_the_rest(store: Any, model_dir: Path, tmp_path: Path) -> None:
    from compliance.linking.classifier_links import ClassifierLinkConfig
    from compliance.models.classifier import load
    from tests.fixtures.classifier.tiny import mini_gdpr

    store.save_law(mini_gdpr())
    folder = _policy_folder(tmp_path)
    clf = load(model_dir, device="cpu", bf16=False)
    config = ClassifierLinkConfig(top_k=2, review_band=(0.0, 0.5))
    report = audit_documents(store, [folder], clf, config=config)
    summary = report.documents[0]
    assert summary.source == "encryption.md"  # relative to the audited folder
    assert summary.classified == 2
    assert summary.skipped == {"form": 1, "metadata": 3, "reference": 1}
    linked = {link.paragraph_id for link in store.list_links(run_id=report.run_id)}
    roles = {p.id: p.role for p in store.iter_paragraphs()}
    assert linked and {roles[i] for i in linked} == {"statement"}  # no link on a non-statement paragraph
    run = store.get_run(report.run_id)
    assert run.stats["skipped_by_role"] == summary.skipped and run.config["roles"] == [
        "definition",
        "statement",
    ]
    for article in summary.top_articles:
        assert article["mean_score"] == pytest.approx(article["weight"] / article["paragraphs"], abs=1e-3)

    # --all-roles: every paragraph of a new version is mapped
    (folder / "encryption.md").write_text(POLICY + "\nBackups are encrypted as well.\n", encoding="utf-8")
    everything = audit_documents(store, [folder], clf, config=config, roles=None)
    assert everything.documents[0].skipped == {}
    assert everything.documents[0].classified >= 6  # all but those too short to classify (min_words)


def test_audit_cli_summary_and_documents_show_by_path(model_dir: Path, tmp_path: Path) -> None:
    from compliance.store import Store
    from tests.fixtures.classifier.tiny import mini_gdpr

    db = f"sqlite:///{tmp_path / 'audit.db'}"
    s = Store(db)
    s.upgrade()
    s.save_law(mini_gdpr())
    s.dispose()
    folder = _policy_folder(tmp_path)
    runner = CliRunner()
    res = runner.invoke(cli, ["audit", str(folder), "--model", str(model_dir), "--database", db])
    assert res.exit_code == 0, res.output
    assert "not mapped, by paragraph role: 1 form, 3 metadata, 1 reference" in res.stdout
    assert "mean score" in res.stdout and "weight" not in res.stdout
    # the path the officer has at hand finds the document stored as "encryption.md"
    for ref in (str(folder / "encryption.md"), "encryption.md"):
        shown = runner.invoke(cli, ["documents", "show", ref, "--database", db, "--json"])
        assert shown.exit_code == 0, shown.output
        data = json.loads(shown.stdout)
        assert data["source"] == "encryption.md"
        assert data["roles"] == {"statement": 2, "metadata": 3, "form": 1, "reference": 1}
        assert all(p["role"] for p in data["paragraphs"])
    only = runner.invoke(cli, ["documents", "show", "1", "--role", "statement", "--database", db, "--json"])
    assert [p["role"] for p in json.loads(only.stdout)["paragraphs"]] == ["statement", "statement"]
    text = runner.invoke(cli, ["documents", "show", "1", "--role", "metadata", "--database", db])
    assert "roles:" in text.stdout and "] metadata" in text.stdout and "statement\n" not in text.stdout
    bad = runner.invoke(cli, ["documents", "show", "1", "--role", "boilerplate", "--database", db])
    assert bad.exit_code == 2


def test_find_document_by_path(store: Any, tmp_path: Path) -> None:
    for name in ("a/policy.md", "b/policy.md", "b/other.md"):
        path = tmp_path / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"# {name}\n\nStaff must report incidents to the security team within one hour.\n")
    ingest_documents(store, [tmp_path / "a"], relative_to=tmp_path)
    ingest_documents(store, [tmp_path / "b"], relative_to=tmp_path)
    assert find_document(store, str(tmp_path / "b" / "other.md")).source == "b/other.md"
    assert find_document(store, "other.md").source == "b/other.md"
    assert find_document(store, "a/policy.md").source == "a/policy.md"
    with pytest.raises(NotFoundError, match="several"):
        find_document(store, "policy.md")
    with pytest.raises(NotFoundError, match="no stored document"):
        find_document(store, "missing.md")
    assert document_detail(store, "a/policy.md", roles={"statement"})["paragraphs"][0]["role"] == "statement"
    # the links and the review page name a document the same way as `documents show` does
    from compliance.app.links import LinkQuery, list_links
    from compliance.app.review import document_links

    assert list_links(store, LinkQuery(document="other.md")) == []
    assert document_links(store, "other.md")["source"] == "b/other.md"
    with pytest.raises(NotFoundError, match="several"):
        list_links(store, LinkQuery(document="policy.md"))


def test_lettered_statements_read_alike_from_word_and_pdf(tmp_path: Path) -> None:
    import docx

    from tests.fixtures.connectors import layout

    d = docx.Document()
    d.add_heading("2. Supplier duties", level=1)
    for letter, text in zip(
        "abc",
        (
            "encrypt company data at rest and in transit",
            "report every security incident within 24 hours",
            "delete company data when the contract ends",
        ),
        strict=True,
    ):
        d.add_paragraph(f"({letter}) The supplier shall {text}.")
    d.save(str(tmp_path / "duties.docx"))
    word = [p.text for p in parse_path(tmp_path / "duties.docx").paragraphs]
    pdf = parse_path(layout.symbol_bullets_pdf(tmp_path / "symbol.pdf"))
    assert word == [p.text for p in pdf.paragraphs if p.text.startswith("(")]


# -- the labelled role set ------------------------------------------------------------------------------------------
def _builder() -> Any:
    spec = importlib.util.spec_from_file_location(
        "build_role_set", REPO / "tools" / "roles" / "build_role_set.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["build_role_set"] = module
    spec.loader.exec_module(module)
    return module


def test_the_labelled_role_set_builds_and_aligns_completely(tmp_path: Path) -> None:
    """Every paragraph the connectors make of every labelled document (and of the sample policies) finds its
    label, each split holds whole documents, every role has examples, and the build is deterministic."""
    from compliance.models.roles import align_roles, load_role_set

    builder = _builder()
    src = tmp_path / "src"
    shutil.copytree(REPO / "tools" / "roles" / "src", src)
    labels = builder.build_all(tmp_path / "out", src)
    assert {line["split"] for line in labels} == {"train", "test", "demo"}
    formats = {Path(line["file"]).suffix for line in labels}
    assert formats >= {".docx", ".pdf", ".md", ".txt"}
    role_set = load_role_set(tmp_path / "out")
    seen: set[str] = set()
    for labelled in role_set:
        doc = parse_path(labelled.path)
        gold = align_roles(doc, labelled.pieces)
        assert None not in gold, (
            labelled.path.name,
            [p.text for p, g in zip(doc.paragraphs, gold, strict=True) if g is None],
        )
        seen.update(g for g in gold if g is not None)
    assert seen == set(PARAGRAPH_ROLES)
    again = builder.build_all(tmp_path / "again", src)
    assert [line["file"].replace("again", "out") for line in again] == [line["file"] for line in labels]
    for line in labels:
        if line["split"] != "demo":
            name = Path(line["file"]).name
            assert (tmp_path / "out" / "docs" / name).read_bytes() == (
                tmp_path / "again" / "docs" / name
            ).read_bytes()


@pytest.mark.skipif(
    not Path("/usr/bin/chromium").is_file(),
    reason="Debian Chromium is missing (apt-get install -y chromium chromium-driver; .ci/run installs it)",
)
def test_the_role_set_printed_by_a_browser_reads_its_tables_row_by_row(tmp_path: Path) -> None:
    """``build_role_set.py --printed-by-browser``: a source rendered as its web page and printed to PDF by the
    system Chromium; its label/value block and its tables come out one row per paragraph, and every paragraph but
    the cookie banner's buttons (unlabelled) finds its label."""
    from compliance.models.roles import align_roles, load_role_set

    builder = _builder()
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(REPO / "tools" / "roles" / "src" / "data-classification-standard.md", src)
    labels = builder.build_printed(tmp_path / "out", src, browser="/usr/bin/chromium")
    assert [Path(line["file"]).name for line in labels] == ["data-classification-standard.pdf"]
    (labelled,) = load_role_set(tmp_path / "out")
    doc = parse_path(labelled.path)
    rows = [p.text for p in doc.paragraphs if p.kind == "table-row"]
    assert "Standard number: STD-004" in rows
    assert "Level: Public; Meaning: Information approved for release to anyone.; Examples: Published papers, " \
        "marketing material, job adverts" in rows  # fmt: skip
    assert any(
        r.startswith("Activity: Printing; Internal: Allowed; Confidential: Collect at once") for r in rows
    )
    gold = align_roles(doc, labelled.pieces)
    assert [p.text for p, g in zip(doc.paragraphs, gold, strict=True) if g is None] == ["Accept all: Choose"]


@pytest.mark.skipif(
    shutil.which("soffice") is None,
    reason="LibreOffice is missing (apt-get install -y libreoffice-writer-nogui; .ci/run installs it)",
)
def test_the_role_set_saved_as_pdf_by_a_word_processor_reads_as_its_word_documents(tmp_path: Path) -> None:
    """``build_role_set.py --printed-by-word-processor``: sources written as Word documents and saved as PDF by
    LibreOffice read as the Word documents do, but for the page header and footer the PDF carries as furniture —
    the one-line paragraphs of a short note too, set apart by space after each rather than by blank lines — and
    every paragraph finds its label and the role it was given."""
    from compliance.models.roles import align_roles, load_role_set

    builder = _builder()
    src = tmp_path / "src"
    src.mkdir()
    names = ["data-classification-standard", "password-quick-reference", "retention-rules"]
    for name in names:
        shutil.copy(REPO / "tools" / "roles" / "src" / f"{name}.md", src)
    labels = builder.build_word_printed(tmp_path / "out", src, office=shutil.which("soffice") or "soffice")
    assert [Path(line["file"]).name for line in labels] == [f"{name}.pdf" for name in names]
    for labelled in load_role_set(tmp_path / "out"):
        source = builder.parse_source(src / f"{labelled.path.stem}.md")
        word = parse_bytes(builder.build_docx(source), f"{labelled.path.stem}.docx")
        pdf = parse_path(labelled.path)
        assert [p.text for p in pdf.paragraphs if p.role != "furniture"] == [
            p.text for p in word.paragraphs if p.role != "furniture"
        ]
        gold = align_roles(pdf, labelled.pieces)
        assert None not in gold
        assert [p.role for p in pdf.paragraphs] == gold
