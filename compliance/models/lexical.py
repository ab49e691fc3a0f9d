"""The lexical expert of the article classifier: BM25 (bm25s, English stop words, Snowball stemming) over each
article's title and training sentences.

What counts as a term is part of the expert (:attr:`LexicalArticleScorer.stopwords`,
:attr:`LexicalArticleScorer.numbers`, stored in ``lexical.json``). A model trained since session 35 drops the
179 English function words of NLTK's list ("after", "only", "than", "when", "has"): in a collection of 99
articles each is rare enough to weigh like a legal term ("after" is in few articles, Art. 33's "after having
become aware" among them), so a control's "disabled after five minutes" spoke of a breach. It also drops tokens
without a letter: a number in the law is almost always a cross-reference ("Articles 13 and 14", "Regulation (EU)
2016/679"), in a policy a length, a duration or an amount ("at least 14 characters", "fined €72,000"), so the two
never mean the same. Earlier models keep the 33 words of bm25s' short list and every number (what their
``lexical.json`` says, or says nothing of).

The encoder generalises over wording; BM25 rewards the exact legal vocabulary a control shares with an article
("erasure", "breach", "processor", "impact assessment"). Their log-linear ensemble is better than either on
realistic text (``docs/classifier.md``). The scorer keeps its documents, so a saved model rebuilds the index from
its own directory (``lexical.json``) in milliseconds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from compliance.errors import ModelError

__all__ = ["LEXICAL_FILE", "LexicalArticleScorer"]

LEXICAL_FILE = "lexical.json"

#: the stop-word lists a scorer can drop, by bm25s' names: its short English list (33 words) and NLTK's (179)
STOPWORD_LISTS = ("en", "en_plus")
#: bm25s' (and scikit-learn's) token pattern: two or more word characters
_ANY_TOKEN = r"(?u)\b\w\w+\b"
#: the same, but a token must hold a letter: "2fa" and "iso27001" stay, "14", "72" and "2016" go
_WORD_TOKEN = r"(?u)\b(?=\w*[^\W\d])\w\w+\b"


class LexicalArticleScorer:
    """BM25 scores of a text against every article document, columns in ``labels`` order.

    Args:
        documents: article number → text to index (title and training sentences).
        k1: BM25 term-frequency saturation.
        b: BM25 length normalisation.
        stopwords: the English stop words dropped: ``"en"``, bm25s' short list (33 words), or ``"en_plus"``,
            NLTK's list (179 words: "after", "only", "than", "when", "has" too; not "within" or "every").
        numbers: keep tokens without a letter ("14", "72", "2016"); False drops them.

    Raises:
        ModelError: no documents, or an unknown stop-word list.
    """

    def __init__(
        self,
        documents: Mapping[int, str],
        k1: float = 1.2,
        b: float = 0.75,
        *,
        stopwords: str = "en",
        numbers: bool = True,
    ) -> None:
        import bm25s
        import Stemmer

        if not documents:
            raise ModelError("a lexical scorer needs at least one article document")
        if stopwords not in STOPWORD_LISTS:
            raise ModelError(
                f"unknown stop-word list {stopwords!r} for the lexical expert; choose one of "
                f"{', '.join(STOPWORD_LISTS)}"
            )
        self.documents = {int(a): str(t) for a, t in documents.items()}
        self.labels = sorted(self.documents)
        self.k1 = k1
        self.b = b
        self.stopwords = stopwords
        self.numbers = bool(numbers)
        self._pattern = _ANY_TOKEN if self.numbers else _WORD_TOKEN
        self._stemmer = Stemmer.Stemmer("english")
        corpus = bm25s.tokenize(
            [self.documents[a] for a in self.labels],
            token_pattern=self._pattern,
            stopwords=self.stopwords,
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

    #: the analysis of a scorer built without one, and of every ``lexical.json`` that names none
    DEFAULT_ANALYSIS: ClassVar[dict[str, Any]] = {"stopwords": "en", "numbers": True}

    @property
    def analysis(self) -> dict[str, Any]:
        """What counts as a term (stored in ``lexical.json`` and in an audit's suggestion version)."""
        return {"stopwords": self.stopwords, "numbers": self.numbers}

    def _tokenize(self, texts: list[str]) -> list[list[str]]:
        import bm25s

        tokens = bm25s.tokenize(
            texts,
            token_pattern=self._pattern,
            stopwords=self.stopwords,
            stemmer=self._stemmer,
            show_progress=False,
            return_ids=False,
        )
        return [list(t) for t in tokens]

    def terms(self, text: str) -> list[str]:
        """``text``'s indexed terms (stemmed, stop words and, unless ``numbers``, numbers dropped), in order."""
        tokens = self._tokenize([text])
        return tokens[0] if tokens else []

    @property
    def document_frequency(self) -> Mapping[str, int]:
        """Term → the number of article documents that hold it (counted once, on first use)."""
        if not self._df:
            for a in self.labels:
                for t in set(self.terms(self.documents[a])):
                    self._df[t] = self._df.get(t, 0) + 1
        return self._df

    def shared_terms(self, text: str, article: int, limit: int = 8) -> tuple[str, ...]:
        """The stemmed terms ``text`` shares with ``article``'s indexed text, rarest across the articles first."""
        if article not in self.documents:
            return ()
        if article not in self._doc_terms:
            self._doc_terms[article] = set(self.terms(self.documents[article]))
        df = self.document_frequency
        last_text, terms = self._last
        if last_text != text or not last_text:
            known = self._scored.get(text)
            terms = known if known is not None else frozenset(self.terms(text))
            self._last = (text, terms)
        shared = terms & self._doc_terms[article]
        return tuple(sorted(shared, key=lambda t: (df.get(t, 0), t))[:limit])

    def scores(self, texts: Sequence[str]) -> np.ndarray:
        """Raw BM25 scores, shape (len(texts), len(labels)); a text with no indexed term scores 0 everywhere."""
        out = np.zeros((len(texts), len(self.labels)))
        if not texts:
            return out
        tokenized = self._tokenize(list(texts))
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
            "stopwords": self.stopwords,
            "numbers": self.numbers,
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
            # a file without the analysis keys was written by a model that kept the short list and numbers
            return cls(
                {int(a): t for a, t in raw["documents"].items()},
                k1=float(raw["k1"]),
                b=float(raw["b"]),
                stopwords=str(raw.get("stopwords", "en")),
                numbers=bool(raw.get("numbers", True)),
            )
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ModelError(f"{path}: not a valid lexical scorer file: {e}") from e
