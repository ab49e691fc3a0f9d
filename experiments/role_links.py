"""Links on paragraphs that are not statements or definitions, measured against the labelled role set.

Reads an audited SQLite database directly (so that databases written before paragraph roles existed can be
measured too), gives every stored paragraph of a labelled document its gold role (the alignment of
:func:`compliance.models.roles.align_roles`) and counts, per document: paragraphs, stored roles (when the
database has them), links, and links on paragraphs whose gold role is neither ``statement`` nor ``definition``.
The figure in docs/roles.md ("share of links on non-statement paragraphs") is the last count over the links.

    python -m experiments.role_links --database var/demo/compliance.db --labels var/role-set --split demo
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from collections import Counter
from pathlib import Path, PurePosixPath
from typing import Any

from compliance.connectors.document import Paragraph, ParsedDocument
from compliance.connectors.roles import MAPPED_ROLES
from compliance.models.roles import align_roles, load_role_set


def measure(database: Path, labels: Path, splits: tuple[str, ...] = ("demo",)) -> dict[str, Any]:
    """Per-document and total counts (see the module docstring)."""
    role_set = {d.path.name: d for d in load_role_set(labels) if d.split in splits}
    con = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    columns = {row[1] for row in con.execute("PRAGMA table_info(paragraphs)")}
    role_column = "p.role" if "role" in columns else "NULL"
    rows = con.execute(
        f"""SELECT d.source, p.id, p.ordinal, p.text, {role_column},
                   (SELECT COUNT(*) FROM links l WHERE l.paragraph_id = p.id)
            FROM paragraphs p JOIN document_versions v ON p.version_id = v.id
            JOIN documents d ON v.document_id = d.id AND v.version = d.latest_version
            ORDER BY d.source, p.ordinal"""
    ).fetchall()
    by_doc: dict[str, list[tuple[Any, ...]]] = {}
    for row in rows:
        by_doc.setdefault(row[0], []).append(row)
    out: dict[str, Any] = {"documents": {}, "total": Counter()}
    for source, paras in by_doc.items():
        labelled = role_set.get(PurePosixPath(source).name)
        if labelled is None:
            continue
        doc = ParsedDocument(
            source, "", "", "", "", tuple(Paragraph(r[2], r[3], 0, len(r[3])) for r in paras)
        )
        gold = align_roles(doc, labelled.pieces)
        links = sum(r[5] for r in paras)
        wrong = sum(r[5] for r, g in zip(paras, gold, strict=True) if g is not None and g not in MAPPED_ROLES)
        stats = {
            "paragraphs": len(paras),
            "stored_roles": dict(Counter(r[4] for r in paras if r[4] is not None)),
            "gold_roles": dict(Counter(g or "unaligned" for g in gold)),
            "links": links,
            "links_on_non_statements": wrong,
            "paragraphs_with_links_non_statement": sum(
                1
                for r, g in zip(paras, gold, strict=True)
                if r[5] and g is not None and g not in MAPPED_ROLES
            ),
        }
        out["documents"][source] = stats
        for key in ("paragraphs", "links", "links_on_non_statements", "paragraphs_with_links_non_statement"):
            out["total"][key] += stats[key]
    total = out["total"]
    total["share_of_links_on_non_statements"] = (
        round(total["links_on_non_statements"] / total["links"], 4) if total["links"] else 0.0
    )
    out["total"] = dict(total)
    return out


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point: print the counts as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--database", type=Path, required=True, help="an audited SQLite database file")
    parser.add_argument("--labels", type=Path, default=Path("var/role-set"), help="the labelled role set")
    parser.add_argument("--split", action="append", default=None, help="splits to measure (default: demo)")
    args = parser.parse_args(argv)
    result = measure(args.database, args.labels, tuple(args.split or ["demo"]))
    print(json.dumps(result, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
