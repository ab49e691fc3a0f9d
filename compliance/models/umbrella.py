"""Principle umbrellas: an article that states principles applies wherever the articles implementing them apply.

Art. 5 GDPR lists the principles — lawfulness, fairness and transparency; purpose limitation; data minimisation;
accuracy; storage limitation; integrity and confidentiality; accountability — and the rest of the regulation
gives them effect (Art. 6 lawfulness, Arts. 12–14 transparency, Art. 25 minimisation by design, Art. 16 and 17
accuracy and erasure, Art. 32 security, Art. 24 accountability …). A control that implements Art. 32 also
implements Art. 5(1)(f), and decisions that apply Art. 32 usually cite Art. 5 beside it. The classifier, trained
on each article's own sentences, never learns that link: it ranks Art. 5 first for no realistic text.

The umbrellas are found in the law text, not written by hand: an *umbrella* is an article whose title speaks of
principles; its *members* are, for each of its paragraphs and points, the ``top_k`` other articles that the
lexical expert (BM25 over every article's title and training sentences) matches best. At scoring time an umbrella
receives ``weight ×`` the probability mass of its members, and the scores are renormalised.

*Consequence articles* are the other direction. Art. 83 GDPR (administrative fines) enumerates the infringements
it sanctions — Articles 5, 6, 7, 9, 12 to 22, 25 to 39 … — so a text about a fine is, in substance, a text about
the provision infringed: "fined for failing to answer an erasure request in time" implements or breaches Art. 17
and Art. 12, and Art. 83 is only its consequence. The classifier, trained on each article's own sentences, reads
"fined" as Art. 83 and gives it nearly all the mass (issue 13: the top article of 34 % of short enforcement
summaries, wrong in 87 % of them). A consequence article is found in the law text, not written by hand: an article
that refers to at least ``min_share`` of the act's articles; its *members* are the articles it refers to. At
scoring time it passes ``weight ×`` its probability down to its members, in proportion to their own probabilities
(the text's evidence decides which infringed article gets it), and keeps the rest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from compliance.models.lexical import LexicalArticleScorer
from compliance.rules.corpus import Law
from compliance.rules.references import article_references

__all__ = [
    "ConsequenceConfig",
    "UmbrellaConfig",
    "apply_consequences",
    "apply_umbrellas",
    "consequence_articles",
    "principle_umbrellas",
    "umbrella_articles",
]


@dataclass(frozen=True)
class UmbrellaConfig:
    """How umbrellas are found and weighted.

    Attributes:
        top_k: members taken per paragraph or point of the umbrella article.
        weight: share of the members' probability mass given to the umbrella.
        title_pattern: regular expression (case-insensitive) that marks an umbrella article by its title.
    """

    top_k: int = 3
    weight: float = 0.75
    title_pattern: str = r"\bprinciples?\b"

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def umbrella_articles(
    law: Law, labels: Sequence[int], config: UmbrellaConfig | None = None
) -> tuple[int, ...]:
    """The articles among ``labels`` whose title marks them as umbrellas (``config.title_pattern``), in law order."""
    pattern = re.compile((config or UmbrellaConfig()).title_pattern, re.IGNORECASE)
    known = set(labels)
    return tuple(
        int(art.number)
        for art in law.articles
        if art.number
        and art.number.isdigit()
        and int(art.number) in known
        and pattern.search(art.title or "")
    )


def principle_umbrellas(
    law: Law, lexical: LexicalArticleScorer, labels: Sequence[int], config: UmbrellaConfig | None = None
) -> dict[int, tuple[int, ...]]:
    """Umbrella article → its member articles (sorted), for the umbrellas among ``labels``."""
    cfg = config or UmbrellaConfig()
    known = set(labels)
    umbrellas = set(umbrella_articles(law, labels, cfg))
    out: dict[int, tuple[int, ...]] = {}
    for art in law.articles:
        if not (art.number and art.number.isdigit()) or int(art.number) not in umbrellas:
            continue
        number = int(art.number)
        parts = [
            p.text for p in law.descendants(art.key) if p.kind in {"paragraph", "point"} and p.text.strip()
        ]
        if not parts:
            parts = [law.text_of(art.key)]
        members: set[int] = set()
        scores = lexical.scores(parts)
        for row in scores:
            ranked = [lexical.labels[j] for j in np.argsort(-row, kind="stable") if row[j] > 0]
            members.update([a for a in ranked if a != number and a in known][: cfg.top_k])
        if members:
            out[number] = tuple(sorted(members))
    return out


def apply_umbrellas(
    probs: np.ndarray,
    labels: Sequence[int],
    umbrellas: Mapping[int, Sequence[int]],
    weight: float | np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Give every umbrella ``weight ×`` its members' mass and renormalise (``weight``: one for every row, or
    one per row).

    Returns:
        The new probabilities and the mass each article received from its members (before renormalisation;
        zero outside the umbrellas), both shaped like ``probs``.
    """
    col = {a: j for j, a in enumerate(labels)}
    added = np.zeros_like(probs)
    for umbrella, members in umbrellas.items():
        if umbrella not in col:
            continue
        idx = [col[m] for m in members if m in col]
        if idx:
            added[:, col[umbrella]] = weight * probs[:, idx].sum(axis=1)
    out = probs + added
    return out / out.sum(axis=1, keepdims=True), added


@dataclass(frozen=True)
class ConsequenceConfig:
    """How consequence articles are found and weighted.

    Attributes:
        min_share: an article is a consequence article when it refers to at least this share of the act's
            (labelled) articles; in the GDPR only Art. 83 does (43 of 99; the next, Art. 70, refers to 18).
        weight: share of a consequence article's probability passed down to its members.
        top_k: a text is about a sanction when a consequence article ranks among its first ``top_k`` articles
            (:attr:`~compliance.models.classifier.ClassifierConfig.consequence_top_k`).
        umbrella_weight: the principle umbrellas' weight in a text about a sanction (None: the same as in every
            other text; :attr:`~compliance.models.classifier.ClassifierConfig.sanction_umbrella_weight`).
    """

    min_share: float = 0.2
    weight: float = 0.75
    top_k: int = 1
    umbrella_weight: float | None = None

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def consequence_articles(
    law: Law, labels: Sequence[int], config: ConsequenceConfig | None = None
) -> dict[int, tuple[int, ...]]:
    """Consequence article → the articles it refers to (sorted), for the consequence articles among ``labels``."""
    cfg = config or ConsequenceConfig()
    known = set(labels)
    out: dict[int, tuple[int, ...]] = {}
    for art in law.articles:
        if not (art.number and art.number.isdigit()) or int(art.number) not in known:
            continue
        number = int(art.number)
        members = article_references(law.text_of(art.key), known) - {number}
        if members and len(members) >= cfg.min_share * len(known):
            out[number] = tuple(sorted(members))
    return out


def apply_consequences(
    probs: np.ndarray, labels: Sequence[int], consequences: Mapping[int, Sequence[int]], weight: float
) -> tuple[np.ndarray, np.ndarray]:
    """Pass ``weight ×`` every consequence article's probability down to its members, in proportion to the
    members' own probabilities (evenly when they have none). The total stays the same (no renormalisation).

    Returns:
        The new probabilities and the mass each article received from consequence articles, shaped like
        ``probs``.
    """
    col = {a: j for j, a in enumerate(labels)}
    out = probs.astype(np.float64, copy=True)
    received = np.zeros_like(out)
    for article, members in consequences.items():
        if article not in col:
            continue
        idx = [col[m] for m in members if m in col]
        if not idx:
            continue
        given = weight * probs[:, col[article]]
        share = probs[:, idx]
        total = share.sum(axis=1, keepdims=True)
        share = np.divide(share, total, out=np.full_like(share, 1.0 / len(idx)), where=total > 0)
        received[:, idx] += given[:, None] * share
        out[:, col[article]] -= given
    out += received
    return out, received
