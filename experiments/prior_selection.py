"""Choose the weights of the classifier's scoring ensemble on development data: the three exponents of the
law-derived article prior (:mod:`compliance.models.law_prior`), then the weight of the lexical expert
(:mod:`compliance.models.lexical`).

Both are computed from the law alone; only these weights are hyper-parameters. They are selected on the GDPRhub
*training* half (the held-out half and the control set are never looked at), by the sum of MRR and macro-F1
(seed 000's F^μ), over coarse grids, one after the other:

1. ``log p_encoder(a | x) + log prior(a)`` for every prior grid point;
2. ``log p_encoder(a | x) + log prior*(a) + β · log p_bm25(a | x)`` for every β, with the best prior of step 1;
3. the principle umbrellas (:mod:`compliance.models.umbrella`) on top, for every ``top_k`` and weight;
4. the consequence articles (Art. 83 passing mass down to the articles it fines for) under the chosen umbrellas,
   for every weight — scored on the training half's case facts *and* its one-to-three-sentence ``lead``
   summaries together (the short form of a case is where a fine dominates the text);
5. the reading of a text about a sanction (:meth:`~compliance.models.classifier.ArticleClassifier.about_sanction`):
   how high the consequence article must rank for a text to be read as one (its clauses read apart, and its
   umbrellas weighted), and the umbrellas' weight in such a text, for every pair — the classifier scoring with
   the ensemble of steps 1–4, on the same facts and lead summaries::

    python -m experiments.prior_selection --model DIR [--json]

Two further steps run alone on a model's stored ensemble: ``--floors``, the floor under the duties of the regulated
(:func:`score_floors`), and ``--passages``, the weight of the passage expert (:func:`score_passage_weights`).

The classifier's encoder is used without its stored prior and lexical weight, so any trained model can be
re-examined. The chosen weights are what the training recipes of :mod:`compliance.models.training` carry;
this experiment is how they were found (not part of the package).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import numpy as np

from compliance.evaluation.metrics import article_metrics, ranking_from_scores
from compliance.evaluation.queries import gdprhub_lead_query_set, gdprhub_query_set
from compliance.models.data import DataConfig, build_training_data
from compliance.models.law_prior import LawPrior, LawPriorConfig, build_law_prior
from compliance.models.training import training_recital_map
from compliance.rules.corpus import Law

if TYPE_CHECKING:  # pragma: no cover
    from compliance.models.classifier import ArticleClassifier

__all__ = [
    "CONSEQUENCE_GRID",
    "DEFAULT_GRID",
    "LEXICAL_GRID",
    "SANCTION_GRID",
    "UMBRELLA_GRID",
    "PriorCandidate",
    "Selection",
    "main",
    "render_selection",
    "score_consequences",
    "score_floors",
    "score_law_priors",
    "score_lexical_weights",
    "score_passage_weights",
    "score_sanctions",
    "score_umbrellas",
    "select_law_prior",
]

#: exponents tried for (addressee, citations, recitals): a coarse grid, so 732 development cases cannot be
#: over-fitted by fine-tuning three real numbers.
DEFAULT_GRID: tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]] = (
    (0, 1, 2),
    (0, 1, 2),
    (0, 1, 2),
)

#: lexical-expert weights tried in step 2.
LEXICAL_GRID: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0)
#: (members per paragraph or point, weight) tried in step 3.
UMBRELLA_GRID: tuple[tuple[int, ...], tuple[float, ...]] = ((1, 2, 3), (0.0, 0.25, 0.5, 0.75, 1.0))
#: consequence weights tried in step 4.
CONSEQUENCE_GRID: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 0.9, 1.0)
#: (consequence article's rank at most, umbrella weight in a text about a sanction) tried in step 5; None: the
#: umbrella weight of every text.
SANCTION_GRID: tuple[tuple[int, ...], tuple[float | None, ...]] = (
    (1, 2, 3, 5, 8),
    (None, 0.5, 0.7, 0.9, 1.0),
)


#: (floor_addressee, floor) tried for the floor under the duties of the regulated (``--floors``)
FLOOR_GRID: tuple[tuple[float, ...], tuple[float, ...]] = (
    (0.7, 0.8, 0.9),
    (0.1, 1 / 30, 0.01, 1 / 300, 0.001),
)


#: passage expert weights tried (``--passages``): 0 is the ensemble without it
PASSAGE_GRID: tuple[float, ...] = (0.0, 2.5, 5.0, 7.5, 10.0, 15.0)


@dataclass(frozen=True)
class PriorCandidate:
    """One grid point and its development figures."""

    config: LawPriorConfig
    mrr: float
    f_mu: float
    rec_at_3: float
    lexical_weight: float = 0.0
    umbrella_top_k: int = 0
    umbrella_weight: float = 0.0
    consequence_weight: float = 0.0
    sanction_top_k: int = 1
    sanction_umbrella_weight: float | None = None

    @property
    def objective(self) -> float:
        return self.mrr + self.f_mu

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.config.to_dict(),
            "lexical_weight": self.lexical_weight,
            "umbrella_top_k": self.umbrella_top_k,
            "umbrella_weight": self.umbrella_weight,
            "consequence_weight": self.consequence_weight,
            "sanction_top_k": self.sanction_top_k,
            "sanction_umbrella_weight": self.sanction_umbrella_weight,
            "mrr": round(self.mrr, 4),
            "f_mu": round(self.f_mu, 4),
            "rec@3": round(self.rec_at_3, 4),
            "objective": round(self.objective, 4),
        }


def score_law_priors(
    log_probs: np.ndarray,
    ids: Sequence[str],
    gold: Mapping[str, Sequence[int]],
    law: Law,
    recital_map: Mapping[int, Sequence[int]] | None,
    labels: Sequence[int],
    grid: tuple[Sequence[float], Sequence[float], Sequence[float]] = DEFAULT_GRID,
    signals: LawPrior | None = None,
) -> list[PriorCandidate]:
    """Every grid point's figures for ``log_probs + log prior``, best objective first (ties: smaller weights).

    ``signals``: the law prior already built from ``law`` (re-weighted here instead of read again)."""
    out: list[PriorCandidate] = []
    if signals is None:  # read the law once, re-weight per grid point
        signals = build_law_prior(law, recital_map, labels)
    for a, c, r in itertools.product(*grid):
        cfg = LawPriorConfig(addressee=float(a), citations=float(c), recitals=float(r))
        prior = signals.reweighted(cfg).as_array()
        rankings = ranking_from_scores(log_probs + np.log(prior), labels)
        m = article_metrics(dict(zip(ids, rankings, strict=True)), gold)
        out.append(PriorCandidate(cfg, m["mrr"], m["f_mu"], m["rec@3"]))
    out.sort(
        key=lambda p: (-round(p.objective, 6), p.config.addressee + p.config.citations + p.config.recitals)
    )
    return out


def score_lexical_weights(
    log_probs: np.ndarray,
    lexical_log_probs: np.ndarray,
    ids: Sequence[str],
    gold: Mapping[str, Sequence[int]],
    prior: PriorCandidate,
    log_prior: np.ndarray,
    labels: Sequence[int],
    weights: Sequence[float] = LEXICAL_GRID,
) -> list[PriorCandidate]:
    """Step 2: every lexical weight with the chosen prior, best objective first (ties: smaller weight)."""
    out: list[PriorCandidate] = []
    for w in weights:
        rankings = ranking_from_scores(log_probs + log_prior + w * lexical_log_probs, labels)
        m = article_metrics(dict(zip(ids, rankings, strict=True)), gold)
        out.append(PriorCandidate(prior.config, m["mrr"], m["f_mu"], m["rec@3"], float(w)))
    out.sort(key=lambda p: (-round(p.objective, 6), p.lexical_weight))
    return out


def score_umbrellas(
    log_scores: np.ndarray,
    ids: Sequence[str],
    gold: Mapping[str, Sequence[int]],
    start: PriorCandidate,
    umbrellas_by_k: Mapping[int, Mapping[int, Sequence[int]]],
    labels: Sequence[int],
    weights: Sequence[float] = UMBRELLA_GRID[1],
) -> list[PriorCandidate]:
    """Step 3: every (members per part, weight) on top of the chosen ensemble ``log_scores``, best first (ties:
    smaller weight, then fewer members)."""
    from compliance.models.umbrella import apply_umbrellas

    z = log_scores - log_scores.max(axis=1, keepdims=True)
    probs = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    out: list[PriorCandidate] = []
    for n, (k, umbrellas) in enumerate(umbrellas_by_k.items()):
        for w in weights:
            if not w and n:  # weight 0 is the same ensemble for every k: scored once
                continue
            scored = apply_umbrellas(probs, labels, umbrellas, w)[0] if w else probs
            m = article_metrics(dict(zip(ids, ranking_from_scores(scored, labels), strict=True)), gold)
            out.append(
                PriorCandidate(
                    start.config,
                    m["mrr"],
                    m["f_mu"],
                    m["rec@3"],
                    start.lexical_weight,
                    k if w else 0,
                    float(w),
                )
            )
    out.sort(key=lambda p: (-round(p.objective, 6), p.umbrella_weight, p.umbrella_top_k))
    return out


def score_consequences(
    log_scores: np.ndarray,
    ids: Sequence[str],
    gold: Mapping[str, Sequence[int]],
    start: PriorCandidate,
    consequences: Mapping[int, Sequence[int]],
    umbrellas: Mapping[int, Sequence[int]],
    labels: Sequence[int],
    weights: Sequence[float] = CONSEQUENCE_GRID,
) -> list[PriorCandidate]:
    """Step 4: every consequence weight on the ensemble ``log_scores`` (before umbrellas), then ``start``'s
    umbrellas, as the classifier scores; best first (ties: smaller weight)."""
    from compliance.models.calibration import softmax
    from compliance.models.umbrella import apply_consequences, apply_umbrellas

    probs = softmax(log_scores)
    out: list[PriorCandidate] = []
    for w in weights:
        scored = apply_consequences(probs, labels, consequences, w)[0] if w else probs
        if start.umbrella_weight:
            scored = apply_umbrellas(scored, labels, umbrellas, start.umbrella_weight)[0]
        m = article_metrics(dict(zip(ids, ranking_from_scores(scored, labels), strict=True)), gold)
        out.append(
            replace(start, mrr=m["mrr"], f_mu=m["f_mu"], rec_at_3=m["rec@3"], consequence_weight=float(w))
        )
    out.sort(key=lambda p: (-round(p.objective, 6), p.consequence_weight))
    return out


def score_sanctions(
    classifier: ArticleClassifier,
    texts: Sequence[str],
    ids: Sequence[str],
    gold: Mapping[str, Sequence[int]],
    start: PriorCandidate,
    grid: tuple[Sequence[int], Sequence[float | None]] = SANCTION_GRID,
) -> list[PriorCandidate]:
    """Step 5: every (rank, umbrella weight) pair of the reading of a text about a sanction, ``classifier``
    scoring with the ensemble ``start`` describes (its config is set to it, and restored); best first (ties: the
    lower rank, then no special weight, then the smaller weight)."""
    base = classifier.config
    raw = replace(base, consequence_clauses=False)
    try:
        classifier.config = raw
        logits = classifier.logits(texts)  # each text's own logits, its clauses not read yet
        lexical = classifier.lexical_log_probs(texts)
        citations = classifier.citations(texts)
        out: list[PriorCandidate] = []
        for k in grid[0]:
            classifier.config = replace(base, consequence_top_k=k)
            pooled = classifier.read_sanctions(texts, logits)
            for w in grid[1]:
                classifier.config = replace(base, consequence_top_k=k, sanction_umbrella_weight=w)
                scored = classifier.calibrate(pooled, lexical_log_probs=lexical, citations=citations)
                m = article_metrics(
                    dict(zip(ids, ranking_from_scores(scored, classifier.labels), strict=True)), gold
                )
                out.append(
                    replace(
                        start,
                        mrr=m["mrr"],
                        f_mu=m["f_mu"],
                        rec_at_3=m["rec@3"],
                        sanction_top_k=k,
                        sanction_umbrella_weight=w,
                    )
                )
    finally:
        classifier.config = base
    out.sort(
        key=lambda p: (
            -round(p.objective, 6),
            p.sanction_top_k,
            p.sanction_umbrella_weight is not None,
            p.sanction_umbrella_weight or 0.0,
        )
    )
    return out


@dataclass(frozen=True)
class Selection:
    """The five steps' candidates, best first; ``best`` is the chosen ensemble."""

    priors: list[PriorCandidate]
    lexical: list[PriorCandidate]
    umbrellas: list[PriorCandidate]
    consequences: list[PriorCandidate] = field(default_factory=list)
    sanctions: list[PriorCandidate] = field(default_factory=list)

    @property
    def best(self) -> PriorCandidate:
        for step in (self.sanctions, self.consequences, self.umbrellas, self.lexical, self.priors):
            if step:
                return step[0]
        raise ValueError("empty selection")


def select_law_prior(
    classifier: ArticleClassifier,
    law: Law,
    recital_map: Mapping[int, Sequence[int]] | None,
    gdprhub_rows: Sequence[dict[str, Any]],
    grid: tuple[Sequence[float], Sequence[float], Sequence[float]] = DEFAULT_GRID,
    lexical_grid: Sequence[float] = LEXICAL_GRID,
    umbrella_grid: tuple[Sequence[int], Sequence[float]] = UMBRELLA_GRID,
    consequence_grid: Sequence[float] = CONSEQUENCE_GRID,
    sanction_grid: tuple[Sequence[int], Sequence[float | None]] | None = SANCTION_GRID,
) -> Selection:
    """Run the five selection steps on the GDPRhub training half with ``classifier``'s encoder (step 5 only
    with a ``sanction_grid``)."""
    from compliance.models.training import lexical_expert, umbrella_reader
    from compliance.models.umbrella import UmbrellaConfig, consequence_articles, principle_umbrellas

    data = build_training_data(law, recital_map, DataConfig(**classifier.meta["recipe"]["data"]))
    rmap = training_recital_map(recital_map, data)
    qs = gdprhub_query_set(gdprhub_rows, "train")
    ids = list(qs.gold)
    texts = [qs.queries[i] for i in ids]
    log_probs = np.log(
        np.clip(classifier.predict_proba(texts, prior=False, lexical=False, umbrella=False), 1e-12, None)
    )
    labels = classifier.labels
    signals = build_law_prior(law, rmap, labels)
    priors = score_law_priors(log_probs, ids, qs.gold, law, rmap, labels, grid, signals)
    lexical = classifier.lexical or lexical_expert(data)
    members_reader = umbrella_reader(data, lexical)
    lex = lexical.log_probs(texts)
    col = [lexical.labels.index(a) for a in labels]
    log_prior = np.log(signals.reweighted(priors[0].config).as_array())
    steps = score_lexical_weights(
        log_probs, lex[:, col], ids, qs.gold, priors[0], log_prior, labels, lexical_grid
    )
    chosen = steps[0]
    ensemble = log_probs + log_prior + chosen.lexical_weight * lex[:, col]
    by_k = {
        k: principle_umbrellas(law, members_reader, labels, UmbrellaConfig(top_k=k)) for k in umbrella_grid[0]
    }
    umbrellas = score_umbrellas(ensemble, ids, qs.gold, chosen, by_k, labels, umbrella_grid[1])
    # step 4 on the facts and the lead summaries of the same training-half cases
    leads = gdprhub_lead_query_set(gdprhub_rows, "train")
    lead_ids = list(leads.gold)
    lead_texts = [leads.queries[i] for i in lead_ids]
    lead_log_probs = np.log(
        np.clip(classifier.predict_proba(lead_texts, prior=False, lexical=False, umbrella=False), 1e-12, None)
    )
    lead_ensemble = lead_log_probs + log_prior + chosen.lexical_weight * lexical.log_probs(lead_texts)[:, col]
    both_ids = [f"facts:{i}" for i in ids] + [f"lead:{i}" for i in lead_ids]
    both_gold = {f"facts:{i}": g for i, g in qs.gold.items()} | {
        f"lead:{i}": g for i, g in leads.gold.items()
    }
    best = umbrellas[0] if umbrellas else chosen
    found_consequences = consequence_articles(law, labels)
    consequences = score_consequences(
        np.concatenate([ensemble, lead_ensemble]),
        both_ids,
        both_gold,
        best,
        found_consequences,
        by_k.get(best.umbrella_top_k, {}),
        labels,
        consequence_grid,
    )
    sanctions: list[PriorCandidate] = []
    if sanction_grid is not None and consequences and found_consequences:
        best = consequences[0]
        ensemble_config = replace(
            classifier.config,
            label_prior=tuple(float(x) for x in signals.reweighted(best.config).as_array()),
            prior_weight=1.0,
            lexical_weight=best.lexical_weight,
            umbrellas=tuple(sorted(by_k.get(best.umbrella_top_k, {}).items())) or None,
            umbrella_weight=best.umbrella_weight,
            consequences=tuple(sorted(found_consequences.items())),
            consequence_weight=best.consequence_weight,
            consequence_clauses=True,
        )
        stored, classifier.config = classifier.config, ensemble_config
        try:
            sanctions = score_sanctions(
                classifier, texts + lead_texts, both_ids, both_gold, best, sanction_grid
            )
        finally:
            classifier.config = stored
    return Selection(priors, steps, umbrellas, consequences, sanctions)


def score_floors(
    classifier: ArticleClassifier,
    law: Law,
    recital_map: Mapping[int, Sequence[int]] | None,
    gdprhub_rows: Sequence[dict[str, Any]],
    grid: tuple[Sequence[float], Sequence[float]] = FLOOR_GRID,
) -> list[dict[str, Any]]:
    """The floor under the duties of the regulated (:attr:`~compliance.models.law_prior.LawPriorConfig.floor`) at
    every grid point and without one, ``classifier``'s whole scoring ensemble otherwise as stored (its prior's
    exponents, lexical expert, umbrellas — exempt from the floor —, consequences and citations), on the GDPRhub
    training half's case facts and lead summaries; best objective (MRR + F^μ summed over both) first."""
    stored = classifier.meta["recipe"].get("law_prior")
    if stored is None or classifier.config.label_prior is None:
        raise ValueError("the classifier has no law prior to put a floor under")
    data = build_training_data(law, recital_map, DataConfig(**classifier.meta["recipe"]["data"]))
    labels = classifier.labels
    exempt = tuple(a for a, _ in classifier.config.umbrellas or ())
    signals = build_law_prior(law, training_recital_map(recital_map, data), labels, exempt=exempt)
    base = replace(LawPriorConfig.from_dict(stored), floor=0.0)
    halves = []
    for qs in (gdprhub_query_set(gdprhub_rows, "train"), gdprhub_lead_query_set(gdprhub_rows, "train")):
        ids = list(qs.gold)
        texts = [qs.queries[i] for i in ids]
        halves.append(
            (
                ids,
                qs.gold,
                classifier.logits(texts),
                classifier.lexical_log_probs(texts),
                classifier.citations(texts),
            )
        )
    points = [base] + [replace(base, floor=f, floor_addressee=t) for t, f in itertools.product(*grid)]
    config = classifier.config
    out: list[dict[str, Any]] = []
    try:
        for cfg in points:
            prior = signals.reweighted(cfg)
            classifier.config = replace(
                config, label_prior=tuple(float(x) for x in prior.as_array()), prior_weight=1.0
            )
            row: dict[str, Any] = {"floor": cfg.floor, "floor_addressee": cfg.floor_addressee}
            objective = 0.0
            for name, (ids, gold, logits, lexical, cited) in zip(("facts", "lead"), halves, strict=True):
                probs = classifier.calibrate(logits, lexical_log_probs=lexical, citations=cited)
                m = article_metrics(dict(zip(ids, ranking_from_scores(probs, labels), strict=True)), gold)
                row[name] = {"mrr": round(m["mrr"], 4), "f_mu": round(m["f_mu"], 4)}
                objective += m["mrr"] + m["f_mu"]
            row["objective"] = round(objective, 4)
            row["floored"] = list(prior.floored)
            out.append(row)
    finally:
        classifier.config = config
    out.sort(key=lambda r: (-r["objective"], r["floor"]))
    return out


def score_passage_weights(
    classifier: ArticleClassifier,
    law: Law,
    gdprhub_rows: Sequence[dict[str, Any]],
    grid: Sequence[float] = PASSAGE_GRID,
) -> list[dict[str, Any]]:
    """The passage expert's weight (:attr:`~compliance.models.classifier.ClassifierConfig.passage_weight`) at every
    grid point, ``classifier``'s whole scoring ensemble otherwise as stored, on the GDPRhub training half's case
    facts and lead summaries; best objective (MRR + F^μ summed over both) first. The passages are the classifier's
    own when it has them, else ``law``'s paragraphs and points (no recitals) embedded by its encoder; the classifier
    is put back as it was."""
    from compliance.models.passages import build_passage_expert

    config, passages = classifier.config, classifier.passages
    expert = passages if passages is not None else build_passage_expert(law, classifier.encoder)
    labels = classifier.labels
    out: list[dict[str, Any]] = []
    try:
        classifier.config = replace(config, passage_weight=0.0)
        halves = []
        for qs in (gdprhub_query_set(gdprhub_rows, "train"), gdprhub_lead_query_set(gdprhub_rows, "train")):
            ids = list(qs.gold)
            texts = [qs.queries[i] for i in ids]
            forward = classifier.forward(texts)
            assert forward.embeddings is not None
            cosines = expert.cosines(forward.embeddings, labels)
            lexical, cited = classifier.lexical_log_probs(texts), classifier.citations(texts)
            halves.append((ids, qs.gold, forward.logits, cosines, lexical, cited))
        for weight in grid:
            row: dict[str, Any] = {"passage_weight": weight}
            objective = 0.0
            for name, (ids, gold, logits, cosines, lexical, cited) in zip(
                ("facts", "lead"), halves, strict=True
            ):
                shifted = logits + config.temperature * weight * cosines
                probs = classifier.calibrate(shifted, lexical_log_probs=lexical, citations=cited)
                m = article_metrics(dict(zip(ids, ranking_from_scores(probs, labels), strict=True)), gold)
                row[name] = {"mrr": round(m["mrr"], 4), "f_mu": round(m["f_mu"], 4)}
                objective += m["mrr"] + m["f_mu"]
            row["objective"] = round(objective, 4)
            out.append(row)
    finally:
        classifier.config, classifier.passages = config, passages
    out.sort(key=lambda r: (-r["objective"], r["passage_weight"]))
    return out


def _selection_dict(found: Selection) -> dict[str, Any]:
    return {
        "priors": [c.to_dict() for c in found.priors],
        "lexical": [c.to_dict() for c in found.lexical],
        "umbrellas": [c.to_dict() for c in found.umbrellas],
        "consequences": [c.to_dict() for c in found.consequences],
        "sanctions": [c.to_dict() for c in found.sanctions],
        "best": found.best.to_dict(),
    }


def _weight(w: float | None) -> str:
    return "-" if w is None else f"{w:g}"


def render_selection(found: Selection) -> str:
    """The steps' candidates as a text table, best first within each step."""
    lines = [
        "addressee citations recitals lexical umbrella(k, w) consequence sanction(k, w) |   MRR   F^μ  Rec@3"
        "  objective"
        "  (GDPRhub training half)"
    ]
    steps = (
        (None, found.priors),
        ("-- step 2: lexical weight with the best prior --", found.lexical),
        ("-- step 3: principle umbrellas on the best ensemble --", found.umbrellas),
        (
            "-- step 4: consequence articles (facts and lead summaries of the training half) --",
            found.consequences,
        ),
        (
            "-- step 5: a text about a sanction (consequence article's rank at most k; umbrella weight in it) --",
            found.sanctions,
        ),
    )
    for header, candidates in steps:
        if header is not None and candidates:
            lines.append(header)
        for c in candidates:
            d = c.to_dict()
            lines.append(
                f"{d['addressee']:9g} {d['citations']:9g} {d['recitals']:8g} {d['lexical_weight']:7g}"
                f" {d['umbrella_top_k']:6d} {d['umbrella_weight']:5g} {d['consequence_weight']:11g}"
                f" {d['sanction_top_k']:8d} {_weight(d['sanction_umbrella_weight']):>5s} |"
                f" {d['mrr']:.3f} {d['f_mu']:.3f} {d['rec@3']:.3f}  {d['objective']:.3f}"
            )
    return "\n".join(lines)


def _echo_step(
    rows: Sequence[Mapping[str, Any]],
    as_json: bool,
    point: Callable[[Mapping[str, Any]], str],
    more: Callable[[Mapping[str, Any]], str] = lambda r: "",
) -> None:  # pragma: no cover - printing
    """A single step's grid points, one line each (``point``: the grid point; ``more``: what follows the figures),
    or as JSON."""
    if as_json:
        click.echo(json.dumps(list(rows), indent=2))
        return
    for r in rows:
        click.echo(
            f"{point(r)}: objective {r['objective']:.4f} (facts {r['facts']['mrr']:.3f} + {r['facts']['f_mu']:.3f}, "
            f"leads {r['lead']['mrr']:.3f} + {r['lead']['f_mu']:.3f}){more(r)}"
        )


@click.command()
@click.option("--model", "model_path", type=click.Path(path_type=Path), default=None)
@click.option("--json", "as_json", is_flag=True)
@click.option(
    "--floors",
    is_flag=True,
    help="Only the floor under the duties of the regulated, on the model's stored ensemble.",
)
@click.option(
    "--passages",
    is_flag=True,
    help="Only the weight of the passage expert (the law's paragraphs and points), on the model's stored ensemble.",
)
def main(  # pragma: no cover - thin wrapper
    model_path: Path | None, as_json: bool, floors: bool, passages: bool
) -> None:
    """Select the law-prior exponents, the lexical weight, the umbrellas, the consequence weight and the reading of
    a text about a sanction on the GDPRhub training half."""
    from compliance.evaluation.queries import gdprhub_path, load_gdprhub
    from compliance.models.classifier import load
    from compliance.rules import get_pack, load_pack_law

    path = gdprhub_path()
    if path is None:
        raise click.UsageError("no GDPRhub development set (set COMPLIANCE_SHARED_DATA)")
    if floors:
        rows = score_floors(
            load(model_path), load_pack_law("gdpr"), get_pack("gdpr").recital_map(), load_gdprhub(path)
        )
        _echo_step(
            rows,
            as_json,
            lambda r: f"floor {r['floor']:.4f} at addressee >= {r['floor_addressee']:.1f}",
            lambda r: f", {len(r['floored'])} articles lifted",
        )
        return
    if passages:
        weights = score_passage_weights(load(model_path), load_pack_law("gdpr"), load_gdprhub(path))
        _echo_step(weights, as_json, lambda r: f"passage weight {r['passage_weight']:g}")
        return
    found = select_law_prior(
        load(model_path),
        load_pack_law("gdpr"),
        get_pack("gdpr").recital_map(),
        load_gdprhub(path),
    )
    click.echo(json.dumps(_selection_dict(found), indent=2) if as_json else render_selection(found))


if __name__ == "__main__":  # pragma: no cover
    main()
