"""``compliance worker``: a Celery worker that runs audit jobs, one document at a time, models loaded once."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("worker")
@click.option(
    "--broker",
    "broker_url",
    envvar="COMPLIANCE_BROKER_URL",
    default=None,
    help="Celery broker (default: COMPLIANCE_BROKER_URL, e.g. redis://127.0.0.1:6379/0).",
)
@click.option(
    "--model",
    "model_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Classifier for jobs that name none, loaded once (default: the default classifier).",
)
@click.option("--name", default=None, help="Worker node name (default: worker@<host>-<pid>).")
@click.option("--log-level", default="INFO", show_default=True, help="Celery's log level.")
@click.option("--no-warm", is_flag=True, help="Load the classifier on the first task, not at start.")
def worker_command(
    broker_url: str | None, model_path: Path | None, name: str | None, log_level: str, no_warm: bool
) -> None:
    """Run audit jobs from the queue (start as many as you like; COMPLIANCE_DATABASE_URL names the store)."""
    from compliance.workers import run_worker

    click.echo("compliance worker: loading the classifier, then taking tasks", err=True)
    run_worker(
        broker_url,
        model=str(model_path) if model_path else None,
        loglevel=log_level,
        name=name,
        warm=not no_warm,
    )
