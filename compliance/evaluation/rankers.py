"""Article rankers that the evaluator compares: the trained classifier and the three baselines that must always
stand beside it (frequency prior, BM25 over the articles, the zero-shot base encoder), plus prior fusion.

Every ranker has ``name``, ``labels`` (article numbers, in column order) and ``scores(texts)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from compliance.models.data import ArticleUnits
from compliance.rules.corpus import Law

if TYPE_CHECKING:  # pragma: no cover
    from compliance.models.classifier import ArticleClassifier
    from compliance.models.encoder import Encoder

__all__ = [
    "BM25Ranker",
    "ClassifierRanker",
    "FrequencyPrior",
    "PriorFusion",
    "ZeroShotRanker",
    "article_documents",
]


def article_documents(law: Law) -> dict[int, str]:
    """Article number → ``title`` + full text, for the lexical and zero-shot baselines."""
    out: dict[int, str] = {}
    for art in law.articles:
        if art.number and art.number.isdigit():
            out[int(art.number)] = f"{art.title or ''}\n{law.text_of(art.key)}".strip()
    return out


class FrequencyPrior:
    """Ranks every text the same way: by how often each article occurs in some labelled data (or by any other
    fixed article weights, e.g. the law-derived prior).

    Args:
        counts: article → frequency or weight (articles absent get 0; ties are broken by article number).
        labels: all article numbers.
        name: shown in reports.
    """

    def __init__(self, counts: Mapping[int, float], labels: Sequence[int], name: str = "prior") -> None:
        self.name = name
        self._labels = list(labels)
        n = len(self._labels)
        # a tiny decreasing tie-breaker keeps the order deterministic (lower article number first)
        self._row = np.array([float(counts.get(a, 0.0)) + (n - i) * 1e-9 for i, a in enumerate(self._labels)])

    @property
    def labels(self) -> list[int]:
        return self._labels

    def distribution(self) -> np.ndarray:
        """The prior as probabilities (add-one smoothed), columns in :attr:`labels` order."""
        row = np.floor(self._row) + 1.0
        return row / row.sum()

    def scores(self, texts: Sequence[str]) -> np.ndarray:
        return np.tile(self._row, (len(texts), 1))


class BM25Ranker:
    """BM25 (bm25s, Lucene variant, English stop words, Snowball stemming) over title + article text.

    Pass ``documents`` (article → text) to index something else, e.g. only the training units so that held-out
    query sentences are not in the index. The same scorer is the classifier's lexical expert.
    """

    def __init__(
        self,
        law: Law,
        name: str = "bm25",
        k1: float = 1.2,
        b: float = 0.75,
        documents: Mapping[int, str] | None = None,
    ) -> None:
        from compliance.models.lexical import LexicalArticleScorer

        self.name = name
        self._scorer = LexicalArticleScorer(
            dict(documents) if documents is not None else article_documents(law), k1=k1, b=b
        )

    @property
    def labels(self) -> list[int]:
        return list(self._scorer.labels)

    def scores(self, texts: Sequence[str]) -> np.ndarray:
        return self._scorer.scores(texts)


class ZeroShotRanker:
    """Cosine similarity between the text and each article, with the *base* encoder (no fine-tuning).

    An article is represented by the normalised mean of the embeddings of its title and its units (sentences,
    flattened points), the same representation that warm-starts the classifier head.
    """

    def __init__(
        self,
        law: Law,
        encoder: Encoder,
        name: str = "zero-shot",
        max_length: int = 256,
        articles: Sequence[ArticleUnits] | None = None,
    ) -> None:
        import torch

        from compliance.models.data import article_units

        self.name = name
        self.encoder = encoder
        self.max_length = max_length
        arts = list(articles) if articles is not None else article_units(law)
        self._labels = [a.number for a in arts]
        texts = [t for a in arts for t in (a.title, *a.units)]
        owner = [i for i, a in enumerate(arts) for _ in (a.title, *a.units)]
        emb = encoder.embed(texts, max_length=128)
        sums = torch.zeros((len(arts), emb.shape[1]))
        sums.index_add_(0, torch.tensor(owner), emb)
        self._matrix = torch.nn.functional.normalize(sums, dim=-1).numpy()

    @property
    def labels(self) -> list[int]:
        return self._labels

    def scores(self, texts: Sequence[str]) -> np.ndarray:
        q = self.encoder.embed(list(texts), max_length=self.max_length).numpy()
        return np.asarray(q @ self._matrix.T, dtype=np.float64)


class ClassifierRanker:
    """The trained classifier's calibrated probabilities; ``prior=False`` / ``lexical=False`` /
    ``umbrella=False`` / ``consequence=False`` / ``citation=False`` leave out its label prior / lexical expert /
    principle umbrellas / consequence articles / explicit citations (ablations).

    Logits and lexical scores are cached per text; pass another ranker's ``cache`` to score the same model several
    ways for the price of one forward pass.
    """

    probabilistic = True  # scores are calibrated probabilities: the evaluator reports their ECE

    def __init__(
        self,
        classifier: ArticleClassifier,
        name: str = "classifier",
        *,
        prior: bool = True,
        lexical: bool = True,
        umbrella: bool = True,
        consequence: bool = True,
        citation: bool = True,
        cache: dict[str, tuple[np.ndarray, np.ndarray | None]] | None = None,
    ) -> None:
        self.classifier = classifier
        self.name = name
        self.prior = prior
        self.lexical = lexical
        self.umbrella = umbrella
        self.consequence = consequence
        self.citation = citation
        self.cache: dict[str, tuple[np.ndarray, np.ndarray | None]] = cache if cache is not None else {}

    @property
    def labels(self) -> list[int]:
        return list(self.classifier.labels)

    def scores(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, len(self.labels)))
        todo = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if todo:
            logits = self.classifier.logits(todo)
            lexical = self.classifier.lexical_log_probs(todo)
            for i, t in enumerate(todo):
                self.cache[t] = (logits[i], lexical[i] if lexical is not None else None)
        rows = [self.cache[t] for t in texts]
        lex = None
        if self.lexical and rows[0][1] is not None:
            lex = np.stack([r[1] for r in rows if r[1] is not None])
        return self.classifier.calibrate(
            np.stack([r[0] for r in rows]),
            prior=self.prior,
            lexical_log_probs=lex,
            umbrella=self.umbrella,
            consequence=self.consequence,
            citations=self.classifier.citations(texts) if self.citation else None,
        )


class PriorFusion:
    """``log p_model(a | x) + weight * log prior(a)``: the classifier is trained on balanced data (a uniform
    prior), so a realistic article prior can be put back in at scoring time."""

    def __init__(
        self, ranker: Any, prior: FrequencyPrior, weight: float = 1.0, name: str | None = None
    ) -> None:
        if list(ranker.labels) != list(prior.labels):
            raise ValueError("ranker and prior must use the same label order")
        self.ranker = ranker
        self.weight = weight
        self._log_prior = np.log(prior.distribution())
        self.name = name or f"{ranker.name}+prior(w={weight:g})"

    @property
    def labels(self) -> list[int]:
        return list(self.ranker.labels)

    def scores(self, texts: Sequence[str]) -> np.ndarray:
        p = np.clip(self.ranker.scores(texts), 1e-12, None)
        return np.log(p) + self.weight * self._log_prior
