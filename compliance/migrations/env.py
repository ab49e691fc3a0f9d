"""Alembic environment: run migrations on the connection handed over by :mod:`compliance.store.schema`.

Alembic executes this file itself (do not import it). It needs ``config.attributes["connection"]``; without it
(the plain ``alembic`` command line with ``sqlalchemy.url`` set) an engine is created from the URL. SQLite uses
batch mode (``render_as_batch``) so that ALTER TABLE operations work.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from compliance.store.orm import Base
from compliance.store.schema import configure_options, create_engine_for

config = context.config
target_metadata = Base.metadata


def run_on(connection: Connection) -> None:
    """Configure the migration context on ``connection`` and run the migrations in a transaction."""
    context.configure(connection=connection, **configure_options(connection))
    with context.begin_transaction():
        context.run_migrations()


def run_offline() -> None:
    """Emit SQL to stdout instead of running it (``alembic upgrade --sql``)."""
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    """Run on the given connection, or on a new engine built from ``sqlalchemy.url``."""
    connection = config.attributes.get("connection")
    if connection is not None:
        run_on(connection)
        return
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("set sqlalchemy.url or pass a connection in config.attributes['connection']")
    engine = create_engine_for(url)
    try:
        with engine.begin() as conn:
            run_on(conn)
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
