"""experiments.retrieval_evaluate (the retrieval evaluation driver) on a small synthetic task (tiny random BERT): rows, tuning on dev only, table."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from compliance.errors import ConfigurationError
from compliance.retrieval.evaluation import FrequencyPrior, RetrievalEvaluator
from compliance.retrieval.hybrid import HybridRetriever
from compliance.retrieval.types import Document
from experiments.retrieval_evaluate import alert_separation, evaluate_task, prior_rows, render_markdown
from experiments.retrieval_tasks import RetrievalTask, split_of
from tests.fixtures.tiny_bert import make_tiny_bert

TOPICS = {
    "cookies": "cookies terminal equipment consent user",
    "breach": "breach notification authority incident report",
    "marketing": "marketing email subscriber consent electronic",
    "security": "security encryption access control backup",
    "retention": "retention period delete erase record",
}


def small_task() -> RetrievalTask:
    corpus = [
        Document(t, f"{words} " * 3, {}, date(2000 + i * 5, 1, 1))
        for i, (t, words) in enumerate(TOPICS.items())
    ]
    queries, gold, dates = {}, {}, {}
    for i in range(40):
        topic = list(TOPICS)[i % 5]
        words = TOPICS[topic].split()
        queries[f"q{i}"] = " ".join([*words[i // 5 % 5 :], "the", "policy"])
        gold[f"q{i}"] = {topic}
        dates[f"q{i}"] = date(2000 + (i % 5) * 5, 6, 1)
    splits = {
        "dev": [q for q in queries if int(q[1:]) % 2 == 0],
        "test": [q for q in queries if int(q[1:]) % 2],
    }
    return RetrievalTask(
        "small", "synthetic", corpus, queries, gold, splits, dates, extra={"date_filter": True}
    )


def test_split_of_is_deterministic_and_proportional() -> None:
    names = [split_of(f"id{i}", {"dev": 0.5, "test": 0.5}) for i in range(2000)]
    assert names == [split_of(f"id{i}", {"dev": 0.5, "test": 0.5}) for i in range(2000)]
    assert 0.45 < names.count("dev") / 2000 < 0.55


def test_evaluator_contract_and_prior() -> None:
    task = small_task()
    retriever = HybridRetriever.build(task.corpus)
    queries, gold = task.subset("test")
    metrics = RetrievalEvaluator(queries, gold, name="small/test")(retriever)
    assert metrics["primary"] == metrics["ndcg@20"] and metrics["queries"] == len(queries)
    assert metrics["mrr@10"] > 0.9  # each query shares words only with its topic
    prior = FrequencyPrior({"a": {"x"}, "b": {"x", "y"}}, ["z", "y", "x"])
    assert prior.ranking == ["x", "y", "z"]
    assert [h.id for h in prior.search("anything", k=2)] == ["x", "y"]


def test_evaluate_task_rows(tmp_path: Path) -> None:
    task = small_task()
    tiny = make_tiny_bert(tmp_path / "tiny")
    rows = evaluate_task(task, dense_models=[str(tiny)], trials=3, work_dir=tmp_path / "work")
    methods = [r.method for r in rows]
    assert methods[0].startswith("BM25 document, no idf denoising")
    assert any(m.startswith("BM25 document tuned") for m in methods)
    assert any(m.startswith("BM25 passage tuned") for m in methods)
    assert any(m.startswith("dense tiny") for m in methods)
    assert any(m.startswith("fusion") and "(dev)" in m for m in methods)
    assert any(m.startswith("RRF") for m in methods)
    assert any("date filter (pre" in m for m in methods) and any("date filter (post" in m for m in methods)
    assert all(r.metrics["queries"] == len(task.splits["test"]) for r in rows)
    assert list((tmp_path / "work").glob("dense-small-*.npy"))  # dense stage cached
    rows += prior_rows(task)
    table = render_markdown(rows)
    assert "#### small (20 test queries)" in table and "| frequency prior (dev gold) |" in table


def test_alert_separation() -> None:
    task = RetrievalTask(
        "e",
        "",
        [],
        {"eprivacy": "x", "eprivacy/art:5": "y"},
        {"eprivacy": {"a", "b"}, "eprivacy/art:5": {"a"}},
        {"test": ["eprivacy"]},
        extra={"must_not_alert": ["n1", "n2"]},
    )
    out = alert_separation(task, {"eprivacy": ["a", "n1", "b", "n2"], "eprivacy/art:5": ["n2", "a"]})
    assert out == pytest.approx(
        {
            "first_must_not_rank": 2,
            "must_alert_above_first_must_not": 1,
            "must_alert_total": 2,
            "must_not_in_article_top10": 1,
        }
    )
    assert alert_separation(small_task(), {}) == {}


def test_controls_task_reads_the_packaged_control_set(
    shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compliance.settings import reset_settings
    from experiments.retrieval_tasks import load_task

    monkeypatch.setenv("COMPLIANCE_SHARED_DATA", str(shared_data))
    reset_settings()
    task = load_task("controls")
    assert len(task.queries) >= 120 and len(task.corpus) == 99
    assert sorted(task.splits["dev"] + task.splits["test"]) == sorted(task.queries)
    assert all(g and all(a.startswith("gdpr/art:") for a in g) for g in task.gold.values())
    assert {d.id for d in task.corpus} >= set().union(*task.gold.values())
    with pytest.raises(ConfigurationError, match="unknown retrieval task"):
        load_task("no-such-task")


def test_render_saved_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from experiments.retrieval_evaluate import Row, main

    rows = [Row("small", "BM25", {}, {"queries": 2, "recall@10": 0.5, "ndcg@20": 0.25}).__dict__]
    saved = tmp_path / "rows.json"
    saved.write_text(json.dumps(rows), encoding="utf-8")
    assert main(["--render", str(saved)]) == 0
    out = capsys.readouterr().out
    assert "#### small (2 test queries)" in out and "| BM25 | 50.0 | nan | 25.0 |" in out
