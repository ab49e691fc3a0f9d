"""Word analysis for BM25: tokenisation, stop words, punctuation and digit removal, stemming, and the
corpus-fitted idf denoising of seed 001 §4.2.

Seed 001 filters "words with idf score less than the average idf score of the stop-words"; those words
(*regulation*, *member*, *state* in EU law) occur so often that they carry no information in long queries. The
threshold is computed on the corpus the analyzer is fitted on, over raw lower-cased words; the noise list is kept
in the analyzer's state (so a saved index tokenises new documents and queries exactly as when it was built).

idf here is ``log(N / df)`` — the classic idf; BM25 uses its own idf at scoring time.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from compliance.retrieval.config import TokenizerConfig

__all__ = ["Analyzer", "english_stopwords"]

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
_HAS_DIGIT = re.compile(r"\d")


@lru_cache(maxsize=1)
def english_stopwords() -> frozenset[str]:
    """bm25s' English stop-word list (the same as Lucene/NLTK-style lists)."""
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(w.lower() for w in STOPWORDS_EN)


@lru_cache(maxsize=4)
def _stemmer(language: str) -> Any:
    import Stemmer

    return Stemmer.Stemmer(language)


class Analyzer:
    """Turns text into BM25 terms.

    Args:
        config: which filters run.
        noise_terms: terms removed by idf denoising (normally computed by :meth:`fit`).
    """

    def __init__(self, config: TokenizerConfig | None = None, noise_terms: Iterable[str] = ()) -> None:
        self.config = config or TokenizerConfig()
        self.noise_terms: frozenset[str] = frozenset(noise_terms)
        self.stopword_idf: float | None = None
        self._stop = english_stopwords() if self.config.stopwords else frozenset()

    # -- stages ---------------------------------------------------------------------------------------------
    def words(self, text: str) -> list[str]:
        """Word tokens after lower-casing, punctuation and digit removal (stop words still in)."""
        cfg = self.config
        if cfg.lowercase:
            text = text.lower()
        # whole-list filters, not a loop over match objects: every paragraph of an audit passes through here
        out: list[str] = _WORD.findall(text)
        if "’" in text:
            out = [w.replace("’", "'") for w in out]
        # ``punctuation``: a token of _WORD always holds a letter or digit, so no punctuation-only token is left
        if cfg.digits and _HAS_DIGIT.search(text):
            out = [w for w in out if not _HAS_DIGIT.search(w)]
        if cfg.min_length > 1:
            out = [w for w in out if len(w) >= cfg.min_length]
        return out

    def _terms_from_words(self, words: Sequence[str]) -> list[str]:
        kept = [w for w in words if w not in self._stop] if self._stop else list(words)
        if self.config.stem and kept:
            kept = list(_stemmer("english").stemWords(kept))
        return kept

    def tokenize(self, text: str) -> list[str]:
        """Terms of ``text``: words, minus stop words, stemmed, minus the fitted noise terms."""
        terms = self._terms_from_words(self.words(text))
        if self.noise_terms:
            terms = [t for t in terms if t not in self.noise_terms]
        return terms

    def tokenize_many(self, texts: Iterable[str]) -> list[list[str]]:
        return [self.tokenize(t) for t in texts]

    # -- fitting --------------------------------------------------------------------------------------------
    def fit(self, texts: Sequence[str]) -> Analyzer:
        """Compute the idf-denoising noise terms on ``texts`` (no-op unless ``idf_denoise``); returns self.

        A term is noise when ``log(N/df(term)) < mean over stop words present of log(N/df(stop word))``.
        Without stop words in the corpus (or with ``stopwords=False``) nothing is removed.
        """
        self.fit_transform(texts)
        return self

    def fit_transform(self, texts: Sequence[str]) -> list[list[str]]:
        """:meth:`fit` and return the terms of every text (each text is analysed once)."""
        self.noise_terms = frozenset()
        self.stopword_idf = None
        per_text: list[list[str]] = []
        word_df: Counter[str] = Counter()
        term_df: Counter[str] = Counter()
        for text in texts:
            words = self.words(text)
            terms = self._terms_from_words(words)
            per_text.append(terms)
            if self.config.idf_denoise:
                word_df.update(set(words))
                term_df.update(set(terms))
        if not self.config.idf_denoise or not texts:
            return per_text
        n = len(texts)
        stop = english_stopwords()
        stop_idfs = [math.log(n / df) for w, df in word_df.items() if w in stop]
        if not stop_idfs:
            return per_text
        threshold = sum(stop_idfs) / len(stop_idfs)
        self.stopword_idf = threshold
        self.noise_terms = frozenset(t for t, df in term_df.items() if math.log(n / df) < threshold)
        if not self.noise_terms:
            return per_text
        noise = self.noise_terms
        return [[t for t in terms if t not in noise] for terms in per_text]

    # -- persistence ----------------------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        return {
            "config": self.config.to_dict(),
            "noise_terms": sorted(self.noise_terms),
            "stopword_idf": self.stopword_idf,
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Analyzer:
        analyzer = cls(TokenizerConfig.model_validate(state["config"]), state.get("noise_terms", ()))
        analyzer.stopword_idf = state.get("stopword_idf")
        return analyzer
