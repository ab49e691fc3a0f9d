"""Slow: train the real default recipe on the real GDPR and check the quality bar against the frequency prior.

Run with ``make test-slow`` (minutes on CPU).
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def default_model(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    from compliance.models.training import DEFAULT_RECIPE, get_recipe, train
    from compliance.rules import get_pack, parse_formex

    xml = shared_data / "laws" / "gdpr" / "gdpr-consolidated-with-corrected-preamble-en.xml"
    law = parse_formex(xml.read_bytes(), source=str(xml))
    out = tmp_path_factory.mktemp("real") / "gdpr-classifier"
    result = train(get_recipe(DEFAULT_RECIPE), law, get_pack("gdpr").recital_map(), out_dir=out)
    curve = result.metrics["train_curve"]
    assert curve[-1]["loss"] < curve[0]["loss"]
    assert result.metrics["soup"]["members"] == 3  # the default is a soup: every member's curve is recorded
    assert {rec["member"] for rec in curve} == {1, 2, 3}
    assert result.metrics["calibration"]["ece_after"] <= result.metrics["calibration"]["ece_before"] + 0.02
    return out


def test_default_model_beats_the_prior_on_realistic_text(default_model: Path, shared_data: Path) -> None:
    from compliance.evaluation.run import evaluate
    from compliance.rules import get_pack, parse_formex

    xml = shared_data / "laws" / "gdpr" / "gdpr-consolidated-with-corrected-preamble-en.xml"
    law = parse_formex(xml.read_bytes(), source=str(xml))
    report = evaluate(
        law,
        get_pack("gdpr").recital_map(),
        model_path=default_model,
        shared_data=shared_data,
        sets=("qa", "controls", "gdprhub"),
        baselines=("prior",),
    )
    rows = {(r["set"], r["ranker"]): r["metrics"] for r in report.rows}
    model, prior = rows[("controls", "classifier[r]")], rows[("controls", "prior(gdprhub)")]
    assert model["mrr"] > prior["mrr"] + 0.15
    assert model["f_mu"] > prior["f_mu"] + 0.15
    assert rows[("qa", "classifier[r]")]["mrr"] > 0.7
    hub_model, hub_prior = rows[("gdprhub-test", "classifier[r]")], rows[("gdprhub-test", "prior(gdprhub)")]
    assert hub_model["f_mu"] > 2 * hub_prior["f_mu"]  # measured 0.135 vs 0.053
    assert hub_model["mrr"] > hub_prior["mrr"]  # measured 0.600 vs 0.558: ahead, but not by a wide margin
    # the scoring ensemble (law prior + lexical expert) is what carries the model on realistic text
    encoder_only = rows[("gdprhub-test", "classifier[r] encoder only")]
    assert hub_model["mrr"] > encoder_only["mrr"] + 0.1
    assert model["mrr"] > rows[("controls", "classifier[r] encoder only")]["mrr"] + 0.05
    # and it beats the prior read from the law alone, on both realistic sets
    assert hub_model["mrr"] > rows[("gdprhub-test", "prior(law)")]["mrr"]
    assert model["mrr"] > rows[("controls", "prior(law)")]["mrr"] + 0.3
