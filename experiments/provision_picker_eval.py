"""The provision within the article, measured on the NIS2 expectations: for every must-alert paragraph, given the
article of its first expected provision (the article ranking is not under test here), does the picker name an
expected paragraph or point? BM25, the dense encoder (the packaged all-MiniLM-L6-v2), both with equal weights
(``hybrid``; not tuned: 0.3 and 0.7 were also looked at, see docs/officer.md), and the same with the encoder of the
classifier in use, the way the audit does it (``*_classifier``: the passages embedded by that encoder, the
paragraph's vector from the classifier's forward pass; ``hybrid_classifier`` is the audit's default), beside
chance (the share of the article's candidate provisions that are expected).

    python -m experiments.provision_picker_eval [--json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NIS2 = ROOT.parent / "shared" / "data" / "laws" / "eu" / "nis2.json"


def _paragraph_text(document: str, phrase: str) -> str:
    from compliance.connectors import parse_path

    doc = parse_path(ROOT / "examples" / document)
    wanted = " ".join(phrase.split())
    found = [p.text for p in doc.paragraphs if wanted in " ".join(p.text.split())]
    if len(found) != 1:
        raise SystemExit(f"{document}: {len(found)} paragraphs contain {phrase!r}")
    return found[0]


def measure(law_path: Path = NIS2) -> dict[str, Any]:
    from compliance.linking.decision import LinkDecisionModel
    from compliance.linking.provisions import ProvisionPicker
    from compliance.models.classifier import load
    from compliance.rules import load_law_file
    from compliance.rules.addressees import AUTHORITY_WEIGHT
    from compliance.runtime import classifier_dir
    from experiments.alert_expectations import expected_keys, load_expectations, provision_matches

    law = load_law_file(law_path)
    spec = load_expectations("nis2")
    encoder = LinkDecisionModel.from_base(None, threshold=0.5, lower=0.4)
    # the audit's way: the classifier's encoder embeds the passages, its forward pass gives the paragraph's vector
    clf = load(classifier_dir(), device="cpu")

    def embed(texts: Any) -> Any:
        return clf.encoder.embed(texts).numpy()

    pickers = {
        "bm25": ProvisionPicker(law),
        "dense": ProvisionPicker(law, encode=encoder.encode, bm25_weight=0.0),
        "hybrid": ProvisionPicker(law, encode=encoder.encode),
        "dense_classifier": ProvisionPicker(law, encode=embed, bm25_weight=0.0),
        "hybrid_classifier": ProvisionPicker(law, encode=embed),
        # the same, a provision whose duties fall on public bodies only weighted down (docs/alerts.md)
        "hybrid_classifier_entity": ProvisionPicker(law, encode=embed, authority_weight=AUTHORITY_WEIGHT),
    }
    rows: list[dict[str, Any]] = []
    for entry in spec["must_alert"]:
        expected = expected_keys(entry)
        article = expected[0].split("/", 1)[0]
        if article not in pickers["bm25"].articles_with_provisions():
            continue
        text = _paragraph_text(entry["document"], entry["phrase"])
        same_article = [e for e in expected if e.split("/", 1)[0] == article]
        candidates = {pickers["bm25"].owners[i] for i in pickers["bm25"]._by_article[article]}
        row: dict[str, Any] = {
            "phrase": entry["phrase"],
            "expected": same_article,
            "chance": sum(provision_matches(c, same_article) for c in candidates) / len(candidates),
        }
        vector = clf.forward([text]).embeddings
        assert vector is not None
        for name, picker in pickers.items():
            given = vector[0] if name.endswith("_classifier") else None
            target = picker.pick(text, article, vector=given)
            row[name] = target.key if target else None
            row[f"{name}_right"] = bool(target and provision_matches(target.key, same_article))
        rows.append(row)
    n = len(rows) or 1
    return {
        "paragraphs": len(rows),
        "accuracy": {
            "chance": round(sum(r["chance"] for r in rows) / n, 4),
            **{name: round(sum(r[f"{name}_right"] for r in rows) / n, 4) for name in pickers},
        },
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = measure()
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print(f"{result['paragraphs']} must-alert paragraphs; accuracy {result['accuracy']}")
    for r in result["rows"]:
        print(
            f"  {r['bm25_right']:d} {r['dense_right']:d} {r['hybrid_right']:d} {r['dense_classifier_right']:d} "
            f"{r['hybrid_classifier_right']:d} {r['hybrid_classifier_entity_right']:d}  {r['expected']}  bm25 {r['bm25']}  dense {r['dense']}  "
            f"hybrid {r['hybrid']}  dense (classifier) {r['dense_classifier']}  hybrid (classifier) "
            f"{r['hybrid_classifier']}  entity first {r['hybrid_classifier_entity']}"
        )


if __name__ == "__main__":
    main()
