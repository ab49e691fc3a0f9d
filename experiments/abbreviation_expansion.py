"""Abbreviations a policy uses: does the classifier rank better when it reads the abbreviations it knows written
out ("A DPIA (data protection impact assessment) is …", :mod:`compliance.abbreviations`)?

The same classifier is loaded twice, reading abbreviations as written
(:attr:`~compliance.models.classifier.ClassifierConfig.abbreviations` off) and written out (on), and each realistic
set is ranked by both (the whole scoring ensemble); MRR, hit@1 and hit@3 are given over the whole set and over the
texts that change. ``--mode replaced`` reads every use of the abbreviation replaced by its words instead ("A data
protection impact assessment is …"), the alternative measured and not chosen.

* ``abbreviation-controls``: the hand-written controls that use the abbreviations (written for this reading);
* ``controls``, ``security-controls``: the hand-written control sets;
* ``gdprhub-*``: the GDPRhub development file's case facts and ``lead`` summaries, each half.

    python -m experiments.abbreviation_expansion [--model DIR] [--mode written|replaced]
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from compliance.evaluation.evaluator import QuerySet


def realistic_query_sets() -> dict[str, QuerySet]:
    """The realistic sets by name: the hand-written control sets, and the GDPRhub case facts and lead summaries of
    each half when the development file is there."""
    from compliance.evaluation.queries import (
        BUNDLED_SETS,
        controls_query_set,
        gdprhub_lead_query_set,
        gdprhub_path,
        gdprhub_query_set,
        load_gdprhub,
    )

    built = {"controls": controls_query_set(), **{name: build() for name, build in BUNDLED_SETS.items()}}
    sets = dict(sorted(built.items()))
    hub = gdprhub_path()
    if hub is not None:
        rows = load_gdprhub(hub)
        for split in ("train", "test"):
            sets[f"gdprhub-text-{split}"] = gdprhub_query_set(rows, split)
            sets[f"gdprhub-lead-{split}"] = gdprhub_lead_query_set(rows, split)
    return sets


def _replaced(text: str) -> str:
    """The alternative reading: every use of a known abbreviation the classifier would write out replaced by its
    words."""
    from compliance.abbreviations import ABBREVIATIONS, written_out

    _, used = written_out(text)
    for short in sorted(used, key=len, reverse=True):
        text = re.sub(rf"(?<![A-Za-z0-9&-]){re.escape(short)}(?![A-Za-z0-9&-])", ABBREVIATIONS[short], text)
    return text


def _ranks(clf: Any, texts: list[str], golds: list[list[int]]) -> list[int]:
    probs = clf.predict_proba(texts)
    index = {a: i for i, a in enumerate(clf.labels)}
    out = []
    for row, gold in zip(probs, golds, strict=True):
        order = list(np.argsort(-row, kind="stable"))
        out.append(min(order.index(index[a]) for a in gold if a in index) + 1)
    return out


def _figures(ranks: list[int]) -> str:
    if not ranks:
        return "–"
    n = len(ranks)
    mrr = sum(1 / r for r in ranks) / n
    return f"{mrr:.3f} / {sum(r == 1 for r in ranks) / n:.3f} / {sum(r <= 3 for r in ranks) / n:.3f}"


def measure(model: Path | None, mode: str = "written") -> list[dict[str, Any]]:
    """One row per set: its size, the texts that change, and MRR / hit@1 / hit@3 as written and read."""
    from compliance.models.classifier import load

    written = load(model)
    written.config = replace(written.config, abbreviations=False)
    reading = load(model)
    reading.config = replace(reading.config, abbreviations=mode == "written")
    rows = []
    for name, qs in realistic_query_sets().items():
        ids = list(qs.queries)
        texts = [qs.queries[q] for q in ids]
        golds = [list(qs.gold[q]) for q in ids]
        read = reading.reading(texts) if mode == "written" else [_replaced(t) for t in texts]
        changed = [i for i, (a, b) in enumerate(zip(texts, read, strict=True)) if a != b]
        before = _ranks(written, texts, golds)
        after = list(before)
        if changed:
            again = _ranks(
                reading,
                [texts[i] if mode == "written" else read[i] for i in changed],
                [golds[i] for i in changed],
            )
            for i, r in zip(changed, again, strict=True):
                after[i] = r
        rows.append(
            {
                "set": name,
                "texts": len(ids),
                "changed": len(changed),
                "all": (_figures(before), _figures(after)),
                "changed_only": (
                    _figures([before[i] for i in changed]),
                    _figures([after[i] for i in changed]),
                ),
            }
        )
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model", type=Path, help="classifier directory (default: the one `compliance map` uses)"
    )
    parser.add_argument("--mode", choices=("written", "replaced"), default="written")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = measure(args.model, args.mode)
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print("| set | texts (changed) | MRR / hit@1 / hit@3, as written → read | the changed texts only |")
    print("| --- | --- | --- | --- |")
    for r in rows:
        print(
            f"| {r['set']} | {r['texts']} ({r['changed']}) | {r['all'][0]} → {r['all'][1]} | "
            f"{r['changed_only'][0]} → {r['changed_only'][1]} |"
        )


if __name__ == "__main__":
    main()
