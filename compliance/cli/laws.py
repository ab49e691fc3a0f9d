"""``compliance laws``: install law packs, add law files, list and show stored laws."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from compliance.cli.options import database_option, echo_json, echo_table, json_option, open_store

if TYPE_CHECKING:
    from compliance.app.laws import LawStored
    from compliance.store import LawRecord


def _echo_stored(stored: LawStored, as_json: bool) -> None:
    from compliance.cli.alerts import render_alert_outcome

    if as_json:
        echo_json(stored.to_dict())
        return
    saved = stored.saved
    if saved.created:
        click.echo(
            f"stored {saved.short_name} ({saved.identifier}) version {saved.version}: "
            f"{saved.provision_count} provisions"
        )
    else:
        click.echo(
            f"{saved.short_name} ({saved.identifier}) version {saved.version} is already stored (unchanged)"
        )
    if stored.alerts is not None:
        render_alert_outcome(stored.alerts)


_ALERTS_OPTION = click.option(
    "--alerts/--no-alerts", default=True, help="Run an alert pass over stored controls (default on)."
)


@click.group()
def laws() -> None:
    """Install law packs (official texts), add law files, list and show stored laws."""


@laws.command()
@click.argument("name")
@click.option(
    "--from",
    "from_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Use this local copy of the official file instead of the mirror or a download.",
)
@click.option(
    "--mirror",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="A folder mirroring official files (default: COMPLIANCE_LAW_MIRROR).",
)
@click.option("--no-verify", is_flag=True, help="Do not check the file against the pack's sha256.")
@_ALERTS_OPTION
@database_option
@json_option
def install(
    name: str,
    from_path: Path | None,
    mirror: Path | None,
    no_verify: bool,
    alerts: bool,
    database_url: str | None,
    as_json: bool,
) -> None:
    """Install the law pack NAME (e.g. gdpr): fetch the official text, parse it, store it.

    Installing the same text again changes nothing; a new text of the same law becomes a new version.
    """
    from compliance.app import install_law

    stored = install_law(
        open_store(database_url),
        name,
        from_path=from_path,
        mirror=mirror,
        verify=not no_verify,
        alerts=alerts,
    )
    _echo_stored(stored, as_json)


@laws.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--name", "short_name", default=None, help="Short name to store it under (default: from the file)."
)
@_ALERTS_OPTION
@database_option
@json_option
def add(file: Path, short_name: str | None, alerts: bool, database_url: str | None, as_json: bool) -> None:
    """Add a law from FILE (Formex XML, EU JSON, CLML …) that no law pack covers."""
    from compliance.app import add_law

    _echo_stored(add_law(open_store(database_url), file, short_name=short_name, alerts=alerts), as_json)


def _record_row(r: LawRecord) -> dict[str, Any]:
    title = r.title if len(r.title) <= 60 else r.title[:57] + "..."
    return {
        "short_name": r.short_name,
        "identifier": r.identifier,
        "version": r.version,
        "jurisdiction": r.jurisdiction,
        "articles": r.counts.get("article", 0),
        "recitals": r.counts.get("recital", 0),
        "title": title,
    }


@laws.command("list")
@click.option("--all-versions", is_flag=True, help="Every stored version, not only the latest.")
@database_option
@json_option
def list_laws(all_versions: bool, database_url: str | None, as_json: bool) -> None:
    """List stored laws (latest version of each)."""
    from compliance.app import list_laws as stored_laws

    records = stored_laws(open_store(database_url), all_versions=all_versions)
    if as_json:
        echo_json([r.to_dict() for r in records])
        return
    echo_table(
        [_record_row(r) for r in records],
        ["short_name", "identifier", "version", "jurisdiction", "articles", "recitals", "title"],
    )


@laws.command()
@click.argument("name")
@click.option("--version", "version", type=int, default=None, help="A stored version (default: the latest).")
@database_option
@json_option
def show(name: str, version: int | None, database_url: str | None, as_json: bool) -> None:
    """Show a stored law (short name or identifier): metadata, counts and its articles."""
    from compliance.app import law_detail

    data = law_detail(open_store(database_url), name, version)
    if as_json:
        echo_json(data)
        return
    click.echo(f"{data['short_name']}: {data['title']}")
    for key in (
        "identifier",
        "version",
        "jurisdiction",
        "law_type",
        "date_adopted",
        "date_in_force",
        "version_date",
        "source_format",
        "source",
        "checksum",
        "installed_at",
    ):
        value = data.get(key)
        if key == "installed_at" and value:
            value = str(value)[:19]  # to the second
        click.echo(f"  {key + ':':15}{value if value not in (None, '') else '-'}")
    counts = data["counts"]
    detail = ", ".join(f"{n} {kind}" for kind, n in counts.items() if kind != "provisions")
    click.echo(f"  {'provisions:':15}{counts.get('provisions', 0)} ({detail})")
    click.echo("")
    for a in data["articles"]:
        click.echo(f"  Article {a['number']:>4}  {a['title'] or ''}")
