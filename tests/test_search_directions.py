"""Both retrieval directions (compliance.search) and ``compliance search`` on small fixtures (BM25 only)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from compliance.errors import LawNotFoundError

FIXTURES = Path(__file__).parent / "fixtures" / "alerts"


@pytest.fixture
def service(store: Any, tmp_path: Path) -> Any:
    from compliance.connectors import parse_path
    from compliance.rules import load_law_file
    from compliance.search import LawSearch

    store.save_document(parse_path(FIXTURES / "controls.txt"))
    store.save_law(load_law_file(FIXTURES / "mini_cookie_law.json"))
    store.save_law(load_law_file(FIXTURES / "mini_payments_law.json"))
    return LawSearch(store, dense=False, index_dir=tmp_path / "idx")


def test_text_to_laws_and_provisions(service: Any, store: Any) -> None:
    result = service.laws_for_text(
        "We set analytics cookies on the visitor's device only after consent.", k=5
    )
    assert result.laws[0].law == "minicookie"
    assert result.laws[0].best_provision == "art:1"
    top = result.provisions[0]
    assert (top.law, top.key, top.rank) == ("minicookie", "art:1", 1)
    ids = store.provision_id_map(store.law_record("minicookie").id)
    assert top.provision_id == ids["art:1"]
    assert "bm25" in top.evidence
    # max-pooling: a law's score is its best provision's score
    for law in result.laws:
        assert law.score == max(p.score for p in result.provisions if p.law == law.law)
    pay = service.laws_for_text("strong customer authentication for online payments", k=5)
    assert pay.laws[0].law == "minipay" and pay.provisions[0].key == "art:1"
    only = service.laws_for_text("cookies consent", law="minipay")
    assert {p.law for p in only.provisions} <= {"minipay"}


def test_document_to_laws(service: Any) -> None:
    from compliance.connectors import parse_path

    result = service.laws_for_document(parse_path(FIXTURES / "controls.txt"), k=2)
    assert result.laws[0].law == "minicookie"
    assert [h.rank for h in result.laws] == list(range(1, len(result.laws) + 1))


def test_law_and_provision_to_controls(service: Any) -> None:
    hits = service.controls_for_law("minicookie", provision="art:2", k=3)
    assert "unsubscribe" in hits[0].text
    assert hits[0].rank == 1 and hits[0].source.endswith("controls.txt")
    assert any("mail" in t or "market" in t for t in hits[0].evidence["shared_terms"])
    whole = service.controls_for_law("minicookie", k=3)
    assert "clean" not in whole[0].text.lower()
    assert whole[-1].text.startswith("Employees keep their desks clear") or len(whole) < 3
    with pytest.raises(LawNotFoundError):
        service.controls_for_law("minicookie", provision="art:99")
    with pytest.raises(LawNotFoundError):
        service.controls_for_law("nosuchlaw")


def test_indexes_are_persisted_and_updated_incrementally(
    service: Any, store: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compliance.connectors import parse_bytes
    from compliance.retrieval import HybridRetriever
    from compliance.search import LawSearch

    first = service.controls_index()
    assert len(first) == 3
    assert (tmp_path / "idx" / "controls" / "config.json").is_file()
    assert (tmp_path / "idx" / "provisions").exists() is False  # built only when used

    added: list[list[str]] = []
    original = HybridRetriever.add

    def spy(self: Any, docs: Any, *rest: Any) -> None:
        added.append([d.id for d in docs])
        original(self, docs, *rest)

    monkeypatch.setattr(HybridRetriever, "add", spy)
    store.save_document(parse_bytes(b"Payment cards are authenticated with two factors.", "cards.txt"))
    again = LawSearch(store, dense=False, index_dir=tmp_path / "idx")
    index = again.controls_index()
    assert len(index) == 4
    assert len(added) == 1 and len(added[0]) == 1  # only the new paragraph was indexed
    added.clear()
    LawSearch(store, dense=False, index_dir=tmp_path / "idx").controls_index()
    assert added == []  # nothing changed: loaded from disk as is


def test_an_unchanged_store_is_checked_by_digest_and_only_new_paragraphs_are_read(
    service: Any, store: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The controls index is kept in line with the store by paragraph id and text digest: a later run over an
    unchanged store reads no paragraph text, a new document's paragraphs are the only ones read, and the index
    holds what a full build from the store holds (issue 12: the alert run over 100,000 stored paragraphs)."""
    from compliance.connectors import parse_bytes
    from compliance.search import LawSearch

    service.controls_index()
    read: list[int] = []
    original = type(store).get_paragraphs

    def spy(self: Any, ids: Any) -> Any:
        wanted = list(ids)
        read.extend(wanted)
        return original(self, wanted)

    monkeypatch.setattr(type(store), "get_paragraphs", spy)
    LawSearch(store, dense=False, index_dir=tmp_path / "idx").controls_index()
    assert read == []
    saved = store.save_document(
        parse_bytes(b"Payment cards are authenticated with two factors.", "cards.txt")
    )
    index = LawSearch(store, dense=False, index_dir=tmp_path / "idx").controls_index()
    new = [p.id for p in store.iter_paragraphs(document_ids=[saved.document_id])]
    assert sorted(read) == sorted(new)
    full = LawSearch(store, dense=False, index_dir=tmp_path / "full").controls_index()
    assert sorted(index.ids) == sorted(full.ids)
    assert {i: d.text for i, d in index.documents.items()} == {i: d.text for i, d in full.documents.items()}
    # a paragraph that is no longer a control (its document replaced by a new version) leaves the index
    store.save_document(parse_bytes(b"Payment cards use three factors now.", "cards.txt"))
    again = LawSearch(store, dense=False, index_dir=tmp_path / "idx").controls_index()
    assert not set(map(str, new)) & set(again.ids)
    assert any(d.text == "Payment cards use three factors now." for d in again.documents.values())


def test_each_index_is_built_with_its_tuned_configuration(store: Any, tmp_path: Path) -> None:
    from compliance.connectors import parse_path
    from compliance.retrieval import RetrievalConfig, index_config
    from compliance.retrieval.indexes import IndexConfigs
    from compliance.rules import load_law_file
    from compliance.search import LawSearch

    store.save_document(parse_path(FIXTURES / "controls.txt"))
    store.save_law(load_law_file(FIXTURES / "mini_cookie_law.json"))
    search = LawSearch(store, dense=False, index_dir=tmp_path / "idx")
    assert search.provisions_index().config == index_config("provisions", dense=False)  # k1 7.87, b 0.53
    assert search.controls_index().config == index_config("controls", dense=False)  # k1 1.2, b 0.75
    # a configuration change rebuilds the stored index; one RetrievalConfig may serve both indexes
    uniform = LawSearch(store, RetrievalConfig(), index_dir=tmp_path / "idx")
    assert uniform.configs == IndexConfigs.uniform(RetrievalConfig())
    assert uniform.provisions_index().config == RetrievalConfig()
    assert LawSearch(store).configs.provisions.dense is not None  # the product default fuses BM25 and dense


def test_cli_search_both_directions(tmp_path: Path) -> None:
    from compliance.cli import cli

    db = f"sqlite:///{tmp_path / 'cli.db'}"
    runner = CliRunner()
    assert runner.invoke(cli, ["ingest", str(FIXTURES / "controls.txt"), "--database", db]).exit_code == 0
    for f in ("mini_cookie_law.json", "mini_payments_law.json"):
        out = runner.invoke(cli, ["laws", "add", str(FIXTURES / f), "--no-alerts", "--database", db])
        assert out.exit_code == 0, out.output
    out = runner.invoke(
        cli,
        [
            "search",
            "--text",
            "opt-in for marketing e-mails and unsubscribe links",
            "--bm25-only",
            "--json",
            "--database",
            db,
        ],
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["laws"][0]["law"] == "minicookie" and data["provisions"][0]["key"] == "art:2"
    out = runner.invoke(
        cli, ["search", "--file", str(FIXTURES / "controls.txt"), "--bm25-only", "--database", db]
    )
    assert out.exit_code == 0 and "minicookie" in out.output
    out = runner.invoke(
        cli,
        [
            "search",
            "--law",
            "minipay",
            "--provision",
            "art:1",
            "-k",
            "2",
            "--bm25-only",
            "--json",
            "--database",
            db,
        ],
    )
    assert out.exit_code == 0, out.output
    assert len(json.loads(out.stdout)["controls"]) <= 2
    out = runner.invoke(cli, ["search", "--text", "x", "--law", "minipay", "--database", db])
    assert out.exit_code == 1 and "exactly one" in out.output
