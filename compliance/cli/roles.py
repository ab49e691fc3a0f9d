"""``compliance roles``: train and evaluate the paragraph role model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from compliance.cli.options import device_option, echo_json, json_option


@click.group()
def roles() -> None:
    """The paragraph role model: which paragraphs are statements, definitions, headings, metadata, forms …"""


@roles.command("train")
@click.argument("labels", type=click.Path(path_type=Path, exists=True))
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Model directory to write (default: <model dir>/paragraph-roles, used from then on).",
)
@click.option(
    "--embedding",
    is_flag=True,
    help="Also fit a head over the all-MiniLM-L6-v2 sentence embedding (ml extra; used at ingest when present).",
)
@device_option
@json_option
def train(labels: Path, out: Path | None, embedding: bool, device: str | None, as_json: bool) -> None:
    """Train the role model on a labelled role set (LABELS: labels.jsonl or its folder)."""
    from compliance.app.roles import RoleTrainRequest, train_roles

    result = train_roles(
        RoleTrainRequest(labels, out, embedding=embedding, device=device),
        on_progress=lambda msg: click.echo(msg, err=True),
    )
    if as_json:
        echo_json(result)
        return
    click.echo(f"role model written to {result['path']}")
    for head, per_split in result["evaluation"].items():
        for split, metrics in per_split.items():
            _echo_metrics(f"{head} head, {split}", metrics)


@roles.command("evaluate")
@click.argument("labels", type=click.Path(path_type=Path, exists=True))
@click.option(
    "--model",
    "model_path",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Role model directory (default: the one in use).",
)
@click.option(
    "--split",
    "splits",
    multiple=True,
    default=("test",),
    show_default=True,
    help="Splits of the set to evaluate (train, test, demo); repeat for several.",
)
@click.option("--structure-only", is_flag=True, help="Evaluate the structure head only.")
@click.option("--errors", is_flag=True, help="Also list the paragraphs given a wrong role.")
@device_option
@json_option
def evaluate(
    labels: Path,
    model_path: Path | None,
    splits: tuple[str, ...],
    structure_only: bool,
    errors: bool,
    device: str | None,
    as_json: bool,
) -> None:
    """Precision and recall per role on a labelled role set."""
    from compliance.app.roles import evaluate_roles

    result = evaluate_roles(
        labels, model_path=model_path, splits=splits, embedding=not structure_only, device=device
    )
    if as_json:
        echo_json(result)
        return
    for head, per_split in result.items():
        for split, metrics in per_split.items():
            _echo_metrics(f"{head} head, {split}", metrics)
            if errors:
                for e in metrics["errors"]:
                    click.echo(
                        f"    {e['file']}[{e['ordinal']}] {e['gold']} -> {e['predicted']}: {e['text'][:90]}"
                    )


def _echo_metrics(title: str, m: dict[str, Any]) -> None:
    click.echo(
        f"\n{title}: {m['documents']} documents, {m['paragraphs']} paragraphs, accuracy {m['accuracy']:.3f}, "
        f"macro F1 {m['macro_f1']:.3f}; mapped (statement, definition) precision "
        f"{m['mapped']['precision']:.3f}, recall {m['mapped']['recall']:.3f}"
    )
    click.echo(f"  {'role':12} {'precision':>9} {'recall':>7} {'support':>8}")
    for role, v in m["per_role"].items():
        click.echo(f"  {role:12} {v['precision']:9.2f} {v['recall']:7.2f} {v['support']:8d}")
