"""Helpers for tests that need a real database: a throw-away PostgreSQL schema, reachability checks.

Used by the project's own test suite (``tests/conftest.py`` ``store`` fixture) and usable by plugins' tests.
The PostgreSQL server is taken from ``COMPLIANCE_TEST_POSTGRES_URL`` (default
``postgresql+psycopg://postgres@127.0.0.1:5432/test``).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from compliance.store import Store

DEFAULT_TEST_POSTGRES_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def postgres_test_url() -> str:
    """The PostgreSQL server used by tests."""
    return os.environ.get("COMPLIANCE_TEST_POSTGRES_URL", DEFAULT_TEST_POSTGRES_URL)


@lru_cache(maxsize=8)
def postgres_unavailable_reason(url: str | None = None, timeout: int = 3) -> str | None:
    """``None`` when the server answers, else why not (driver missing, connection refused …). Cached."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    target = make_url(url or postgres_test_url())
    try:
        engine = create_engine(target, connect_args={"connect_timeout": timeout})
    except ModuleNotFoundError as e:
        return f"no PostgreSQL driver: {e}"
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except Exception as e:
        return f"PostgreSQL at {target.render_as_string(hide_password=True)} unreachable: {type(e).__name__}"
    finally:
        engine.dispose()
    return None


@contextmanager
def temporary_postgres_schema(url: str | None = None, prefix: str = "compliance_test") -> Iterator[str]:
    """Create a uniquely named schema, yield a URL whose ``search_path`` is that schema, drop it afterwards.

    Everything the store creates (tables, the ``alembic_version`` table) lands in the schema, so concurrent
    test runs on one server do not see each other.
    """
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    base = make_url(url or postgres_test_url())
    schema = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base)
    try:
        with admin.begin() as conn:
            conn.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
        scoped = base.update_query_dict({"options": f"-csearch_path={schema}"})
        yield scoped.render_as_string(hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        admin.dispose()


@contextmanager
def migrated_store(backend: str, directory: Path, *, actor: str = "test") -> Iterator[Store]:
    """A :class:`~compliance.store.Store` migrated to head on an empty database, removed afterwards.

    Args:
        backend: ``"sqlite"`` (a file in ``directory``) or ``"postgresql"`` (a temporary schema on
            :func:`postgres_test_url`; check :func:`postgres_unavailable_reason` first).
        directory: where the SQLite file goes.
        actor: the audit-log actor of the store.
    """
    from compliance.store import Store

    if backend == "sqlite":
        store = Store(f"sqlite:///{directory / 'compliance-test.db'}", actor=actor)
        store.upgrade()
        try:
            yield store
        finally:
            store.dispose()
        return
    if backend != "postgresql":
        raise ValueError(f"unknown test backend {backend!r}")
    with temporary_postgres_schema() as url:
        store = Store(url, actor=actor)
        store.upgrade()
        try:
            yield store
        finally:
            store.dispose()
