"""experiments.prior_selection: choosing the law-prior exponents and the lexical weight on development data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from compliance.models.law_prior import LawPriorConfig
from experiments.prior_selection import (
    PriorCandidate,
    Selection,
    render_selection,
    score_consequences,
    score_floors,
    score_law_priors,
    score_lexical_weights,
    score_sanctions,
    score_umbrellas,
)


@pytest.fixture(scope="module")
def gdpr(gdpr_xml: Path):  # type: ignore[no-untyped-def]
    from compliance.rules import get_pack, parse_formex

    return parse_formex(gdpr_xml.read_bytes(), source=str(gdpr_xml)), get_pack("gdpr").recital_map()


def test_selection_prefers_the_prior_that_matches_the_gold(gdpr) -> None:  # type: ignore[no-untyped-def]
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


def test_umbrella_step_prefers_the_umbrella_that_lifts_the_gold() -> None:
    labels = [5, 32, 33]
    ids = ["q1", "q2"]
    gold = {"q1": [5], "q2": [5]}
    # Art. 5 is second everywhere; Art. 32 alone lifts it in q1 only, Arts. 32 and 33 together in both
    log_scores = np.log(np.array([[0.3, 0.45, 0.25], [0.3, 0.05, 0.65]]))
    start = PriorCandidate(LawPriorConfig(0, 0, 0), 0.5, 0.0, 1.0, lexical_weight=0.5)
    by_k = {1: {5: [32]}, 2: {5: [32, 33]}}
    found = score_umbrellas(log_scores, ids, gold, start, by_k, labels, (0.0, 1.0))
    # weight 0 is scored once (it is the same ensemble for every k): 1 + 2 candidates
    assert [(c.umbrella_top_k, c.umbrella_weight) for c in found] == [(2, 1.0), (1, 1.0), (0, 0.0)]
    assert found[0].mrr == 1.0 and found[-1].mrr == 0.5
    assert found[1].mrr == 0.75  # one member only lifts Art. 5 in q1
    assert all(c.lexical_weight == 0.5 and c.config == start.config for c in found)
    prior_step = PriorCandidate(LawPriorConfig(0, 0, 0), 0.4, 0.0, 1.0)
    selection = Selection([prior_step], [start], found)
    assert selection.best is found[0]
    table = render_selection(selection).splitlines()
    assert table[0].startswith("addressee citations recitals") and len(table) == 1 + 1 + 1 + 3 + 2
    assert "-- step 2: lexical weight with the best prior --" in table
    assert "-- step 3: principle umbrellas on the best ensemble --" in table


def test_consequence_step_passes_the_fine_down_to_the_infringed_article() -> None:
    labels = [83, 17, 12]
    ids = ["q1", "q2"]
    gold = {"q1": [17], "q2": [12]}
    # the fines article leads both queries; the infringed one is second
    log_scores = np.log(np.array([[0.9, 0.08, 0.02], [0.9, 0.02, 0.08]]))
    start = PriorCandidate(LawPriorConfig(1, 1, 1), 0.5, 0.0, 1.0, lexical_weight=1.0)
    found = score_consequences(log_scores, ids, gold, start, {83: [17, 12]}, {}, labels, (0.0, 0.25, 0.75))
    assert [c.consequence_weight for c in found] == [0.75, 0.0, 0.25]  # 0.25 leaves Art. 83 first: ties 0
    assert found[0].mrr == 1.0 and found[1].mrr == 0.5
    assert all(c.config == start.config and c.lexical_weight == 1.0 for c in found)
    selection = Selection([start], [start], [], found)
    assert selection.best is found[0]
    table = render_selection(selection)
    assert "-- step 3" not in table and "-- step 4: consequence articles" in table


def test_sanction_step_weighs_the_umbrella_in_a_text_about_a_fine() -> None:
    """Step 5 scores every (rank, weight) pair with the classifier itself and restores its config."""
    pytest.importorskip("torch")
    from dataclasses import replace

    from compliance.models.classifier import load
    from tests.fixtures.classifier.tiny import shared_tiny_classifier

    clf = load(shared_tiny_classifier(), device="cpu", bf16=False)
    texts = [
        "The authority imposed a fine on the company for failing to notify a personal data breach in time",
        "Data subjects may ask for a copy of their personal data.",
    ]
    plain = replace(clf.config, consequence_clauses=False)
    clf.config = plain
    logits = clf.logits(texts)
    fine = clf.labels[int(logits[0].argmax())]
    other_first = clf.labels[int(logits[1].argmax())]
    assert other_first != fine
    # the umbrella: the sanction text's last article, over every article but the fine and itself
    umbrella = clf.labels[int(logits[0].argmin())]
    members = tuple(a for a in clf.labels if a not in (fine, umbrella))
    clf.config = replace(
        plain,
        consequences=((fine, members),),
        consequence_weight=0.0,
        umbrellas=((umbrella, members),),
        umbrella_weight=0.01,
        consequence_clauses=False,  # the tiny model's clauses would move the fine from first place
    )
    stored = clf.config
    ids = ["fine", "other"]
    gold = {"fine": [umbrella], "other": [other_first]}
    start = PriorCandidate(LawPriorConfig(1, 1, 1), 0.0, 0.0, 0.0, lexical_weight=1.0)
    found = score_sanctions(clf, texts, ids, gold, start, ((1,), (None, 50.0)))
    assert clf.config is stored
    assert [(c.sanction_top_k, c.sanction_umbrella_weight) for c in found] == [(1, 50.0), (1, None)]
    assert found[0].mrr == 1.0 and found[1].mrr < 1.0
    assert all(c.config == start.config and c.lexical_weight == 1.0 for c in found)
    selection = Selection([start], [start], [], [start], found)
    assert selection.best is found[0]
    assert "-- step 5: a text about a sanction" in render_selection(selection)


def _training_half_rows() -> list[dict[str, object]]:
    """The tiny fixture's policy sentences as GDPRhub rows of the training half, each its own lead summary."""
    from compliance.evaluation.queries import gdprhub_split
    from tests.fixtures.classifier.tiny import POLICY_SENTENCES

    ids = (f"case-{i}" for i in range(1000))
    train_ids = [i for i in ids if gdprhub_split(i) == "train"][: len(POLICY_SENTENCES)]
    gold = [32, 33, 15, 17, 32, 5]
    return [
        {"id": i, "text": t, "lead": t, "gdpr_articles": [a]}
        for i, t, a in zip(train_ids, POLICY_SENTENCES, gold, strict=True)
    ]


def test_floor_step_scores_every_floor_and_restores_the_classifier() -> None:
    """The floor under the duties of the regulated, on the classifier's stored ensemble: the grid points beside the
    prior without a floor, best objective first; the umbrella is never lifted and the config is put back."""
    pytest.importorskip("torch")
    from compliance.models.classifier import load
    from tests.fixtures.classifier.tiny import (
        RECITAL_MAP,
        mini_gdpr,
        shared_tiny_classifier,
    )

    clf = load(shared_tiny_classifier(), device="cpu", bf16=False)
    stored = clf.config
    rows = _training_half_rows()
    found = score_floors(clf, mini_gdpr(), RECITAL_MAP, rows, ((0.7,), (0.9, 0.001)))
    assert clf.config is stored
    assert sorted((r["floor"], r["floor_addressee"]) for r in found) == [(0.0, 0.7), (0.001, 0.7), (0.9, 0.7)]
    assert [r["objective"] for r in found] == sorted((r["objective"] for r in found), reverse=True)
    by_floor = {r["floor"]: r for r in found}
    # a floor of 0.9 lifts the articles that speak to data subjects and controllers, never the umbrella (Art. 5)
    assert by_floor[0.0]["floored"] == [] and by_floor[0.001]["floored"] == []
    assert by_floor[0.9]["floored"] and 5 not in by_floor[0.9]["floored"]
    for r in found:
        assert set(r) == {"floor", "floor_addressee", "facts", "lead", "objective", "floored"}
        assert 0.0 < r["facts"]["mrr"] <= 1.0 and r["facts"] == r["lead"]  # the same texts as facts and lead


def test_passage_step_scores_every_weight_and_restores_the_classifier() -> None:
    """The passage expert's weight on the classifier's stored ensemble: every grid point, best objective first; a
    classifier without passages gets the law's, embedded by its encoder, and is put back without them."""
    pytest.importorskip("torch")
    from compliance.models.classifier import load
    from experiments.prior_selection import score_passage_weights
    from tests.fixtures.classifier.tiny import mini_gdpr, shared_tiny_classifier

    clf = load(shared_tiny_classifier(), device="cpu", bf16=False)
    stored = clf.config
    assert clf.passages is None
    rows = _training_half_rows()
    found = score_passage_weights(clf, mini_gdpr(), rows, (0.0, 5.0, 50.0))
    assert clf.config is stored and clf.passages is None
    assert sorted(r["passage_weight"] for r in found) == [0.0, 5.0, 50.0]
    assert [r["objective"] for r in found] == sorted((r["objective"] for r in found), reverse=True)
    by_weight = {r["passage_weight"]: r for r in found}
    assert by_weight[0.0]["facts"] != by_weight[50.0]["facts"]  # the weight reaches the ranking
    for r in found:
        assert set(r) == {"passage_weight", "facts", "lead", "objective"} and r["facts"] == r["lead"]
