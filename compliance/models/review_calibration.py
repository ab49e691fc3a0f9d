"""Calibrate a trained classifier on people's reviews: refit its temperature and its review band on the
paragraphs reviewers decided, and write them into the model directory (weights untouched).

* **temperature**: on the reviewed paragraphs with at least one accepted article, the temperature minimising
  the negative log-likelihood of the accepted set (:func:`compliance.models.calibration.fit_temperature`);
* **review band**: ``high`` = the smallest top-1 score at which the top article was accepted at least ``target``
  of the time among the paragraphs whose top article was decided (accepted or rejected), clipped to
  [0.3, 0.9]; ``low`` = a third of it — the rule the training uses on the law's held-out sentences.

The model's ``config.json`` keeps a record (``calibrated_from_reviews``: counts, before/after values and ECE).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from compliance.errors import ConfigurationError, ModelError
from compliance.models.calibration import review_band as calibration_band
from compliance.models.reviews import ReviewedItem

__all__ = ["MIN_REVIEWED", "calibrate_from_reviews", "review_band"]

#: fewer reviewed paragraphs with an accepted article than this: too few to refit anything
MIN_REVIEWED = 10


def review_band(conf: np.ndarray, correct: np.ndarray, target: float = 0.8) -> tuple[float, float]:
    """``(low, high)`` from decided top-1 articles (:func:`compliance.models.calibration.review_band`; 0.9 when no
    threshold reaches ``target``: without evidence, reviewers see more)."""
    return calibration_band(conf, correct, target, fallback=0.9)


def calibrate_from_reviews(
    model_dir: Path,
    items: Sequence[ReviewedItem],
    *,
    target: float = 0.8,
    device: str | None = None,
    write: bool = True,
) -> dict[str, Any]:
    """Refit temperature and review band of the classifier at ``model_dir`` on ``items``; returns the summary
    (and writes it into ``config.json`` unless ``write`` is False).

    Raises:
        ConfigurationError: fewer than :data:`MIN_REVIEWED` items with an accepted article.
        ModelNotFoundError / ModelError: no classifier there.
    """
    from compliance.models.calibration import expected_calibration_error, fit_temperature
    from compliance.models.classifier import load

    clf = load(model_dir, device=device)
    index = {a: i for i, a in enumerate(clf.labels)}
    usable = [it for it in items if any(a in index for a in (*it.accepted, *it.rejected))]
    positives = [it for it in usable if any(a in index for a in it.accepted)]
    if len(positives) < MIN_REVIEWED:
        raise ConfigurationError(
            f"{len(positives)} reviewed paragraph(s) with an accepted article: at least {MIN_REVIEWED} are needed "
            "to calibrate on reviews (accept or reject more links first)"
        )
    texts = [it.text for it in usable]
    logits = clf.logits(texts)
    lexical = clf.lexical_log_probs(texts)
    pos_rows = [i for i, it in enumerate(usable) if any(a in index for a in it.accepted)]
    gold = [[index[a] for a in usable[i].accepted if a in index] for i in pos_rows]
    before = {"temperature": clf.config.temperature, "review_band": list(clf.config.review_band)}
    probs_before = clf.calibrate(logits, lexical_log_probs=lexical)
    ece_before = expected_calibration_error(probs_before[pos_rows], gold)
    temperature = fit_temperature(logits[pos_rows], gold)
    clf.config = replace(clf.config, temperature=temperature)
    probs = clf.calibrate(logits, lexical_log_probs=lexical)
    top = probs.argmax(axis=1)
    conf, correct = [], []
    for i, it in enumerate(usable):
        art = clf.labels[int(top[i])]
        if art in it.accepted or art in it.rejected:
            conf.append(float(probs[i, top[i]]))
            correct.append(art in it.accepted)
    band = review_band(np.asarray(conf), np.asarray(correct, dtype=bool), target)
    summary = {
        "reviewed_paragraphs": len(usable),
        "with_accepted": len(pos_rows),
        "decided_top1": len(conf),
        "target_precision": target,
        "before": before,
        "after": {"temperature": temperature, "review_band": list(band)},
        "ece_before": ece_before,
        "ece_after": expected_calibration_error(probs[pos_rows], gold),
    }
    if write:
        path = model_dir / "config.json"
        try:
            cfg = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ModelError(f"{path}: cannot update: {e}") from e
        cfg.setdefault("inference", {})["temperature"] = temperature
        cfg["inference"]["review_band"] = list(band)
        cfg["calibrated_from_reviews"] = summary
        path.write_text(json.dumps(cfg, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return summary
