"""How much do reviews improve the classifier? The learning curve of ``compliance train --with-reviews``, with
reviewers simulated on the GDPRhub development set.

Protocol (nothing of the held-out half is ever seen before scoring):

1. the GDPRhub cases are split by id hash (:func:`compliance.evaluation.queries.gdprhub_split`): the *training*
   half plays the organisation's reviewed paragraphs, the *test* half is only scored;
2. a base model (no reviews) is trained with the chosen recipe; it suggests its top ``k`` articles for every
   training-half case, and a simulated reviewer — who knows the case's gold articles — accepts the suggestions
   that are gold, rejects the others, and adds the gold articles the model missed (so positives = the gold
   articles, negatives = the suggestions that were wrong);
3. the reviewed cases are taken in a fixed shuffled order (seed), and a model is trained with the first
   0, 50, 100, 200, 500 and all of them (the same recipe, reviews added to its data);
4. every model is scored on the test half (MRR and macro-F1 = seed 000's F^μ), beside the frequency prior of
   the training half's articles.

The full default recipe ``r`` (all layers, 2 epochs, a soup of 3 seeds) takes 6–20 minutes per model on two
CPU cores, and even the light ``r-fast`` regime (top two layers, one epoch) took over six CPU-minutes per model
on the shared development machine. The curve is therefore measured in the ``frozen`` regime: the packaged
encoder stays as it is and only the article head is trained (six epochs), with the default recipe's law prior,
lexical expert and umbrellas. Every model then shares the same encoder, so the held-out texts are encoded once
and each model only applies its own head (:func:`frozen_scores`). The numbers measure the *effect of the reviews*
on one recipe, not the default model's absolute quality (``--recipe r-fast`` runs the same protocol with
fine-tuning, encoding everything again per model)::

    python -m experiments.review_learning_curve --recipe frozen --out var/review-curve.json

(``--points 0,50`` and ``--limit-test N`` for a quick look.)
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from compliance.evaluation.evaluator import ArticleEvaluator
from compliance.evaluation.metrics import article_metrics, ranking_from_scores
from compliance.evaluation.queries import gdprhub_path, gdprhub_query_set, gdprhub_split, load_gdprhub
from compliance.evaluation.rankers import ClassifierRanker, FrequencyPrior
from compliance.models.calibration import expected_calibration_error
from compliance.models.reviews import ReviewedItem

__all__ = [
    "DEFAULT_POINTS",
    "FrozenEncoding",
    "frozen_scores",
    "main",
    "render_table",
    "run_curve",
    "simulate_reviews",
]

DEFAULT_POINTS = (0, 50, 100, 200, 500, -1)  # -1: all reviewed items


def simulate_reviews(
    rows: Sequence[dict[str, Any]], suggestions: Sequence[Sequence[int]]
) -> list[ReviewedItem]:
    """A reviewer who knows the gold articles: accepts the gold suggestions, rejects the others, adds the gold
    articles the model missed."""
    items = []
    for row, suggested in zip(rows, suggestions, strict=True):
        gold = {int(a) for a in row["gdpr_articles"]}
        rejected = tuple(sorted(a for a in suggested if a not in gold))
        items.append(ReviewedItem(str(row["id"]), str(row["text"]), tuple(sorted(gold)), rejected))
    return items


class FrozenEncoding:
    """The pooled encoder outputs of every window of some texts, computed once with a model's (frozen) encoder,
    and the lexical expert's log-probabilities: what every head-only model of the curve shares."""

    def __init__(self, clf: Any, texts: Sequence[str]) -> None:
        import numpy as np
        import torch

        windows, owners = clf._windows(texts)
        pooled = np.zeros((len(windows), clf.encoder.hidden_size), dtype=np.float32)
        clf.encoder.model.eval()
        with torch.inference_mode():
            for idx, ids, mask in clf.window_batches(windows):
                pooled[idx] = (
                    clf.encoder.pooled({"input_ids": ids, "attention_mask": mask}).float().cpu().numpy()
                )
        self.pooled = pooled
        self.owners = np.asarray(owners)
        self.texts = list(texts)
        self.n = len(texts)
        self.lexical = clf.lexical_log_probs(texts)
        self.encoder_checksum = _encoder_checksum(clf)


def _encoder_checksum(clf: Any) -> float:
    return float(sum(float(p.detach().double().sum()) for p in clf.encoder.model.parameters()))


def frozen_scores(clf: Any, enc: FrozenEncoding) -> Any:
    """The classifier's calibrated scores of the encoded texts, applying only its head (its encoder must be the
    one that encoded them: checked)."""
    import torch

    if abs(_encoder_checksum(clf) - enc.encoder_checksum) > 1e-6 * max(1.0, abs(enc.encoder_checksum)):
        raise click.ClickException("the model's encoder is not the frozen one: use a head-only recipe")
    from compliance.models.classifier import pool_windows

    with torch.inference_mode():
        win = clf.head(torch.from_numpy(enc.pooled).to(clf.encoder.device)).float().cpu().numpy()
    logits = pool_windows(win, enc.owners, enc.n, clf.config.window_pooling, clf.config.temperature)
    # a text about a fine is read by its clauses too, with this model's head (the clauses are few: encoded here)
    return clf.calibrate(clf.read_sanctions(enc.texts, logits), lexical_log_probs=enc.lexical)


def _train(recipe: str, reviews: Sequence[ReviewedItem], out: Path | None, seed: int | None) -> Any:
    """One model of the curve, kept in memory. The law's held-out figures (evaluated after every epoch by the
    training loop) play no part in the curve, so they are skipped to save the time."""
    from unittest import mock

    import compliance.models.training as training
    from compliance.app.classifier import gdpr_training_inputs

    law, recital_map = gdpr_training_inputs()
    chosen = training.get_recipe(recipe, seed=seed)
    with mock.patch.object(training, "_heldout_eval", lambda *a, **k: {}):
        return training.train(chosen, law, recital_map, out_dir=out, reviews=reviews).classifier


def run_curve(
    *,
    recipe: str = "frozen",
    points: Sequence[int] = DEFAULT_POINTS,
    top_k: int = 3,
    seed: int = 7,
    limit_test: int | None = None,
    train_seed: int | None = None,
) -> dict[str, Any]:
    """Train and score the models of the curve; returns the rows and the protocol."""
    path = gdprhub_path()
    if path is None:
        raise click.ClickException("no GDPRhub file: set COMPLIANCE_SHARED_DATA")
    rows = load_gdprhub(path)
    train_rows = [r for r in rows if gdprhub_split(str(r["id"])) == "train"]
    test = gdprhub_query_set(rows, "test")
    if limit_test is not None:
        keep = sorted(test.gold)[:limit_test]
        test = type(test)(test.name, {k: test.queries[k] for k in keep}, {k: test.gold[k] for k in keep})
    evaluator = ArticleEvaluator.from_query_set(test)
    random.Random(seed).shuffle(train_rows)
    results: list[dict[str, Any]] = []
    t0 = time.monotonic()
    base = _train(recipe, (), None, train_seed)
    labels = list(base.labels)
    frozen = base.meta.get("recipe", {}).get("freeze_layers", 0) >= 99
    prior = FrequencyPrior(
        Counter(a for r in train_rows for a in r["gdpr_articles"]), labels, "frequency prior (train half)"
    )
    prior_metrics = evaluator(prior)
    train_texts = [str(r["text"]) for r in train_rows]
    if frozen:
        suggested_scores = frozen_scores(base, FrozenEncoding(base, train_texts))
        ranked = ranking_from_scores(suggested_scores, labels)
        suggestions = [r[:top_k] for r in ranked]
        test_encoding = FrozenEncoding(base, [evaluator.queries[q] for q in evaluator.ids])
    else:
        suggestions = [[s.article for s in r] for r in base.rank(train_texts, top_k=top_k)]
    reviewed = simulate_reviews(train_rows, suggestions)
    for n in points:
        count = len(reviewed) if n < 0 else min(n, len(reviewed))
        started = time.monotonic()
        model = base if count == 0 else _train(recipe, reviewed[:count], None, train_seed)
        if frozen:
            scores = frozen_scores(model, test_encoding)
            rankings = dict(zip(evaluator.ids, ranking_from_scores(scores, labels), strict=True))
            m = {f"gdprhub-test_{k}": v for k, v in article_metrics(rankings, evaluator.gold).items()}
            col = {a: j for j, a in enumerate(labels)}
            gold = [[col[a] for a in evaluator.gold[q] if a in col] for q in evaluator.ids]
            m["gdprhub-test_ece"] = expected_calibration_error(scores, gold)
        else:
            m = evaluator(ClassifierRanker(model))
        results.append(
            {
                "reviewed": count,
                "accepted": sum(len(x.accepted) for x in reviewed[:count]),
                "rejected": sum(len(x.rejected) for x in reviewed[:count]),
                "mrr": m["gdprhub-test_mrr"],
                "f_mu": m["gdprhub-test_f_mu"],
                "acc@1": m["gdprhub-test_acc@1"],
                "ece": m.get("gdprhub-test_ece"),
                "seconds": round(time.monotonic() - started, 1) if count else None,
            }
        )
    return {
        "protocol": {
            "recipe": recipe,
            "suggested_top_k": top_k,
            "shuffle_seed": seed,
            "train_seed": train_seed,
            "train_half": len(train_rows),
            "test_half": len(test.gold),
            "elapsed_s": round(time.monotonic() - t0, 1),
        },
        "prior": {"mrr": prior_metrics["gdprhub-test_mrr"], "f_mu": prior_metrics["gdprhub-test_f_mu"]},
        "rows": results,
    }


def render_table(result: dict[str, Any]) -> str:
    """The curve as a Markdown table."""
    p = result["prior"]
    lines = [
        "| reviewed cases | accepted / added | rejected | MRR | macro-F1 (F^μ) | acc@1 | ECE |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        f"| frequency prior | | | {p['mrr']:.3f} | {p['f_mu']:.3f} | | |",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['reviewed']} | {r['accepted']} | {r['rejected']} | {r['mrr']:.3f} | {r['f_mu']:.3f} | "
            f"{r['acc@1']:.3f} | {r['ece']:.3f} |"
            if r.get("ece") is not None
            else f"| {r['reviewed']} | {r['accepted']} | {r['rejected']} | {r['mrr']:.3f} | {r['f_mu']:.3f} | "
            f"{r['acc@1']:.3f} | |"
        )
    return "\n".join(lines)


@click.command()
@click.option("--recipe", default="frozen", show_default=True, help="Recipe of every model of the curve.")
@click.option("--points", default="0,50,100,200,500,all", show_default=True, help="Reviewed-case counts.")
@click.option(
    "--top-k", type=int, default=3, show_default=True, help="Suggestions a reviewer decides per case."
)
@click.option("--seed", type=int, default=7, show_default=True, help="Order in which cases get reviewed.")
@click.option("--limit-test", type=int, default=None, help="Score only this many test cases (quick look).")
@click.option("--out", type=click.Path(path_type=Path), default=None, help="Write the result as JSON here.")
def main(recipe: str, points: str, top_k: int, seed: int, limit_test: int | None, out: Path | None) -> None:
    """Train with 0 … all simulated reviews and print the learning-curve table."""
    chosen = tuple(-1 if p.strip() == "all" else int(p) for p in points.split(",") if p.strip())
    result = run_curve(recipe=recipe, points=chosen, top_k=top_k, seed=seed, limit_test=limit_test)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    click.echo(json.dumps(result["protocol"]))
    click.echo(render_table(result))


if __name__ == "__main__":
    main()
