"""A text about a sanction is read clause by clause as well (``ClassifierConfig.consequence_clauses``): when a
consequence article (Art. 83, fines) ranks among its first ``consequence_top_k`` articles, its logits are the mean
of its own and its clauses', and its umbrellas may weigh differently (``sanction_umbrella_weight``); every other
text keeps its logits and weights."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from compliance.text import split_clauses


def test_a_sanction_and_what_it_was_for_are_separate_clauses() -> None:
    text = (
        "The Spanish DPA fined a controller €3,000 for failing to inform the data subjects, which it had "
        "promised. The decision was appealed."
    )
    assert split_clauses(text) == [
        "The Spanish DPA fined a controller €3,000",
        "for failing to inform the data subjects",
        "which it had promised.",
        "The decision was appealed.",
    ]
    assert split_clauses("Laptops are encrypted.") == ["Laptops are encrypted."]
    assert split_clauses("Fined, by far.") == []  # pieces under three words are dropped


pytest.importorskip("torch")

SANCTION = (
    "The authority imposed a fine on the company for failing to notify a personal data breach within 72 hours"
)
OTHER = "Data subjects may ask for a copy of their personal data."


def _tiny_classifier() -> tuple[Any, Any, np.ndarray]:
    """The tiny classifier reading no clauses, and its logits of the sanction text and the other text."""
    from compliance.models.classifier import load
    from tests.fixtures.classifier.tiny import shared_tiny_classifier

    clf = load(shared_tiny_classifier(), device="cpu", bf16=False)
    plain = replace(clf.config, consequence_clauses=False)
    clf.config = plain
    return clf, plain, clf.logits([SANCTION, OTHER])


def _sanction_first(clf: Any, logits: np.ndarray) -> tuple[int, tuple[int, ...]]:
    """The sanction text's first article, made the consequence article over every other article (the other text's
    first article is another)."""
    first = clf.labels[int(logits[0].argmax())]
    assert clf.labels[int(logits[1].argmax())] != first
    return first, tuple(a for a in clf.labels if a != first)


def test_only_a_text_whose_first_article_is_a_consequence_article_is_read_by_clauses() -> None:
    clf, plain, whole = _tiny_classifier()
    # make the sanction text's first article the consequence article, sanctioning every other article
    first, members = _sanction_first(clf, whole)
    clf.config = replace(plain, consequences=((first, members),), consequence_clauses=True)
    read = clf.logits([SANCTION, OTHER])
    clauses = split_clauses(SANCTION)
    assert len(clauses) == 2
    clf.config = plain
    expected = (whole[0] + clf.logits(clauses).sum(axis=0)) / (1 + len(clauses))
    np.testing.assert_allclose(read[0], expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(read[1], whole[1])
    # without consequence articles the setting does nothing
    clf.config = replace(plain, consequence_clauses=True)
    np.testing.assert_array_equal(clf.logits([SANCTION, OTHER]), whole)


def test_a_consequence_article_among_the_first_k_makes_a_text_about_a_sanction() -> None:
    """``consequence_top_k``: the consequence article need not rank first; the text is then read by clauses too."""
    clf, plain, whole = _tiny_classifier()
    second = clf.labels[int(np.argsort(-whole[0])[1])]  # the sanction text's second article
    rank_other = int((whole[1] > whole[1][clf.labels.index(second)]).sum())  # 0 = first
    members = tuple(a for a in clf.labels if a != second)
    sanctions = replace(plain, consequences=((second, members),), consequence_clauses=True)
    clf.config = replace(sanctions, consequence_top_k=1)
    np.testing.assert_array_equal(clf.about_sanction(whole), [False, rank_other < 1])
    if rank_other >= 1:
        np.testing.assert_array_equal(clf.logits([SANCTION, OTHER]), whole)  # second is not first: unread
    clf.config = replace(sanctions, consequence_top_k=2)
    assert clf.about_sanction(whole)[0]
    assert bool(clf.about_sanction(whole)[1]) == (rank_other < 2)
    read = clf.logits([SANCTION])
    clf.config = plain
    clauses = split_clauses(SANCTION)
    expected = (whole[0] + clf.logits(clauses).sum(axis=0)) / (1 + len(clauses))
    np.testing.assert_allclose(read[0], expected, rtol=1e-5, atol=1e-5)
    # a model without consequence articles has no text about a sanction
    assert not clf.about_sanction(whole).any()


def test_the_umbrellas_weigh_differently_in_a_text_about_a_sanction() -> None:
    """``sanction_umbrella_weight``: the umbrellas' weight in the texts about a sanction only; every other text is
    scored with ``umbrella_weight``."""
    clf, plain, logits = _tiny_classifier()
    first, members = _sanction_first(clf, logits)
    umbrella = next(a for a in clf.labels if a != first)
    base = replace(
        plain,
        consequences=((first, members),),
        consequence_weight=0.5,
        umbrellas=((umbrella, tuple(a for a in members if a != umbrella)),),
        umbrella_weight=0.25,
    )
    scores = {}
    for name, cfg in {
        "low": base,
        "high": replace(base, umbrella_weight=1.0),
        "sanction": replace(base, sanction_umbrella_weight=1.0),
    }.items():
        clf.config = cfg
        scores[name] = clf.calibrate(logits)
    np.testing.assert_allclose(scores["sanction"][0], scores["high"][0])
    np.testing.assert_allclose(scores["sanction"][1], scores["low"][1])
    assert not np.allclose(scores["high"][0], scores["low"][0])
    # the explanation's umbrella share follows the same weight
    clf.config = replace(base, sanction_umbrella_weight=1.0)
    ranked = clf.rank([SANCTION], top_k=len(clf.labels), explain=True)[0]
    clf.config = replace(base, umbrella_weight=1.0)
    same = clf.rank([SANCTION], top_k=len(clf.labels), explain=True)[0]
    assert [(s.article, round(s.score, 6)) for s in ranked] == [(s.article, round(s.score, 6)) for s in same]
