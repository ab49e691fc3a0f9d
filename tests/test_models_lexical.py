"""The lexical expert's evidence terms: a ranked batch is tokenised once (issue 12, the audit's Python around
the forward)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
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
    original = LexicalArticleScorer.terms

    def counting(self: Any, text: str) -> list[str]:
        calls.append(text)
        return original(self, text)

    monkeypatch.setattr(LexicalArticleScorer, "terms", counting)
    got = {(t, a): scorer.shared_terms(t, a) for t in TEXTS for a in ARTICLES}
    assert got == expected
    assert calls == []  # every text of the scored batch: no second tokenisation
    assert scorer.shared_terms(other, 30) == expected_other
    assert calls == [other]  # a text outside the batch is tokenised on its own


def test_function_words_and_numbers_are_no_terms_of_the_law(tmp_path: Any) -> None:
    """ "after" and "than" are rare in 99 articles, so BM25 weighs them like legal terms, and a number in the law
    is a cross-reference or Art. 33's 72 hours, in a policy a length or an amount: with NLTK's stop words and no
    letterless tokens a screen lock "after five minutes" and a fine of "€72,000" share nothing with Art. 33."""
    pytest.importorskip("bm25s")
    from compliance.models.lexical import LexicalArticleScorer

    articles = {
        **ARTICLES,
        33: "Notification of a personal data breach. The controller shall notify it not later than 72 hours after "
        "having become aware of it.",
    }
    lock = "Workstations lock automatically after no more than five minutes of inactivity."
    fine = "The DPA fined a company €72,000 for the loss of a laptop."
    old = LexicalArticleScorer(articles)
    assert old.analysis == LexicalArticleScorer.DEFAULT_ANALYSIS
    assert {"after", "than"} <= set(old.shared_terms(lock, 33))
    assert "72" in old.shared_terms(fine, 33)
    assert old.scores([lock])[0][old.labels.index(33)] > 0

    new = LexicalArticleScorer(articles, stopwords="en_plus", numbers=False)
    assert new.shared_terms(lock, 33) == ()
    assert new.shared_terms(fine, 33) == ()
    assert not new.scores([lock]).any()
    # words that hold a digit and a letter stay terms, and the law's own words still match
    assert "2fa" in new.terms("2FA is required")
    assert set(new.shared_terms("A personal data breach is notified within 72 hours.", 33)) >= {
        "breach",
        "notifi",
    }

    # the analysis is part of the saved expert; a file that names none is read as earlier models wrote it
    new.save(tmp_path)
    again = LexicalArticleScorer.load(tmp_path)
    assert again.analysis == {"stopwords": "en_plus", "numbers": False}
    assert np.array_equal(again.scores([fine, lock]), new.scores([fine, lock]))
    raw = json.loads((tmp_path / "lexical.json").read_text())
    del raw["stopwords"], raw["numbers"]
    (tmp_path / "lexical.json").write_text(json.dumps(raw))
    assert LexicalArticleScorer.load(tmp_path).analysis == LexicalArticleScorer.DEFAULT_ANALYSIS


def test_an_unknown_stop_word_list_is_refused() -> None:
    pytest.importorskip("bm25s")
    from compliance.errors import ModelError
    from compliance.models.lexical import LexicalArticleScorer

    with pytest.raises(ModelError, match="stop-word list"):
        LexicalArticleScorer(ARTICLES, stopwords="klingon")
