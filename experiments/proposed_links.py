"""What the audit *proposes* (issue 13, item 4, link-status part): the share of texts that get a ``proposed``
link, how often that link is right, and how often it is a general article (Art. 5, the principles umbrella; Art.
24), with the classifier's own ranking left as it is, on every realistic set there is:

* ``gdprhub-test``: GDPRhub case facts, the held-out half of the development file;
* ``gdprhub-lead``: the same cases' short ``lead`` summaries;
* ``controls``: the hand-labelled control set;
* ``off-topic`` (with ``--off-topic FILE…``): the statements and definitions of documents that are not about
  personal data at all (a software manual, a file-format specification); every proposal there is wrong.

Four status rules, each adding to the one before (:func:`compliance.linking.classifier_links.decide_links`):

* ``rank-1``: the top article is proposed when its score reaches the band's upper edge (the rule before);
* ``own-evidence``: a principle umbrella is proposed only when its score *less the share its member articles gave
  it* reaches the edge; an umbrella above that is passed over, and the next article, on its own evidence, may be
  proposed instead;
* ``corroborated``: own evidence, and the text must bear the article out — its cosine with the article's closest
  paragraph or point, in the classifier encoder's space, at or above the shipped link decision's drop edge
  (:func:`compliance.linking.classifier_links.corroborate_links`);
* ``definitions-held``: and an article defining the act's terms (GDPR Art. 4) is passed over, never proposed
  (:func:`compliance.linking.classifier_links.defines_terms`);
* ``public-duties-held`` (the audit's default): and an article whose best-fitting paragraph or point obliges
  public bodies only (the provision picker's ``public_bodies``) is not proposed
  (``ClassifierLinkConfig.propose_public_duties``).

Also the ranking's MRR and hit@1 (the same under every rule: only statuses change) and the frequency prior's.

    python -m experiments.proposed_links [--model DIR] [--off-topic FILE ...] [--json]
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

GENERAL = (5, 24)
#: rule → (own evidence, corroborated, definitions proposed, public duties held)
RULES = {
    "rank-1": (False, False, True, False),
    "own-evidence": (True, False, True, False),
    "corroborated": (True, True, True, False),
    "definitions-held": (True, True, False, False),
    "public-duties-held": (True, True, False, True),
}


def _off_topic_texts(paths: list[Path], min_words: int) -> list[str]:
    """The statements and definitions (by the role model) of ``paths``, of at least ``min_words`` words."""
    from compliance.connectors import parse_path
    from compliance.connectors.roles import MAPPED_ROLES, assign_roles

    docs = assign_roles([parse_path(p) for p in paths])
    return [
        para.text
        for doc in docs
        for para in doc.paragraphs
        if para.role in MAPPED_ROLES and len(para.text.split()) >= min_words
    ]


def measure(
    model: Path | None = None, shared_data: Path | None = None, off_topic: list[Path] | None = None
) -> dict[str, Any]:
    from compliance.app.audit import corroboration, law_picker
    from compliance.evaluation.evaluator import ArticleEvaluator, QuerySet
    from compliance.evaluation.rankers import ClassifierRanker
    from compliance.linking.classifier_links import ClassifierLinkConfig, corroborate_links, decide_links
    from compliance.models.classifier import load
    from compliance.rules import load_pack_law
    from compliance.runtime import classifier_dir
    from experiments.specific_first import realistic_sets

    model = model or classifier_dir()
    clf = load(model)
    band = clf.config.review_band
    level = corroboration(clf)
    if level is None:
        raise SystemExit(
            "the link decision was not calibrated on this classifier's encoder: no corroboration"
        )
    law = load_pack_law("gdpr")
    picker = law_picker(clf, law.checksum, lambda: law)
    sets, prior = realistic_sets(clf.labels, shared_data)
    if off_topic:
        texts = _off_topic_texts(off_topic, ClassifierLinkConfig().min_words)
        queries = {f"off-{i}": t for i, t in enumerate(texts)}
        sets.append(QuerySet("off-topic", queries, {q: [] for q in queries}))
    out: dict[str, Any] = {"model": str(model), "band": list(band), "corroboration": level, "sets": {}}
    for qs in sets:
        ids = list(qs.gold)
        texts = [qs.queries[i] for i in ids]
        forward = clf.forward(texts)
        assert forward.embeddings is not None
        ranked = clf.rank(texts, top_k=5, explain=True, logits=forward.logits)
        block: dict[str, Any] = {"queries": len(ids)}
        if any(qs.gold[i] for i in ids):
            evaluator = ArticleEvaluator.from_query_set(qs)
            m = evaluator(ClassifierRanker(clf))
            block["mrr"] = round(float(m[f"{evaluator.name}_mrr"]), 4)
            block["hit@1"] = round(float(m[f"{evaluator.name}_acc@1"]), 4)
            if prior is not None:
                p = evaluator(prior)
                block["prior_mrr"] = round(float(p[f"{evaluator.name}_mrr"]), 4)
                block["prior_hit@1"] = round(float(p[f"{evaluator.name}_acc@1"]), 4)
        for rule, (own, corroborate, definitions, public) in RULES.items():
            proposed = right = general = 0
            for qid, text, scores, vector in zip(ids, texts, ranked, forward.embeddings, strict=True):
                links = decide_links(0, scores, band, own_evidence=own, propose_definitions=definitions)
                if corroborate:
                    cosines = picker.article_cosines(vector, [s.article for s in scores])
                    held = set()
                    if public:  # as the audit does: the linked articles' best-fitting provisions
                        for score, _ in links.linked:
                            target = picker.pick(text, score.article, vector=vector)
                            if target is not None and target.public_bodies:
                                held.add(score.article)
                    links = corroborate_links(
                        links,
                        band,
                        cosines,
                        level,
                        own_evidence=own,
                        propose_definitions=definitions,
                        held=held,
                    )
                for score, status in links.linked:
                    if status != "proposed":
                        continue
                    proposed += 1
                    right += score.article in qs.gold[qid]
                    general += score.article in GENERAL
            block[rule] = {
                "proposed": proposed,
                "proposed_share": round(proposed / max(len(ids), 1), 4),
                "proposed_precision": round(right / max(proposed, 1), 4),
                "proposed_right_share": round(right / max(len(ids), 1), 4),
                "general_share_of_proposed": round(general / max(proposed, 1), 4),
            }
        out["sets"][qs.name] = block
    return out


def main(argv: list[str] | None = None) -> None:
    from experiments.specific_first import run_experiment

    def options(parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--off-topic", type=Path, nargs="+", default=None, help="documents not about personal data"
        )

    result = run_experiment(__doc__, argv, measure, model_required=False, options=options)
    if result is None:
        return
    print(
        f"model {result['model']}, band {result['band']}, corroboration at cosine {result['corroboration']:.3f}"
    )
    for name, b in result["sets"].items():
        prior = (
            f"  (prior MRR {b['prior_mrr']:.3f}, hit@1 {b['prior_hit@1']:.3f})" if "prior_mrr" in b else ""
        )
        ranking = f": ranking MRR {b['mrr']:.3f}, hit@1 {b['hit@1']:.3f}{prior}" if "mrr" in b else ""
        print(f"{name} ({b['queries']} texts){ranking}")
        for rule in RULES:
            r = b[rule]
            print(
                f"  {rule:13s} {r['proposed']:4d} proposals, for {r['proposed_share']:.3f} of texts, precision "
                f"{r['proposed_precision']:.3f}, right {r['proposed_right_share']:.3f} of texts, general "
                f"{r['general_share_of_proposed']:.3f}"
            )


if __name__ == "__main__":
    main()
