"""How the role model's L2 penalty was chosen: grouped k-fold cross-validation over the training documents of
the labelled role set (a document's paragraphs stay in one fold), accuracy and mapped-role recall per penalty.

    python -m experiments.role_regularisation --labels var/role-set [--folds 5]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from compliance.connectors.document import PARAGRAPH_ROLES
from compliance.models.roles import RoleTrainingConfig, fit_logistic, load_role_set
from compliance.models.roles import _examples as examples_of
from compliance.models.roles import _parse as parse_all
from compliance.models.roles import _standardise as standardise

MAPPED = [PARAGRAPH_ROLES.index("statement"), PARAGRAPH_ROLES.index("definition")]


def cross_validate(labels: Path, penalties: list[float], folds: int = 5) -> list[dict[str, Any]]:
    """Accuracy and mapped recall (statement or definition kept as such) per L2 penalty."""
    parsed = parse_all([d for d in load_role_set(labels) if d.split == "train"])
    config = RoleTrainingConfig()
    out = []
    for l2 in penalties:
        correct = total = kept = mapped = 0
        for k in range(folds):
            train = examples_of([p for i, p in enumerate(parsed) if i % folds != k])
            held = examples_of([p for i, p in enumerate(parsed) if i % folds == k])
            counts = np.bincount(train.labels, minlength=len(PARAGRAPH_ROLES))
            weight = np.where(counts > 0, 1.0 / np.sqrt(np.maximum(counts, 1)), 0.0)
            weight = weight / weight[counts > 0].mean()
            mean, scale = standardise(train.features)
            w, b = fit_logistic(
                (train.features - mean) / scale,
                train.labels,
                len(PARAGRAPH_ROLES),
                l2=l2,
                steps=config.steps,
                learning_rate=config.learning_rate,
                class_weight=weight,
            )
            predicted = (((held.features - mean) / scale) @ w + b).argmax(axis=1)
            correct += int((predicted == held.labels).sum())
            total += len(predicted)
            gold_mapped = np.isin(held.labels, MAPPED)
            kept += int((gold_mapped & np.isin(predicted, MAPPED)).sum())
            mapped += int(gold_mapped.sum())
        out.append(
            {"l2": l2, "accuracy": round(correct / total, 4), "mapped_recall": round(kept / mapped, 4)}
        )
    return out


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point: print one JSON line per penalty."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--labels", type=Path, default=Path("var/role-set"))
    parser.add_argument("--folds", type=int, default=5)
    args = parser.parse_args(argv)
    for row in cross_validate(args.labels, [0.001, 0.003, 0.01, 0.03, 0.1], args.folds):
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
