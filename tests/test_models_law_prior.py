"""The article-applicability prior read from the law (its weights' selection: test_experiments_prior_selection)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from compliance.errors import ConfigurationError
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


def test_citations_counted_from_what_controllers_do(gdpr) -> None:  # type: ignore[no-untyped-def]
    """The default counts the references in provisions that oblige the regulated; ``cited_by="all"`` is the prior
    of the models before it, and a stored configuration without the field reads as that."""
    law, rmap = gdpr
    labels = list(range(1, 100))
    regulated = build_law_prior(law, rmap, labels, LawPriorConfig(1, 2, 2))
    every = build_law_prior(law, rmap, labels, LawPriorConfig(1, 2, 2, cited_by="all"))
    assert regulated.explain(63)["citations"] < every.explain(63)["citations"]
    assert regulated.as_array()[63 - 1] < every.as_array()[63 - 1]  # the consistency mechanism: the Board's
    assert regulated.explain(6)["citations"] >= 8
    assert LawPriorConfig.from_dict({"addressee": 1, "citations": 2, "recitals": 2}).cited_by == "all"
    assert LawPriorConfig.from_dict(regulated.config.to_dict()) == regulated.config
    with pytest.raises(ConfigurationError):
        LawPriorConfig(cited_by="authorities")


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


def test_a_floor_under_the_duties_of_the_regulated(gdpr) -> None:  # type: ignore[no-untyped-def]
    """Squared counts put Art. 28 (processors) thousands of times below Art. 6; the floor gives every article that
    speaks to controllers, processors and data subjects at least ``floor`` of the most likely article's mass, and
    leaves the authorities' articles, the exempt umbrellas and the articles above it where the counts put them."""
    law, rmap = gdpr
    labels = list(range(1, 100))
    plain = build_law_prior(law, rmap, labels, LawPriorConfig(1, 2, 2), exempt=(5,))
    floored = build_law_prior(law, rmap, labels, LawPriorConfig(1, 2, 2, floor=0.01), exempt=(5,))
    p, q = plain.as_array(), floored.as_array()
    assert np.isclose(q.sum(), 1.0)
    assert p[6 - 1] > 1000 * p[28 - 1]  # the counts alone
    assert np.isclose(q[28 - 1] / q.max(), 0.01) and q[28 - 1] > 10 * p[28 - 1]
    assert 28 in floored.floored and 37 in floored.floored and plain.floored == ()
    # the Board's secretariat and the Commission's reports speak to no controller: not lifted
    assert 75 not in floored.floored and 97 not in floored.floored
    assert q[75 - 1] / q.max() < 0.01 and np.isclose(q[75 - 1] / q[6 - 1], p[75 - 1] / p[6 - 1])
    # the principles umbrella gets its mass from its members: exempt
    assert 5 not in floored.floored and np.isclose(q[5 - 1] / q[6 - 1], p[5 - 1] / p[6 - 1])
    # the articles the counts already put above the floor keep their ratios
    assert np.isclose(q[32 - 1] / q[6 - 1], p[32 - 1] / p[6 - 1])
    # re-weighting keeps the floor and what it may lift
    assert floored.reweighted(LawPriorConfig(1, 2, 2, floor=0.01)).as_array() == pytest.approx(q)
    assert plain.reweighted(LawPriorConfig(1, 2, 2, floor=0.01)).as_array() == pytest.approx(q)
    assert floored.summary()["floored"] == list(floored.floored)
    # a stored configuration without the floor has none
    assert LawPriorConfig.from_dict({"addressee": 1, "citations": 2, "recitals": 2}).floor == 0.0
    with pytest.raises(ConfigurationError):
        LawPriorConfig(floor=2.0)


def test_member_state_law_is_law_not_an_addressee(gdpr) -> None:  # type: ignore[no-untyped-def]
    """ "Union or Member State data protection provisions" and "Member State law" name a body of law, not who acts:
    the DPO's tasks (Art. 39: to monitor compliance with "Union or Member State data protection provisions") speak
    to the organisation, and the floor lifts them; "Member States shall …" still counts."""
    from compliance.models.law_prior import _INSTITUTIONS

    assert _INSTITUTIONS.findall("compliance with Union or Member State data protection provisions") == []
    assert (
        _INSTITUTIONS.findall("laid down by Union or Member State law to which the controller is subject")
        == []
    )
    assert _INSTITUTIONS.findall("Member States shall provide for") == ["Member States"]
    assert _INSTITUTIONS.findall("the Member State of the main establishment") == ["Member State"]
    law, rmap = gdpr
    labels = list(range(1, 100))
    prior = build_law_prior(
        law, rmap, labels, LawPriorConfig(1, 2, 2, floor=0.01, floor_addressee=0.7), exempt=(5,)
    )
    assert prior.explain(39)["addressee"] >= 0.7 and 39 in prior.floored
    assert 97 not in prior.floored and prior.explain(97)["addressee"] < 0.2


def test_priors_stored_before_read_member_state_law_as_before(gdpr) -> None:  # type: ignore[no-untyped-def]
    """A stored configuration without ``member_state_law`` is one written before session 62: it counted "Member
    State law" as an institution, and rebuilding its prior gives what it gave then."""
    stored = {"addressee": 1, "citations": 2, "recitals": 2, "cited_by": "regulated", "floor": 0.01}
    before = LawPriorConfig.from_dict(stored)
    assert before.member_state_law == "institution" and LawPriorConfig().member_state_law == "law"
    law, rmap = gdpr
    labels = list(range(1, 100))
    old = build_law_prior(law, rmap, labels, before, exempt=(5,))
    new = build_law_prior(
        law, rmap, labels, LawPriorConfig.from_dict({**stored, "member_state_law": "law"}), exempt=(5,)
    )
    assert old.explain(39)["addressee"] < 0.6 < 0.7 <= new.explain(39)["addressee"]
    assert 39 not in old.floored and 39 in new.floored
    with pytest.raises(ConfigurationError):
        LawPriorConfig(member_state_law="sometimes")
