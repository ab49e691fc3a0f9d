"""Score an alert run against labelled expectations (the ePrivacy expectations about the sample policies in
``examples/``, shipped as ``compliance/evaluation/data/eprivacy_expectations.json``).

The expectations name paragraphs by document file name and a phrase they contain (whitespace collapsed,
case-sensitive), and say whether the law must or must not alert on them. An expectation is *alerted* when an
alert with ``decision == "alert"`` exists for its paragraph (*flagged* when an alert or a review item exists).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from compliance.errors import ConfigurationError
from compliance.evaluation.queries import bundled_data

if TYPE_CHECKING:  # pragma: no cover
    from compliance.alerts.engine import ProposedAlert
    from compliance.store.records import StoredParagraph

__all__ = ["ExpectationScore", "load_expectations", "locate", "score_alerts"]


def load_expectations(path: str | Path | None = None) -> dict[str, Any]:
    """Expectations from a JSON file (default: the ePrivacy expectations shipped with the package)."""
    source = Path(path) if path is not None else bundled_data("eprivacy_expectations.json")
    loaded: dict[str, Any] = json.loads(source.read_text(encoding="utf-8"))
    return loaded


@dataclass(frozen=True, slots=True)
class ExpectationScore:
    """Precision/recall of an alert run on labelled paragraphs."""

    must_alert: int
    must_not_alert: int
    alerted_true: int
    alerted_false: int
    flagged_true: int
    flagged_false: int
    pairwise_ranking: float
    alerts_total: int
    review_total: int
    misses: tuple[str, ...]
    false_alarms: tuple[str, ...]

    @property
    def precision(self) -> float:
        """Among labelled paragraphs that were alerted, the share that must alert."""
        alerted = self.alerted_true + self.alerted_false
        return self.alerted_true / alerted if alerted else 0.0

    @property
    def recall(self) -> float:
        """Share of must-alert paragraphs that were alerted."""
        return self.alerted_true / self.must_alert if self.must_alert else 0.0

    @property
    def flagged_recall(self) -> float:
        """Share of must-alert paragraphs alerted or sent to review."""
        return self.flagged_true / self.must_alert if self.must_alert else 0.0

    @property
    def flagged_precision(self) -> float:
        flagged = self.flagged_true + self.flagged_false
        return self.flagged_true / flagged if flagged else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "must_alert": self.must_alert,
            "must_not_alert": self.must_not_alert,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "flagged_precision": round(self.flagged_precision, 4),
            "flagged_recall": round(self.flagged_recall, 4),
            "false_alarms": list(self.false_alarms),
            "misses": list(self.misses),
            "pairwise_ranking": round(self.pairwise_ranking, 4),
            "alerts_total": self.alerts_total,
            "review_total": self.review_total,
        }


def _collapse(text: str) -> str:
    return " ".join(text.split())


def locate(paragraphs: Iterable[StoredParagraph], document: str, phrase: str) -> int:
    """The id of the paragraph of ``document`` (file name) containing ``phrase``.

    Raises:
        ConfigurationError: no paragraph, or more than one, contains the phrase.
    """
    found = [
        p.id
        for p in paragraphs
        if PurePath(p.source).name == document and _collapse(phrase) in _collapse(p.text)
    ]
    if len(found) != 1:
        raise ConfigurationError(
            f"{document}: {len(found)} paragraphs contain {phrase!r} (expected exactly 1)"
        )
    return found[0]


def score_alerts(
    alerts: Sequence[ProposedAlert],
    paragraphs: Sequence[StoredParagraph],
    expectations: Mapping[str, Any] | str | Path | None = None,
) -> ExpectationScore:
    """Compare alerts with must/must-not expectations.

    Args:
        alerts: the run's alerts (:attr:`AlertRunResult.alerts`).
        paragraphs: the stored paragraphs the expectations point into.
        expectations: the expectations (mapping or JSON file; default: the ePrivacy file).
    """
    spec: Mapping[str, Any]
    if expectations is None or isinstance(expectations, str | Path):
        spec = load_expectations(expectations)
    else:
        spec = expectations
    by_para = {a.paragraph_id: a for a in alerts}
    paragraphs = list(paragraphs)

    def ids(kind: str) -> list[tuple[int, str]]:
        return [
            (locate(paragraphs, e["document"], e["phrase"]), f"{e.get('topic', '')}: {e['phrase']}")
            for e in spec[kind]
        ]

    positives, negatives = ids("must_alert"), ids("must_not_alert")

    def alerted(pid: int) -> bool:
        return pid in by_para and by_para[pid].decision == "alert"

    def score(pid: int) -> float:
        a = by_para.get(pid)
        return float(a.evidence.get("scores", {}).get("link", a.score)) if a else float("-inf")

    wins = sum(
        1.0 if score(p) > score(n) else 0.5 if score(p) == score(n) else 0.0
        for p, _ in positives
        for n, _ in negatives
    )
    pairs = len(positives) * len(negatives)
    return ExpectationScore(
        must_alert=len(positives),
        must_not_alert=len(negatives),
        alerted_true=sum(alerted(p) for p, _ in positives),
        alerted_false=sum(alerted(n) for n, _ in negatives),
        flagged_true=sum(p in by_para for p, _ in positives),
        flagged_false=sum(n in by_para for n, _ in negatives),
        pairwise_ranking=wins / pairs if pairs else 0.0,
        alerts_total=sum(a.decision == "alert" for a in alerts),
        review_total=sum(a.decision == "review" for a in alerts),
        misses=tuple(label for p, label in positives if not alerted(p)),
        false_alarms=tuple(label for n, label in negatives if alerted(n)),
    )
