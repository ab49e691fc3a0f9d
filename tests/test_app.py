"""The application layer: every front end gets the same behaviour from one use case.

Storing a law through the Python API raises the same alerts as ``compliance laws add``; uploads (bytes + name +
media type) are ingested like files; ``map_texts`` keeps the ``compliance map`` contract whatever the batch size.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from compliance.app import (
    Upload,
    add_law,
    alerts_after_law_stored,
    ingest_documents,
    install_law,
    list_alerts,
    map_texts,
    open_store,
    store_law,
)
from compliance.cli import cli
from compliance.rules import load_law_file
from compliance.settings import reset_settings

ALERTS = Path(__file__).parent / "fixtures" / "alerts"
CONTROLS = ALERTS / "controls.txt"
LAW_FILE = ALERTS / "mini_cookie_law.json"


@pytest.fixture(scope="module")
def decision() -> Any:
    from compliance.linking.decision import LinkDecisionModel

    return LinkDecisionModel.from_base(None, threshold=0.45, lower=0.35)


def _models_at(tmp_path: Path, decision: Any, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """A model dir holding the link decision and an index dir of its own (one per database)."""
    monkeypatch.setenv("COMPLIANCE_MODEL_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("COMPLIANCE_INDEX_DIR", str(tmp_path / f"idx-{name}"))
    reset_settings()
    if not (tmp_path / "models" / "link-decision").is_dir():
        decision.save(tmp_path / "models" / "link-decision")


def _alerts(url: str) -> list[tuple[int, str, str, int, float]]:
    store = open_store(url)
    try:
        ordinal = {p.id: p.ordinal for p in store.iter_paragraphs()}
        return [
            (ordinal[a["paragraph_id"]], a["evidence"]["provision_key"], a["decision"], a["rank"], a["score"])
            for a in list_alerts(store)
        ]
    finally:
        store.dispose()


@pytest.mark.slow  # 43 s on two AVX2 cores: `make test-slow`
def test_python_api_raises_the_same_alerts_as_the_cli(
    tmp_path: Path, decision: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = CliRunner()
    cli_db = f"sqlite:///{tmp_path / 'cli.db'}"
    _models_at(tmp_path, decision, monkeypatch, "cli")
    assert runner.invoke(cli, ["ingest", str(CONTROLS), "--database", cli_db]).exit_code == 0
    out = runner.invoke(cli, ["laws", "add", str(LAW_FILE), "--json", "--database", cli_db])
    assert out.exit_code == 0, out.output
    cli_run = json.loads(out.stdout)["after_store"]

    api_db = f"sqlite:///{tmp_path / 'api.db'}"
    _models_at(tmp_path, decision, monkeypatch, "api")
    store = open_store(api_db)
    ingest_documents(store, [CONTROLS])
    stored = add_law(store, LAW_FILE)
    store.dispose()

    assert stored.saved.created and stored.alerts is not None and stored.alerts.status == "ran"
    assert cli_run["status"] == "ran"
    assert stored.alerts.summary["alerts"] == cli_run["alerts"] >= 2
    cli_alerts, api_alerts = _alerts(cli_db), _alerts(api_db)
    assert cli_alerts and [a[:4] for a in api_alerts] == [a[:4] for a in cli_alerts]
    assert [a[4] for a in api_alerts] == pytest.approx([a[4] for a in cli_alerts], abs=1e-6)


def test_store_law_alerts_only_for_new_text_and_when_asked(
    store: Any, tmp_path: Path, decision: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _models_at(tmp_path, decision, monkeypatch, "store")
    ingest_documents(store, [CONTROLS])
    law = load_law_file(LAW_FILE)
    first = store_law(store, law, alerts=False)
    assert first.saved.created and first.alerts is None and list_alerts(store) == []
    again = store_law(store, law)
    assert not again.saved.created and again.alerts is None  # unchanged text: nothing to alert on
    outcome = alerts_after_law_stored(store, law.short_name)
    assert outcome.status == "ran" and outcome.items and len(list_alerts(store)) == len(outcome.items)
    assert outcome.to_dict()["items"][0]["evidence"]["provision_key"] == outcome.items[0]["provision_key"]


def test_law_upload_is_added_like_a_file(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'up.db'}")
    stored = add_law(store, Upload("mini.json", LAW_FILE.read_bytes()), short_name="Mini", alerts=False)
    assert stored.saved.created and stored.saved.short_name == "mini"
    assert store.get_law("mini").get("art:1").title == load_law_file(LAW_FILE).get("art:1").title
    store.dispose()


def test_upload_and_file_give_the_same_paragraphs(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'docs.db'}")
    from_file = ingest_documents(store, [CONTROLS])
    upload = Upload("uploaded/controls", CONTROLS.read_bytes(), media_type="text/plain")
    from_bytes = ingest_documents(store, [upload, Upload("notes.xyz", b"hello")])
    assert from_file.counts()["new_documents"] == 1 and from_bytes.counts()["new_documents"] == 1
    assert [f.code for f in from_bytes.failures] == ["C302"]  # unsupported type: reported, batch goes on
    docs = {d.source: d.document_id for d in from_file.documents + from_bytes.documents}
    texts = {
        source: [p.text for p in store.iter_paragraphs(document_ids=[doc_id])]
        for source, doc_id in docs.items()
    }
    assert texts["uploaded/controls"] == texts[next(s for s in texts if s.endswith("controls.txt"))]
    run = store.get_run(from_bytes.run_id)
    assert run.stats["failed"] == 1 and run.config["paths"] == ["uploaded/controls", "notes.xyz"]
    store.dispose()


def test_install_law_from_a_local_copy(tmp_path: Path, gdpr_xml: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'gdpr.db'}")
    stored = install_law(store, "gdpr", from_path=gdpr_xml)
    assert stored.saved.created and stored.saved.provision_count > 1000
    assert stored.alerts is not None and stored.alerts.status == "skipped"  # no stored controls yet
    assert stored.to_dict()["after_store"]["reason"] == "no stored controls"
    store.dispose()


class _Ranker:
    """A stand-in classifier recording its batches (map_texts only needs ``rank``)."""

    def __init__(self) -> None:
        self.batches: list[int] = []

    def rank(self, texts: list[str], top_k: int) -> list[list[Any]]:
        from compliance.models.classifier import ArticleScore

        self.batches.append(len(texts))
        return [
            [ArticleScore(article=len(t) % 99 + 1, title=f"T{len(t)}", score=1 / (len(t) + 1), rank=1)][
                :top_k
            ]
            for t in texts
        ]


def test_map_texts_keeps_order_and_contract_whatever_the_batch() -> None:
    rows = [(f"id{i}", "x" * i) for i in range(7)]
    one, big = _Ranker(), _Ranker()
    small = list(map_texts(one, rows, top_k=1, batch_size=2))  # type: ignore[arg-type]
    whole = list(map_texts(big, rows, top_k=1, batch_size=64))  # type: ignore[arg-type]
    assert small == whole and [r["id"] for r in small] == [r[0] for r in rows]
    assert one.batches == [2, 2, 2, 1] and big.batches == [7]
    assert small[3] == {"id": "id3", "articles": [{"article": 4, "title": "T3", "score": 0.25}]}
