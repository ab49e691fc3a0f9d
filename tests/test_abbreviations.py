"""Abbreviations a policy uses, read with the words they stand for (compliance.abbreviations): the classifier
reads "A DPIA is completed …" as "A DPIA (data protection impact assessment) is completed …", and the audit reads
every paragraph of a document with the abbreviations that document defines ("Data Processing Agreement (DPA)")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from compliance.abbreviations import ABBREVIATIONS, defined_abbreviations, write_out, written_out
from compliance.models.restate import GLOSSARY
from tests.fixtures.classifier.tiny import (
    assert_stored_vectors_are_the_texts_own,
    index_encoder,
    mini_gdpr,
    shared_tiny_classifier,
)


def test_the_first_use_of_a_known_abbreviation_is_written_out() -> None:
    assert written_out("A DPIA is completed for high-risk processing; the DPIA is kept with the RoPA.") == (
        "A DPIA (data protection impact assessment) is completed for high-risk processing; the DPIA is kept with "
        "the RoPA (records of processing activities).",
        {"DPIA": "data protection impact assessment", "RoPA": "records of processing activities"},
    )
    assert write_out("DSARs are answered within one month.") == (
        "DSARs (data subject access requests) are answered within one month."
    )


@pytest.mark.parametrize(
    "text",
    [
        "Our Data Protection Officer (DPO) reports to the board.",  # defined where it stands
        "The DPO (data protection officer) is named in the notice.",  # explained where it stands
        "The DPO reports to the board; the data protection officer is independent.",  # said in full
        "No abbreviation here: DPOx, XDPO, DPO-led, dpo.",  # not whole words, or not as written
        "Vendors sign a DPA and file a SAR.",  # ambiguous: never written out unless the document defines them
    ],
)
def test_a_text_that_explains_or_lacks_its_abbreviations_is_unchanged(text: str) -> None:
    assert written_out(text) == (text, {})


def test_every_abbreviation_the_training_text_teaches_is_written_out() -> None:
    """The restated training text writes the law's terms as the profession abbreviates them
    (compliance.models.restate); each such abbreviation is one the classifier writes out at inference."""
    taught = {n for _, names in GLOSSARY for n in names if " " not in n and sum(c.isupper() for c in n) >= 2}
    authorities = {"ICO"}  # a supervisory authority's name: a decision is about what it found, not about it
    assert taught - authorities <= set(ABBREVIATIONS)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Each Data Subject Access Request (DSAR) is logged.", {"DSAR": "data subject access request"}),
        ("DSAR (data subject access request) handling", {"DSAR": "data subject access request"}),
        ("DSAR: Data subject access request.", {"DSAR": "data subject access request"}),
        (
            "Term: DPA; Meaning: Data Processing Agreement with a supplier",
            {"DPA": "data processing agreement"},
        ),
        ("We use multi-factor authentication (MFA) for admins.", {"MFA": "multi-factor authentication"}),
        (
            "Subject Access Requests (SARs) are logged",
            {"SARs": "subject access requests", "SAR": "subject access request"},
        ),
        (
            "the Chief Information Security Officer (CISO) approves",
            {"CISO": "chief information security officer"},
        ),
        ("see Article 28 (DPA) for details", {}),  # the letters are not the words before it
        ("ISO 27001 (ISO) certification", {}),  # the short form inside its own long form
        ("Record category: Security and system logs (SIEM)", {}),  # letters inside words, not their initials
        (
            "Information Security Policy (ISP)",
            {"ISP": "information security policy", "ISPs": "information security policies"},
        ),
        ("the company (Northwind Ltd) is the controller", {}),
    ],
)
def test_the_abbreviations_a_document_defines(text: str, expected: dict[str, str]) -> None:
    found = defined_abbreviations([text])
    assert {k: v for k, v in found.items() if k in expected or not expected} == expected
    assert set(expected) <= set(found)


@pytest.fixture(scope="module")
def model_dir() -> Path:
    pytest.importorskip("torch")
    return shared_tiny_classifier()


def _copy(model_dir: Path, tmp_path: Path, abbreviations: bool) -> Path:
    """A copy of the tiny classifier that reads abbreviations written out, or as written."""
    import shutil

    copy = tmp_path / f"abbreviations-{abbreviations}"
    shutil.copytree(model_dir, copy)
    cfg = json.loads((copy / "config.json").read_text())
    cfg["inference"]["abbreviations"] = abbreviations
    (copy / "config.json").write_text(json.dumps(cfg))
    return copy


def test_a_classifier_that_reads_abbreviations_scores_the_text_written_out(
    model_dir: Path, tmp_path: Path
) -> None:
    """Its logits and lexical scores are the written-out text's; the vectors it gives an embedding space stay the
    text's as written (what the controls index embeds)."""
    from compliance.models.classifier import load

    plain = load(_copy(model_dir, tmp_path, False), device="cpu", bf16=False)
    reads = load(_copy(model_dir, tmp_path, True), device="cpu", bf16=False)
    assert not plain.config.abbreviations and reads.config.abbreviations
    texts = ["A DPIA is carried out before high-risk processing.", "Personal data breaches are notified."]
    written = [write_out(t) for t in texts]
    assert written[0] != texts[0] and written[1] == texts[1]
    assert reads.reading(texts) == written and plain.reading(texts) == texts
    np.testing.assert_allclose(reads.logits(texts), plain.logits(written), rtol=1e-5, atol=1e-5)
    assert not np.allclose(reads.logits(texts)[0], plain.logits(texts)[0], atol=1e-4)
    if plain.lexical is not None:
        lexical = reads.lexical_log_probs(texts)
        assert lexical is not None
        np.testing.assert_allclose(lexical, plain.lexical_log_probs(written))  # type: ignore[arg-type]

    encoder = index_encoder(model_dir)
    space = encoder.space()
    assert space is not None
    both = reads.forward(texts, space)
    np.testing.assert_allclose(both.logits, reads.logits(texts), rtol=1e-5, atol=1e-5)
    separate, owner = encoder.encode_chunks(texts)
    assert both.vectors is not None
    for i, vectors in enumerate(both.vectors):
        np.testing.assert_allclose(vectors, separate[owner == i], rtol=1e-4, atol=1e-5)


def test_an_index_space_that_reads_abbreviations_shares_the_classifiers_windows(
    model_dir: Path, tmp_path: Path
) -> None:
    """The controls index reads abbreviations as the shipped classifier does (``DenseConfig.abbreviations``), so a
    reading classifier's forward gives that space's vectors from its own written-out windows — exactly what the
    index's separate pass gives — and a text of one window runs once; the space's id is another than the one of a
    space that reads texts as written, whose id is what it was before the field existed."""
    import hashlib

    from compliance.models.classifier import load
    from compliance.retrieval.indexes import CONTROL_INDEX, PROVISION_INDEX, index_config

    controls, provisions = index_config(CONTROL_INDEX).dense, index_config(PROVISION_INDEX).dense
    assert controls is not None and provisions is not None
    assert controls.abbreviations and not provisions.abbreviations
    reads = load(_copy(model_dir, tmp_path, True), device="cpu", bf16=False)
    encoder = index_encoder(model_dir, abbreviations=True)
    space = encoder.space()
    assert space is not None and space.abbreviations
    plain_space = index_encoder(model_dir).space()
    assert plain_space is not None and plain_space.id != space.id
    fields = {
        k: getattr(plain_space, k) for k in ("weights_sha256", "pooling", "layer", "max_length", "stride")
    }
    fields["max_chunks"] = plain_space.max_chunks
    assert plain_space.id == hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()

    # texts of one window of the tiny classifier (32 tokens) and of the space (256): the same token windows
    texts = ["A DPIA is done.", "Breaches are notified."]
    rows: list[int] = []
    batches = reads.window_batches

    def counted(windows: Any) -> Any:
        rows.append(len(windows))
        return batches(windows)

    reads.window_batches = counted  # type: ignore[method-assign]
    both = reads.forward(texts, space)
    alone = reads.forward(texts)
    assert rows[0] == rows[1]  # the space's vectors cost no window beyond the classifier's own
    np.testing.assert_allclose(both.logits, alone.logits, rtol=1e-5, atol=1e-5)
    separate, owner = encoder.encode_chunks(texts)
    assert both.vectors is not None
    for i, vectors in enumerate(both.vectors):
        np.testing.assert_allclose(vectors, separate[owner == i], rtol=1e-4, atol=1e-5)
    written = index_encoder(model_dir).encode_chunks(texts)[0]
    assert not np.allclose(separate[0], written[0], atol=1e-4)  # the DPIA's words count


def test_the_audit_reads_a_paragraph_with_the_abbreviations_its_document_defines(
    store: Any, model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "Vendors sign a DPA" is classified as "Vendors sign a DPA (data processing agreement)" where the document
    defines the DPA so, and says so (``evidence.abbreviations``, the review page, ``links show``); the stored
    vectors are the paragraph's own text's; with ``document_abbreviations=False`` it is read as written."""
    from click.testing import CliRunner

    from compliance.api.web import _templates
    from compliance.app import audit_documents
    from compliance.app.audit import controls_space
    from compliance.app.review import link_view
    from compliance.cli.links import show_command
    from compliance.linking.classifier_links import ClassifierLinkConfig
    from compliance.models.classifier import load
    from compliance.settings import reset_settings

    monkeypatch.setenv(
        "COMPLIANCE_MODEL_DIR", str(model_dir.parent)
    )  # the controls index's encoder: this one
    reset_settings()
    store.save_law(mini_gdpr())
    folder = tmp_path / "policies"
    folder.mkdir()
    uses = "Every vendor signs a DPA before it processes personal data and keeps records of processing."
    (folder / "vendors.md").write_text(
        "# Vendor policy\n\n## Definitions\n\n"
        "Data Processing Agreement (DPA): the contract under which a vendor processes personal data for us.\n\n"
        f"## Rules\n\n{uses}\n\nVendors report a personal data breach to us within 24 hours.\n",
        encoding="utf-8",
    )
    clf = load(model_dir, device="cpu", bf16=False)
    space = controls_space(clf)
    assert space is not None
    report = audit_documents(store, [folder], clf, config=ClassifierLinkConfig(top_k=3))
    paragraphs = {p.text: p for p in store.iter_paragraphs()}
    links = [
        link for link in store.list_links(run_id=report.run_id) if link.paragraph_id == paragraphs[uses].id
    ]
    assert links and all(
        link.evidence["abbreviations"] == {"DPA": "data processing agreement"} for link in links
    )
    read = (
        "Every vendor signs a DPA (data processing agreement) before it processes personal data and keeps records "
        "of processing."
    )
    expected = clf.rank([read], top_k=3)[0]
    first = min(links, key=lambda link: link.rank)
    assert first.evidence["article"] == expected[0].article
    assert first.score == pytest.approx(expected[0].score, abs=1e-4)
    others = [
        link for link in store.list_links(run_id=report.run_id) if link.paragraph_id != paragraphs[uses].id
    ]
    assert all("abbreviations" not in link.evidence for link in others)

    assert_stored_vectors_are_the_texts_own(store, space.id, model_dir, paragraphs[uses].id, uses)

    current = next(c for c in store.current_links(run_id=report.run_id) if c.link_id == first.id)
    row = _templates.env.get_template("link_row.html").render(link=link_view(current), can_review=False)
    assert "abbreviations: DPA = data processing agreement" in row, row
    shown = CliRunner().invoke(show_command, [str(first.id), "--database", store.url])
    assert shown.exit_code == 0
    assert "  read with the document's abbreviations: DPA = data processing agreement" in shown.output

    off = ClassifierLinkConfig(top_k=3, document_abbreviations=False)
    report = audit_documents(store, [folder], clf, config=off, reclassify=True)
    assert all("abbreviations" not in link.evidence for link in store.list_links(run_id=report.run_id))


def test_the_shipped_classifier_reads_abbreviations(shipped_models: None) -> None:
    pytest.importorskip("torch")
    from compliance.models.classifier import load

    clf = load()
    assert clf.config.abbreviations
    top = clf.rank(["A DPIA is completed for high-risk processing."], top_k=1)[0][0]
    assert top.article == 35
