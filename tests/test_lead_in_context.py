"""A list item is classified with the sentence that introduces its list (compliance.connectors.lists): "(f) to
assist Company … in fulfilling its obligations in relation to requests from Data Subjects" has lost who is bound
until it is read after "Supplier undertakes the following as Processor:"."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from compliance.connectors.lists import MAX_CONTEXT_WORDS, lead_in_contexts, lead_in_sentence, read_with
from tests.fixtures.classifier.tiny import (
    assert_stored_vectors_are_the_texts_own,
    mini_gdpr,
    shared_tiny_classifier,
)

LEAD = (
    "Notwithstanding any obligations of the Company as controller, the Supplier undertakes the following as "
    "processor:"
)


def _paras(*rows: tuple[str, str, tuple[str, ...]] | tuple[str, str]) -> list[SimpleNamespace]:
    out = []
    for i, row in enumerate(rows):
        kind, text = row[0], row[1]
        path = row[2] if len(row) > 2 else ("A. Processing",)  # type: ignore[misc]
        out.append(
            SimpleNamespace(id=100 + i, ordinal=i, kind=kind, text=text, heading_path=path, role="statement")
        )
    return out


def test_items_after_a_lead_in_are_read_with_its_last_sentence() -> None:
    paras = _paras(
        ("paragraph", "The parties agree that the Supplier processes personal data for the Company. " + LEAD),
        ("paragraph", "(a) to process the personal data only on the Company's documented instructions;"),
        ("paragraph", "(b) to engage another processor only with the Company's prior written consent;"),
        ("paragraph", "The Supplier shall choose such a processor with care."),  # (b)'s second paragraph
        ("paragraph", "(c) to delete the personal data at the end of the services;"),
        ("paragraph", "The Supplier is liable for its sub-processors."),  # the list has ended
        ("paragraph", "(a) another list's item, with no lead-in before it."),
    )
    contexts = lead_in_contexts(paras)
    assert contexts == {101: LEAD, 102: LEAD, 103: LEAD, 104: LEAD}
    assert read_with(contexts[101], paras[1].text) == f"{LEAD} {paras[1].text}"


def test_a_list_ends_at_another_heading_a_new_enumeration_or_a_lead_in_that_says_nothing() -> None:
    paras = _paras(
        ("paragraph", LEAD),
        ("list", "- keep the personal data confidential"),
        ("paragraph", "Background checks are done for every new employee."),
        ("paragraph", "(d) an item that does not continue the list: (a) came first"),
        ("paragraph", LEAD),
        ("list", "- an item under another heading", ("B. Security",)),
        ("paragraph", "Staff must:"),  # too short to say anything the items do not
        ("list", "- lock their screens"),
    )
    assert lead_in_contexts(paras) == {101: LEAD}
    assert lead_in_sentence("Staff must:") is None
    assert lead_in_sentence("Name:\nTitle:") is None  # a column of labels
    long = " ".join(["word"] * 60) + ":"
    sentence = lead_in_sentence(long)
    assert sentence is not None and len(sentence.split()) == MAX_CONTEXT_WORDS


@pytest.fixture(scope="module")
def model_dir() -> Path:
    pytest.importorskip("torch")
    return shared_tiny_classifier()


def test_the_audit_reads_an_item_with_its_lead_in_and_stores_its_own_vectors(
    store: Any, model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The item's links are the classifier's ranking of the lead-in and the item together, and say so
    (``evidence.read_with``); the vectors stored for the controls index are the item's own text's, exactly what a
    separate embedding pass gives."""
    from compliance.app import audit_documents
    from compliance.app.audit import controls_space
    from compliance.linking.classifier_links import ClassifierLinkConfig
    from compliance.models.classifier import load
    from compliance.settings import reset_settings

    monkeypatch.setenv(
        "COMPLIANCE_MODEL_DIR", str(model_dir.parent)
    )  # the controls index's encoder: this one
    reset_settings()
    store.save_law(mini_gdpr())
    folder = tmp_path / "contracts"
    folder.mkdir()
    item = (
        "(a) to notify the Company of a personal data breach within 24 hours and keep records of processing"
    )
    (folder / "dpa.md").write_text(
        "# Data processing addendum\n\n## A. Processing\n\n"
        f"The parties agree on the following terms. {LEAD}\n\n{item}\n\n"
        "(b) to keep the personal data confidential and secure at all times during the services\n",
        encoding="utf-8",
    )
    clf = load(model_dir, device="cpu", bf16=False)
    space = controls_space(clf)
    assert space is not None
    config = ClassifierLinkConfig(top_k=3)
    report = audit_documents(store, [folder], clf, config=config)
    paragraphs = {p.text: p for p in store.iter_paragraphs()}
    links = store.list_links(run_id=report.run_id)
    by_paragraph: dict[int, list[Any]] = {}
    for link in links:
        by_paragraph.setdefault(link.paragraph_id, []).append(link)
    lead_links = by_paragraph[paragraphs[f"The parties agree on the following terms. {LEAD}"].id]
    assert all("read_with" not in link.evidence for link in lead_links)
    item_links = sorted(by_paragraph[paragraphs[item].id], key=lambda link: link.rank)
    assert all(link.evidence["read_with"] == LEAD for link in item_links)
    expected = clf.rank([read_with(LEAD, item)], top_k=3)[0]
    assert [link.evidence["article"] for link in item_links] == [s.article for s in expected][
        : len(item_links)
    ]
    assert item_links[0].score == pytest.approx(expected[0].score, abs=1e-4)
    alone = clf.rank([item], top_k=3)[0]
    assert [s.score for s in alone] != pytest.approx(
        [s.score for s in expected], abs=1e-4
    )  # the context counts

    assert_stored_vectors_are_the_texts_own(store, space.id, model_dir, paragraphs[item].id, item)

    from click.testing import CliRunner

    from compliance.api.web import _templates
    from compliance.app.review import link_view
    from compliance.cli.links import show_command

    current = next(c for c in store.current_links(run_id=report.run_id) if c.link_id == item_links[0].id)
    view = link_view(current)
    row = _templates.env.get_template("link_row.html").render(link=view, can_review=False)
    assert f"read after its list's lead-in: {LEAD}" in row
    shown = CliRunner().invoke(show_command, [str(current.link_id), "--database", store.url])
    assert shown.exit_code == 0 and f"  read after its list's lead-in: {LEAD}" in shown.output, shown.output

    off = ClassifierLinkConfig(top_k=3, lead_in_context=False)
    report = audit_documents(store, [folder], clf, config=off, reclassify=True)
    assert all("read_with" not in link.evidence for link in store.list_links(run_id=report.run_id))
