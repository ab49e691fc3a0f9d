"""A text about a sanction is read clause by clause as well (``ClassifierConfig.consequence_clauses``): when its
first article is a consequence article (Art. 83, fines), its logits are the mean of its own and its clauses'; every
other text keeps its logits."""

from __future__ import annotations

from dataclasses import replace

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


def test_only_a_text_whose_first_article_is_a_consequence_article_is_read_by_clauses() -> None:
    from compliance.models.classifier import load
    from tests.fixtures.classifier.tiny import shared_tiny_classifier

    clf = load(shared_tiny_classifier(), device="cpu", bf16=False)
    plain = replace(clf.config, consequence_clauses=False)
    clf.config = plain
    whole = clf.logits([SANCTION, OTHER])
    # make the sanction text's first article the consequence article, sanctioning every other article
    first = clf.labels[int(whole[0].argmax())]
    assert clf.labels[int(whole[1].argmax())] != first
    members = tuple(a for a in clf.labels if a != first)
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
