"""The lexical expert of the article classifier: BM25 (bm25s, English stop words, Snowball stemming) over each
article's title and training sentences.

The encoder generalises over wording; BM25 rewards the exact legal vocabulary a control shares with an article
("erasure", "breach", "processor", "impact assessment"). Their log-linear ensemble is better than either on
realistic text (``docs/classifier.md``). The scorer keeps its documents, so a saved model rebuilds the index from
its own directory (``lexical.json``) in milliseconds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from compliance.errors import ModelError

__all__ = ["LEXICAL_FILE", "LexicalArticleScorer"]

LEXICAL_FILE = "lexical.json"


class LexicalArticleScorer:
    """BM25 scores of a text against every article document, columns in ``labels`` order.

    Args:
        documents: article number → text to index (title and training sentences).
        k1: BM25 term-frequency saturation.
        b: BM25 length normalisation.
    """

    def __init__(self, documents: Mapping[int, str], k1: float = 1.2, b: float = 0.75) -> None:
        import bm25s
        import Stemmer

        if not documents:
            raise ModelError("a lexical scorer needs at least one article document")
        self.documents = {int(a): str(t) for a, t in documents.items()}
        self.labels = sorted(self.documents)
        self.k1 = k1
        self.b = b
        self._stemmer = Stemmer.Stemmer("english")
        corpus = bm25s.tokenize(
            [self.documents[a] for a in self.labels],
            stopwords="en",
            stemmer=self._stemmer,
            show_progress=False,
        )
        self._retriever = bm25s.BM25(k1=k1, b=b)
        self._retriever.index(corpus, show_progress=False)
        self._doc_terms: dict[int, set[str]] = {}
        self._df: dict[str, int] = {}
        # the last text's terms: evidence asks for one text's shared terms with each of its top articles in turn
        self._last: tuple[str, frozenset[str]] = ("", frozenset())
        # the terms of the texts :meth:`scores` tokenised last: the evidence of a batch's ranking asks for the
        # shared terms of exactly those texts (replaced whole, never mutated: safe to read from another thread)
        self._scored: dict[str, frozenset[str]] = {}

    def _terms(self, text: str) -> list[str]:
        import bm25s

        tokens = bm25s.tokenize(
            [text], stopwords="en", stemmer=self._stemmer, show_progress=False, return_ids=False
        )
        return list(tokens[0]) if tokens else []

    def shared_terms(self, text: str, article: int, limit: int = 8) -> tuple[str, ...]:
        """The stemmed terms ``text`` shares with ``article``'s indexed text, rarest across the articles first."""
        if article not in self.documents:
            return ()
        if article not in self._doc_terms:
            self._doc_terms[article] = set(self._terms(self.documents[article]))
        if not self._df:
            for a in self.labels:
                for t in set(self._terms(self.documents[a])):
                    self._df[t] = self._df.get(t, 0) + 1
        last_text, terms = self._last
        if last_text != text or not last_text:
            known = self._scored.get(text)
            terms = known if known is not None else frozenset(self._terms(text))
            self._last = (text, terms)
        shared = terms & self._doc_terms[article]
        return tuple(sorted(shared, key=lambda t: (self._df.get(t, 0), t))[:limit])

    def scores(self, texts: Sequence[str]) -> np.ndarray:
        """Raw BM25 scores, shape (len(texts), len(labels)); a text with no indexed term scores 0 everywhere."""
        import bm25s

        out = np.zeros((len(texts), len(self.labels)))
        if not texts:
            return out
        tokenized = bm25s.tokenize(
            list(texts), stopwords="en", stemmer=self._stemmer, show_progress=False, return_ids=False
        )
        scored: dict[str, frozenset[str]] = {}
        for i, tokens in enumerate(tokenized):
            scored[texts[i]] = frozenset(tokens)
            if tokens:
                out[i] = self._retriever.get_scores(list(tokens))
        self._scored = scored
        return out

    def log_probs(self, texts: Sequence[str]) -> np.ndarray:
        """BM25 as a distribution over the articles: ``log_softmax(scores / std(scores))`` per text.

        Dividing by the row's standard deviation makes the spread comparable between short controls and long
        narratives; a text sharing no term with any article gets the uniform distribution.
        """
        s = self.scores(texts)
        z = s / (s.std(axis=1, keepdims=True) + 1e-9)
        z -= z.max(axis=1, keepdims=True)
        return z - np.log(np.exp(z).sum(axis=1, keepdims=True))

    # -- persistence --------------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "method": "bm25s",
            "k1": self.k1,
            "b": self.b,
            "stopwords": "en",
            "stemmer": "snowball-english",
            "documents": {str(a): self.documents[a] for a in self.labels},
        }

    def save(self, directory: Path) -> Path:
        path = directory / LEXICAL_FILE
        path.write_text(json.dumps(self.to_dict(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        return path

    @classmethod
    def load(cls, directory: Path) -> LexicalArticleScorer:
        path = directory / LEXICAL_FILE
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            return cls(
                {int(a): t for a, t in raw["documents"].items()}, k1=float(raw["k1"]), b=float(raw["b"])
            )
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ModelError(f"{path}: not a valid lexical scorer file: {e}") from e
