"""`compliance audit`: ingest → classify → scored links in the store → summary → export (tiny model)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from compliance.app import LinkQuery, audit_documents, export_links_file
from compliance.cli import cli
from compliance.linking.classifier_links import ClassifierLinkConfig, link_status
from tests.fixtures.classifier.tiny import mini_gdpr, shared_tiny_classifier

pytest.importorskip("torch")

POLICY = """Information security policy

All laptops issued to staff use full disk encryption and the security measures are reviewed every year.

A personal data breach is notified to the supervisory authority within 72 hours by the security team.

A data subject may request a copy of the personal data we hold; the request is answered within one month.

Ok.
"""


@pytest.fixture(scope="module")
def model_dir() -> Path:
    return shared_tiny_classifier()


def test_link_status_band() -> None:
    band = (0.2, 0.6)
    assert link_status(0.7, 1, band) == "proposed"
    assert link_status(0.7, 2, band) == "needs-review"  # only the top article is proposed outright
    assert link_status(0.3, 1, band) == "needs-review"
    assert link_status(0.1, 1, band) is None


def _score(article: int, score: float, rank: int, umbrella: float = 0.0, own: float | None = None) -> Any:
    from compliance.models.classifier import ArticleScore

    components = {"encoder": 0.01} | ({"umbrella": umbrella} if umbrella else {})
    if own is not None:
        components["own"] = own
    return ArticleScore(article, f"Art. {article}", score, rank, components)


def test_an_umbrella_on_borrowed_mass_is_not_proposed_the_specific_article_is() -> None:
    """Issue 13 item 4: Art. 5 at the top because its members (Art. 32 …) gave it 95 % of its score is kept for
    review; the specific article below it is proposed on its own score; the ranking does not change."""
    from compliance.linking.classifier_links import decide_links, own_evidence

    band = (0.1, 0.3)
    ranked = [_score(5, 0.39, 1, umbrella=0.95), _score(32, 0.38, 2), _score(42, 0.09, 3)]
    assert own_evidence(ranked[0]) == pytest.approx(0.39 * 0.05)
    links = decide_links(1, ranked, band)
    assert [(s.article, st) for s, st in links.linked] == [(5, "needs-review"), (32, "proposed")]
    assert not links.needs_review and not links.abstained
    assert [s.article for s in links.ranked] == [5, 32, 42]
    # the rule before: the top article, on its score
    old = decide_links(1, ranked, band, own_evidence=False)
    assert [(s.article, st) for s, st in old.linked] == [(5, "proposed"), (32, "needs-review")]
    # a specific article below the edge is not proposed, and nothing under it is
    weak = decide_links(1, [_score(5, 0.5, 1, umbrella=0.99), _score(32, 0.25, 2), _score(33, 0.3, 3)], band)
    assert [(s.article, st) for s, st in weak.linked] == [
        (5, "needs-review"),
        (32, "needs-review"),
        (33, "needs-review"),
    ]
    assert weak.needs_review
    # an umbrella with strong evidence of its own is proposed: its score before the umbrellas (``own``), or, for
    # links stored without it, its score less the umbrella share
    own = decide_links(1, [_score(5, 0.8, 1, umbrella=0.2), _score(32, 0.1, 2)], band)
    assert own.linked[0][1] == "proposed" and own.linked[0][0].article == 5
    kept = decide_links(1, [_score(5, 0.52, 1, umbrella=0.56, own=0.32), _score(17, 0.29, 2)], band)
    assert [(s.article, st) for s, st in kept.linked] == [(5, "proposed"), (17, "needs-review")]
    assert own_evidence(kept.linked[0][0]) == 0.32


def test_a_proposal_needs_the_text_to_bear_the_article_out() -> None:
    """Session 25: an article proposed on the classifier's score is kept for review when the paragraph's cosine
    with the article's closest passage is below the link decision's drop edge; the cosine is kept in the
    evidence, an article without one is not judged, and the ranking does not change."""
    from compliance.linking.classifier_links import corroborate_links, decide_links

    band, level = (0.1, 0.3), 0.128
    ranked = [_score(35, 0.96, 1), _score(12, 0.2, 2), _score(32, 0.02, 3)]
    first = decide_links(1, ranked, band)
    assert [(s.article, st) for s, st in first.linked] == [(35, "proposed"), (12, "needs-review")]
    weak = corroborate_links(first, band, {35: 0.08, 12: 0.3, 32: 0.5}, level)
    assert [(s.article, st) for s, st in weak.linked] == [(35, "needs-review"), (12, "needs-review")]
    assert weak.needs_review and not weak.abstained
    assert [s.article for s in weak.ranked] == [35, 12, 32]  # the ranking is the classifier's
    assert weak.linked[0][0].components == {"encoder": 0.01, "text_cosine": 0.08}
    borne = corroborate_links(first, band, {35: 0.2, 12: 0.3}, level)
    assert [(s.article, st) for s, st in borne.linked] == [(35, "proposed"), (12, "needs-review")]
    unjudged = corroborate_links(first, band, {}, level)
    assert unjudged.linked[0][1] == "proposed" and "text_cosine" not in (
        unjudged.linked[0][0].components or {}
    )
    # with the umbrella rule: the specific article the umbrella passes over needs the text's support too
    umbrella = decide_links(1, [_score(5, 0.39, 1, umbrella=0.95), _score(32, 0.38, 2)], band)
    assert [st for _, st in umbrella.linked] == ["needs-review", "proposed"]
    checked = corroborate_links(umbrella, band, {5: 0.4, 32: 0.05}, level)
    assert [(s.article, st) for s, st in checked.linked] == [(5, "needs-review"), (32, "needs-review")]
    # and with the rank-1 rule
    old = corroborate_links(first, band, {35: 0.08}, level, own_evidence=False)
    assert [(s.article, st) for s, st in old.linked] == [(35, "needs-review"), (12, "needs-review")]
    # what the review page says of a held link
    from compliance.app.review import held_for_review

    said = held_for_review({"components": {"text_cosine": 0.08}, "corroboration": level})
    assert said is not None and "cosine 0.08" in said and "below 0.13" in said
    assert held_for_review({"components": {"text_cosine": 0.2}, "corroboration": level}) is None
    assert held_for_review({"components": {"text_cosine": 0.08}}) is None  # no level recorded: not judged
    umbrella_said = held_for_review({"components": {"umbrella": 0.95, "own": 0.02}})
    assert umbrella_said is not None and "95% of its score" in umbrella_said
    assert held_for_review({"model": "m"}) is None


def test_a_definition_is_held_for_review_not_proposed() -> None:
    """Session 25: GDPR Art. 4 ("Definitions") at the top of a paragraph that uses a defined term is kept for
    review and passed over; the article below it is proposed on its own evidence. ``propose_definitions``
    restores the old status."""
    from compliance.linking.classifier_links import decide_links, defines_terms
    from compliance.models.classifier import ArticleScore

    band = (0.1, 0.3)
    ranked = [
        ArticleScore(4, "Definitions", 0.5, 1, {"encoder": 0.4}),
        _score(6, 0.35, 2),
        _score(7, 0.05, 3),
    ]
    assert defines_terms(ranked[0]) and not defines_terms(ranked[1])
    links = decide_links(1, ranked, band)
    assert [(s.article, st) for s, st in links.linked] == [(4, "needs-review"), (6, "proposed")]
    assert [s.article for s in links.ranked] == [4, 6, 7]
    old = decide_links(1, ranked, band, propose_definitions=True)
    assert [(s.article, st) for s, st in old.linked] == [(4, "proposed"), (6, "needs-review")]
    rank1 = decide_links(1, ranked, band, own_evidence=False)
    assert [(s.article, st) for s, st in rank1.linked] == [(4, "needs-review"), (6, "needs-review")]
    # the review page says why
    from compliance.app.review import held_for_review

    said = held_for_review({"title": "Definitions", "definitions": "review", "components": {"encoder": 0.4}})
    assert said is not None and said.startswith("a definition")
    assert held_for_review({"title": "Definitions", "components": {"encoder": 0.4}}) is None  # an older audit


def test_the_audit_keeps_unsupported_proposals_for_review(
    store: Any, model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The audit decides statuses again with each ranked article's cosine from its own forward pass (where the
    link decision shares the classifier's encoder: forced here with a level no cosine reaches), records the
    level in the run and in the suggestion version, and proposes as before with ``corroborate=False``."""
    from compliance.app import audit as audit_module
    from compliance.models.classifier import load

    store.save_law(mini_gdpr())
    doc = tmp_path / "policies" / "security.txt"
    doc.parent.mkdir()
    doc.write_text(POLICY, encoding="utf-8")
    clf = load(model_dir, device="cpu", bf16=False)
    assert audit_module.corroboration(clf) is None  # the test model is not the link decision's encoder
    monkeypatch.setattr(audit_module, "corroboration", lambda classifier: 1.01)
    config = ClassifierLinkConfig(top_k=3, review_band=(0.0, 0.2))
    report = audit_documents(store, [doc.parent], clf, config=config)
    links = store.list_links(run_id=report.run_id)
    assert links and {link.status for link in links} == {"needs-review"}
    assert all(-1.0 <= link.evidence["components"]["text_cosine"] <= 1.0 for link in links)
    assert store.get_run(report.run_id).config["corroboration"] == 1.01
    assert {link.evidence["corroboration"] for link in links} == {1.01}
    # the reviewer is told why: the page's link view and its row
    from compliance.api.web import _templates
    from compliance.app.review import link_view

    current = store.current_links(run_id=report.run_id)
    top = next(c for c in current if c.rank == 1)
    view = link_view(top)
    assert view["text_match"] == top.evidence["components"]["text_cosine"]
    assert view["held"].startswith("the paragraph's wording is far from the article's (cosine ")
    assert "drops below 1.01" in view["held"]
    row = _templates.env.get_template("link_row.html").render(link=view, can_review=False)
    assert "held for review: the paragraph&#39;s wording is far" in row and "text match" in row
    from compliance.cli.links import show_command

    shown = CliRunner().invoke(show_command, [str(top.link_id), "--database", store.url])
    assert shown.exit_code == 0, shown.output
    assert (
        "  text match " in shown.output
        and "  held for review: the paragraph's wording is far" in shown.output
    )
    plain = audit_documents(  # what ``audit --rescore`` runs
        store,
        [doc.parent],
        clf,
        config=ClassifierLinkConfig(top_k=3, review_band=(0.0, 0.2), corroborate=False),
        reclassify=True,
    )
    assert plain.links == len(links)  # new suggestions: another version, the same paragraphs and articles
    fresh = store.list_links(run_id=plain.run_id)
    assert {link.model_version for link in fresh}.isdisjoint({link.model_version for link in links})
    assert any(link.status == "proposed" for link in fresh)
    assert all("text_cosine" not in link.evidence["components"] for link in fresh)
    assert not any(
        "wording" in (link_view(c)["held"] or "") for c in store.current_links(run_id=plain.run_id)
    )


def test_audit_stores_links_and_is_idempotent(
    store: Any, model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compliance.app import audit as audit_module
    from compliance.models.classifier import load

    monkeypatch.setattr(
        audit_module, "_PICKERS", {}
    )  # a fresh process: the picker is built (and cached on disk)

    store.save_law(mini_gdpr())
    doc = tmp_path / "policies" / "security.txt"
    doc.parent.mkdir()
    doc.write_text(POLICY, encoding="utf-8")
    clf = load(model_dir, device="cpu", bf16=False)
    report = audit_documents(
        store, [doc.parent], clf, config=ClassifierLinkConfig(top_k=3, review_band=(0.0, 0.5))
    )
    assert len(report.documents) == 1 and not report.failures
    summary = report.documents[0]
    assert summary.status == "new"
    assert summary.classified == 3  # the three sentences long enough; the heading and "Ok." are skipped
    assert summary.links == report.links == 9  # band low 0.0: top 3 of each paragraph are linked
    assert summary.top_articles and summary.top_articles[0]["article"] in {15, 17, 32, 33}
    # the principle umbrella (the mini law's Art. 5) is listed apart, not among the specific articles
    assert all(a["article"] != 5 for a in summary.top_articles)

    links = store.list_links(run_id=report.run_id)
    assert len(links) == 9
    assert {link.method for link in links} == {"classifier"}
    linked_to_5 = any(link.evidence["article"] == 5 for link in links)
    assert [p["article"] for p in summary.principles] == ([5] if linked_to_5 else [])
    assert all(link.evidence["model"] == clf.identity for link in links)
    # each link says why: the experts' own probabilities (and shared terms where there are any)
    assert all({"encoder", "lexical", "prior"} <= set(link.evidence["components"]) for link in links)
    assert any(link.evidence.get("shared_terms") for link in links)
    assert sorted({link.rank for link in links}) == [1, 2, 3]
    # provision-level targets: the paragraph of the classifier's article that fits, with its own score
    targeted = [link for link in links if "provision" in link.evidence]
    assert targeted
    for link in targeted:
        target = link.evidence["provision"]
        assert target["key"].startswith(f"art:{link.evidence['article']}/par:") and target["score"] > 0
        assert target["label"].startswith(f"Art. {link.evidence['article']}(")
        assert target["method"] == "hybrid"  # BM25 mixed with the classifier encoder's cosine
    current = {c.link_id: c for c in store.current_links(run_id=report.run_id)}
    assert any(c.target.startswith("Art. ") and "(" in c.target for c in current.values())
    run = store.get_run(report.run_id)
    assert run.kind == "audit" and run.status == "succeeded"
    assert run.model["identity"] == clf.identity
    assert run.config["provision_targets"] == "hybrid"
    # the law's passages were embedded once and cached for the next process (keyed by texts and encoder weights)
    from compliance.settings import get_settings

    assert list((get_settings().resolved_index_dir / "provision-vectors").glob("provision-vectors-*.npy"))
    # unchanged document, same model: nothing classified again
    again = audit_documents(store, [doc], clf)
    assert again.documents[0].status == "unchanged" and again.links == 0
    # export
    out_csv = tmp_path / "links.csv"
    assert export_links_file(store, out_csv, query=LinkQuery(run=report.run_id)).links == 9
    rows = list(csv.DictReader(out_csv.open()))
    assert {r["provision"] for r in rows} <= {"art:5", "art:15", "art:17", "art:32", "art:33"}
    assert any("provision: Art. " in r["evidence"] for r in rows)
    out_json = tmp_path / "links.json"
    export_links_file(store, out_json, query=LinkQuery(run=report.run_id))
    assert len(json.loads(out_json.read_text())) == 9


def test_audit_cli(model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from compliance.store import Store

    db = f"sqlite:///{tmp_path / 'audit.db'}"
    s = Store(db)
    s.upgrade()
    s.save_law(mini_gdpr())
    s.dispose()
    doc = tmp_path / "policy.txt"
    doc.write_text(POLICY, encoding="utf-8")
    out = tmp_path / "links.json"
    res = CliRunner().invoke(
        cli, ["audit", str(doc), "--model", str(model_dir), "--database", db, "--export", str(out), "--json"]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["documents"][0]["classified"] == 3
    assert data["exported"]["rows"] == data["links"] == len(json.loads(out.read_text()))
    res = CliRunner().invoke(cli, ["audit", str(doc), "--model", str(tmp_path / "none"), "--database", db])
    assert res.exit_code == 1 and "compliance train" in res.stderr


def test_a_cited_article_is_linked_with_the_citation_and_its_cited_paragraph(
    store: Any, model_dir: Path, tmp_path: Path
) -> None:
    """A paragraph that cites "Art. 32(2) GDPR" gets Art. 32 first, the evidence says how it was cited, and the
    provision target is the cited paragraph (method ``citation``), not the one BM25 would pick; the reviewer sees
    the citation on the page and in ``links show``."""
    from dataclasses import replace

    from compliance.api.web import _templates
    from compliance.app.review import link_view
    from compliance.cli.links import show_command
    from compliance.models.classifier import load

    store.save_law(mini_gdpr())
    doc = tmp_path / "policies" / "notice.txt"
    doc.parent.mkdir()
    doc.write_text(
        "Privacy notice\n\nA data subject may request a copy of the personal data we hold, and we assess the "
        "risks of processing as Art. 32(2) GDPR asks.\n",
        encoding="utf-8",
    )
    clf = load(model_dir, device="cpu", bf16=False)
    clf.config = replace(clf.config, citation_names=("GDPR",), citation_weight=0.5)
    report = audit_documents(store, [doc.parent], clf, config=ClassifierLinkConfig(top_k=3))
    links = store.list_links(run_id=report.run_id)
    cited = [link for link in links if link.evidence.get("cited_as")]
    assert [link.evidence["article"] for link in cited] == [32]
    (link,) = cited
    assert link.rank == 1 and link.score >= 0.5 and link.evidence["cited_as"] == "Art. 32(2) GDPR"
    assert link.evidence["components"]["cited"] > 0
    assert link.evidence["provision"]["key"] == "art:32/par:2"
    assert link.evidence["provision"]["method"] == "citation"
    assert all("cited" not in other.evidence["components"] for other in links if other is not link)
    current = next(c for c in store.current_links(run_id=report.run_id) if c.rank == 1)
    view = link_view(current)
    assert view["cited_as"] == "Art. 32(2) GDPR"
    row = _templates.env.get_template("link_row.html").render(link=view, can_review=False)
    assert "cited in the text as: Art. 32(2) GDPR" in row
    shown = CliRunner().invoke(show_command, [str(current.link_id), "--database", store.url])
    assert shown.exit_code == 0 and "  cited in the text as: Art. 32(2) GDPR" in shown.output, shown.output


def test_a_description_that_cites_the_act_is_mapped(store: Any, model_dir: Path, tmp_path: Path) -> None:
    """Descriptions are not mapped, but one that names a GDPR article ("… the requirements of Art. 32 GDPR") is:
    the citation says what it concerns. A description that cites nothing stays skipped and is counted so."""
    from dataclasses import replace

    from compliance.models.classifier import load

    store.save_law(mini_gdpr())
    doc = tmp_path / "policies" / "records.txt"
    doc.parent.mkdir()
    cites = (
        "This policy describes how the company meets the requirements of Art. 32 GDPR and explains the "
        "background of the records."
    )
    plain = "This policy describes how the company organises its records and explains the background."
    doc.write_text(f"Records policy\n\n{cites}\n\n{plain}\n", encoding="utf-8")
    clf = load(model_dir, device="cpu", bf16=False)
    clf.config = replace(clf.config, citation_names=("GDPR",), citation_weight=0.5)
    report = audit_documents(store, [doc.parent], clf, config=ClassifierLinkConfig(top_k=3))
    roles = {p.text: p.role for p in store.iter_paragraphs()}
    assert roles[cites] == roles[plain] == "description"
    linked = {p.text for p in store.iter_paragraphs() if store.list_links(paragraph_id=p.id)}
    assert linked == {cites}
    (summary,) = report.documents
    assert summary.classified == 1 and summary.skipped == {"description": 1, "heading": 1}
    top = min(store.list_links(run_id=report.run_id), key=lambda link: link.rank)
    assert top.evidence["article"] == 32 and top.evidence["cited_as"] == "Art. 32 GDPR"

    clf.config = replace(clf.config, citation_names=None)  # a model that reads no citations maps neither
    report = audit_documents(store, [doc.parent], clf, config=ClassifierLinkConfig(top_k=3), reclassify=True)
    assert report.documents[0].classified == 0


def test_a_paragraph_in_another_language_is_not_mapped_and_is_counted(
    store: Any, model_dir: Path, tmp_path: Path
) -> None:
    """A bilingual policy: the English rules are mapped; the German and French ones are not (the classifier reads
    English: the shipped one ranked a French retention rule Art. 36 at 0.88), and the summary counts them by
    language. ``languages=()`` maps every paragraph."""
    from compliance.models.classifier import load

    store.save_law(mini_gdpr())
    doc = tmp_path / "policies" / "retention.txt"
    doc.parent.mkdir()
    english = "Customer records are kept for six years after the end of the contract and then deleted."
    german = "Kundendaten werden sechs Jahre nach dem Ende des Vertrages aufbewahrt und danach gelöscht."
    french = "Les données des clients sont conservées pendant six ans après la fin du contrat, puis effacées."
    doc.write_text(f"Retention\n\n{english}\n\n{german}\n\n{french}\n", encoding="utf-8")
    clf = load(model_dir, device="cpu", bf16=False)
    report = audit_documents(store, [doc.parent], clf, config=ClassifierLinkConfig(top_k=3))
    (summary,) = report.documents
    assert summary.classified == 1 and summary.other_languages == {"de": 1, "fr": 1}
    linked = {p.text for p in store.iter_paragraphs() if store.list_links(paragraph_id=p.id)}
    assert linked == {english}
    config = ClassifierLinkConfig(top_k=3, languages=())
    report = audit_documents(store, [doc.parent], clf, config=config, reclassify=True)
    assert report.documents[0].classified == 3 and report.documents[0].other_languages == {}


def test_other_language_needs_enough_words_and_confidence() -> None:
    from compliance.linking.language import other_language

    assert other_language("Les données des clients sont conservées pendant six ans.", ("en",)) == "fr"
    assert other_language("Les données des clients sont conservées pendant six ans.", ("en", "fr")) is None
    assert other_language("Datenschutz-Grundverordnung (DSGVO)", ("en",)) is None  # too short to tell
    assert other_language("MFA is enforced for VPN, SSH and RDP access.", ("en",)) is None
    assert other_language("ID: AC-01; Control: Backups are encrypted with AES-256.", ("en",)) is None
