"""Reviews as supervision: what people decided about the classifier's links, turned into training and
calibration data for the GDPR article classifier.

A reviewed paragraph is a :class:`ReviewedItem`: its text, the articles a reviewer accepted (or added: the
links the model missed) — positives — and the articles a reviewer rejected — negatives. Training adds every
positive as an example of its article (as the law's own sentences are) and penalises the probability of every
negative (an unlikelihood term, :func:`negative_loss`); calibration refits the temperature and the review band on
them (:mod:`compliance.models.review_calibration`).

The default recipe itself never needs reviews: without them it is reproducible from the official law texts
alone. Reviews come from the organisation's own database (:func:`compliance.app.classifier.reviewed_items`), or — to measure the learning
curve — from a simulation (``experiments/review_learning_curve.py``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compliance.errors import ConfigurationError
from compliance.models.data import Example

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = [
    "ReviewedItem",
    "load_reviewed_items",
    "negative_loss",
    "review_examples",
    "write_reviewed_items",
]


@dataclass(frozen=True)
class ReviewedItem:
    """A paragraph with the articles people accepted (or added) and rejected for it."""

    id: str
    text: str
    accepted: tuple[int, ...]
    rejected: tuple[int, ...] = ()


def write_reviewed_items(items: Iterable[ReviewedItem], out: Path) -> int:
    """JSONL ``{"id", "text", "accepted": [...], "rejected": [...]}`` per item; returns the count."""
    n = 0
    with out.open("w", encoding="utf-8") as fh:
        for item in items:
            fh.write(json.dumps(asdict(item), ensure_ascii=False) + "\n")
            n += 1
    return n


def load_reviewed_items(path: Path) -> list[ReviewedItem]:
    """Read :func:`write_reviewed_items` output.

    Raises:
        ConfigurationError: a line is not such an object.
    """
    items = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row: dict[str, Any] = json.loads(line)
                items.append(
                    ReviewedItem(
                        str(row["id"]),
                        str(row["text"]),
                        tuple(int(a) for a in row.get("accepted", ())),
                        tuple(int(a) for a in row.get("rejected", ())),
                    )
                )
            except (ValueError, KeyError, TypeError) as e:
                raise ConfigurationError(
                    f"{path}:{n}: expected {{'id','text','accepted','rejected'}}: {e}"
                ) from e
    return items


def review_examples(items: Sequence[ReviewedItem], labels: Sequence[int], repeat: int = 1) -> list[Example]:
    """Training examples: one per accepted article (``source="review"``), and one label-less example per item
    that has only rejections (it still teaches through :func:`negative_loss`); every one carries the item's
    rejected articles as its ``negatives``. Articles outside ``labels`` are ignored."""
    known = set(labels)
    out: list[Example] = []
    for item in items:
        positives = [a for a in item.accepted if a in known]
        rejected = tuple(a for a in item.rejected if a in known)
        for rep in range(max(1, repeat)):
            for a in positives:
                out.append(Example(f"review:{item.id}:{a}:{rep}", item.text, (a,), "review", rejected))
            if not positives and rejected:
                out.append(Example(f"review:{item.id}:neg:{rep}", item.text, (), "review", rejected))
    return out


def negative_loss(
    logits: torch.Tensor, negatives: torch.Tensor, weights: torch.Tensor | None = None
) -> torch.Tensor:
    """Unlikelihood of rejected articles (Welleck et al., 2020): the mean over the rows that have negatives of
    ``-sum_j log(1 - p_j)`` over their negative columns ``j`` (``negatives`` is a boolean mask like ``logits``),
    each row's term times its entry of ``weights`` (one per row; default 1)."""
    import torch

    rows = negatives.any(dim=1)
    if not bool(rows.any()):
        return logits.new_zeros(())
    p = torch.softmax(logits[rows].float(), dim=-1)
    penalty = (-torch.log((1.0 - p).clamp_min(1e-6)) * negatives[rows].float()).sum(dim=1)
    if weights is not None:
        penalty = penalty * weights[rows].float()
    return penalty.mean()
