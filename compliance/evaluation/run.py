"""The full evaluation behind ``compliance evaluate``: every query set × (model + baselines)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compliance.errors import ConfigurationError
from compliance.evaluation import BUILT_IN_SETS
from compliance.evaluation.evaluator import ArticleEvaluator, ArticleRanker, QuerySet
from compliance.evaluation.queries import (
    BUNDLED_SETS,
    controls_query_set,
    examples_query_set,
    gdprhub_article_counts,
    gdprhub_lead_query_set,
    gdprhub_path,
    gdprhub_query_set,
    labelled_query_set,
    load_gdprhub,
)
from compliance.evaluation.rankers import (
    BM25Ranker,
    ClassifierRanker,
    FrequencyPrior,
    PriorFusion,
    ZeroShotRanker,
)
from compliance.models.data import ArticleUnits, DataConfig, TrainingData, build_training_data
from compliance.models.law_prior import LawPriorConfig, build_law_prior
from compliance.models.training import training_recital_map
from compliance.rules.corpus import Law

if TYPE_CHECKING:  # pragma: no cover
    from compliance.models.classifier import ArticleClassifier

__all__ = ["BUILT_IN_SETS", "EvaluationReport", "build_query_sets", "evaluate"]

METRICS = ("rec", "prec", "f_mu", "f_M", "rec@3", "mrr", "hit@3", "ece")


@dataclass
class EvaluationReport:
    """Rows of (query set, ranker, metrics) plus what was evaluated."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    query_sets: dict[str, int] = field(default_factory=dict)
    model: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def table(self) -> list[dict[str, Any]]:
        return [
            {
                "set": r["set"],
                "ranker": r["ranker"],
                **{m: round(r["metrics"][m], 3) if m in r["metrics"] else "" for m in METRICS},
            }
            for r in self.rows
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "query_sets": self.query_sets,
            "model": self.model,
            "seconds": self.seconds,
            "rows": self.rows,
        }


def build_query_sets(
    law: Law,
    recital_map: Mapping[int, Sequence[int]] | None,
    data_config: DataConfig,
    *,
    shared_data: Path | None = None,
    controls: Path | None = None,
    sets: Sequence[str] = BUILT_IN_SETS,
    query_files: Sequence[Path] = (),
) -> tuple[list[QuerySet], TrainingData, list[dict[str, Any]]]:
    """The query sets (held-out with respect to ``data_config``), the training data, and the GDPRhub rows.

    ``query_files``: the user's labelled JSONL files (``{"id", "text", "articles": [...]}`` per line), one set
    each, named after the file's stem; their gold articles must be among the ranked articles of ``law``.

    Raises:
        ConfigurationError: an unknown set name, an unreadable or malformed query file, two sets of one name, or
            a gold article the law does not have.
    """
    unknown = [s for s in sets if s not in BUILT_IN_SETS]
    if unknown:
        raise ConfigurationError(f"unknown query set(s) {unknown}; choose from {', '.join(BUILT_IN_SETS)}")
    data = build_training_data(law, recital_map, data_config)
    out: list[QuerySet] = []
    if "qa" in sets:
        out.append(examples_query_set("qa", data.qa, "held-out article sentences"))
    if "qr" in sets:
        out.append(examples_query_set("qr", data.qr, "held-out recitals"))
    rows: list[dict[str, Any]] = []
    if "gdprhub" in sets or "gdprhub-lead" in sets:
        path = gdprhub_path(shared_data)
        if path is not None:
            rows = load_gdprhub(path)
            if "gdprhub" in sets:
                out.append(gdprhub_query_set(rows, "test"))
            if "gdprhub-lead" in sets:
                out.append(gdprhub_lead_query_set(rows, "test"))
    if "controls" in sets:
        out.append(controls_query_set(controls))
    out.extend(build() for name, build in BUNDLED_SETS.items() if name in sets)
    articles = {a.number for a in data.articles}
    for path in query_files:
        qs = labelled_query_set(path)
        if qs.name in {q.name for q in out} or qs.name in BUILT_IN_SETS:
            raise ConfigurationError(
                f"{path}: a query set named {qs.name!r} is already evaluated; rename the file "
                "(a set is named after its file's stem)"
            )
        for qid, gold in qs.gold.items():
            outside = sorted(set(gold) - articles)
            if outside:
                raise ConfigurationError(
                    f"{path}: query {qid!r} names article(s) {outside}, not among the {len(articles)} "
                    f"articles of {law.short_name} that are ranked"
                )
        out.append(qs)
    return out, data, rows


def _law_prior_config(classifier: ArticleClassifier | None) -> LawPriorConfig:
    """The law-prior weights a model was trained with (the default ones for baselines-only runs)."""
    stored = classifier.meta.get("recipe", {}).get("law_prior") if classifier is not None else None
    return LawPriorConfig.from_dict(stored) if stored else LawPriorConfig()


def evaluate(
    law: Law,
    recital_map: Mapping[int, Sequence[int]] | None,
    *,
    model_path: Path | None = None,
    shared_data: Path | None = None,
    controls: Path | None = None,
    sets: Sequence[str] = BUILT_IN_SETS,
    query_files: Sequence[Path] = (),
    baselines: Sequence[str] = ("prior", "bm25", "zero-shot"),
    fusion_weights: Sequence[float] = (),
    limit: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> EvaluationReport:
    """Evaluate the classifier at ``model_path`` (if any) and the baselines on every query set.

    Args:
        law: the project's GDPR parse.
        recital_map: article → recitals.
        model_path: a trained classifier directory (None: baselines only).
        shared_data: the development data folder (GDPRhub); default from settings.
        controls: the control set file (default: the one shipped in ``compliance/evaluation/data``).
        sets: which built-in query sets (:data:`BUILT_IN_SETS`; may be empty when ``query_files`` are given).
        query_files: the user's labelled JSONL files (``{"id", "text", "articles": [...]}`` per line), each
            evaluated as a set named after the file's stem.
        baselines: any of ``prior`` (training-frequency, GDPRhub-frequency and law-derived priors), ``bm25``,
            ``zero-shot``.
        fusion_weights: also score ``classifier + w·log prior(GDPRhub train half)`` for these weights.
        limit: evaluate at most this many queries per set (quick runs).
        progress: called with a line of text before each ranker × set.
    """
    from compliance.models.classifier import load
    from compliance.models.encoder import load_encoder

    t0 = time.monotonic()
    report = EvaluationReport()
    classifier = load(model_path) if model_path is not None else None
    data_config = DataConfig(**classifier.meta["recipe"]["data"]) if classifier is not None else DataConfig()
    query_sets, data, hub_rows = build_query_sets(
        law,
        recital_map,
        data_config,
        shared_data=shared_data,
        controls=controls,
        sets=sets,
        query_files=query_files,
    )
    if limit is not None:
        query_sets = [
            QuerySet(q.name, q.queries, dict(list(q.gold.items())[:limit]), q.description) for q in query_sets
        ]
    labels = sorted(a.number for a in data.articles)
    rankers: list[ArticleRanker] = []
    hub_prior = FrequencyPrior(gdprhub_article_counts(hub_rows, "train"), labels, "prior(gdprhub)")
    if "prior" in baselines:
        rankers.append(FrequencyPrior(data.label_counts, labels, "prior(training)"))
        if hub_rows:
            rankers.append(hub_prior)
        law_prior = build_law_prior(
            law, training_recital_map(recital_map, data), labels, _law_prior_config(classifier)
        )
        rankers.append(
            FrequencyPrior(dict(zip(labels, law_prior.distribution, strict=True)), labels, "prior(law)")
        )
    # The baselines see what the classifier was trained on (title + training units), never held-out sentences.
    seen = [ArticleUnits(a.number, a.title, tuple(data.train_units.get(a.number, ()))) for a in data.articles]
    if "bm25" in baselines:
        rankers.append(BM25Ranker(law, documents={a.number: "\n".join((a.title, *a.units)) for a in seen}))
    if "zero-shot" in baselines:
        rankers.append(ZeroShotRanker(law, load_encoder(None), articles=seen))
    if classifier is not None:
        recipe_name = classifier.meta["recipe"]["name"]
        clf_ranker = ClassifierRanker(classifier, f"classifier[{recipe_name}]")
        rankers.append(clf_ranker)
        # ablations of the scoring ensemble (they share the forward passes)
        parts = {
            "prior": classifier.uses_prior,
            "lexical": classifier.uses_lexical,
            "umbrella": classifier.uses_umbrellas,
            "consequence": classifier.uses_consequences,
            "citation": classifier.uses_citations,
        }
        used = [p for p, on in parts.items() if on]
        variants = [(f"no {p}", {q: q != p for q in parts}) for p in used]
        if len(used) >= 2:  # with a single part, its "no …" row already is the encoder alone
            variants.append(("encoder only", dict.fromkeys(parts, False)))
        for label, flags in variants:
            rankers.append(
                ClassifierRanker(
                    classifier, f"classifier[{recipe_name}] {label}", cache=clf_ranker.cache, **flags
                )
            )
        report.model = {
            "path": str(model_path),
            "recipe": recipe_name,
            "identity": classifier.identity,
            "temperature": classifier.config.temperature,
            "law_prior": classifier.meta.get("recipe", {}).get("law_prior"),
            "lexical_weight": classifier.config.lexical_weight,
            "umbrellas": classifier.config.umbrellas,
            "umbrella_weight": classifier.config.umbrella_weight,
            "consequences": classifier.config.consequences,
            "consequence_weight": classifier.config.consequence_weight,
            "citation_names": classifier.config.citation_names,
            "citation_weight": classifier.config.citation_weight,
        }
        if hub_rows:
            bare = ClassifierRanker(
                classifier,
                f"classifier[{recipe_name}]",
                prior=False,
                lexical=False,
                umbrella=False,
                consequence=False,
                citation=False,
                cache=clf_ranker.cache,
            )
            for w in fusion_weights:
                rankers.append(
                    PriorFusion(
                        bare, hub_prior, w, name=f"classifier[{recipe_name}] encoder+prior(gdprhub, w={w:g})"
                    )
                )
    for qs in query_sets:
        report.query_sets[qs.name] = len(qs)
        evaluator = ArticleEvaluator.from_query_set(qs)
        for ranker in rankers:
            if progress is not None:
                progress(f"{qs.name}: {ranker.name}")
            metrics = evaluator(ranker)
            prefix = f"{qs.name}_"
            report.rows.append(
                {
                    "set": qs.name,
                    "ranker": ranker.name,
                    "metrics": {k[len(prefix) :]: v for k, v in metrics.items()},
                }
            )
    report.seconds = round(time.monotonic() - t0, 1)
    return report
