"""Alert runs on the sample policies, scored against the labelled expectations (ePrivacy, NIS2).

Ingests ``examples/`` into a SQLite store under ``--work`` (kept between calls), stores each law, runs one alert
pass per law and configuration (``--preset``: ``legacy`` = the ranking before provision passages, recital and
cross-reference weights and the budget; ``default`` = :class:`~compliance.alerts.engine.AlertConfig` as shipped),
and scores it with :func:`experiments.alert_expectations.score_ranking` (precision at 10/30, right provision,
recall) and :func:`~experiments.alert_expectations.score_alerts` (must / must-not).

The link decision is the installed one (:func:`compliance.runtime.decision_dir`: a trained one in the model
directory, else the one shipped with the package), unless ``--decision DIR`` names another.

    python -m experiments.alert_eval --law eprivacy --law nis2 --preset legacy --preset default --json
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from compliance.alerts.engine import AlertConfig

ROOT = Path(__file__).resolve().parent.parent
LAWS = ROOT.parent / "shared" / "data" / "laws" / "eu"

#: the configuration of the ranking before issue 13 (article-level passages, no recital or cross-reference
#: weights, no per-paragraph provision list, no budget)
LEGACY = AlertConfig(
    passage_level="article",
    recital_weight=1.0,
    cross_reference_discount=0.0,
    framing_weight=1.0,
    authority_weight=1.0,
    naming_weight=None,
    alert_budget=None,
    review_budget=None,
    background_weight=0.0,
    context_weight=0.0,
)
PRESETS: dict[str, AlertConfig] = {"legacy": LEGACY, "default": AlertConfig()}


def _store(work: Path) -> Any:
    from compliance.connectors import parse_many
    from compliance.store import Store

    work.mkdir(parents=True, exist_ok=True)
    store = Store(f"sqlite:///{work / 'alerts.sqlite'}")
    store.ensure_schema()
    if next(iter(store.iter_paragraphs()), None) is None:
        for outcome in parse_many([ROOT / "examples"]):
            if outcome.document is None:
                raise SystemExit(f"cannot read {outcome.path}: {outcome.error}")
            store.save_document(outcome.document)
    return store


def evaluate(
    laws: list[str],
    presets: list[str],
    *,
    work: Path,
    decision_dir: str | None = None,
    law_dir: Path = LAWS,
    overrides: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """One row per (law, preset): the ranked score, the must/must-not score, counts and seconds."""
    from compliance.alerts.engine import run_alerts
    from compliance.linking.decision import LinkDecisionModel
    from compliance.rules import load_law_file
    from compliance.runtime import decision_dir as default_decision
    from compliance.search import LawSearch
    from experiments.alert_expectations import score_alerts, score_ranking

    store = _store(work)
    decision = LinkDecisionModel.load(decision_dir or default_decision())
    search = LawSearch(store, index_dir=work / "index")
    paragraphs = list(store.iter_paragraphs())
    rows: list[dict[str, Any]] = []
    for law in laws:
        try:
            store.law_record(law)
        except Exception:
            store.save_law(load_law_file(law_dir / f"{law}.json"))
        for preset in presets:
            config = replace(PRESETS[preset], **(overrides or {}))
            started = time.perf_counter()
            result = run_alerts(store, law, decision=decision, search=search, config=config)
            seconds = time.perf_counter() - started
            ranked = score_ranking(result.alerts, paragraphs, law)
            plain = score_alerts(result.alerts, paragraphs, law)
            rows.append(
                {
                    "law": law,
                    "preset": preset,
                    "config": asdict(config),
                    "ranked": ranked.to_dict(),
                    "must_must_not": {
                        k: v for k, v in plain.to_dict().items() if k not in ("misses", "false_alarms")
                    },
                    "false_alarms": list(plain.false_alarms),
                    "top30_recitals": sum(a.provision_key.startswith("rec:") for a in result.alerts[:30]),
                    "alerts_per_provision_max": max(
                        Counter(a.provision_key for a in result.alerts if a.decision == "alert").values(),
                        default=0,
                    ),
                    "top10": [
                        {
                            "paragraph": a.paragraph_id,
                            "provision": a.provision_key,
                            "decision": a.decision,
                            "score": round(a.score, 4),
                            "text": a.evidence.get("paragraph_snippet", "")[:80],
                        }
                        for a in result.alerts[:10]
                    ],
                    "seconds": round(seconds, 1),
                }
            )
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--law", action="append", default=None, help="eprivacy, nis2 (repeatable)")
    parser.add_argument("--preset", action="append", choices=sorted(PRESETS), default=None)
    parser.add_argument("--work", type=Path, default=Path("var/alert-eval"))
    parser.add_argument("--decision", default=None, help="a trained link-decision directory")
    parser.add_argument("--set", action="append", default=[], help="AlertConfig override NAME=JSON")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    overrides = {k: json.loads(v) for k, v in (s.split("=", 1) for s in args.set)}
    rows = evaluate(
        args.law or ["eprivacy", "nis2"],
        args.preset or ["legacy", "default"],
        work=args.work,
        decision_dir=args.decision,
        overrides=overrides,
    )
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    for r in rows:
        s = r["ranked"]
        print(
            f"{r['law']:9s} {r['preset']:8s} P@10 {s['precision']['@10']:.2f} P@30 {s['precision']['@30']:.2f} "
            f"prov@10 {s['right_provision']['@10']:.2f} prov@30 {s['right_provision']['@30']:.2f} "
            f"recall {s['recall']:.2f} flagged {s['flagged_recall']:.2f} prov-recall {s['provision_recall']:.2f} "
            f"alerts {s['alerts']} review {s['review']} ({r['seconds']} s)"
        )


if __name__ == "__main__":
    main()
