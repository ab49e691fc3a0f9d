"""The article-applicability prior read from the law, and the selection of its weights."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from compliance.models.law_prior import LawPriorConfig, build_law_prior
from tests.fixtures.classifier.tiny import RECITAL_MAP, mini_gdpr


@pytest.fixture(scope="module")
def gdpr(gdpr_xml: Path):  # type: ignore[no-untyped-def]
    from compliance.rules import get_pack, parse_formex

    return parse_formex(gdpr_xml.read_bytes(), source=str(gdpr_xml)), get_pack("gdpr").recital_map()


def test_prior_is_a_distribution_that_favours_controller_obligations(gdpr) -> None:  # type: ignore[no-untyped-def]
    law, rmap = gdpr
    labels = list(range(1, 100))
    prior = build_law_prior(law, rmap, labels)
    p = prior.as_array()
    assert p.shape == (99,) and np.isclose(p.sum(), 1.0) and (p > 0).all()
    rank = {a: r for r, a in enumerate(sorted(labels, key=lambda a: -p[a - 1]), 1)}
    # lawfulness and security of processing are far more likely than the Commission's reports or the Board's
    # rules of procedure
    assert rank[6] <= 10 and rank[32] <= 25
    assert p[6 - 1] > 10 * p[97 - 1] and p[32 - 1] > 5 * p[72 - 1]
    art97 = prior.explain(97)
    assert art97["addressee"] < 0.2 and art97["citations"] == 0
    summary = prior.summary(top=5)
    assert summary["config"] == LawPriorConfig().to_dict() and 6 in summary["most_likely"]


def test_zero_weights_give_a_uniform_prior() -> None:
    prior = build_law_prior(mini_gdpr(), RECITAL_MAP, [5, 15, 17, 32, 33], LawPriorConfig(0, 0, 0))
    np.testing.assert_allclose(prior.as_array(), 0.2)


def test_each_signal_moves_the_prior() -> None:
    law, labels = mini_gdpr(), [5, 15, 17, 32, 33]
    base = build_law_prior(law, {}, labels, LawPriorConfig(0, 0, 1)).as_array()
    more = build_law_prior(
        law, {**RECITAL_MAP, 15: [60, 61, 62, 63]}, labels, LawPriorConfig(0, 0, 1)
    ).as_array()
    assert more[1] > base[1]  # Art. 15 explained by more recitals → more likely
    np.testing.assert_allclose(base, 0.2)  # no recital map → nothing to tell the articles apart


def test_selection_prefers_the_prior_that_matches_the_gold(gdpr) -> None:  # type: ignore[no-untyped-def]
    from compliance.evaluation.prior_selection import score_law_priors

    law, rmap = gdpr
    labels = list(range(1, 100))
    # an uninformative classifier: only the prior can put Art. 6 (gold everywhere) near the top
    ids = [f"q{i}" for i in range(20)]
    gold = {i: [6] for i in ids}
    found = score_law_priors(np.zeros((20, 99)), ids, gold, law, rmap, labels, ((0, 2), (0, 1), (0, 2)))
    assert len(found) == 8
    assert found[0].mrr > found[-1].mrr
    uniform = next(c for c in found if c.config == LawPriorConfig(0, 0, 0))
    assert found[0].mrr > uniform.mrr
    assert found[0].to_dict()["objective"] == pytest.approx(found[0].mrr + found[0].f_mu, abs=1e-3)


def test_lexical_step_prefers_the_expert_that_finds_the_gold(gdpr) -> None:  # type: ignore[no-untyped-def]
    from compliance.evaluation.prior_selection import PriorCandidate, score_lexical_weights

    labels = list(range(1, 100))
    ids = ["q1", "q2"]
    gold = {"q1": [32], "q2": [15]}
    encoder = np.log(np.full((2, 99), 1 / 99))
    lexical = np.log(np.full((2, 99), 0.5 / 98))
    lexical[0, 31] = lexical[1, 14] = np.log(0.5)
    start = PriorCandidate(LawPriorConfig(0, 0, 0), 0.0, 0.0, 0.0)
    found = score_lexical_weights(encoder, lexical, ids, gold, start, np.zeros(99), labels, (0.0, 1.0))
    assert [c.lexical_weight for c in found] == [1.0, 0.0]
    assert found[0].mrr == 1.0 and found[0].config == start.config
