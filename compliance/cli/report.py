"""``compliance report``: the coverage and gap report (HTML, XLSX, JSON)."""

from __future__ import annotations

from pathlib import Path

import click

from compliance.cli.options import database_option, echo_json, json_option, open_store


@click.command("report")
@click.option("--law", default="gdpr", show_default=True, help="The law whose coverage is reported.")
@click.option(
    "--documents",
    "documents",
    multiple=True,
    help="Only these documents (ids or sources; repeat, or separate with commas). Default: all.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["html", "xlsx", "json"]), default="html", show_default=True
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="The file to write (default: coverage-<law>.<format> here).",
)
@database_option
@json_option
def report_command(
    law: str, documents: tuple[str, ...], fmt: str, out: Path | None, database_url: str | None, as_json: bool
) -> None:
    """Coverage of a law by the stored documents: matrix, chapters, gaps, evidence, review progress."""
    from compliance.app.reports import coverage_report, write_report

    chosen = [d.strip() for item in documents for d in item.split(",") if d.strip()]
    report = coverage_report(open_store(database_url), law, chosen or None)
    target = out or Path(f"coverage-{law}.{fmt}")
    written = write_report(report, target, fmt)
    if as_json:
        echo_json(written.to_dict())
        return
    click.echo(
        f"{written.format} report written to {written.path}: {written.covered}/{written.articles} article(s) "
        f"covered, {written.suggested_only} covered only by unreviewed suggestions, {written.gaps} gap(s)"
    )
