"""``compliance calibrate --from-reviews``: refit the classifier's temperature and review band on reviews."""

from __future__ import annotations

from pathlib import Path

import click

from compliance.cli.options import database_option, device_option, echo_json, json_option


@click.command("calibrate")
@click.option(
    "--from-reviews",
    is_flag=True,
    required=True,
    help="Calibrate on the reviewed GDPR links of the database (the only source for now).",
)
@click.option(
    "--model",
    "model_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Classifier directory (default: <model dir>/gdpr-classifier if it exists, else the shipped one; a recalibrated shipped model is written to <model dir>/gdpr-classifier).",
)
@click.option("--dry-run", is_flag=True, help="Show the new values without writing them.")
@database_option
@device_option
@json_option
def calibrate_command(
    from_reviews: bool,
    model_path: Path | None,
    dry_run: bool,
    database_url: str | None,
    device: str | None,
    as_json: bool,
) -> None:
    """Refit the classifier's temperature and review band on what reviewers accepted and rejected."""
    from compliance.app.classifier import calibrate_classifier_from_reviews

    if not from_reviews:  # pragma: no cover - required flag
        raise click.UsageError("--from-reviews is required")
    s = calibrate_classifier_from_reviews(
        model_path, database_url=database_url, device=device, write=not dry_run
    )
    if as_json:
        echo_json(s)
        return
    b, a = s["before"], s["after"]
    click.echo(
        f"{'would calibrate' if dry_run else 'calibrated'} {s['path']} on {s['reviewed_paragraphs']} reviewed "
        f"paragraph(s) ({s['with_accepted']} with an accepted article)"
    )
    click.echo(f"  temperature {b['temperature']:.3f} → {a['temperature']:.3f}")
    click.echo(f"  review band {tuple(b['review_band'])} → {tuple(a['review_band'])}")
    click.echo(f"  ECE on the reviews {s['ece_before']:.3f} → {s['ece_after']:.3f}")
