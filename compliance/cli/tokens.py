"""``compliance tokens``: create, list and revoke API tokens (the HTTP API and web page sign in with them)."""

from __future__ import annotations

import getpass

import click

from compliance.cli.options import database_option, echo_json, echo_table, json_option, open_store


@click.group()
def tokens() -> None:
    """API tokens with a role: viewer (reads), reviewer (reviews, alerts, audits), admin (laws, tokens)."""


@tokens.command("create")
@click.option("--name", required=True, help="Who or what uses the token (written to the audit log).")
@click.option(
    "--role", type=click.Choice(["viewer", "reviewer", "admin"]), required=True, help="What the token may do."
)
@database_option
@json_option
def create(name: str, role: str, database_url: str | None, as_json: bool) -> None:
    """Create a token and print its secret (shown this once; only its hash is stored)."""
    from compliance.app.tokens import create_token

    new = create_token(open_store(database_url), name, role, by=getpass.getuser())
    if as_json:
        echo_json(new.to_dict())
        return
    click.echo(new.secret)
    click.echo(
        f"token {new.record.id} {name!r} ({role}) created; keep the secret above, it is not stored", err=True
    )


@tokens.command("list")
@database_option
@json_option
def list_command(database_url: str | None, as_json: bool) -> None:
    """List tokens (never their secrets)."""
    from compliance.app.tokens import list_tokens

    rows = list_tokens(open_store(database_url))
    if as_json:
        echo_json(rows)
        return
    echo_table(
        [
            {**r, "active": "yes" if r["active"] else "revoked", "last_used_at": r["last_used_at"] or "-"}
            for r in rows
        ],
        ["id", "name", "role", "prefix", "active", "created_at", "last_used_at"],
    )


@tokens.command("revoke")
@click.argument("token")
@database_option
@json_option
def revoke(token: str, database_url: str | None, as_json: bool) -> None:
    """Revoke a token (by id or name): it is refused from now on."""
    from compliance.app.tokens import revoke_token

    data = revoke_token(open_store(database_url), token, by=getpass.getuser())
    if as_json:
        echo_json(data)
        return
    click.echo(f"token {data['id']} {data['name']!r} revoked")
