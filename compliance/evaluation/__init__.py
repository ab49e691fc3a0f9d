"""Evaluation of article rankers on labelled texts (seed 000 metrics beside the frequency prior).

The evaluator contract (sentence-transformers style): queries and gold articles as dicts keyed by id in, a flat
metrics dict with a primary metric (MRR) out. ``compliance evaluate`` runs it on the built-in query sets and on
the user's own labelled JSONL (``--queries FILE``).

Public API (imported lazily)::

    ArticleEvaluator(queries, gold, name)(ranker) -> {"mrr": ..., "f_M": ..., ...}
    labelled_query_set(Path("mine.jsonl")) -> QuerySet("mine", ...)     # {"id","text","articles":[...]} lines
    evaluate(law, recital_map, model_path=..., query_files=[...]) -> EvaluationReport
"""

from __future__ import annotations

from compliance._lazy import lazy_exports

#: the query sets ``compliance evaluate`` knows by name (the user's own files come beside them); here, where the
#: command line reads them without importing the evaluation itself
BUILT_IN_SETS = (
    "qa",
    "qr",
    "gdprhub",
    "gdprhub-lead",
    "controls",
    "security-controls",
    "abbreviation-controls",
    "word-sense-controls",
    "list-controls",
)

_EXPORTS = {
    "ArticleEvaluator": "compliance.evaluation.evaluator",
    "ArticleRanker": "compliance.evaluation.evaluator",
    "QuerySet": "compliance.evaluation.evaluator",
    "PRIMARY_METRIC": "compliance.evaluation.metrics",
    "article_metrics": "compliance.evaluation.metrics",
    "EvaluationReport": "compliance.evaluation.run",
    "evaluate": "compliance.evaluation.run",
    "labelled_query_set": "compliance.evaluation.queries",
}
__all__ = sorted([*_EXPORTS, "BUILT_IN_SETS"])
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
