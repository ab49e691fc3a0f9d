"""Which article does a recital explain? The alert run's answer (``AlertConfig.recital_articles``,
:func:`compliance.alerts.engine._recital_articles`: the article paragraph or point closest to the recital in the
link decision's embedding space) checked against the GDPR's article ↔ recital map
(``<shared data>/mappings/gdpr_article_recital_map.tsv``), beside the baseline of naming the article the map
lists most often.

The shipped link decision runs on the shipped classifier's encoder, which was trained on the GDPR's recitals
labelled through that same map (recital enrichment), so its figure on the GDPR is optimistic; ``--encoder base``
uses the packaged all-MiniLM-L6-v2, which never saw the map. ``--law FILE`` without the GDPR map prints each
recital's article (for reading, e.g. the ePrivacy Directive).

    python -m experiments.recital_articles [--encoder shipped|base] [--law FILE] [--json]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np


def _decision(encoder: str) -> Any:
    from compliance.alerts.engine import load_decision_model
    from compliance.linking.decision import LinkDecisionModel

    if encoder == "base":  # threshold and band are not used here
        return LinkDecisionModel.from_base(None, threshold=0.5, lower=0.4)
    return load_decision_model()


def recital_articles(law_file: Path, encoder: str) -> tuple[Any, dict[str, tuple[str, float]]]:
    """The law and, per recital key, ``(article passage key, cosine)`` as the alert run names it."""
    from compliance.alerts.engine import AlertConfig, _recital_articles
    from compliance.rules import load_law_file
    from compliance.rules.passages import provision_passages

    law = load_law_file(law_file)
    config = AlertConfig()
    decision = _decision(encoder)
    keys = [p.key for p in law.recitals]
    texts, owners = provision_passages(law, keys, config.passage_words, lead_words=config.point_lead_words)
    vecs = np.asarray(decision.encode(texts))
    explains = _recital_articles(law, texts, owners, vecs, decision, config)
    out: dict[str, tuple[str, float]] = {}
    for i, (key, _text, closeness, _vec, _weight) in explains.items():
        out.setdefault(owners[i], (key, closeness))
    return law, out


def measure(shared_data: Path, encoder: str) -> dict[str, Any]:
    _, named = recital_articles(shared_data / "laws" / "eu" / "gdpr.json", encoder)
    gold: defaultdict[str, set[str]] = defaultdict(set)
    lines = (
        (shared_data / "mappings" / "gdpr_article_recital_map.tsv").read_text(encoding="utf-8").splitlines()
    )
    for line in lines[1:]:
        article, recital = line.split("\t")[:2]
        gold[f"rec:{recital}"].add(f"art:{article}")
    mapped = [r for r in named if r in gold]
    right = sum(named[r][0].split("/", 1)[0] in gold[r] for r in mapped)
    counts = Counter(a for r in mapped for a in gold[r])
    most, _ = counts.most_common(1)[0]
    return {
        "encoder": encoder,
        "recitals_mapped": len(mapped),
        "article_in_map": round(right / max(len(mapped), 1), 4),
        "baseline_article": most,
        "baseline_in_map": round(sum(most in gold[r] for r in mapped) / max(len(mapped), 1), 4),
    }


def main(argv: list[str] | None = None) -> None:
    from compliance.settings import get_settings

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--encoder", choices=("shipped", "base"), default="shipped")
    parser.add_argument(
        "--law", type=Path, default=None, help="print each recital's article for this law file"
    )
    parser.add_argument("--shared-data", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.law is not None:
        law, named = recital_articles(args.law, args.encoder)
        for recital, (article, closeness) in sorted(named.items(), key=lambda kv: int(kv[0].split(":")[1])):
            print(f"{recital:8s} → {article:18s} {closeness:.3f}  {law.text_of(recital)[:70]!r}")
        return
    shared = args.shared_data or get_settings().resolved_shared_data()
    if shared is None:
        raise SystemExit("no shared data (set COMPLIANCE_SHARED_DATA)")
    result = measure(shared, args.encoder)
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print(
        f"GDPR, {result['recitals_mapped']} mapped recitals, encoder {result['encoder']}: the article named is in "
        f"the map for {result['article_in_map']:.3f} (baseline, always {result['baseline_article']}: "
        f"{result['baseline_in_map']:.3f})"
    )


if __name__ == "__main__":
    main()
