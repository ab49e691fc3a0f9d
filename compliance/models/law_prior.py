"""An article-applicability prior read from the law itself.

The classifier is trained on balanced data (every article gets ``minK`` examples), i.e. under a uniform prior.
Real texts are not uniform: an organisation's controls and the facts of real cases concern the obligations of
controllers and processors and the rights of data subjects far more often than, say, the Commission's reporting
duties (Art. 97) or the Board's procedure (Art. 72). Three signals in the official text and its recital map
say how broadly an article applies, without any labelled case data:

* **addressee** — how much the article speaks to controllers, processors and data subjects rather than to Member
  States, the Commission, the Board or supervisory authorities: ``(1 + actor mentions) / (1 + actor mentions +
  institution mentions)``; "Member State law" and "Member State (data protection) provisions" name a body of law,
  not an institution, and are not counted (the DPO monitors compliance "with Union or Member State data protection
  provisions", Art. 39(1)(b); a controller acts under "Union or Member State law", Art. 6(3));
* **citations** — how many other articles refer to it (``1 +`` the in-degree of the citation graph; Articles 6, 9
  and the rights of Chapter III are referred to throughout), counting by default only the references that stand in
  a provision not addressed to public bodies alone (``cited_by="regulated"``): the supervisory authorities'
  tasks, the Board's and the Commission's refer to the consistency mechanism, codes of conduct and certification
  over and over, which says what the authorities deal with, not what controllers do (``"all"``: every reference,
  the models before session 40);
* **recitals** — how many recitals explain it (``1 +`` its recitals in the article ↔ recital map; the legislator
  wrote fifteen recitals on Art. 6 and none on Art. 99).

``log prior(a) = w_addressee · log addressee(a) + w_citations · log citations(a) + w_recitals · log recitals(a)``,
normalised. The counts say how much the law says about an article, not whether an organisation must comply with it:
squared, they put Art. 28 (processors) about 4,000 times below Art. 6. ``floor`` (> 0) therefore gives every article
that speaks to the regulated — its addressee signal at least ``floor_addressee`` and its text naming a controller,
processor or data subject — at least ``floor`` times the most likely article's mass (then normalised); the principle
umbrellas, whose mass comes from their members, are exempt (``exempt``). At scoring time the classifier adds
``log prior(a)`` to its log-probabilities (label-shift correction
from a uniform training prior). The weights were chosen on the GDPRhub *training* half only (model selection, see
``docs/classifier.md``); the prior itself is computed from the law and the recital map alone.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from compliance.errors import ConfigurationError
from compliance.rules.corpus import Law
from compliance.rules.references import citation_counts

__all__ = ["LawPrior", "LawPriorConfig", "build_law_prior"]

_ACTORS = re.compile(r"\b(?:controllers?|processors?|data subjects?)\b", re.IGNORECASE)
_INSTITUTION_WORDS = (
    r"\b(?:Member States?{}|Commission|Board|supervisory authorit(?:y|ies)|Union institutions?)\b"
)
#: "Member State law" and "Member State (data protection) provisions" are law, not an institution (session 62)
_INSTITUTIONS = re.compile(_INSTITUTION_WORDS.format(r"(?! law| (?:data protection )?provisions)"))
#: the reading of every prior before session 62: "Member State law" counted as an institution mention
_INSTITUTIONS_BEFORE = re.compile(_INSTITUTION_WORDS.format(""))


@dataclass(frozen=True)
class LawPriorConfig:
    """Weights (exponents) of the three signals; all 0 gives a uniform prior."""

    addressee: float = 2.0
    citations: float = 1.0
    recitals: float = 2.0
    #: which references the citations signal counts: ``"regulated"`` (those in provisions that oblige the
    #: regulated, :func:`compliance.rules.references.citation_counts`) or ``"all"``
    cited_by: str = "regulated"
    #: the least mass, as a share of the most likely article's, of an article that speaks to the regulated; 0: none
    floor: float = 0.0
    #: the addressee signal from which an article speaks to the regulated (it must also name one of them)
    floor_addressee: float = 0.7
    #: what "Member State law" and "Member State (data protection) provisions" are to the addressee signal: ``"law"``
    #: (not an institution mention; session 62) or ``"institution"`` (counted, as every prior before)
    member_state_law: str = "law"

    def __post_init__(self) -> None:
        if self.cited_by not in ("regulated", "all"):
            raise ConfigurationError(
                f"law prior: cited_by must be 'regulated' or 'all', not {self.cited_by!r}"
            )
        if self.member_state_law not in ("law", "institution"):
            raise ConfigurationError(
                f"law prior: member_state_law must be 'law' or 'institution', not {self.member_state_law!r}"
            )
        if not 0.0 <= self.floor <= 1.0 or not 0.0 <= self.floor_addressee <= 1.0:
            raise ConfigurationError(
                f"law prior: floor and floor_addressee must lie in [0, 1], not {self.floor}, {self.floor_addressee}"
            )

    @classmethod
    def from_dict(cls, stored: Mapping[str, Any]) -> LawPriorConfig:
        """A stored configuration; one without ``cited_by`` was written before it existed and counted every
        reference, one without ``member_state_law`` counted "Member State law" as an institution."""
        return cls(**{"cited_by": "all", "member_state_law": "institution", **stored})

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
    #: per label: the floor may lift it (it names a controller, processor or data subject and is not exempt)
    liftable: tuple[bool, ...] = ()
    #: the articles the floor lifted: they speak to the regulated and the counts gave them less than the floor
    floored: tuple[int, ...] = ()

    def reweighted(self, config: LawPriorConfig) -> LawPrior:
        """The same signals under other weights (no second pass over the law)."""
        return _weighted(self.labels, self.addressee, self.citations, self.recitals, config, self.liftable)

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
        out: dict[str, object] = {
            "config": self.config.to_dict(),
            "most_likely": [int(self.labels[j]) for j in order[:top]],
            "least_likely": [int(self.labels[j]) for j in order[-top:]],
        }
        if self.config.floor > 0.0:
            out["floored"] = list(self.floored)
        return out


def build_law_prior(
    law: Law,
    recital_map: Mapping[int, Sequence[int]] | None,
    labels: Sequence[int],
    config: LawPriorConfig | None = None,
    *,
    exempt: Collection[int] = (),
) -> LawPrior:
    """Compute the prior of every article in ``labels`` from ``law`` (its text and cross-references) and the
    article ↔ recital map. ``exempt``: articles the floor never lifts (the principle umbrellas)."""
    cfg = config or LawPriorConfig()
    texts = {
        int(a.number): f"{a.title or ''}\n{law.text_of(a.key)}"
        for a in law.articles
        if a.number and a.number.isdigit()
    }
    cites = citation_counts(law, regulated_only=cfg.cited_by == "regulated")
    rmap = recital_map or {}
    institution_pattern = _INSTITUTIONS if cfg.member_state_law == "law" else _INSTITUTIONS_BEFORE
    addressee: list[float] = []
    n_cites: list[int] = []
    n_recitals: list[int] = []
    liftable: list[bool] = []
    exempted = {int(a) for a in exempt}
    for a in labels:
        text = texts.get(int(a), "")
        actors = len(_ACTORS.findall(text))
        institutions = len(institution_pattern.findall(text))
        addressee.append((1.0 + actors) / (1.0 + actors + institutions))
        n_cites.append(int(cites.get(int(a), 0)))
        n_recitals.append(len(set(rmap.get(int(a), ()))))
        liftable.append(actors > 0 and int(a) not in exempted)
    return _weighted(
        tuple(int(a) for a in labels),
        tuple(addressee),
        tuple(n_cites),
        tuple(n_recitals),
        cfg,
        tuple(liftable),
    )


def _weighted(
    labels: tuple[int, ...],
    addressee: tuple[float, ...],
    citations: tuple[int, ...],
    recitals: tuple[int, ...],
    cfg: LawPriorConfig,
    liftable: tuple[bool, ...] = (),
) -> LawPrior:
    log_p = (
        cfg.addressee * np.log(np.asarray(addressee))
        + cfg.citations * np.log1p(np.asarray(citations, dtype=np.float64))
        + cfg.recitals * np.log1p(np.asarray(recitals, dtype=np.float64))
    )
    p = np.exp(log_p - log_p.max())
    floored: tuple[int, ...] = ()
    if cfg.floor > 0.0 and liftable:
        edge = cfg.floor * p.max()
        lifted = np.asarray(liftable) & (np.asarray(addressee) >= cfg.floor_addressee) & (p < edge)
        p = np.where(lifted, edge, p)
        floored = tuple(a for a, up in zip(labels, lifted, strict=True) if up)
    p /= p.sum()
    return LawPrior(
        labels, tuple(float(x) for x in p), addressee, citations, recitals, cfg, liftable, floored
    )
