"""``compliance laws``: install law packs, add law files, list and show stored laws."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from compliance.cli.options import database_option, echo_json, echo_table, json_option

if TYPE_CHECKING:
    from compliance.rules.corpus import Law
    from compliance.store import LawRecord, SavedLaw, Store


def after_law_stored(store: Store, saved: SavedLaw, law: Law) -> Any:
    """Hook run by ``laws install`` and ``laws add`` after a *new* law or law version was stored.

    Starts an alert run (which stored controls does the new law, or the changed articles of a new version,
    concern?) and notifies (console summary, webhook when ``COMPLIANCE_WEBHOOK_URL`` is set). Returns the run
    summary (a dict whose ``str()`` is the console text), or a note when alerts were skipped: ``--no-alerts``,
    no stored controls, or no trained link-decision model. It is not called when the law was already stored
    unchanged.
    """
    ctx = click.get_current_context(silent=True)
    if ctx is not None and ctx.params.get("alerts") is False:
        return None
    from compliance.alerts.service import alerts_after_law_stored

    return alerts_after_law_stored(store, saved.short_name, saved.version)


def store_law(store: Store, law: Law, *, kind: str, config: dict[str, Any]) -> tuple[SavedLaw, Any]:
    """Save ``law`` inside a recorded run of ``kind``; call :func:`after_law_stored` if it is new."""
    with store.run(kind, config) as run:
        saved = store.save_law(law)
        run.stats.update(
            {
                "law_id": saved.id,
                "short_name": saved.short_name,
                "identifier": saved.identifier,
                "version": saved.version,
                "created": saved.created,
                "provisions": saved.provision_count,
                "checksum": law.checksum,
            }
        )
    hook_result = after_law_stored(store, saved, law) if saved.created else None
    return saved, hook_result


def _echo_saved(saved: SavedLaw, hook_result: Any, as_json: bool) -> None:
    if as_json:
        data = saved.to_dict()
        if hook_result is not None:
            data["after_store"] = hook_result
        echo_json(data)
        return
    if saved.created:
        click.echo(
            f"stored {saved.short_name} ({saved.identifier}) version {saved.version}: "
            f"{saved.provision_count} provisions"
        )
    else:
        click.echo(
            f"{saved.short_name} ({saved.identifier}) version {saved.version} is already stored (unchanged)"
        )
    if hook_result is not None:
        click.echo(str(hook_result))


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
@click.option(
    "--alerts/--no-alerts", default=True, help="Run an alert pass over stored controls (default on)."
)
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
    from compliance.cli.db import open_store
    from compliance.rules import install_pack

    store = open_store(database_url)
    law = install_pack(name, from_path=from_path, mirror=mirror, verify=not no_verify)
    config = {
        "pack": name,
        "from": str(from_path) if from_path else None,
        "mirror": str(mirror) if mirror else None,
        "verify": not no_verify,
        "source": law.source,
    }
    saved, hook_result = store_law(store, law, kind="law-install", config=config)
    _echo_saved(saved, hook_result, as_json)


@laws.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--name", "short_name", default=None, help="Short name to store it under (default: from the file)."
)
@click.option(
    "--alerts/--no-alerts", default=True, help="Run an alert pass over stored controls (default on)."
)
@database_option
@json_option
def add(file: Path, short_name: str | None, alerts: bool, database_url: str | None, as_json: bool) -> None:
    """Add a law from FILE (Formex XML, EU JSON, CLML …) that no law pack covers."""
    from compliance.cli.db import open_store
    from compliance.rules import load_law_file

    store = open_store(database_url)
    law = load_law_file(file)
    if short_name:
        law = replace(law, short_name=short_name.strip().lower())
    config = {"file": str(file), "short_name": short_name, "source": law.source}
    saved, hook_result = store_law(store, law, kind="law-install", config=config)
    _echo_saved(saved, hook_result, as_json)


def _record_row(r: LawRecord) -> dict[str, Any]:
    return {
        "short_name": r.short_name,
        "identifier": r.identifier,
        "version": r.version,
        "jurisdiction": r.jurisdiction,
        "law_type": r.law_type,
        "articles": r.counts.get("article", 0),
        "recitals": r.counts.get("recital", 0),
        "provisions": r.counts.get("provisions", 0),
        "installed_at": r.installed_at.isoformat(timespec="seconds"),
        "title": r.title,
    }


@laws.command("list")
@click.option("--all-versions", is_flag=True, help="Every stored version, not only the latest.")
@database_option
@json_option
def list_laws(all_versions: bool, database_url: str | None, as_json: bool) -> None:
    """List stored laws (latest version of each)."""
    from compliance.cli.db import open_store

    records = open_store(database_url).list_laws(all_versions=all_versions)
    if as_json:
        echo_json([r.to_dict() for r in records])
        return
    rows = [_record_row(r) for r in records]
    for row in rows:
        row["title"] = row["title"] if len(row["title"]) <= 60 else row["title"][:57] + "..."
    echo_table(rows, ["short_name", "identifier", "version", "jurisdiction", "articles", "recitals", "title"])


def law_json(record: LawRecord, law: Law) -> dict[str, Any]:
    """The ``laws show --json`` document: metadata, counts, ``articles`` and ``recitals`` in order."""
    data = record.to_dict()
    articles = []
    for a in law.articles:
        chapter = law.chapter_of(a.key)
        articles.append(
            {
                "number": a.number,
                "title": a.title,
                "key": a.key,
                "chapter": chapter.number if chapter is not None else None,
                "text": law.text_of(a.key),
            }
        )
    data["articles"] = articles
    data["recitals"] = [{"number": r.number, "key": r.key, "text": r.text} for r in law.recitals]
    return data


@laws.command()
@click.argument("name")
@click.option("--version", "version", type=int, default=None, help="A stored version (default: the latest).")
@database_option
@json_option
def show(name: str, version: int | None, database_url: str | None, as_json: bool) -> None:
    """Show a stored law (short name or identifier): metadata, counts and its articles."""
    from compliance.cli.db import open_store

    store = open_store(database_url)
    record = store.law_record(name, version)
    law = store.get_law(record.id)
    if as_json:
        echo_json(law_json(record, law))
        return
    click.echo(f"{record.short_name}: {record.title}")
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
    ):
        value = getattr(record, key)
        click.echo(f"  {key + ':':15}{value if value not in (None, '') else '-'}")
    click.echo(f"  {'installed_at:':15}{record.installed_at.isoformat(timespec='seconds')}")
    counts = ", ".join(f"{n} {kind}" for kind, n in record.counts.items() if kind != "provisions")
    click.echo(f"  {'provisions:':15}{record.counts.get('provisions', 0)} ({counts})")
    click.echo("")
    for a in law.articles:
        click.echo(f"  Article {a.number:>4}  {a.title or ''}")
