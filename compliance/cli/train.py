"""``compliance train``: train (and calibrate) the GDPR article classifier."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from compliance.cli.options import database_option, device_option


@click.command("train")
@click.option(
    "--recipe",
    default="r",
    show_default=True,
    help="Training recipe: r (default: recital enrichment, every sentence also restated in a policy's words, all "
    "layers, 2 epochs, soup of 3 seeds), r-literal (r without the restated sentences), r-fast (top 2 layers, 1 "
    "epoch, 1 seed), plain, rsp-r, mca-r, rsp-mca-r (the r-fast regime), r-long, frozen; r-led (r plus the Law "
    "Enforcement Directive's provisions that restate a GDPR article: for documents that are mostly security "
    "controls), r-parallel (the same on r-literal) and r-acts (r-parallel plus hard negatives from acts of other "
    "fields) read those acts' law packs; r-lexical-recitals (r until session 39: NIS2's recitals on its security "
    "measures in Art. 32's lexical document only, not its training text); r-regulated (r without an article's "
    "sentences that address public bodies only, where they are a minority of its sentences).",
)
@click.option(
    "--base-model",
    default=None,
    help="Base encoder: a Hugging Face id or local directory (default: packaged all-MiniLM-L6-v2).",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Model directory to write (default: <model dir>/gdpr-classifier).",
)
@click.option(
    "--extra",
    "extra_path",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    default=None,
    help='Extra supervision: JSONL {"id","text","articles":[...]}.',
)
@click.option(
    "--gdprhub-train",
    is_flag=True,
    help="Add the training half of the GDPRhub development set (shared data) as extra supervision; "
    "the other half stays held out for `compliance evaluate`.",
)
@click.option(
    "--prior-weight",
    type=click.FloatRange(0.0, 10.0),
    default=0.0,
    show_default=True,
    help="With extra supervision: weight of its article frequencies as the model's label prior (0 = none).",
)
@click.option(
    "--no-law-prior",
    is_flag=True,
    help="Score without the article-applicability prior read from the law (uniform prior).",
)
@click.option(
    "--no-umbrellas",
    is_flag=True,
    help="Score without the principle umbrellas (Art. 5 receiving the mass of the articles implementing it).",
)
@click.option(
    "--no-consequences",
    is_flag=True,
    help="Score without the consequence articles (Art. 83, fines, passing its mass down to the articles whose "
    "infringement it fines).",
)
@click.option(
    "--no-citations",
    is_flag=True,
    help="Score without explicit citations (a text citing 'Art. 30 GDPR' giving that article half its score).",
)
@click.option(
    "--lexical-weight",
    type=click.FloatRange(0.0, 10.0),
    default=None,
    help="Weight of the lexical expert (BM25 over the articles) in the scoring ensemble; 0 = encoder only "
    "[recipe default: 1].",
)
@click.option("--epochs", type=click.IntRange(1, 100), default=None, help="Override the recipe's epochs.")
@click.option(
    "--min-k", type=click.IntRange(1, 10_000), default=None, help="Override minK (instances/article)."
)
@click.option("--freeze-layers", type=click.IntRange(0, 100), default=None, help="Override frozen layers.")
@click.option(
    "--soup",
    type=click.IntRange(1, 20),
    default=None,
    help="Override the number of fine-tuning runs (seeds seed, seed+1, …) whose weights are averaged.",
)
@click.option(
    "--seed", type=int, default=None, help="Override the training seed (RNGs of torch, numpy, python)."
)
@click.option(
    "--data-seed",
    type=int,
    default=None,
    help="Override the salt of the held-out split (which sentences and recitals are kept out of training).",
)
@click.option(
    "--with-reviews",
    is_flag=True,
    help="Add the database's reviewed GDPR links: accepted (and added) links as positives, rejected links as "
    "negatives (the law's held-out sets stay apart).",
)
@database_option
@device_option
@click.option("--no-bf16", is_flag=True, help="Train in fp32 even where bf16 autocast is supported.")
@click.option("--json", "as_json", is_flag=True, help="Print the training summary as JSON.")
def train_command(
    recipe: str,
    base_model: str | None,
    out_dir: Path | None,
    extra_path: Path | None,
    gdprhub_train: bool,
    prior_weight: float,
    no_law_prior: bool,
    no_umbrellas: bool,
    no_consequences: bool,
    no_citations: bool,
    lexical_weight: float | None,
    epochs: int | None,
    min_k: int | None,
    freeze_layers: int | None,
    soup: int | None,
    seed: int | None,
    data_seed: int | None,
    with_reviews: bool,
    database_url: str | None,
    device: str | None,
    no_bf16: bool,
    as_json: bool,
) -> None:
    """Train the 99-way GDPR article classifier (progress and time estimate on stderr)."""
    from compliance.app import TrainRequest, train_classifier
    from compliance.progress import enable_progress
    from compliance.runtime import default_classifier_dir
    from compliance.settings import get_settings

    if sys.stderr.isatty() and get_settings().progress == "auto":
        enable_progress(True)
    request = TrainRequest(
        recipe=recipe,
        overrides={
            "base_model": base_model,
            "epochs": epochs,
            "min_k": min_k,
            "freeze_layers": freeze_layers,
            "soup": soup,
            "seed": seed,
            "data_seed": data_seed,
            "lexical_weight": lexical_weight,
        },
        out_dir=out_dir,
        extra_path=extra_path,
        gdprhub_train=gdprhub_train,
        prior_weight=prior_weight,
        law_prior=not no_law_prior,
        umbrellas=not no_umbrellas,
        consequences=not no_consequences,
        citations=not no_citations,
        device=device,
        bf16=False if no_bf16 else None,
        with_reviews=with_reviews,
        database_url=database_url,
    )
    click.echo(f"training recipe {recipe!r} → {out_dir or default_classifier_dir()}", err=True)
    summary = train_classifier(request)
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    else:
        click.echo(f"model saved to {summary['path']}")
        click.echo(
            f"  {summary['examples']} examples, {summary['train_seconds']} s, final loss {summary['final_loss']}"
        )
        t = summary.get("timing") or {}
        if t:
            click.echo(
                f"  precision {t['precision']} on {t['device']} ({t['cpu_capability']}), {t['torch_threads']} "
                f"thread(s): {t['seconds_per_step']} s per step of {t['batch_size']} examples"
            )
        click.echo(
            f"  temperature {summary['temperature']:.3f}; ECE {summary['ece_before']:.3f} → "
            f"{summary['ece_after']:.3f}"
        )
        if summary.get("reviews"):
            r = summary["reviews"]
            click.echo(
                f"  reviews: {r['items']} paragraph(s), {r['accepted']} accepted, {r['rejected']} rejected"
            )
        for name, vals in summary["heldout"].items():
            click.echo(f"  {name}: " + ", ".join(f"{k} {v:.3f}" for k, v in vals.items()))
