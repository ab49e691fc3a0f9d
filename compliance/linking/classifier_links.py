"""Classifier → scored links: turn the GDPR article classifier's calibrated ranking of a paragraph into the
paragraph ↔ article links the store keeps, with a status from the model's review band.

* the top-1 article with a score ≥ the band's upper edge → ``proposed``;
* any top-k article with a score in ``[low, high)`` → ``needs-review``;
* articles below ``low`` are not linked, except the top-1 of a paragraph for which nothing reached ``low``:
  it is stored as ``needs-review`` with ``evidence.abstain = true`` so that a reviewer sees the paragraph.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from compliance.errors import ConfigurationError
from compliance.linking.specific import SpecificFirstConfig, specific_first_order

if TYPE_CHECKING:  # pragma: no cover
    from compliance.models.classifier import ArticleClassifier, ArticleScore

__all__ = ["ClassifierLinkConfig", "ParagraphLinks", "classify_paragraphs", "link_status"]

METHOD = "classifier"


@dataclass(frozen=True)
class ClassifierLinkConfig:
    """How classifier scores become links. Stored with every audit run.

    Attributes:
        top_k: at most this many articles linked per paragraph.
        review_band: ``(low, high)``; None = the model's calibrated band.
        batch_size: paragraphs classified per batch.
        min_words: paragraphs with fewer words (headings, page furniture) are not classified.
        specific_first: re-rank each document's rankings so that general articles (Art. 5, 24) do not crowd out
            the specific one (:mod:`compliance.linking.specific`); None (default) keeps the classifier's order.
    """

    top_k: int = 5
    review_band: tuple[float, float] | None = None
    batch_size: int = 64
    min_words: int = 4
    specific_first: SpecificFirstConfig | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.top_k <= 99:
            raise ConfigurationError(f"top_k must be in 1..99, got {self.top_k}")
        if self.review_band is not None and not 0.0 <= self.review_band[0] <= self.review_band[1] <= 1.0:
            raise ConfigurationError(
                f"review band must satisfy 0 <= low <= high <= 1, got {self.review_band}"
            )


@dataclass(frozen=True)
class ParagraphLinks:
    """The links proposed for one paragraph."""

    paragraph_id: int
    ranked: tuple[ArticleScore, ...]
    linked: tuple[tuple[ArticleScore, str], ...]  # (article score, status)
    needs_review: bool
    abstained: bool


def link_status(score: float, rank: int, band: tuple[float, float]) -> str | None:
    """``proposed``, ``needs-review`` or None (not linked) for an article at ``rank`` with ``score``."""
    low, high = band
    if score >= high and rank == 1:
        return "proposed"
    if score >= low:
        return "needs-review"
    return None


def classify_paragraphs(
    classifier: ArticleClassifier,
    paragraphs: Sequence[tuple[int, str]],
    config: ClassifierLinkConfig,
) -> list[ParagraphLinks]:
    """Classify ``(paragraph_id, text)`` pairs and decide their links (paragraphs too short are skipped)."""
    from compliance.progress import bar

    band = config.review_band or classifier.config.review_band
    todo = [(pid, text) for pid, text in paragraphs if len(text.split()) >= config.min_words]
    ranked_all: list[list[ArticleScore]] = []
    with bar(len(todo), desc="classifying paragraphs", unit="para") as progress:
        for start in range(0, len(todo), config.batch_size):
            chunk = todo[start : start + config.batch_size]
            ranked_all.extend(classifier.rank([t for _, t in chunk], top_k=config.top_k, explain=True))
            progress.update(len(chunk))
    if config.specific_first is not None and ranked_all:
        from dataclasses import replace

        orders = specific_first_order(
            [[(s.article, s.score) for s in scores] for scores in ranked_all], config.specific_first
        )
        ranked_all = [
            [replace(scores[i], rank=r) for r, i in enumerate(order, start=1)]
            for scores, order in zip(ranked_all, orders, strict=True)
        ]
    out: list[ParagraphLinks] = []
    for (pid, _), scores in zip(todo, ranked_all, strict=True):
        linked = [(s, st) for s in scores if (st := link_status(s.score, s.rank, band)) is not None]
        abstained = not linked
        if abstained:
            linked = [(scores[0], "needs-review")]
        needs_review = abstained or linked[0][1] != "proposed"
        out.append(ParagraphLinks(pid, tuple(scores), tuple(linked), needs_review, abstained))
    return out
