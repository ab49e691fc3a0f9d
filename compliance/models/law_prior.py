"""An article-applicability prior read from the law itself.

The classifier is trained on balanced data (every article gets ``minK`` examples), i.e. under a uniform prior.
Real texts are not uniform: an organisation's controls and the facts of real cases concern the obligations of
controllers and processors and the rights of data subjects far more often than, say, the Commission's reporting
duties (Art. 97) or the Board's procedure (Art. 72). Three signals in the official text and its recital map
say how broadly an article applies, without any labelled case data:

* **addressee** — how much the article speaks to controllers, processors and data subjects rather than to Member
  States, the Commission, the Board or supervisory authorities: ``(1 + actor mentions) / (1 + actor mentions +
  institution mentions)``;
* **citations** — how many other articles refer to it (``1 +`` the in-degree of the citation graph; Articles 6, 9
  and the rights of Chapter III are referred to throughout), counting by default only the references that stand in
  a provision not addressed to public bodies alone (``cited_by="regulated"``): the supervisory authorities'
  tasks, the Board's and the Commission's refer to the consistency mechanism, codes of conduct and certification
  over and over, which says what the authorities deal with, not what controllers do (``"all"``: every reference,
  the models before session 40);
* **recitals** — how many recitals explain it (``1 +`` its recitals in the article ↔ recital map; the legislator
  wrote fifteen recitals on Art. 6 and none on Art. 99).

``log prior(a) = w_addressee · log addressee(a) + w_citations · log citations(a) + w_recitals · log recitals(a)``,
normalised. At scoring time the classifier adds ``log prior(a)`` to its log-probabilities (label-shift correction
from a uniform training prior). The weights were chosen on the GDPRhub *training* half only (model selection, see
``docs/classifier.md``); the prior itself is computed from the law and the recital map alone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from compliance.errors import ConfigurationError
from compliance.rules.corpus import Law
from compliance.rules.references import citation_counts

__all__ = ["LawPrior", "LawPriorConfig", "build_law_prior"]

_ACTORS = re.compile(r"\b(?:controllers?|processors?|data subjects?)\b", re.IGNORECASE)
_INSTITUTIONS = re.compile(
    r"\b(?:Member States?|Commission|Board|supervisory authorit(?:y|ies)|Union institutions?)\b"
)


@dataclass(frozen=True)
class LawPriorConfig:
    """Weights (exponents) of the three signals; all 0 gives a uniform prior."""

    addressee: float = 2.0
    citations: float = 1.0
    recitals: float = 2.0
    #: which references the citations signal counts: ``"regulated"`` (those in provisions that oblige the
    #: regulated, :func:`compliance.rules.references.citation_counts`) or ``"all"``
    cited_by: str = "regulated"

    def __post_init__(self) -> None:
        if self.cited_by not in ("regulated", "all"):
            raise ConfigurationError(
                f"law prior: cited_by must be 'regulated' or 'all', not {self.cited_by!r}"
            )

    @classmethod
    def from_dict(cls, stored: Mapping[str, Any]) -> LawPriorConfig:
        """A stored configuration; one without ``cited_by`` was written before it existed and counted every
        reference."""
        return cls(**{"cited_by": "all", **stored})

    def to_dict(self) -> dict[str, float | str]:
        return asdict(self)


@dataclass(frozen=True)
class LawPrior:
    """The prior over ``labels`` with the signals behind it (for explanations and the model card)."""

    labels: tuple[int, ...]
    distribution: tuple[float, ...]
    addressee: tuple[float, ...]
    citations: tuple[int, ...]
    recitals: tuple[int, ...]
    config: LawPriorConfig

    def reweighted(self, config: LawPriorConfig) -> LawPrior:
        """The same signals under other weights (no second pass over the law)."""
        return _weighted(self.labels, self.addressee, self.citations, self.recitals, config)

    def as_array(self) -> np.ndarray:
        return np.asarray(self.distribution, dtype=np.float64)

    def explain(self, article: int) -> dict[str, float | int]:
        """The signals of one article: ``{"prior", "addressee", "citations", "recitals"}``."""
        i = self.labels.index(article)
        return {
            "prior": self.distribution[i],
            "addressee": self.addressee[i],
            "citations": self.citations[i],
            "recitals": self.recitals[i],
        }

    def summary(self, top: int = 10) -> dict[str, object]:
        """What goes into the model's config: the weights and the most and least likely articles."""
        order = np.argsort(-self.as_array(), kind="stable")
        return {
            "config": self.config.to_dict(),
            "most_likely": [int(self.labels[j]) for j in order[:top]],
            "least_likely": [int(self.labels[j]) for j in order[-top:]],
        }


def build_law_prior(
    law: Law,
    recital_map: Mapping[int, Sequence[int]] | None,
    labels: Sequence[int],
    config: LawPriorConfig | None = None,
) -> LawPrior:
    """Compute the prior of every article in ``labels`` from ``law`` (its text and cross-references) and the
    article ↔ recital map."""
    cfg = config or LawPriorConfig()
    texts = {
        int(a.number): f"{a.title or ''}\n{law.text_of(a.key)}"
        for a in law.articles
        if a.number and a.number.isdigit()
    }
    cites = citation_counts(law, regulated_only=cfg.cited_by == "regulated")
    rmap = recital_map or {}
    addressee: list[float] = []
    n_cites: list[int] = []
    n_recitals: list[int] = []
    for a in labels:
        text = texts.get(int(a), "")
        actors = len(_ACTORS.findall(text))
        institutions = len(_INSTITUTIONS.findall(text))
        addressee.append((1.0 + actors) / (1.0 + actors + institutions))
        n_cites.append(int(cites.get(int(a), 0)))
        n_recitals.append(len(set(rmap.get(int(a), ()))))
    return _weighted(tuple(int(a) for a in labels), tuple(addressee), tuple(n_cites), tuple(n_recitals), cfg)


def _weighted(
    labels: tuple[int, ...],
    addressee: tuple[float, ...],
    citations: tuple[int, ...],
    recitals: tuple[int, ...],
    cfg: LawPriorConfig,
) -> LawPrior:
    log_p = (
        cfg.addressee * np.log(np.asarray(addressee))
        + cfg.citations * np.log1p(np.asarray(citations, dtype=np.float64))
        + cfg.recitals * np.log1p(np.asarray(recitals, dtype=np.float64))
    )
    p = np.exp(log_p - log_p.max())
    p /= p.sum()
    return LawPrior(labels, tuple(float(x) for x in p), addressee, citations, recitals, cfg)
