"""The provision within the article: given the right article (the article ranking is not under test here), does
the picker name an expected paragraph or point? Measured on two labelled sets:

* ``nis2``: the NIS2 alert expectations, every must-alert paragraph of the sample policies with the article of
  its first expected provision;
* ``gdpr-controls``: the hand-labelled GDPR controls (``controls.jsonl`` and ``security_controls.jsonl``), every
  control whose first article has ``provisions`` labelled (``compliance/evaluation/data/controls.md``).

Pickers: BM25, the dense encoder (the packaged all-MiniLM-L6-v2), both with equal weights (``hybrid``; not tuned:
0.3 and 0.7 were also looked at, see docs/officer.md), and the same with the encoder of the classifier in use,
the way the audit does it (``*_classifier``: the passages embedded by that encoder, the text's vector from the
classifier's forward pass; ``hybrid_classifier_entity``, which also weighs down a provision that obliges public
bodies only, is the audit's default), beside chance (the share of the article's candidate provisions that are
expected). A picker that names nothing (the text shares no term with the article's passages: the link keeps the
whole article) counts as wrong; ``named`` counts the texts it named a provision for.

    python -m experiments.provision_picker_eval [--set nis2] [--set gdpr-controls] [--json]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NIS2 = ROOT.parent / "shared" / "data" / "laws" / "eu" / "nis2.json"
SETS = ("nis2", "gdpr-controls")
PICKERS = ("bm25", "dense", "hybrid", "dense_classifier", "hybrid_classifier", "hybrid_classifier_entity")


@dataclass(frozen=True)
class Item:
    """A labelled text: its ``article`` key (``art:21``) and the expected provisions within it."""

    label: str
    text: str
    article: str
    expected: tuple[str, ...]


@cache
def _paragraphs(document: str) -> tuple[tuple[str, str], ...]:
    """Each paragraph of a sample document as (its text with whitespace collapsed, its text); each document is
    read once."""
    from compliance.connectors import parse_path

    paragraphs = parse_path(ROOT / "examples" / document).paragraphs
    return tuple((" ".join(p.text.split()), p.text) for p in paragraphs)


def _paragraph_text(document: str, phrase: str) -> str:
    wanted = " ".join(phrase.split())
    found = [text for collapsed, text in _paragraphs(document) if wanted in collapsed]
    if len(found) != 1:
        raise SystemExit(f"{document}: {len(found)} paragraphs contain {phrase!r}")
    return found[0]


def nis2_items() -> list[Item]:
    """The must-alert paragraphs of the NIS2 expectations, each with the article of its first expected provision
    and the expected provisions within that article."""
    from experiments.alert_expectations import expected_keys, load_expectations

    items = []
    for entry in load_expectations("nis2")["must_alert"]:
        expected = expected_keys(entry)
        article = expected[0].split("/", 1)[0]
        same_article = tuple(e for e in expected if e.split("/", 1)[0] == article)
        items.append(
            Item(entry["phrase"], _paragraph_text(entry["document"], entry["phrase"]), article, same_article)
        )
    return items


def gdpr_control_items() -> list[Item]:
    """The labelled controls whose first article has provisions labelled."""
    from compliance.evaluation.queries import _read_jsonl, bundled_data

    return [
        Item(row["id"], row["text"], f"art:{row['articles'][0]}", tuple(row["provisions"]))
        for name in ("controls.jsonl", "security_controls.jsonl")
        for row in _read_jsonl(bundled_data(name))
        if row["provisions"]
    ]


def score(law: Any, items: Sequence[Item], clf: Any, encode: Any) -> dict[str, Any]:
    """Each picker's accuracy over ``items`` of ``law`` (see the module docstring), with the rows."""
    from compliance.app.audit import classifier_passage_vectors
    from compliance.linking.provisions import ProvisionPicker
    from compliance.rules.addressees import AUTHORITY_WEIGHT
    from experiments.alert_expectations import provision_matches

    def embed(texts: Any) -> Any:
        return clf.encoder.embed(texts).numpy()

    base = ProvisionPicker(law)
    # the classifier's passages as the audit takes them (compliance.app.audit.law_picker)
    own = classifier_passage_vectors(clf, law.checksum, base.texts)
    pickers = {
        "bm25": base,
        "dense": ProvisionPicker(law, encode=encode, bm25_weight=0.0),
        "hybrid": ProvisionPicker(law, encode=encode),
        "dense_classifier": ProvisionPicker(law, encode=embed, bm25_weight=0.0, passage_vectors=own),
        "hybrid_classifier": ProvisionPicker(law, encode=embed, passage_vectors=own),
        # the same, a provision whose duties fall on public bodies only weighted down (the audit's default)
        "hybrid_classifier_entity": ProvisionPicker(
            law, encode=embed, passage_vectors=own, authority_weight=AUTHORITY_WEIGHT
        ),
    }
    choosable = base.articles_with_provisions()
    items = [i for i in items if i.article in choosable]
    vectors = clf.forward([i.text for i in items]).embeddings if items else []
    rows: list[dict[str, Any]] = []
    for item, vector in zip(items, vectors, strict=True):
        candidates = {base.owners[i] for i in base._by_article[item.article]}
        row: dict[str, Any] = {
            "label": item.label,
            "expected": list(item.expected),
            "chance": sum(provision_matches(c, item.expected) for c in candidates) / len(candidates),
        }
        for name, picker in pickers.items():
            given = vector if "_classifier" in name else None
            target = picker.pick(item.text, item.article, vector=given)
            row[name] = target.key if target else None
            row[f"{name}_right"] = bool(target and provision_matches(target.key, item.expected))
        rows.append(row)
    n = len(rows) or 1
    return {
        "texts": len(rows),
        "accuracy": {
            "chance": round(sum(r["chance"] for r in rows) / n, 4),
            **{name: round(sum(r[f"{name}_right"] for r in rows) / n, 4) for name in pickers},
        },
        "named": {name: sum(r[name] is not None for r in rows) for name in pickers},
        "rows": rows,
    }


def measure(sets: Sequence[str] = SETS, law_path: Path = NIS2) -> dict[str, Any]:
    from compliance.linking.decision import LinkDecisionModel
    from compliance.models.classifier import load
    from compliance.rules import load_law_file, load_pack_law
    from compliance.runtime import classifier_dir

    encoder = LinkDecisionModel.from_base(None, threshold=0.5, lower=0.4)
    # the audit's way: the classifier's encoder embeds the passages, its forward pass gives the text's vector
    clf = load(classifier_dir(), device="cpu")
    out: dict[str, Any] = {}
    if "nis2" in sets:
        out["nis2"] = score(load_law_file(law_path), nis2_items(), clf, encoder.encode)
    if "gdpr-controls" in sets:
        out["gdpr-controls"] = score(load_pack_law("gdpr"), gdpr_control_items(), clf, encoder.encode)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--set", action="append", choices=SETS, default=None, help="repeatable; default: both"
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--rows", action="store_true", help="print every text's picks")
    args = parser.parse_args(argv)
    result = measure(args.set or SETS)
    if args.json:
        print(json.dumps(result, indent=1))
        return
    for name, block in result.items():
        acc = block["accuracy"]
        print(f"{name}: {block['texts']} texts; chance {acc['chance']:.3f}")
        for picker in PICKERS:
            print(f"  {picker:26s} {acc[picker]:.3f}  (named a provision for {block['named'][picker]})")
        if args.rows:
            for r in block["rows"]:
                marks = " ".join(str(int(r[f"{p}_right"])) for p in PICKERS)
                print(
                    f"    {marks}  {r['label'][:40]:40s} expected {r['expected']}  audit's pick {r[PICKERS[-1]]}"
                )


if __name__ == "__main__":
    main()
