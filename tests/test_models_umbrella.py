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
