"""``compliance db``: create and migrate the database."""

from __future__ import annotations

import click

from compliance.cli.options import database_option, echo_json, json_option


@click.group()
def db() -> None:
    """Database administration: migrations (Alembic, shipped inside the package)."""


@db.command()
@click.option("--revision", default="head", show_default=True, help="Target revision.")
@database_option
def upgrade(revision: str, database_url: str | None) -> None:
    """Create the tables or migrate them to the newest schema (safe to run again)."""
    from compliance.store import Store

    store = Store(database_url)
    before = store.current_revision()
    store.upgrade(revision)
    after = store.current_revision()
    if before == after:
        click.echo(f"{store!r}: already at revision {after}")
    else:
        click.echo(f"{store!r}: upgraded {before or '(empty)'} -> {after}")


@db.command()
@database_option
@json_option
def current(database_url: str | None, as_json: bool) -> None:
    """Show the schema revision of the database and the newest one this version ships."""
    from compliance.store import Store

    store = Store(database_url)
    current_rev = store.current_revision()
    head = store.head_revision()
    info = {"database": repr(store), "current": current_rev, "head": head, "up_to_date": current_rev == head}
    if as_json:
        echo_json(info)
        return
    click.echo(f"database: {info['database']}")
    click.echo(f"current:  {current_rev or '(empty: run `compliance db upgrade`)'}")
    click.echo(f"head:     {head}{'' if current_rev == head else '  (upgrade needed)'}")


@db.command()
@database_option
def check(database_url: str | None) -> None:
    """Compare the database schema with the models (like ``alembic check``); exit 1 on any difference."""
    from compliance.store import Store

    diffs = Store(database_url).schema_diff()
    if diffs:
        for d in diffs:
            click.echo(f"difference: {d}", err=True)
        raise click.exceptions.Exit(1)
    click.echo("the database schema matches the models")


@db.command()
@click.argument("revision")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@database_option
def downgrade(revision: str, yes: bool, database_url: str | None) -> None:
    """Revert the schema to REVISION (``base`` removes every table and all data)."""
    from compliance.store import Store

    store = Store(database_url)
    if not yes:
        click.confirm(f"Downgrade {store!r} to {revision}? Data in removed tables is lost", abort=True)
    store.downgrade(revision)
    click.echo(f"{store!r}: now at revision {store.current_revision() or '(empty)'}")


@db.command()
@click.option("-m", "--message", required=True, help="What the schema change does.")
@click.option("--empty", is_flag=True, help="Write an empty script instead of comparing with the models.")
def revision(message: str, empty: bool) -> None:
    """For developers: write the next migration script into the package (compliance/migrations/versions)."""
    from compliance.store.schema import new_revision

    path = new_revision(message, autogenerate=not empty)
    click.echo(f"wrote {path}: review it, then run the migration tests on SQLite and PostgreSQL")
