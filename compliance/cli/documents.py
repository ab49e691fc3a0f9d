"""``compliance documents``: list and show stored documents."""

from __future__ import annotations

from typing import Any

import click

from compliance.cli.options import database_option, echo_json, echo_table, json_option


@click.group()
def documents() -> None:
    """List and show stored documents (policies, controls) and their paragraphs."""


_SHORT_TYPES = {
    "application/pdf": "pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "text/plain": "txt",
    "text/markdown": "md",
    "text/html": "html",
}


def _document_summary(record: Any) -> dict[str, Any]:
    latest = record.latest
    return {
        "id": record.id,
        "source": record.source,
        "title": record.title,
        "media_type": record.media_type,
        "version": record.latest_version,
        "versions": len(record.versions),
        "paragraphs": latest.paragraph_count,
        "pages": latest.pages,
        "size_bytes": latest.size_bytes,
        "checksum": latest.checksum,
        "ingested_at": latest.ingested_at.isoformat(),
        "created_at": record.created_at.isoformat(),
    }


@documents.command("list")
@database_option
@json_option
def list_documents(database_url: str | None, as_json: bool) -> None:
    """List stored documents with their latest version."""
    from compliance.cli.db import open_store

    rows = [_document_summary(d) for d in open_store(database_url).list_documents()]
    if as_json:
        echo_json(rows)
        return
    for row in rows:
        row["type"] = _SHORT_TYPES.get(row["media_type"], row["media_type"])
    echo_table(rows, ["id", "version", "paragraphs", "type", "source"])


@documents.command("show")
@click.argument("document")
@click.option(
    "--all-versions", is_flag=True, help="Show the paragraphs of every version, not only the latest."
)
@database_option
@json_option
def show_document(document: str, all_versions: bool, database_url: str | None, as_json: bool) -> None:
    """Show one document (by id or source) with its versions and paragraphs."""
    from compliance.cli.db import open_store

    store = open_store(database_url)
    record = store.get_document(document)
    paragraphs = list(store.iter_paragraphs(latest_only=not all_versions, document_ids=[record.id]))
    if as_json:
        data = _document_summary(record)
        data["history"] = [v.to_dict() for v in record.versions]
        data["paragraphs"] = [
            {k: v for k, v in p.to_dict().items() if k not in ("document_id", "source")} for p in paragraphs
        ]
        echo_json(data)
        return
    summary = _document_summary(record)
    for key in (
        "id",
        "source",
        "title",
        "media_type",
        "version",
        "paragraphs",
        "pages",
        "checksum",
        "ingested_at",
    ):
        click.echo(f"{key + ':':13} {summary[key] if summary[key] is not None else '-'}")
    if len(record.versions) > 1:
        click.echo("versions:")
        for v in record.versions:
            click.echo(
                f"  v{v.version}  {v.ingested_at:%Y-%m-%d %H:%M}  {v.checksum[:12]}  {v.paragraph_count} paragraphs"
            )
    click.echo("")
    for p in paragraphs:
        where = " > ".join(p.heading_path)
        page = f" p.{p.page}" if p.page is not None else ""
        prefix = f"v{p.version} " if all_versions else ""
        click.echo(f"[{prefix}{p.ordinal}]{page} {where}".rstrip())
        click.echo(f"    {p.text}")
