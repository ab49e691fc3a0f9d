"""``compliance runs``: list runs (reaping those whose process is gone) and show one."""

from __future__ import annotations

import click

from compliance.cli.options import database_option, echo_json, echo_table, json_option, open_store, printable


@click.group()
def runs() -> None:
    """Runs of ingest, audit, law installs, alerts … numbered per kind (``audit:3``)."""


@runs.command("list")
@click.option("--kind", default=None, help="Only runs of this kind (audit, ingest, law-install …).")
@click.option(
    "--status", type=click.Choice(["running", "succeeded", "failed"]), default=None, help="Only this status."
)
@click.option(
    "--limit", type=click.IntRange(1, None), default=50, show_default=True, help="At most this many."
)
@click.option("--no-reap", is_flag=True, help="Do not mark failed the runs whose process is gone.")
@database_option
@json_option
def list_command(
    kind: str | None, status: str | None, limit: int, no_reap: bool, database_url: str | None, as_json: bool
) -> None:
    """List runs, newest first. Runs left `running` by a process that is gone (killed, crashed) are first marked
    failed, with the reason; the next audit of their documents resumes their work."""
    from compliance.app.runs import list_runs

    listing = list_runs(open_store(database_url), kind=kind, status=status, limit=limit, reap=not no_reap)
    if as_json:
        echo_json(listing.to_dict())
        return
    for run in listing.reaped:
        click.echo(
            f"run {run.kind}:{run.number} (id {run.id}) marked failed: {printable(run.error or '')}", err=True
        )
    rows = [
        {
            "run": f"{r.kind}:{r.number}",
            "id": r.id,
            "status": r.status,
            "started": r.started_at.strftime("%Y-%m-%d %H:%M:%S"),
            "seconds": "" if r.duration_s is None else f"{r.duration_s:.1f}",
            "error": printable((r.error or "")[:60]),
        }
        for r in listing.runs
    ]
    echo_table(rows, ["run", "id", "status", "started", "seconds", "error"])


@runs.command("show")
@click.argument("ref")
@database_option
@json_option
def show_command(ref: str, database_url: str | None, as_json: bool) -> None:
    """Show one run: REF is KIND:NUMBER as listed (audit:3) or the run's id."""
    from compliance.app.runs import show_run

    run = show_run(open_store(database_url), ref)
    if as_json:
        echo_json({"ref": f"{run.kind}:{run.number}", **run.to_dict()})
        return
    click.echo(f"run {run.kind}:{run.number} (id {run.id}): {run.status}")
    click.echo(f"started:  {run.started_at.isoformat()}")
    if run.finished_at is not None:
        click.echo(f"finished: {run.finished_at.isoformat()} ({run.duration_s or 0:.1f} s)")
    if run.error:
        click.echo(f"error:    {printable(run.error)}")
    for key, value in sorted(run.stats.items()):
        if not isinstance(value, (list, dict)):
            click.echo(f"{key}: {value}")
