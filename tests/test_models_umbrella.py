"""Principle umbrellas found in the law text, and how they move the scores."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from compliance.models.umbrella import UmbrellaConfig, apply_umbrellas, principle_umbrellas


def test_apply_umbrellas_moves_member_mass_and_renormalises() -> None:
    probs = np.array([[0.1, 0.6, 0.3], [0.5, 0.25, 0.25]])
    out, added = apply_umbrellas(probs, [5, 32, 33], {5: [32, 33]}, 0.5)
    np.testing.assert_allclose(added[:, 0], [0.45, 0.25])
    np.testing.assert_allclose(added[:, 1:], 0.0)
    np.testing.assert_allclose(out[0], np.array([0.55, 0.6, 0.3]) / 1.45)
    np.testing.assert_allclose(out.sum(axis=1), 1.0)
    same, _ = apply_umbrellas(probs, [5, 32, 33], {99: [32]}, 0.5)  # an umbrella outside the labels: no-op
    np.testing.assert_allclose(same, probs)


def test_gdpr_umbrellas_come_from_the_law(gdpr_xml: Path) -> None:
    from compliance.models.data import DataConfig, build_training_data
    from compliance.models.training import lexical_expert
    from compliance.rules import get_pack, parse_formex

    law = parse_formex(gdpr_xml.read_bytes(), source=str(gdpr_xml))
    data = build_training_data(law, get_pack("gdpr").recital_map(), DataConfig())
    lexical = lexical_expert(data)
    labels = list(range(1, 100))
    found = principle_umbrellas(law, lexical, labels)
    # the articles whose titles state principles: Art. 5 and Art. 44 ("General principle for transfers")
    assert set(found) == {5, 44}
    # Art. 5's points are matched to the articles that give them effect: lawfulness, transparency, minimisation
    # by design, erasure, security, accountability
    assert {6, 13, 14, 17, 24, 25, 32} <= set(found[5])
    assert 5 not in found[5] and set(found[44]) <= set(range(45, 100))
    fewer = principle_umbrellas(law, lexical, labels, UmbrellaConfig(top_k=1))
    assert set(fewer[5]) < set(found[5])
    assert principle_umbrellas(law, lexical, labels, UmbrellaConfig(title_pattern=r"\bno such title\b")) == {}


@pytest.mark.parametrize("weight", [0.0, 1.0])
def test_zero_weight_changes_nothing(weight: float) -> None:
    probs = np.array([[0.2, 0.8]])
    out, _ = apply_umbrellas(probs, [5, 6], {5: [6]}, weight)
    assert (out[0, 0] > probs[0, 0]) == (weight > 0)


def test_apply_consequences_passes_mass_down_by_the_members_own_scores() -> None:
    from compliance.models.umbrella import apply_consequences

    # labels 83 (the consequence article), 17, 12, 99 (not a member)
    probs = np.array([[0.8, 0.1, 0.05, 0.05], [0.8, 0.0, 0.0, 0.2]])
    out, received = apply_consequences(probs, [83, 17, 12, 99], {83: [17, 12]}, 0.75)
    # row 0: 0.6 passed down, 2:1 as the members' own scores; the total stays 1
    np.testing.assert_allclose(out[0], [0.2, 0.1 + 0.4, 0.05 + 0.2, 0.05])
    np.testing.assert_allclose(received[0], [0.0, 0.4, 0.2, 0.0])
    # row 1: members without any score share evenly; a non-member gets nothing
    np.testing.assert_allclose(out[1], [0.2, 0.3, 0.3, 0.2])
    np.testing.assert_allclose(out.sum(axis=1), 1.0)
    same, nothing = apply_consequences(probs, [83, 17, 12, 99], {83: [17, 12]}, 0.0)
    np.testing.assert_allclose(same, probs)
    assert not nothing.any()


def test_gdpr_consequence_article_is_the_fines_article(gdpr_xml: Path) -> None:
    from compliance.models.umbrella import ConsequenceConfig, consequence_articles
    from compliance.rules import parse_formex

    law = parse_formex(gdpr_xml.read_bytes(), source=str(gdpr_xml))
    labels = list(range(1, 100))
    found = consequence_articles(law, labels)
    # Art. 83(4)-(6) enumerate the infringements fined: principles, rights, obligations of controllers and
    # processors, transfers, orders of the supervisory authority; no other article refers to a fifth of the law
    assert set(found) == {83}
    assert {5, 6, 7, 9, 12, 15, 17, 21, 22, 25, 32, 39, 44, 49, 58} <= set(found[83])
    assert 83 not in found[83] and not {1, 2, 3, 4, 99} & set(found[83])
    # a lower share finds the articles that merely list many others (the Board's tasks, Art. 70, …)
    assert {70, 83} <= set(consequence_articles(law, labels, ConsequenceConfig(min_share=0.1)))
