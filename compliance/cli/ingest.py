"""``compliance ingest PATH…``: parse documents (files or folders) and store their paragraphs.

Exit status: 0 when at least one file was stored or found unchanged — files that could not be read are
reported on stderr and counted in the summary, and the batch goes on; 1 when no file could be ingested (every
file failed, or no supported document was found).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from compliance.cli.options import database_option, echo_json, json_option, open_store

if TYPE_CHECKING:
    from compliance.app.ingest import FileFailure


def report_failure(label: str, failure: FileFailure) -> None:
    """Say on stderr that a document could not be read (the batch goes on)."""
    click.echo(f"error [{failure.code}]: {failure.error}", err=True)


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--relative-to",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Store document sources relative to this folder (default: the folder the given paths share).",
)
@click.option("--no-recursive", is_flag=True, help="Do not descend into sub-folders.")
@click.option("--max-tokens", type=int, default=None, help="Largest paragraph in tokens (default 200).")
@database_option
@json_option
def ingest(
    paths: tuple[Path, ...],
    relative_to: Path | None,
    no_recursive: bool,
    max_tokens: int | None,
    database_url: str | None,
    as_json: bool,
) -> None:
    """Ingest documents (.docx, .pdf, .txt, .md, .html files or folders) into the store.

    Re-ingesting an unchanged file adds nothing; a changed file becomes a new version (the old one is kept).
    Files that cannot be read are reported on stderr and the batch goes on. Exit status 0 when at least one
    file was ingested or unchanged, 1 when none was.
    """
    from compliance.app import ingest_documents
    from compliance.connectors import SplitConfig

    config = SplitConfig() if max_tokens is None else SplitConfig(max_tokens=max_tokens)
    report = ingest_documents(
        open_store(database_url),
        list(paths),
        config=config,
        relative_to=relative_to,
        recursive=not no_recursive,
        on_error=report_failure,
    )
    counts = report.counts()
    if as_json:
        echo_json(report.to_dict())
    else:
        click.echo(
            f"{counts['files']} file(s): {counts['new_documents']} new, {counts['new_versions']} new version(s), "
            f"{counts['unchanged']} unchanged, {counts['failed']} failed; "
            f"{counts['paragraphs_stored']} paragraph(s) stored (run {report.run_id})"
        )
        if counts["skipped"]:
            click.echo(f"{counts['skipped']} file(s) skipped in folders (hidden or unsupported type)")
    if report.files == 0:
        click.echo("error: no supported document found in the given paths", err=True)
        raise click.exceptions.Exit(1)
    if not report.documents:
        raise click.exceptions.Exit(1)
