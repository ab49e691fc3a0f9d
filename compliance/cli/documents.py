"""``compliance documents``: list and show stored documents."""

from __future__ import annotations

import click

from compliance.cli.options import database_option, echo_json, echo_table, json_option, open_store
from compliance.connectors.document import PARAGRAPH_ROLES


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


@documents.command("list")
@database_option
@json_option
def list_documents(database_url: str | None, as_json: bool) -> None:
    """List stored documents with their latest version."""
    from compliance.app import list_documents as stored_documents

    rows = stored_documents(open_store(database_url))
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
@click.option(
    "--role",
    "roles",
    multiple=True,
    type=click.Choice(PARAGRAPH_ROLES),
    help="Only paragraphs of this role (repeat for several): statement, definition, description, heading, "
    "metadata, form, furniture, reference.",
)
@database_option
@json_option
def show_document(
    document: str, all_versions: bool, roles: tuple[str, ...], database_url: str | None, as_json: bool
) -> None:
    """Show one document (by id, stored source or file path) with its versions and paragraphs."""
    from compliance.app import document_detail

    summary = document_detail(
        open_store(database_url), document, all_versions=all_versions, roles=set(roles) if roles else None
    )
    if as_json:
        echo_json(summary)
        return
    # "paragraphs" holds the paragraphs themselves: the header shows the latest version's count
    header = {**summary, "paragraphs": summary["history"][-1]["paragraph_count"] if summary["history"] else 0}
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
        click.echo(f"{key + ':':13} {header[key] if header[key] is not None else '-'}")
    if len(summary["history"]) > 1:
        click.echo("versions:")
        for v in summary["history"]:
            click.echo(
                f"  v{v['version']}  {str(v['ingested_at'])[:16].replace('T', ' ')}  {v['checksum'][:12]}  "
                f"{v['paragraph_count']} paragraphs"
            )
    if summary["roles"]:
        click.echo(f"{'roles:':13} " + ", ".join(f"{n} {role}" for role, n in summary["roles"].items()))
    click.echo("")
    for p in summary["paragraphs"]:
        where = " > ".join(p["heading_path"])
        page = f" p.{p['page']}" if p["page"] is not None else ""
        prefix = f"v{p['version']} " if all_versions else ""
        role = p["role"] or "no role"
        click.echo(f"[{prefix}{p['ordinal']}] {role}{page} {where}".rstrip())
        click.echo(f"    {p['text']}")
