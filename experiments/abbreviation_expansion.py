"""Abbreviations a policy uses (measured, not built into the product): does the classifier rank better when a
data-protection abbreviation is read with its expansion ("A DPIA (data protection impact assessment) must be carried
out …")?

The encoder and the lexical expert learned the law's words, and the law never writes "DPIA" or "DPO". Each text of
every realistic set that holds one of the abbreviations in :data:`EXPANSIONS` is ranked twice by the shipped
classifier through ``compliance map`` — as written, and with the expansion in brackets after the abbreviation's
first use — and MRR and hit@1 are compared over those texts only:

* ``controls``: the hand-labelled control set and the security control set;
* ``gdprhub-text`` / ``gdprhub-lead``: the GDPRhub development file's case facts and ``lead`` summaries (both halves).

    python -m experiments.abbreviation_expansion [--model DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

from compliance.evaluation.queries import gdprhub_path

#: the abbreviations tried, with the words the law uses for them
EXPANSIONS = {
    "DPO": "data protection officer",
    "DPOs": "data protection officers",
    "DPIA": "data protection impact assessment",
    "DPIAs": "data protection impact assessments",
}
_DATA = Path(__file__).resolve().parents[1] / "compliance" / "evaluation" / "data"
_PATTERN = re.compile(r"\b(" + "|".join(sorted(EXPANSIONS, key=len, reverse=True)) + r")\b")


def expand(text: str) -> str:
    """``text`` with each abbreviation's first use followed by its expansion in brackets."""
    seen: set[str] = set()

    def first_use(m: re.Match[str]) -> str:
        found = m.group(0)
        if found in seen:
            return found
        seen.add(found)
        return f"{found} ({EXPANSIONS[found]})"

    return _PATTERN.sub(first_use, text)


def _sets() -> dict[str, list[tuple[str, list[int]]]]:
    sets: dict[str, list[tuple[str, list[int]]]] = {"controls": []}
    for name in ("controls.jsonl", "security_controls.jsonl"):
        for line in (_DATA / name).read_text().splitlines():
            row = json.loads(line)
            sets["controls"].append((row["text"], [int(a) for a in row["articles"]]))
    hub = gdprhub_path()
    if hub is None:
        print("no GDPRhub file (COMPLIANCE_SHARED_DATA): the control sets only", file=sys.stderr)
        return sets
    for line in hub.read_text().splitlines():
        row = json.loads(line)
        gold = [int(str(a).split("(")[0]) for a in row.get("gdpr_articles") or []]
        for field in ("text", "lead"):
            if gold and row.get(field):
                sets.setdefault(f"gdprhub-{field}", []).append((row[field], gold))
    return sets


def _rankings(texts: list[str], model: str | None) -> list[list[int]]:
    lines = "\n".join(json.dumps({"id": str(i), "text": t}) for i, t in enumerate(texts))
    command = ["compliance", "map", "--top-k", "99", *(["--model", model] if model else [])]
    out = subprocess.run(command, input=lines, capture_output=True, text=True, check=True).stdout
    return [[a["article"] for a in json.loads(line)["articles"]] for line in out.splitlines()]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="classifier directory (default: the one `compliance map` uses)")
    args = parser.parse_args(argv)
    print("| set | texts with an abbreviation | MRR as written → expanded | hit@1 as written → expanded |")
    print("| --- | --- | --- | --- |")
    for name, rows in _sets().items():
        rows = [(t, g) for t, g in rows if _PATTERN.search(t)]
        if not rows:
            continue
        scores = []
        for texts in ([t for t, _ in rows], [expand(t) for t, _ in rows]):
            ranks = [
                min(ranked.index(a) + 1 for a in gold if a in ranked)
                for ranked, (_, gold) in zip(_rankings(texts, args.model), rows, strict=True)
            ]
            scores.append((sum(1 / r for r in ranks) / len(ranks), sum(r == 1 for r in ranks) / len(ranks)))
        (m0, h0), (m1, h1) = scores
        print(f"| {name} | {len(rows)} | {m0:.3f} → {m1:.3f} | {h0:.3f} → {h1:.3f} |")


if __name__ == "__main__":
    main()
