"""Engines and Alembic, driven from code: no ``alembic.ini`` is needed anywhere.

The migration scripts live in the package (``compliance/migrations``, found through :mod:`importlib.resources`:
:func:`migrations_dir`); :func:`alembic_config` points Alembic at them and hands it an open connection, so the same code works for SQLite files, in-memory databases and
PostgreSQL (including a ``search_path`` set through the URL's ``options``).
"""

from __future__ import annotations

import atexit
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from alembic.config import Config
    from sqlalchemy.engine import Connection, Engine


@cache
def _package_migrations() -> Path:
    stack = ExitStack()  # a temporary copy (zipped installs) lives as long as the process
    atexit.register(stack.close)
    return Path(stack.enter_context(resources.as_file(resources.files("compliance.migrations"))))


def migrations_dir() -> Path:
    """The Alembic script directory shipped in the package (``compliance.migrations``) as a real folder.

    Alembic reads its scripts from the file system: an installed package's own folder, or a temporary copy made
    by :func:`importlib.resources.as_file` when the package is not installed as plain files.
    """
    return _package_migrations()


def create_engine_for(url: str, *, echo: bool = False) -> Engine:
    """Create an engine for ``url``; for SQLite files create the parent folder and turn foreign keys on.

    Raises:
        StoreError: when the URL is malformed or its driver is not installed.
    """
    from sqlalchemy import create_engine, event
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    from compliance.errors import MissingDependencyError, StoreError

    try:
        parsed = make_url(url)
    except ArgumentError as e:
        raise StoreError(f"invalid database URL {url!r}: {e}") from e
    kwargs: dict[str, Any] = {"echo": echo, "future": True}
    is_sqlite = parsed.get_backend_name() == "sqlite"
    if is_sqlite:
        from compliance.settings import get_settings

        database = parsed.database
        if database and database != ":memory:" and not database.startswith("file:"):
            _create_private_file(Path(database).expanduser())
        # the busy timeout: how long a writer waits for the write lock (``BEGIN IMMEDIATE``) before failing
        kwargs["connect_args"] = {"timeout": get_settings().sqlite_busy_timeout}
    else:
        kwargs["pool_pre_ping"] = True
    try:
        engine = create_engine(parsed, **kwargs)
    except NoSuchModuleError as e:
        raise StoreError(f"no SQLAlchemy dialect for {parsed.drivername!r}: {e}") from e
    except ModuleNotFoundError as e:
        if parsed.get_backend_name() == "postgresql":
            raise MissingDependencyError.for_extra("postgres", "psycopg") from e
        raise StoreError(f"the driver for {parsed.drivername!r} is not installed: {e}") from e
    if is_sqlite:
        # SQLAlchemy's recipe for pysqlite: let SQLAlchemy emit BEGIN itself, so that DDL is transactional
        # (a migration applies completely or not at all) and a transaction costs one fsync, not one per DDL.
        # Concurrent writers (several processes on one file):
        # * WAL: readers never block the writer, and the writer never blocks readers;
        # * BEGIN IMMEDIATE: a transaction takes the write lock when it starts, waiting up to the busy timeout.
        #   A deferred BEGIN that later upgrades a read lock to a write lock fails at once with "database is
        #   locked" (SQLite cannot wait there without risking a deadlock): that was 52 % of 8 writers failing.
        @event.listens_for(engine, "connect")
        def _sqlite_connect(dbapi_connection: Any, connection_record: Any) -> None:
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")  # durable at each checkpoint; safe in WAL mode
            cursor.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(connection: Any) -> None:
            connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def _create_private_file(path: Path) -> None:
    """Create the SQLite file (and its folder) readable by its owner only: it holds the organisation's policies.

    An existing file keeps its permissions (its owner chose them); SQLite gives the ``-wal`` and ``-shm`` files
    the permissions of the database file.
    """
    import os

    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return
    except OSError:  # a read-only folder and the like: SQLite reports it on connect
        return
    os.close(fd)


@contextmanager
def migration_connection(engine: Engine) -> Iterator[Connection]:
    """A connection in a transaction for running migrations; committed at the end, rolled back on error.

    On SQLite, foreign keys are switched off for the migration (batch mode rebuilds tables, and dropping a
    referenced table with foreign keys on would cascade deletes), checked with ``PRAGMA foreign_key_check``
    before committing, and switched on again afterwards.
    """
    from compliance.errors import StoreError

    with engine.connect() as connection:
        sqlite = connection.dialect.name == "sqlite"
        if sqlite:  # must happen outside a transaction: the PRAGMA is a no-op inside one
            connection.connection.driver_connection.execute("PRAGMA foreign_keys=OFF")  # type: ignore[union-attr]
        try:
            with connection.begin():
                yield connection
                if sqlite:
                    broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                    if broken:
                        raise StoreError(f"the migration left rows with dangling foreign keys: {broken[:5]}")
        finally:
            if sqlite:
                connection.connection.driver_connection.execute("PRAGMA foreign_keys=ON")  # type: ignore[union-attr]


def configure_options(connection: Connection) -> dict[str, Any]:
    """Alembic context options shared by ``env.py`` and :func:`schema_diff` (so both compare alike)."""
    from compliance.store.orm import Base

    return {
        "target_metadata": Base.metadata,
        "render_as_batch": connection.dialect.name == "sqlite",
        "compare_type": True,
    }


def alembic_config(connection: Connection | None = None) -> Config:
    """An Alembic :class:`~alembic.config.Config` for the package's migrations.

    Args:
        connection: the connection the migration runs on (``env.py`` uses it instead of creating an engine).
    """
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(migrations_dir()))
    cfg.set_main_option("version_path_separator", "os")
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def head_revision() -> str:
    """The newest migration revision shipped with the package."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:  # pragma: no cover - the package always ships migrations
        raise RuntimeError("no Alembic revisions found in compliance/migrations/versions")
    return head


def current_revision(connection: Connection) -> str | None:
    """The revision the database is at (``None`` for a database never migrated)."""
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(connection).get_current_revision()


def upgrade(connection: Connection, revision: str = "head") -> None:
    """Run the migrations up to ``revision`` on ``connection`` (the caller commits)."""
    from alembic import command

    command.upgrade(alembic_config(connection), revision)


def downgrade(connection: Connection, revision: str) -> None:
    """Run the migrations down to ``revision`` (``"base"`` removes every table) on ``connection``."""
    from alembic import command

    command.downgrade(alembic_config(connection), revision)


def schema_diff(connection: Connection) -> list[Any]:
    """What ``alembic check`` reports: differences between the ORM models and the database (``[]`` if none)."""
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    from compliance.store.orm import Base

    ctx = MigrationContext.configure(connection, opts=configure_options(connection))
    return list(compare_metadata(ctx, Base.metadata))


def new_revision(message: str, *, autogenerate: bool = True) -> Path:
    """For developers: write the next revision script (``0002_<slug>.py`` …) into ``migrations/versions``.

    With ``autogenerate`` the script holds the operations that bring a database at the current head to the
    ORM models (computed against a temporary SQLite database); review it, and check it on PostgreSQL.
    """
    import re
    import tempfile

    from alembic import command
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(alembic_config())
    numbers = [int(r.revision) for r in script.walk_revisions() if r.revision.isdigit()]
    rev_id = f"{max(numbers, default=0) + 1:04d}"
    slug = re.sub(r"[^a-z0-9]+", "_", message.lower()).strip("_")[:40] or "revision"
    with tempfile.TemporaryDirectory() as tmp:
        engine = create_engine_for(f"sqlite:///{Path(tmp) / 'head.db'}")
        try:
            with migration_connection(engine) as connection:
                upgrade(connection)
            with engine.begin() as connection:
                cfg = alembic_config(connection)
                cfg.set_main_option("file_template", f"%%(rev)s_{slug}")  # %% escapes configparser
                command.revision(cfg, message=message, autogenerate=autogenerate, rev_id=rev_id)
        finally:
            engine.dispose()
    return migrations_dir() / "versions" / f"{rev_id}_{slug}.py"
