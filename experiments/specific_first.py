"""Specific before general (issue 13, item 4, ranking part): the classifier's ranking re-ranked so that general
articles (Art. 5, 24 …) do not crowd out the specific one (:mod:`compliance.linking.specific`), measured beside
the classifier and the frequency prior on every realistic set there is:

* ``gdprhub-test``: GDPRhub case facts, the held-out half of the development file (each case its own document);
* ``gdprhub-lead``: the same cases' short ``lead`` summaries (one to three sentences on what happened);
* ``controls``: the hand-labelled control set, each control its own document (rule 1 only), and
  ``controls-as-document``: the whole set as one document (rule 2, the cap, applies too).

MRR, hit@1 (``acc@1``), hit@3 and macro-F1 (``f_mu``) per set and variant, and the share of queries with a general
article in the top 3 / first.

    python -m experiments.specific_first --model DIR [--json]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from compliance.evaluation.evaluator import ArticleEvaluator
from compliance.linking.specific import SpecificFirstConfig, specific_first_scores

VARIANTS: dict[str, SpecificFirstConfig | None] = {
    "classifier": None,
    "specific-first (5, 24)": SpecificFirstConfig(),
    "specific-first (5)": SpecificFirstConfig(general=(5,)),
    "specific-first (5, 24, 6)": SpecificFirstConfig(general=(5, 24, 6)),
    "specific-first (5, 24), no cap": SpecificFirstConfig(cap=None),
}


class FixedScores:
    """A ranker whose scores are given (per text, in order): scores computed once, ranked by an evaluator."""

    def __init__(self, labels: Sequence[int], by_text: dict[str, np.ndarray], name: str) -> None:
        self.labels = list(labels)
        self.by_text = by_text
        self.name = name

    def scores(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self.by_text[t] for t in texts])


def _general_share(evaluator: ArticleEvaluator, ranker: Any, general: Sequence[int]) -> dict[str, float]:
    rankings = evaluator.rankings(ranker)
    n = len(rankings) or 1
    return {
        "general_top1": round(sum(r[0] in general for r in rankings.values()) / n, 4),
        "general_top3": round(sum(any(a in general for a in r[:3]) for r in rankings.values()) / n, 4),
    }


def realistic_sets(labels: Sequence[int], shared_data: Path | None) -> tuple[list[Any], Any]:
    """The realistic query sets — GDPRhub case facts (held-out half), the same cases' ``lead`` summaries, the
    hand-labelled controls and security controls — and the GDPRhub frequency prior over ``labels``; without the
    GDPRhub file, the control sets alone and no prior."""
    from compliance.evaluation.queries import (
        controls_query_set,
        gdprhub_article_counts,
        gdprhub_lead_query_set,
        gdprhub_path,
        gdprhub_query_set,
        load_gdprhub,
        security_controls_query_set,
    )
    from compliance.evaluation.rankers import FrequencyPrior

    controls = [controls_query_set(), security_controls_query_set()]
    path = gdprhub_path(shared_data)
    if path is None:
        return controls, None
    rows = load_gdprhub(path)
    hub = gdprhub_query_set(rows, "test")
    lead = replace(gdprhub_lead_query_set(rows, "test"), name="gdprhub-lead")
    prior = FrequencyPrior(gdprhub_article_counts(rows, "train"), list(labels))
    return [hub, lead, *controls], prior


def measure(model: Path, shared_data: Path | None = None) -> dict[str, Any]:
    from compliance.evaluation.rankers import ClassifierRanker
    from compliance.models.classifier import load

    clf = load(model)
    labels = list(clf.labels)
    sets, prior = realistic_sets(labels, shared_data)
    if prior is None:
        raise SystemExit("no GDPRhub development file (set COMPLIANCE_SHARED_DATA)")
    hub, lead, controls = sets
    base = ClassifierRanker(clf)
    out: dict[str, Any] = {"model": str(model), "sets": {}}
    general_all = (5, 24, 6)
    for qs, one_document in ((hub, False), (lead, False), (controls, False), (controls, True)):
        name = f"{qs.name}-as-document" if one_document else qs.name
        evaluator = ArticleEvaluator.from_query_set(qs)
        texts = [evaluator.queries[q] for q in evaluator.ids]
        raw = base.scores(texts)
        table: dict[str, Any] = {}
        table["prior"] = {**set_metrics(evaluator, prior), **_general_share(evaluator, prior, general_all)}
        for label, cfg in VARIANTS.items():
            if cfg is None:
                scores = raw
            elif one_document:
                scores = specific_first_scores(raw, labels, cfg)
            else:  # every query its own document (below min_paragraphs): rule 1 only
                scores = np.concatenate(
                    [specific_first_scores(raw[i : i + 1], labels, cfg) for i in range(len(raw))]
                )
            fixed = FixedScores(labels, dict(zip(texts, scores, strict=True)), label)
            table[label] = {**set_metrics(evaluator, fixed), **_general_share(evaluator, fixed, general_all)}
        out["sets"][name] = {"queries": len(evaluator.ids), "results": table}
    return out


#: the figures :func:`set_metrics` gives, in :class:`~compliance.evaluation.evaluator.ArticleEvaluator`'s names
METRICS = ("mrr", "acc@1", "hit@3", "f_mu")


def set_metrics(evaluator: ArticleEvaluator, ranker: Any) -> dict[str, float]:
    """MRR, hit@1, hit@3 and F^μ of ``ranker`` on ``evaluator``'s set, rounded to 4 places."""
    m = evaluator(ranker)
    return {k: round(float(m[f"{evaluator.name}_{k}"]), 4) for k in METRICS}


def run_experiment(
    doc: str,
    argv: list[str] | None,
    measure: Callable[..., dict[str, Any]],
    *,
    model_required: bool,
    options: Callable[[argparse.ArgumentParser], None] | None = None,
) -> dict[str, Any] | None:
    """An experiment over a classifier and the realistic sets, from the command line (``--model``,
    ``--shared-data``, ``--json``, and what ``options`` adds, passed to ``measure`` by keyword): its result to
    print, or None when it was printed as JSON."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=model_required, default=None)
    parser.add_argument("--shared-data", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    if options is not None:
        options(parser)
    args = vars(parser.parse_args(argv))
    model, shared_data, as_json = args.pop("model"), args.pop("shared_data"), args.pop("json")
    result = measure(model, shared_data, **args)
    if as_json:
        print(json.dumps(result, indent=1))
        return None
    return result


def main(argv: list[str] | None = None) -> None:
    result = run_experiment(__doc__, argv, measure, model_required=True)
    if result is None:
        return
    for name, block in result["sets"].items():
        print(f"{name} ({block['queries']} queries)")
        for label, m in block["results"].items():
            print(
                f"  {label:32s} MRR {m['mrr']:.3f}  hit@1 {m['acc@1']:.3f}  hit@3 {m['hit@3']:.3f}  "
                f"macro-F1 {m['f_mu']:.3f}  general first {m['general_top1']:.2f}  in top 3 {m['general_top3']:.2f}"
            )


if __name__ == "__main__":
    main()
