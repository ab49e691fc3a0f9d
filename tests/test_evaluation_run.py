"""`evaluate()`: every query set × (model + baselines) on the mini regulation with the tiny model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compliance.errors import ConfigurationError
from compliance.evaluation.queries import gdprhub_split, write_gdprhub_train
from compliance.evaluation.run import evaluate
from tests.fixtures.classifier.tiny import RECITAL_MAP, mini_gdpr, shared_tiny_classifier

pytest.importorskip("torch")


def test_evaluate_model_and_baselines(tmp_path: Path) -> None:
    controls = tmp_path / "controls.jsonl"
    controls.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"id": "c1", "text": "Laptops use encryption.", "articles": [32]},
                {"id": "c2", "text": "Breaches are notified within 72 hours.", "articles": [33, 32]},
                {"id": "c3", "text": "Copies of personal data are provided on request.", "articles": [15]},
            ]
        )
        + "\n"
    )
    hub = tmp_path / "eval"
    hub.mkdir()
    rows = [
        {"id": f"h{i}", "text": "The controller did not erase the data.", "gdpr_articles": [17, 5]}
        for i in range(8)
    ]
    (hub / "gdprhub_dev.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    report = evaluate(
        mini_gdpr(),
        RECITAL_MAP,
        model_path=shared_tiny_classifier(),
        shared_data=tmp_path,
        controls=controls,
        baselines=("prior", "bm25"),
        fusion_weights=(1.0,),
    )
    sets = {r["set"] for r in report.rows}
    assert {"controls", "gdprhub-test"} <= sets
    rankers = {r["ranker"] for r in report.rows}
    assert {"prior(training)", "bm25"} <= rankers
    assert any(r.startswith("classifier[tiny]") for r in rankers)
    for row in report.rows:
        m = row["metrics"]
        assert set(m) >= {"rec", "prec", "f_mu", "f_M", "rec@3", "mrr", "hit@3"}
        assert all(0.0 <= m[k] <= 1.0 for k in ("rec", "prec", "f_mu", "f_M", "rec@3", "mrr", "hit@3"))
    assert report.query_sets["controls"] == 3
    assert report.query_sets["gdprhub-test"] == sum(gdprhub_split(r["id"]) == "test" for r in rows)
    table = report.table()
    assert table and set(table[0]) == {
        "set",
        "ranker",
        "rec",
        "prec",
        "f_mu",
        "f_M",
        "rec@3",
        "mrr",
        "hit@3",
        "ece",
    }
    # calibration is reported for the classifier (probabilities), not for score-only baselines
    by_ranker = {(r["set"], r["ranker"]): r for r in table}
    assert 0.0 <= by_ranker[("controls", "classifier[tiny]")]["ece"] <= 1.0
    assert by_ranker[("controls", "bm25")]["ece"] == ""


def test_gdprhub_split_is_stable_and_disjoint(tmp_path: Path) -> None:
    ids = [f"id{i}" for i in range(400)]
    parts = [gdprhub_split(i) for i in ids]
    assert parts == [gdprhub_split(i) for i in ids]
    share = parts.count("train") / len(parts)
    assert 0.4 < share < 0.6
    rows = [{"id": i, "text": "t", "gdpr_articles": [5]} for i in ids]
    out = tmp_path / "train.jsonl"
    n = write_gdprhub_train(rows, out)
    written = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert n == len(written) == parts.count("train")
    assert all(gdprhub_split(i) == "train" for i in written)


@pytest.mark.parametrize(
    "flags",
    [
        {},
        {"prior": False},
        {"lexical": False},
        {"umbrella": False},
        {"prior": False, "lexical": False, "umbrella": False},
    ],
)
def test_classifier_ranker_ablations_match_the_model(flags: dict[str, bool]) -> None:
    import numpy as np

    from compliance.evaluation.rankers import ClassifierRanker
    from compliance.models.classifier import load

    clf = load(shared_tiny_classifier(), device="cpu", bf16=False)
    assert clf.uses_prior and clf.uses_lexical and clf.uses_umbrellas
    texts = ["Breaches are notified within 72 hours.", "Copies of personal data are provided on request."]
    shared = ClassifierRanker(clf)
    shared.scores(texts)  # fills the cache the ablation reuses
    ranker = ClassifierRanker(clf, "ablation", cache=shared.cache, **flags)
    np.testing.assert_allclose(ranker.scores(texts), clf.predict_proba(texts, **flags), rtol=1e-6)


def test_evaluate_a_users_labelled_file_with_the_model(tmp_path: Path) -> None:
    mine = tmp_path / "policy-lines.jsonl"
    mine.write_text(
        json.dumps({"id": "p1", "text": "Laptops use encryption.", "articles": [32], "note": "ignored"})
        + "\n"
        + json.dumps(
            {"id": "p2", "text": "Copies of personal data are provided on request.", "articles": [15]}
        )
        + "\n"
    )
    report = evaluate(
        mini_gdpr(),
        RECITAL_MAP,
        model_path=shared_tiny_classifier(),
        shared_data=tmp_path,
        sets=(),
        query_files=[mine],
        baselines=("bm25",),
    )
    assert report.query_sets == {"policy-lines": 2}
    assert {r["ranker"] for r in report.rows} >= {"bm25", "classifier[tiny]"}
    assert all(r["set"] == "policy-lines" for r in report.rows)
    with pytest.raises(ConfigurationError, match="not among the 5 articles"):
        mine.write_text(json.dumps({"id": "p3", "text": "Something.", "articles": [6]}) + "\n")
        evaluate(
            mini_gdpr(), RECITAL_MAP, shared_data=tmp_path, sets=(), query_files=[mine], baselines=("prior",)
        )
    with pytest.raises(ConfigurationError, match="unknown query set"):
        evaluate(mini_gdpr(), RECITAL_MAP, shared_data=tmp_path, sets=("qb",), baselines=("prior",))
