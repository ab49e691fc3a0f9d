"""What the audit *proposes* (issue 13, item 4, link-status part): the share of texts that get a ``proposed``
link, how often that link is right, and how often it is a general article (Art. 5, the principles umbrella; Art.
24), with the classifier's own ranking left as it is, on every realistic set there is:

* ``gdprhub-test``: GDPRhub case facts, the held-out half of the development file;
* ``gdprhub-lead``: the same cases' short ``lead`` summaries;
* ``controls``: the hand-labelled control set.

Two status rules (:func:`compliance.linking.classifier_links.decide_links`):

* ``rank-1``: the top article is proposed when its score reaches the band's upper edge (the rule before);
* ``own-evidence`` (default): a principle umbrella is proposed only when its score *less the share its member
  articles gave it* reaches the edge; an umbrella above that is passed over, and the next article, on its own
  evidence, may be proposed instead.

Also the ranking's MRR and hit@1 (the same under both rules: only statuses change) and the frequency prior's.

    python -m experiments.proposed_links [--model DIR] [--json]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

GENERAL = (5, 24)


def measure(model: Path | None = None, shared_data: Path | None = None) -> dict[str, Any]:
    from compliance.evaluation.evaluator import ArticleEvaluator
    from compliance.evaluation.rankers import ClassifierRanker
    from compliance.linking.classifier_links import decide_links
    from compliance.models.classifier import load
    from compliance.runtime import classifier_dir
    from experiments.specific_first import realistic_sets

    model = model or classifier_dir()
    clf = load(model)
    band = clf.config.review_band
    sets, prior = realistic_sets(clf.labels, shared_data)
    out: dict[str, Any] = {"model": str(model), "band": list(band), "sets": {}}
    for qs in sets:
        ids = list(qs.gold)
        texts = [qs.queries[i] for i in ids]
        ranked = clf.rank(texts, top_k=5, explain=True)
        evaluator = ArticleEvaluator.from_query_set(qs)
        m = evaluator(ClassifierRanker(clf))
        block: dict[str, Any] = {
            "queries": len(ids),
            "mrr": round(float(m[f"{evaluator.name}_mrr"]), 4),
            "hit@1": round(float(m[f"{evaluator.name}_acc@1"]), 4),
        }
        if prior is not None:
            p = evaluator(prior)
            block["prior_mrr"] = round(float(p[f"{evaluator.name}_mrr"]), 4)
            block["prior_hit@1"] = round(float(p[f"{evaluator.name}_acc@1"]), 4)
        for rule, own in (("rank-1", False), ("own-evidence", True)):
            proposed = right = general = 0
            for qid, scores in zip(ids, ranked, strict=True):
                links = decide_links(0, scores, band, own_evidence=own)
                for score, status in links.linked:
                    if status != "proposed":
                        continue
                    proposed += 1
                    right += score.article in qs.gold[qid]
                    general += score.article in GENERAL
            block[rule] = {
                "proposed_share": round(proposed / max(len(ids), 1), 4),
                "proposed_precision": round(right / max(proposed, 1), 4),
                "proposed_right_share": round(right / max(len(ids), 1), 4),
                "general_share_of_proposed": round(general / max(proposed, 1), 4),
            }
        out["sets"][qs.name] = block
    return out


def main(argv: list[str] | None = None) -> None:
    from experiments.specific_first import run_experiment

    result = run_experiment(__doc__, argv, measure, model_required=False)
    if result is None:
        return
    print(f"model {result['model']}, band {result['band']}")
    for name, b in result["sets"].items():
        prior = (
            f"  (prior MRR {b['prior_mrr']:.3f}, hit@1 {b['prior_hit@1']:.3f})" if "prior_mrr" in b else ""
        )
        print(f"{name} ({b['queries']} texts): ranking MRR {b['mrr']:.3f}, hit@1 {b['hit@1']:.3f}{prior}")
        for rule in ("rank-1", "own-evidence"):
            r = b[rule]
            print(
                f"  {rule:13s} proposed for {r['proposed_share']:.3f} of texts, precision {r['proposed_precision']:.3f}"
                f", right {r['proposed_right_share']:.3f} of texts, general {r['general_share_of_proposed']:.3f}"
            )


if __name__ == "__main__":
    main()
