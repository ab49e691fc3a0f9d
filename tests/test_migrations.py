"""Alembic migrations and ORM models agree (``alembic check``), on SQLite and PostgreSQL."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import inspect, text

from compliance.errors import StoreError
from compliance.store import Store
from compliance.store.orm import Base

TABLES = set(Base.metadata.tables)
HEAD = Store.head_revision()


def tables(store: Store) -> set[str]:
    with store.engine.connect() as conn:
        return set(inspect(conn).get_table_names())


def test_upgraded_database_matches_the_models(store: Store) -> None:
    assert store.current_revision() == store.head_revision()
    assert tables(store) >= TABLES
    assert store.schema_diff() == []


def test_downgrade_to_base_and_upgrade_again(store: Store) -> None:
    store.downgrade("base")
    assert not (TABLES & tables(store))
    assert store.current_revision() is None
    assert store.is_empty()
    store.upgrade()
    assert store.current_revision() == store.head_revision()
    assert store.schema_diff() == []


def test_schema_diff_sees_a_missing_index(store: Store) -> None:
    with store.engine.begin() as conn:
        conn.execute(text("DROP INDEX ix_links_run_id"))
    diffs = store.schema_diff()
    assert any(d[0] == "add_index" and d[1].name == "ix_links_run_id" for d in diffs), diffs


def test_ensure_schema_creates_an_empty_database_only(tmp_path: Path) -> None:
    fresh = Store(f"sqlite:///{tmp_path / 'nested' / 'dir' / 'c.db'}")
    assert fresh.is_empty()
    with pytest.raises(StoreError, match="compliance db upgrade"):
        fresh.ensure_schema(auto_upgrade=False)
    fresh.ensure_schema()
    assert fresh.current_revision() == fresh.head_revision()
    fresh.ensure_schema()  # at head: nothing to do

    with fresh.engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '0000'"))
    with pytest.raises(StoreError, match="run `compliance db upgrade`"):
        fresh.ensure_schema()


def test_store_outside_migrations_reports_how_to_fix(tmp_path: Path) -> None:
    bare = Store(f"sqlite:///{tmp_path / 'bare.db'}")
    with pytest.raises(StoreError, match="compliance db upgrade"):
        bare.list_documents()


def test_store_is_lazy_and_defaults_to_the_data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    unreachable = Store("postgresql+psycopg://nobody@127.0.0.1:1/none")
    assert unreachable._engine is None  # nothing created, nothing connected
    assert "nobody" in repr(unreachable)
    default = Store()
    assert default.url.startswith("sqlite:///") and default.url.endswith("compliance.db")
    monkeypatch.setenv("COMPLIANCE_DATABASE_URL", f"sqlite:///{tmp_path / 'env.db'}")
    from compliance.settings import reset_settings

    reset_settings()
    assert Store().url == f"sqlite:///{tmp_path / 'env.db'}"


def test_importing_the_store_loads_no_engine() -> None:
    code = (
        "import sys, compliance.store\n"
        "from compliance.store import Store\n"
        "Store('sqlite:///:memory:')\n"
        "print([m for m in sys.modules if m.startswith('sqlalchemy.dialects')])"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "[]"


def test_sqlite_migration_is_transactional(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A migration that fails half-way leaves no table behind (DDL runs inside one transaction)."""
    from alembic.operations import Operations

    store = Store(f"sqlite:///{tmp_path / 'tx.db'}")
    original = Operations.create_table
    calls = {"n": 0}

    def failing_create_table(self: Operations, *args: object, **kwargs: object) -> object:
        calls["n"] += 1
        if calls["n"] == 4:
            raise RuntimeError("simulated failure during the migration")
        return original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Operations, "create_table", failing_create_table)
    with pytest.raises(RuntimeError, match="simulated"):
        store.upgrade()
    assert not (TABLES & tables(store))
    assert store.current_revision() is None


def test_foreign_keys_are_enforced_after_a_migration(tmp_path: Path) -> None:
    from compliance.store.orm import ParagraphRow

    store = Store(f"sqlite:///{tmp_path / 'fk.db'}")
    store.upgrade()
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    with pytest.raises(StoreError, match="FOREIGN KEY"), store.session() as s:
        s.add(ParagraphRow(version_id=12345, ordinal=0, text="orphan", text_sha256="0" * 64))


def test_new_revision_script_for_developers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from compliance.store import schema

    copy = tmp_path / "migrations"
    shutil.copytree(schema.migrations_dir(), copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(schema, "migrations_dir", lambda: copy)
    head = schema.head_revision()
    path = schema.new_revision("Add a column!")
    assert path == copy / "versions" / f"{int(head) + 1:04d}_add_a_column.py" and path.exists()
    text = path.read_text()
    assert f"down_revision: str | None = '{head}'" in text
    # the models and the head revision agree, so autogenerate finds nothing to do
    assert "op." not in text.split("def upgrade")[1].split("def downgrade")[0]
