"""Two or more GDPR classifiers side by side on every realistic set, beside the frequency prior: MRR, hit@1, hit@3
and macro-F1 (seed 000's F^μ) of the whole scoring ensemble, and which control texts change their first article.

What a retrained or re-weighted model must be checked against before it replaces the shipped one (docs/classifier.md
measures every candidate this way):

* ``abbreviation-controls``, ``controls``, ``list-controls``, ``security-controls``, ``word-sense-controls``: the
  hand-written control sets (for the last, ``false friend first``: the share of its texts whose first article is
  the one its word points to in the GDPR's sense, :func:`compliance.evaluation.queries.false_friends`);
* ``gdprhub-text-train|test``, ``gdprhub-lead-train|test``: the GDPRhub development file's case facts and ``lead``
  summaries, each half (when the file is there); the frequency prior counts the training half.

    python -m experiments.compare_models --model compliance/shipped/gdpr-classifier --model DIR [--changes] [--json]

The first model is the reference; ``--changes`` lists the control texts whose first article differs from the
reference's, with their gold articles.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from compliance.evaluation.evaluator import QuerySet
from experiments.specific_first import METRICS, FixedScores, set_metrics

#: the sets whose changed texts ``--changes`` lists (short, hand-written: each one can be read)
CONTROL_SETS = (
    "abbreviation-controls",
    "controls",
    "list-controls",
    "security-controls",
    "word-sense-controls",
)
#: the word-sense set's own figure: the share of its texts whose first article is their word's false friend
FALSE_FRIEND = "false_friend@1"


def false_friend_share(ids: Sequence[str], firsts: Sequence[int], friends: Mapping[str, int]) -> float:
    """The share of the texts ``ids`` (with their first articles ``firsts``) whose first article is the false friend
    ``friends`` names for them (texts without one are not counted), rounded to 4 places."""
    named = [(q, a) for q, a in zip(ids, firsts, strict=True) if q in friends]
    return round(sum(friends[q] == a for q, a in named) / len(named), 4) if named else 0.0


def compare(
    models: Sequence[Path], sets: Mapping[str, QuerySet], prior_counts: Mapping[int, float] | None = None
) -> dict[str, Any]:
    """Per set: each model's figures (keyed by its path), the frequency prior's (``prior_counts`` given), and the
    texts whose first article differs from the first model's (``changes``: id, text, gold, each model's first)."""
    from compliance.evaluation.evaluator import ArticleEvaluator
    from compliance.evaluation.queries import false_friends
    from compliance.evaluation.rankers import ClassifierRanker, FrequencyPrior
    from compliance.models.classifier import load

    if not models:
        raise ValueError("compare needs at least one model")
    rankers = [ClassifierRanker(load(m, device="cpu")) for m in models]
    out: dict[str, Any] = {"models": [str(m) for m in models], "sets": {}}
    for name, qs in sets.items():
        evaluator = ArticleEvaluator.from_query_set(qs)
        texts = [evaluator.queries[q] for q in evaluator.ids]
        block: dict[str, Any] = {"texts": len(texts), "figures": {}, "changes": []}
        firsts: list[list[int]] = []
        for path, ranker in zip(models, rankers, strict=True):
            scores = ranker.scores(texts) if texts else np.zeros((0, len(ranker.labels)))
            fixed = FixedScores(ranker.labels, dict(zip(texts, scores, strict=True)), str(path))
            block["figures"][str(path)] = set_metrics(evaluator, fixed)
            firsts.append([int(ranker.labels[int(j)]) for j in np.argmax(scores, axis=1)])
        if prior_counts is not None:
            prior = FrequencyPrior(prior_counts, rankers[0].labels)
            block["figures"]["prior"] = set_metrics(evaluator, prior)
        if name == "word-sense-controls":
            friends = false_friends()
            for path, first in zip(models, firsts, strict=True):
                block["figures"][str(path)][FALSE_FRIEND] = false_friend_share(evaluator.ids, first, friends)
        for i, q in enumerate(evaluator.ids):
            tops = [f[i] for f in firsts]
            if len(set(tops)) > 1:
                block["changes"].append({"id": q, "text": texts[i], "gold": evaluator.gold[q], "first": tops})
        out["sets"][name] = block
    return out


def render(result: Mapping[str, Any], changes: bool = False) -> str:
    """The comparison as Markdown: one table row per set and metric, one column per model (then the prior)."""
    models = list(result["models"])
    columns = [*models, "prior"]
    lines = [
        "| set | metric | " + " | ".join(models) + " | frequency prior |",
        "| --- | --- | " + " | ".join("---" for _ in columns) + " |",
    ]
    for name, block in result["sets"].items():
        shown_metrics = [*METRICS, FALSE_FRIEND] if name == "word-sense-controls" else METRICS
        for metric in shown_metrics:
            cells = [block["figures"].get(c, {}).get(metric) for c in columns]
            shown = " | ".join("–" if v is None else f"{v:.3f}" for v in cells)
            lines.append(f"| {name} ({block['texts']}) | {metric} | {shown} |")
    if changes:
        for name, block in result["sets"].items():
            if name not in CONTROL_SETS or not block["changes"]:
                continue
            lines.append(f"\n{name}: {len(block['changes'])} text(s) whose first article changed")
            for c in block["changes"]:
                tops = " → ".join(str(a) for a in c["first"])
                lines.append(f"  {c['id']}  gold {c['gold']}  first {tops}  | {c['text'][:100]}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    from compliance.evaluation.queries import gdprhub_article_counts, gdprhub_path, load_gdprhub
    from experiments.abbreviation_expansion import realistic_query_sets

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--model", type=Path, action="append", required=True, help="a classifier directory (repeatable)"
    )
    parser.add_argument(
        "--changes", action="store_true", help="list the control texts whose first article changed"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    hub = gdprhub_path()
    counts = gdprhub_article_counts(load_gdprhub(hub), "train") if hub is not None else None
    result = compare(args.model, realistic_query_sets(), counts)
    print(json.dumps(result, indent=1) if args.json else render(result, args.changes))


if __name__ == "__main__":
    main()
