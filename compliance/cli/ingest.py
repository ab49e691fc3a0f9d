"""``compliance ingest PATH…``: parse documents (files or folders) and store their paragraphs.

Exit status: 0 when at least one file was stored or found unchanged — files that could not be read are
reported on stderr and counted in the summary, and the batch goes on; 1 when no file could be ingested (every
file failed, or no supported document was found).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from compliance.cli.options import database_option, echo_json, json_option

logger = logging.getLogger(__name__)


def ingest_paths(
    store: Any,
    paths: list[Path],
    *,
    config: Any = None,
    relative_to: Path | None = None,
    recursive: bool = True,
    on_error: Any = None,
) -> dict[str, Any]:
    """Parse and store every document under ``paths``; return the summary (also stored as the run's stats).

    Args:
        store: a :class:`compliance.store.Store`.
        paths: files and folders.
        config: a :class:`compliance.connectors.SplitConfig` (default settings when ``None``).
        relative_to: store sources relative to this folder (default: absolute paths, so that the same file is
            recognised whatever the working directory).
        recursive: descend into sub-folders.
        on_error: called with ``(path, error)`` for each file that failed.
    """
    from compliance.connectors import SplitConfig, iter_paths, parse_path, source_name
    from compliance.errors import ComplianceError
    from compliance.progress import bar

    config = config or SplitConfig()
    skipped: list[dict[str, str]] = []
    files = list(
        iter_paths(
            paths, recursive=recursive, on_skip=lambda p, why: skipped.append({"path": str(p), "reason": why})
        )
    )
    summary: dict[str, Any] = {
        "files": len(files),
        "new_documents": 0,
        "new_versions": 0,
        "unchanged": 0,
        "failed": 0,
        "paragraphs_stored": 0,
        "skipped": len(skipped),
        "documents": [],
        "failures": [],
    }
    run_config = {"paths": [str(p) for p in paths], "split": config, "recursive": recursive}
    with store.run("ingest", run_config) as run, bar(len(files), desc="ingesting", unit="file") as progress:
        for path in files:
            failure: dict[str, str] | None = None
            try:
                doc = parse_path(path, config=config)
                doc = replace(doc, source=source_name(path, relative_to))
                saved = store.save_document(doc)
            except ComplianceError as e:
                failure = {"path": str(path), "code": e.code, "error": str(e)}
            except Exception as e:  # a parser bug must not stop the batch; it is reported, with its type
                logger.debug("unexpected error on %s", path, exc_info=True)
                failure = {"path": str(path), "code": "internal", "error": f"{type(e).__name__}: {e}"}
            else:
                if not saved.created:
                    status = "unchanged"
                    summary["unchanged"] += 1
                elif saved.new_document:
                    status = "new"
                    summary["new_documents"] += 1
                else:
                    status = "new-version"
                    summary["new_versions"] += 1
                if saved.created:
                    summary["paragraphs_stored"] += saved.paragraph_count
                summary["documents"].append(
                    {
                        "source": saved.source,
                        "document_id": saved.document_id,
                        "version": saved.version,
                        "status": status,
                        "paragraphs": saved.paragraph_count,
                    }
                )
            if failure is not None:
                summary["failed"] += 1
                summary["failures"].append(failure)
                if on_error is not None:
                    on_error(path, failure)
            progress.update(1)
        run.stats.update({k: v for k, v in summary.items() if k not in ("documents", "failures")})
        run.stats["failures"] = summary["failures"]
    summary["run_id"] = run.id
    return summary


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--relative-to",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Store document sources relative to this folder (default: absolute paths).",
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
    from compliance.cli.db import open_store
    from compliance.connectors import SplitConfig

    config = SplitConfig() if max_tokens is None else SplitConfig(max_tokens=max_tokens)
    store = open_store(database_url)

    def report(path: Path, failure: dict[str, str]) -> None:
        click.echo(f"error [{failure['code']}]: {failure['error']}", err=True)

    summary = ingest_paths(
        store,
        list(paths),
        config=config,
        relative_to=relative_to,
        recursive=not no_recursive,
        on_error=report,
    )
    if as_json:
        echo_json(summary)
    else:
        click.echo(
            f"{summary['files']} file(s): {summary['new_documents']} new, {summary['new_versions']} new version(s), "
            f"{summary['unchanged']} unchanged, {summary['failed']} failed; "
            f"{summary['paragraphs_stored']} paragraph(s) stored (run {summary['run_id']})"
        )
        if summary["skipped"]:
            click.echo(f"{summary['skipped']} file(s) skipped in folders (hidden or unsupported type)")
    ok = summary["files"] - summary["failed"]
    if summary["files"] == 0:
        click.echo("error: no supported document found in the given paths", err=True)
        raise click.exceptions.Exit(1)
    if ok == 0:
        raise click.exceptions.Exit(1)
