"""``compliance evaluate``: the classifier and its baselines on QA, QR, GDPRhub, the control set and the user's
own labelled JSONL files."""

from __future__ import annotations

import json
from pathlib import Path

import click

from compliance.cli.options import echo_table, json_option
from compliance.evaluation import BUILT_IN_SETS


@click.command("evaluate")
@click.option(
    "--model",
    "model_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Classifier directory (default: <model dir>/gdpr-classifier if it exists, else the one shipped with the package).",
)
@click.option("--baselines-only", is_flag=True, help="Evaluate only the baselines.")
@click.option(
    "--set",
    "sets",
    multiple=True,
    type=click.Choice(list(BUILT_IN_SETS)),
    help="Built-in query sets (repeatable; default: all available, or none when --queries is given).",
)
@click.option(
    "--queries",
    "query_files",
    multiple=True,
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help='Your own labelled JSONL, one {"id","text","articles":[...]} per line; evaluated as a set named '
    "after the file's stem (repeatable).",
)
@click.option(
    "--baseline",
    "baselines",
    multiple=True,
    type=click.Choice(["prior", "bm25", "zero-shot"]),
    help="Baselines (repeatable; default all three).",
)
@click.option(
    "--fusion-weight",
    "fusion_weights",
    multiple=True,
    type=float,
    help="Also report classifier + w·log(GDPRhub prior) for this weight (repeatable).",
)
@click.option(
    "--controls",
    "controls_path",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    default=None,
    help="Control set JSONL (default: the shipped one).",
)
@click.option("--limit", type=click.IntRange(1), default=None, help="At most this many queries per set.")
@click.option(
    "--output", type=click.Path(path_type=Path), default=None, help="Also write the report as JSON."
)
@json_option
def evaluate_command(
    model_path: Path | None,
    baselines_only: bool,
    sets: tuple[str, ...],
    query_files: tuple[Path, ...],
    baselines: tuple[str, ...],
    fusion_weights: tuple[float, ...],
    controls_path: Path | None,
    limit: int | None,
    output: Path | None,
    as_json: bool,
) -> None:
    """Seed-000 metrics (Rec, Prec, F^μ, F^M, Rec@3, MRR) of the model beside the frequency prior, BM25 and
    the zero-shot base encoder, on the built-in query sets and on your own labelled JSONL (--queries)."""
    from compliance.app import evaluate_classifier
    from compliance.progress import progress_enabled

    def progress(line: str) -> None:
        if progress_enabled():
            click.echo(f"evaluating {line}", err=True)

    report = evaluate_classifier(
        model_path,
        baselines_only=baselines_only,
        sets=sets,
        query_files=query_files,
        baselines=baselines or ("prior", "bm25", "zero-shot"),
        fusion_weights=fusion_weights,
        controls_path=controls_path,
        limit=limit,
        on_note=lambda note: click.echo(note, err=True),
        progress=progress,
    )
    if output is not None:
        output.write_text(json.dumps(report.to_dict(), indent=2) + "\n")
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        echo_table(
            report.table(), ["set", "ranker", "rec", "prec", "f_mu", "f_M", "rec@3", "mrr", "hit@3", "ece"]
        )
        click.echo(f"queries: {report.query_sets}; {report.seconds} s")
