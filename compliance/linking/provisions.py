"""The provision within an article: which numbered paragraph or point of the article the classifier ranked fits a
paragraph best (GDPR Art. 32(1)(a) within Art. 32).

The article ranking stays the classifier's; this only looks inside the chosen article. The article's paragraphs and
points are passages (:func:`compliance.rules.passages.provision_passages`, each with the article title); a
paragraph's text is scored against the passages of that article by BM25 (idf over every passage of the law), and
the best passage's provision is the target, with its own score. An article without finer structure, or a text
sharing no term with any of its passages, has no provision target (the link stays on the article).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from compliance.retrieval.bm25 import BM25Index
    from compliance.rules.corpus import Law

__all__ = ["ProvisionPicker", "ProvisionTarget"]


@dataclass(frozen=True, slots=True)
class ProvisionTarget:
    """The paragraph or point of an article that fits a text best.

    Attributes:
        key: ``art:32/par:1/pt:a``.
        label: ``Art. 32(1)(a)``.
        score: its BM25 score (or cosine similarity, method ``dense``) against the text.
        share: ``score`` over the sum of the article's passages' scores (how clearly it wins, 0–1).
        runner_up: the second-best provision's key, if any.
        method: ``bm25`` or ``dense``.
    """

    key: str
    label: str
    score: float
    share: float
    runner_up: str | None = None
    method: str = "bm25"

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "label": self.label,
            "score": round(self.score, 4),
            "share": round(self.share, 4),
            "runner_up": self.runner_up,
            "method": self.method,
        }


class ProvisionPicker:
    """BM25 over the paragraphs and points of one law's articles (see the module docstring).

    ``encode`` (texts → L2-normalised vectors, e.g. ``LinkDecisionModel.encode``) adds the dense encoder (the
    passages are embedded once): ``bm25_weight`` 0 picks by cosine alone (``method`` ``dense``), between 0 and 1
    by ``w · bm25 / max + (1 − w) · min-max-scaled cosine`` over the article's passages (``hybrid``, 0.5 when an
    encoder is given).
    """

    def __init__(
        self,
        law: Law,
        *,
        passage_words: int = 120,
        encode: Callable[[Sequence[str]], np.ndarray] | None = None,
        bm25_weight: float | None = None,
    ) -> None:
        from compliance.retrieval.bm25 import BM25Index
        from compliance.retrieval.types import Document
        from compliance.rules.passages import provision_passages

        articles = [a.key for a in law.articles]
        texts, owners = provision_passages(law, articles, passage_words)
        self.law = law
        self.owners = owners
        self._by_article: dict[str, list[int]] = defaultdict(list)
        for i, owner in enumerate(owners):
            self._by_article[owner.split("/", 1)[0]].append(i)
        self.index: BM25Index = BM25Index.build([Document(str(i), t) for i, t in enumerate(texts)])
        self.encode = encode
        self.bm25_weight = 1.0 if encode is None else 0.5 if bm25_weight is None else float(bm25_weight)
        self.method = "bm25" if self.bm25_weight >= 1.0 else "dense" if self.bm25_weight <= 0.0 else "hybrid"
        self._vectors = encode(texts) if encode is not None else None
        self._last_bm25: tuple[str, np.ndarray] | None = None

    def articles_with_provisions(self) -> set[str]:
        """Article keys that have more than one provision to choose from."""
        return {a for a, rows in self._by_article.items() if len({self.owners[i] for i in rows}) > 1}

    def pick(self, text: str, article: str | int) -> ProvisionTarget | None:
        """The best paragraph or point of ``article`` (``"art:32"`` or ``32``) for ``text``, or None."""
        from compliance.rules.references import provision_label

        key = article if isinstance(article, str) else f"art:{article}"
        rows = self._by_article.get(key, [])
        if len({self.owners[i] for i in rows}) < 2:
            return None
        scores = self._scores(text, rows)
        best_by_owner: dict[str, float] = {}
        for row, score in zip(rows, scores, strict=True):
            owner = self.owners[row]
            best_by_owner[owner] = max(best_by_owner.get(owner, 0.0), float(score))
        ranked = sorted(best_by_owner.items(), key=lambda kv: -kv[1])
        best, score = ranked[0]
        if score <= 0.0:
            return None
        total = float(np.sum([v for _, v in ranked if v > 0]))
        runner = ranked[1][0] if len(ranked) > 1 and ranked[1][1] > 0 else None
        return ProvisionTarget(
            best, provision_label(best), score, score / total if total else 0.0, runner, self.method
        )

    def _bm25(self, text: str) -> np.ndarray:
        """BM25 scores of ``text`` against every passage; the last text's are kept, since a paragraph's linked
        articles are picked within one after another."""
        last = self._last_bm25
        if last is not None and last[0] == text:
            return last[1]
        scores = np.asarray(self.index.scores(text))
        self._last_bm25 = (text, scores)
        return scores

    def _scores(self, text: str, rows: list[int]) -> np.ndarray:
        w = self.bm25_weight
        bm25 = self._bm25(text)[rows] if w > 0 else np.zeros(len(rows))
        if self._vectors is None or self.encode is None or w >= 1.0:
            return np.asarray(bm25, dtype=np.float64)
        cos = np.asarray(self._vectors[rows] @ self.encode([text])[0], dtype=np.float64)
        if w <= 0.0:
            return cos
        if float(np.max(bm25)) <= 0.0:  # no shared term: nothing to mix in, no target
            return np.zeros(len(rows))
        span = float(cos.max() - cos.min()) or 1.0
        return w * bm25 / float(np.max(bm25)) + (1 - w) * (cos - cos.min()) / span

    def pick_many(self, pairs: Sequence[tuple[str, str | int]]) -> list[ProvisionTarget | None]:
        return [self.pick(text, article) for text, article in pairs]
