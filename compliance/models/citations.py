"""Explicit citations: a text that cites an article of the act by name is evidence for that article.

Policies, privacy notices and enforcement summaries often say which article they implement or apply: "as required
by Art. 30 GDPR", "the legal basis is Art. 6(1)(b) GDPR", "in breach of Articles 5(1)(f) and 32 GDPR". The
encoder and the lexical expert read the words around the citation, not the citation, so such a paragraph could
rank the cited article low ("Articles 15 to 22 of the GDPR" ranked Art. 15 third at 0.0003). The citation is read
from the text (:func:`compliance.rules.references.cited_provisions`, for the names the act itself gives:
:func:`~compliance.rules.references.act_names`) and mixed into the ensemble's distribution, last:

    p'(a | x) = (1 − w) · p(a | x) + w · 1[a ∈ C(x)] / |C(x)|

for the set C(x) of articles the text cites (nothing changes for a text that cites none). ``w = 0.5`` is the
smallest weight at which a text citing one article always ranks it first (its score is at least 0.5, every other
article's at most 0.5 · p ≤ 0.5), chosen for that property, not tuned on a set; several cited articles share the
mass and are ordered among themselves by the text's own evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from compliance.errors import require_weight
from compliance.rules.references import Citation

__all__ = ["CitationConfig", "apply_citations", "citation_matrix"]


@dataclass(frozen=True)
class CitationConfig:
    """How explicit citations are weighted.

    Attributes:
        weight: the share of a citing text's distribution given to the articles it cites, evenly (in (0, 1]).
    """

    weight: float = 0.5

    def __post_init__(self) -> None:
        require_weight("citation weight", self.weight)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def citation_matrix(citations: Sequence[Sequence[Citation]], labels: Sequence[int]) -> np.ndarray:
    """Per text, the uniform distribution over the articles among ``labels`` it cites (a row of zeros when it
    cites none), shape (len(citations), len(labels))."""
    col = {a: j for j, a in enumerate(labels)}
    out = np.zeros((len(citations), len(labels)), dtype=np.float64)
    for i, cited in enumerate(citations):
        idx = sorted({col[c.article] for c in cited if c.article in col})
        if idx:
            out[i, idx] = 1.0 / len(idx)
    return out


def apply_citations(probs: np.ndarray, cited: np.ndarray, weight: float) -> tuple[np.ndarray, np.ndarray]:
    """Mix ``weight ×`` the citation distribution ``cited`` (:func:`citation_matrix`) into the rows of ``probs``
    that cite something; other rows are returned unchanged.

    Returns:
        The new probabilities and, per article, the share of its new score that came from the citation.
    """
    out = probs.astype(np.float64, copy=True)
    rows = cited.sum(axis=1) > 0
    if not rows.any():
        return out, np.zeros_like(out)
    out[rows] = (1.0 - weight) * out[rows] + weight * cited[rows]
    added = np.zeros_like(out)
    added[rows] = weight * cited[rows]
    share = np.divide(added, out, out=np.zeros_like(out), where=added > 0)
    return out, share
