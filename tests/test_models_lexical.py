"""The lexical expert's evidence terms: a ranked batch is tokenised once (issue 12, the audit's Python around
the forward)."""

from __future__ import annotations

from typing import Any

import pytest

ARTICLES = {
    30: "Records of processing activities. Each controller shall maintain a record of processing activities.",
    32: "Security of processing. Encryption of personal data and the ability to restore availability.",
    33: "Notification of a personal data breach to the supervisory authority within 72 hours.",
}
TEXTS = [
    "Laptops are protected by full-disk encryption and backups restore availability within a day.",
    "A personal data breach is notified to the supervisory authority within 72 hours of discovery.",
    "The register of processing records every processing activity of the controller.",
]


def test_shared_terms_of_a_scored_batch_reuse_its_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("bm25s")
    from compliance.models.lexical import LexicalArticleScorer

    fresh = LexicalArticleScorer(ARTICLES)
    expected = {(t, a): fresh.shared_terms(t, a) for t in TEXTS for a in ARTICLES}
    other = "Access to the server room is recorded in a log of processing."
    expected_other = fresh.shared_terms(other, 30)
    assert expected[(TEXTS[0], 32)] and expected[(TEXTS[1], 33)] and expected[(TEXTS[2], 30)]

    scorer = LexicalArticleScorer(ARTICLES)
    for a in ARTICLES:  # the articles' own terms are tokenised once, on first use
        scorer.shared_terms("warm up", a)
    scorer.scores(TEXTS)
    calls: list[str] = []
    original = LexicalArticleScorer._terms

    def counting(self: Any, text: str) -> list[str]:
        calls.append(text)
        return original(self, text)

    monkeypatch.setattr(LexicalArticleScorer, "_terms", counting)
    got = {(t, a): scorer.shared_terms(t, a) for t in TEXTS for a in ARTICLES}
    assert got == expected
    assert calls == []  # every text of the scored batch: no second tokenisation
    assert scorer.shared_terms(other, 30) == expected_other
    assert calls == [other]  # a text outside the batch is tokenised on its own
