"""``compliance jobs``: audit a folder as one task per document (on the workers, or in this process), improve the
classifier from the reviews (``jobs train``), list and show jobs."""

from __future__ import annotations

import getpass
import time
from pathlib import Path
from typing import Any

import click

from compliance.cli.options import database_option, echo_json, echo_table, json_option, open_store


@click.group()
def jobs() -> None:
    """Audit jobs: one task per document, run by `compliance worker` (or in-process without a broker)."""


def _line(job: dict[str, Any]) -> str:
    c = job["counts"]
    return (
        f"job {job['id']} {job['status']}: {c['done']} done, {c['failed']} failed, {c['running']} running, "
        f"{c['queued']} queued of {c['total']}"
    )


def _follow_options(func: Any) -> Any:
    """``--wait/--no-wait`` and ``--broker``: how a queued job is run and followed."""
    func = click.option(
        "--broker",
        "broker_url",
        envvar="COMPLIANCE_BROKER_URL",
        default=None,
        help="Celery broker (default: COMPLIANCE_BROKER_URL; none: the job runs in this process).",
    )(func)
    return click.option(
        "--wait/--no-wait", default=True, show_default=True, help="Follow the job until it finishes."
    )(func)


def _follow(store: Any, dispatcher: Any, job_id: int, *, wait: bool, show: bool) -> bool:
    """Run the job here when no broker takes it (True), else follow it until it finishes when ``wait`` (its
    status line on stderr as it changes when ``show``)."""
    from compliance.workers.inprocess import ThreadDispatcher

    if isinstance(dispatcher, ThreadDispatcher):  # nothing else will run it: this process must
        dispatcher.wait()
        dispatcher.shutdown()
        return True
    last = ""
    while wait:
        current = store.get_job(job_id)
        line = _line(current.to_dict())
        if show and line != last:
            click.echo(line, err=True)
            last = line
        if current.finished_at is not None:
            break
        time.sleep(1.0)
    return False


@jobs.command("audit")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path, exists=True))
@click.option(
    "--top-k", type=click.IntRange(1, 99), default=5, show_default=True, help="Articles per paragraph."
)
@click.option(
    "--model",
    "model_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Classifier directory the workers load (default: their default classifier).",
)
@click.option(
    "--relative-to",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Store document sources relative to this folder (default: the folder the given paths share, as `compliance audit`).",
)
@click.option("--no-recursive", is_flag=True, help="Do not descend into sub-folders.")
@_follow_options
@database_option
@json_option
def audit(
    paths: tuple[Path, ...],
    top_k: int,
    model_path: Path | None,
    relative_to: Path | None,
    no_recursive: bool,
    wait: bool,
    broker_url: str | None,
    database_url: str | None,
    as_json: bool,
) -> None:
    """Queue an audit of documents and folders, one task per document."""
    from compliance.app.jobs import AuditJobParams, job_detail, submit_audit_job
    from compliance.workers.inprocess import job_dispatcher

    store = open_store(database_url)
    dispatcher = job_dispatcher(store, broker_url=broker_url)
    params = AuditJobParams(top_k=top_k, model=str(model_path.resolve()) if model_path else None)
    job = submit_audit_job(
        store,
        list(paths),
        dispatcher,
        params=params,
        relative_to=relative_to,
        recursive=not no_recursive,
        by=getpass.getuser(),
    )
    for r in job.params.get("rejected", []):
        click.echo(f"skipped {r['path']}: [{r['code']}] {r['error']}", err=True)
    inprocess = _follow(store, dispatcher, job.id, wait=wait, show=True)
    data = job_detail(store, job.id)
    if as_json:
        echo_json(data)
    else:
        click.echo(_line(data) + f", {data['links']} link(s)")
        if not inprocess and not wait:
            click.echo(f"follow it with: compliance jobs show {job.id}")
    if data["finished_at"] is not None and data["status"] == "failed":
        raise click.exceptions.Exit(1)


@jobs.command("train")
@click.option(
    "--calibrate",
    "calibrate_only",
    is_flag=True,
    help="Only refit the temperature and review band on the reviews (seconds), do not retrain.",
)
@click.option("--recipe", default="r", show_default=True, help="Training recipe (r, r-fast, plain …).")
@click.option(
    "--model",
    "model_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Classifier directory to write or recalibrate (default: the workers' default classifier).",
)
@_follow_options
@database_option
@json_option
def train(
    calibrate_only: bool,
    recipe: str,
    model_path: Path | None,
    wait: bool,
    broker_url: str | None,
    database_url: str | None,
    as_json: bool,
) -> None:
    """Queue a job that improves the classifier from the stored reviews (retrain, or recalibrate); the worker that
    runs it reloads the model for the next audit."""
    from compliance.app.jobs import TrainJobParams, job_detail, submit_train_job
    from compliance.workers.inprocess import job_dispatcher

    store = open_store(database_url)
    dispatcher = job_dispatcher(store, broker_url=broker_url)
    params = TrainJobParams(
        mode="calibrate" if calibrate_only else "train",
        recipe=recipe,
        model=str(model_path.resolve()) if model_path else None,
    )
    job = submit_train_job(store, dispatcher, params, by=getpass.getuser())
    _follow(store, dispatcher, job.id, wait=wait, show=False)
    data = job_detail(store, job.id)
    if as_json:
        echo_json(data)
    else:
        click.echo(_line(data))
        for item in data["items"]:
            if item["error"]:
                click.echo(f"  {item['error']}", err=True)
    if data["finished_at"] is not None and data["status"] == "failed":
        raise click.exceptions.Exit(1)


@jobs.command("list")
@click.option("--limit", type=int, default=20, show_default=True)
@database_option
@json_option
def list_command(limit: int, database_url: str | None, as_json: bool) -> None:
    """List jobs, newest first."""
    from compliance.app.jobs import list_jobs

    rows = list_jobs(open_store(database_url), limit=limit)
    if as_json:
        echo_json(rows)
        return
    echo_table(
        [
            {
                "id": j["id"],
                "kind": j["kind"],
                "status": j["status"],
                "done": j["counts"]["done"],
                "failed": j["counts"]["failed"],
                "total": j["counts"]["total"],
                "by": j["created_by"],
                "created": j["created_at"][:19],
            }
            for j in rows
        ],
        ["id", "kind", "status", "done", "failed", "total", "by", "created"],
    )


@jobs.command("show")
@click.argument("job_id", type=int)
@database_option
@json_option
def show(job_id: int, database_url: str | None, as_json: bool) -> None:
    """Show a job: progress and each document's outcome."""
    from compliance.app.jobs import job_detail

    data = job_detail(open_store(database_url), job_id)
    if as_json:
        echo_json(data)
        return
    click.echo(
        _line(data)
        + f", {data['links']} link(s); webhook: {(data['notification'] or {}).get('webhook', '-')}"
    )
    echo_table(
        [
            {
                "item": i["id"],
                "source": i["source"],
                "status": i["status"],
                "attempts": i["attempts"],
                "document": i["document_id"] or "-",
                "links": i["links"] if i["links"] is not None else "-",
                "error": (i["error"] or "")[:80],
            }
            for i in data["items"]
        ],
        ["item", "source", "status", "attempts", "document", "links", "error"],
    )
