"""``compliance ingest PATH…``: parse documents (files or folders) and store their paragraphs.

Exit status: files that could not be read (and folders that could not be listed) are reported on stderr, one
line each, and the batch goes on; the exit status is then 1, so that scripts notice (``--allow-failures``: 0 as
long as at least one file was ingested). 1 also when no file could be ingested (every file failed, or no
supported document was found).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from compliance.cli.options import (
    allow_failures_option,
    database_option,
    echo_error,
    echo_json,
    json_option,
    open_store,
    printable,
)

if TYPE_CHECKING:
    from compliance.app.ingest import FileFailure


def report_failure(label: str, failure: FileFailure) -> None:
    """Say on stderr that a document could not be read (the batch goes on); control characters in file names
    are escaped (:func:`~compliance.cli.options.printable`)."""
    echo_error(failure.error, failure.code)


def skipped_summary(skipped: list[tuple[str, str]]) -> str:
    """``"3 file(s) skipped in folders: 1 hidden, 2 unsupported extension"``: the reasons, counted."""
    from collections import Counter

    kinds = Counter(why.split(" (")[0].split(" '")[0] for _, why in skipped)
    return f"{len(skipped)} file(s) skipped in folders: " + ", ".join(
        f"{n} {k}" for k, n in kinds.most_common()
    )


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
@allow_failures_option
@database_option
@json_option
def ingest(
    paths: tuple[Path, ...],
    relative_to: Path | None,
    no_recursive: bool,
    max_tokens: int | None,
    allow_failures: bool,
    database_url: str | None,
    as_json: bool,
) -> None:
    """Ingest documents (.docx, .pdf, .txt, .md, .html, .xlsx, .csv files or folders) into the store.

    Re-ingesting an unchanged file adds nothing; a changed file becomes a new version (the old one is kept).
    Files that cannot be read are reported on stderr and the batch goes on; the exit status is then 1 (0 with
    --allow-failures when at least one file was ingested or unchanged).
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
            f"{counts['paragraphs_stored']} paragraph(s) stored (run ingest:{report.run_number}, "
            f"id {report.run_id})"
        )
        if counts["skipped"]:
            click.echo(printable(skipped_summary(report.skipped)))
    if report.files == 0:
        click.echo("error: no supported document found in the given paths", err=True)
        raise click.exceptions.Exit(1)
    if not report.documents or (report.failures and not allow_failures):
        raise click.exceptions.Exit(1)
