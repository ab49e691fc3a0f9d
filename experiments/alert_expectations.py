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

__all__ = [
    "ExpectationScore",
    "RankedScore",
    "expected_keys",
    "load_expectations",
    "locate",
    "provision_matches",
    "score_alerts",
    "score_ranking",
]


def load_expectations(path: str | Path | None = None) -> dict[str, Any]:
    """Expectations from a JSON file (default: the ePrivacy expectations shipped with the package); a bare name
    such as ``"nis2"`` loads the shipped ``<name>_expectations.json``."""
    if path is None:
        path = "eprivacy"
    source: Path | Any
    if isinstance(path, str) and "/" not in path and not path.endswith(".json"):
        source = bundled_data(f"{path}_expectations.json")
    else:
        source = Path(path)
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


# -- ranked view: precision at k, recall, the right provision ----------------------------------------------------
def expected_keys(entry: Mapping[str, Any]) -> tuple[str, ...]:
    """The provision keys an expectation names: ``nis2_provisions``/``provisions`` as keys (``art:21/par:2/pt:c``)
    or ``<law>_articles`` as article numbers (``[5]`` → ``art:5``)."""
    keys: list[str] = []
    for name, value in entry.items():
        if name.endswith("_provisions") or name == "provisions":
            keys.extend(str(v) for v in value)
        elif name.endswith("_articles"):
            keys.extend(f"art:{v}" for v in value)
    return tuple(keys)


def provision_matches(named: str, expected: Sequence[str]) -> bool:
    """Whether an alert's provision key ``named`` is one of ``expected`` or inside one of them (``art:5/par:3``
    is inside ``art:5``); a whole article does *not* match an expected point of it."""
    return any(named == e or named.startswith(e + "/") for e in expected)


@dataclass(frozen=True, slots=True)
class RankedScore:
    """An alert run as the ranked list an officer reads (alerts, then review items, in rank order).

    ``may_alert`` paragraphs (arguable) are removed from the list before it is cut at k; a list shorter than k is
    scored over the items it has. When ``exhaustive`` (every
    statement paragraph judged, as for NIS2) an unjudged paragraph counts as wrong; otherwise precision counts
    judged paragraphs only (unjudged ones are removed like ``may_alert``).
    """

    ks: tuple[int, ...]
    precision_at: dict[int, float]
    provision_precision_at: dict[int, float]
    article_precision_at: dict[int, float]
    recall: float
    flagged_recall: float
    provision_recall: float
    alerts_total: int
    review_total: int
    paragraphs_flagged: int
    exhaustive: bool

    def to_dict(self) -> dict[str, Any]:
        def r(d: dict[int, float]) -> dict[str, float]:
            return {f"@{k}": round(v, 4) for k, v in d.items()}

        return {
            "precision": r(self.precision_at),
            "right_provision": r(self.provision_precision_at),
            "right_article": r(self.article_precision_at),
            "recall": round(self.recall, 4),
            "flagged_recall": round(self.flagged_recall, 4),
            "provision_recall": round(self.provision_recall, 4),
            "alerts": self.alerts_total,
            "review": self.review_total,
            "paragraphs_flagged": self.paragraphs_flagged,
            "exhaustive": self.exhaustive,
        }


def _article_of(key: str) -> str:
    return key.split("/", 1)[0]


def score_ranking(
    alerts: Sequence[Any],
    paragraphs: Sequence[StoredParagraph],
    expectations: Mapping[str, Any] | str | Path | None = None,
    *,
    ks: Sequence[int] = (10, 30),
    exhaustive: bool | None = None,
) -> RankedScore:
    """Precision at k (relevant paragraph; right provision; right article), recall and provision recall.

    *Right provision*: the alert's best provision is an expected provision or inside one (``art:21/par:2/pt:c``
    for an expected ``art:21/par:2/pt:c``; the whole ``art:21`` is not). *Right article*: same article.
    *Provision recall*: must-alert paragraphs alerted with the right best provision.
    ``exhaustive`` defaults to whether the expectations carry a ``may_alert`` list (every paragraph judged).
    """
    spec: Mapping[str, Any]
    if expectations is None or isinstance(expectations, str | Path):
        spec = load_expectations(expectations)
    else:
        spec = expectations
    paragraphs = list(paragraphs)
    exhaustive = "may_alert" in spec if exhaustive is None else exhaustive

    def where(kind: str) -> dict[int, tuple[str, ...]]:
        return {locate(paragraphs, e["document"], e["phrase"]): expected_keys(e) for e in spec.get(kind, [])}

    must, may, must_not = where("must_alert"), where("may_alert"), where("must_not_alert")
    ranked = sorted(alerts, key=lambda a: (a.decision != "alert", a.rank, a.paragraph_id))
    ranked = [a for a in ranked if a.paragraph_id not in may]
    if not exhaustive:
        ranked = [a for a in ranked if a.paragraph_id in must or a.paragraph_id in must_not]

    def share(k: int, ok: Any) -> float:  # over the items shown: a list shorter than k is not padded
        top = ranked[:k]
        return sum(1 for a in top if ok(a)) / len(top) if top else 0.0

    def relevant(a: Any) -> bool:
        return a.paragraph_id in must

    def right_provision(a: Any) -> bool:
        return relevant(a) and provision_matches(str(a.provision_key), must[a.paragraph_id])

    def right_article(a: Any) -> bool:
        return relevant(a) and provision_matches(
            _article_of(str(a.provision_key)), [_article_of(e) for e in must[a.paragraph_id]]
        )

    alerted = {a.paragraph_id: a for a in alerts if a.decision == "alert"}
    flagged = {a.paragraph_id for a in alerts}
    n = len(must) or 1
    return RankedScore(
        ks=tuple(ks),
        precision_at={k: share(k, relevant) for k in ks},
        provision_precision_at={k: share(k, right_provision) for k in ks},
        article_precision_at={k: share(k, right_article) for k in ks},
        recall=sum(p in alerted for p in must) / n,
        flagged_recall=sum(p in flagged for p in must) / n,
        provision_recall=sum(
            p in alerted and provision_matches(str(alerted[p].provision_key), keys)
            for p, keys in must.items()
        )
        / n,
        alerts_total=sum(a.decision == "alert" for a in alerts),
        review_total=sum(a.decision == "review" for a in alerts),
        paragraphs_flagged=len(flagged),
        exhaustive=exhaustive,
    )
