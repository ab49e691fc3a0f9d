"""Issue 14: concurrent writers, duplicate links, dead runs (defects 3, 4 and 5), on SQLite and PostgreSQL.

Writers are separate processes (``tests/fixtures/concurrency.py``), as in production: several CLI commands, API
workers and reviewers on one database.
"""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path
from typing import Any

import pytest

from compliance.connectors import parse_bytes
from compliance.errors import NotFoundError, StoreError
from compliance.store import NewLink, Store
from tests.fixtures import concurrency
from tests.fixtures.classifier.tiny import mini_gdpr

POLICY = b"Access rights are reviewed every quarter by the security team.\n\nBackups are encrypted at rest.\n"


def _linked_store(store: Any) -> tuple[int, int, int, list[int]]:
    """A document, the mini law, a run and one link: (link id, run id, paragraph id, provision ids)."""
    saved = store.save_document(parse_bytes(POLICY, "policy.txt"))
    law = store.save_law(mini_gdpr())
    ids = store.provision_id_map(law.id)
    paragraph = next(iter(store.iter_paragraphs(document_ids=[saved.document_id])))
    run = store.start_run("audit", {})
    provisions = [ids[f"art:{a}"] for a in (5, 15, 17, 32, 33)]
    store.add_links(run, [NewLink(paragraph.id, provisions[0], "classifier", 0.9, 1, {"model": "m0"})])
    link = store.list_links(run_id=run)[0]
    return link.id, run, paragraph.id, provisions


def test_eight_writer_processes_lose_nothing(store: Any) -> None:
    """Defect 3: 8 processes writing at once (reviews + the same links): 0 failed writes, 0 lost, 0 duplicates.

    Before the fix 52 % of the SQLite writes failed with "database is locked" (deferred transactions that
    upgrade to a write lock bypass the busy timeout).
    """
    link_id, run_id, paragraph_id, provisions = _linked_store(store)
    n = 25
    procs = [
        concurrency.spawn(
            "writer",
            store.url,
            str(link_id),
            str(run_id),
            str(paragraph_id),
            ",".join(map(str, provisions)),
            str(n),
        )
        for _ in range(8)
    ]
    done = concurrency.results(procs)
    assert [d["failures"] for d in done] == [0] * 8, [d["failed"] for d in done]
    assert sum(d["reviews"] for d in done) == 8 * n
    assert len(store.list_reviews(link_id)) == 8 * n
    # the same five links offered 200 times: stored once each (m-concurrent), beside the first link (m0)
    links = store.list_links(paragraph_id=paragraph_id)
    assert sum(d["links"] for d in done) == 5
    keys = [(lk.provision_id, lk.method, lk.model_version) for lk in links]
    assert len(keys) == len(set(keys)) == 6


def test_add_links_skips_what_is_stored(store: Any) -> None:
    """Defect 4: nothing was unique on (paragraph, provision, method, model): links were stored twice."""
    _, run_id, paragraph_id, provisions = _linked_store(store)
    batch = [NewLink(paragraph_id, p, "classifier", 0.5, 1, {"model": "m1"}) for p in provisions]
    assert store.add_links(run_id, batch) == 5
    assert store.add_links(run_id, batch) == 0  # the same links again: skipped
    assert store.add_links(run_id, batch + batch) == 0
    other_model = [NewLink(paragraph_id, p, "classifier", 0.5, 1, {"model": "m2"}) for p in provisions[:2]]
    explicit = [NewLink(paragraph_id, provisions[0], "classifier", 0.5, 1, {}, model_version="m3")]
    assert store.add_links(run_id, other_model + explicit) == 3
    links = store.list_links(paragraph_id=paragraph_id)
    assert len(links) == 1 + 5 + 3
    assert {lk.model_version for lk in links} == {"m0", "m1", "m2", "m3"}
    assert store.list_audit(action="links.add")[0].details == {"count": 3, "skipped": 0}


def test_first_saves_race_to_one_document_one_law(store: Any, tmp_path: Path) -> None:
    """Defect 4: two first ingests/audits raced on the document insert ("could not be read") and on installing
    the law (one died with exit 1)."""
    text = tmp_path / "policy.txt"
    text.write_bytes(POLICY)
    done = concurrency.results([concurrency.spawn("first_saves", store.url, str(text)) for _ in range(4)])
    assert len({d["document"] for d in done}) == 1 and sum(d["created"] for d in done) == 1
    assert len({d["law"] for d in done}) == 1
    assert len(store.list_documents()) == 1 and len(store.list_laws()) == 1
    # the four runs started at once got the numbers 1..4 of their kind, each once
    assert sorted(r.number for r in store.list_runs(kind="audit")) == [1, 2, 3, 4]


def test_runs_are_numbered_per_kind(store: Any) -> None:
    """Issue 13 item 6: the first audit is "audit 1", even after a law install."""
    install = store.start_run("law-install", {})
    with store.run("audit", {}) as first:
        pass
    with store.run("audit", {}) as second:
        pass
    assert (first.number, second.number, first.label) == (1, 2, "audit 1")
    assert store.get_run(install).number == 1
    assert store.resolve_run("audit:2").id == second.id
    assert store.resolve_run(str(first.id)).id == first.id
    with pytest.raises(NotFoundError):
        store.resolve_run("audit:9")
    with pytest.raises(StoreError, match="KIND:NUMBER"):
        store.resolve_run("audit-2")


def test_reaper_marks_runs_of_dead_processes_failed(store: Any) -> None:
    """Defect 5: killed or hung runs stayed `running` forever; nothing reaped them."""
    dead = concurrency.results([concurrency.spawn("abandoned_run", store.url)])[0]["run"]
    mine = store.start_run("audit", {})  # this process is alive: left alone
    other_host = store.start_run("ingest", {})
    with store.session() as s:
        from compliance.store.orm import RunRow

        row = s.get(RunRow, other_host)
        assert row is not None and row.owner and row.owner.startswith(socket.gethostname())
        row.owner = "another-host:1:1"
    reaped = store.reap_runs()
    assert [r.id for r in reaped] == [dead]
    run = store.get_run(dead)
    assert run.status == "failed" and "is gone: killed or crashed" in (run.error or "")
    assert store.get_run(mine).status == store.get_run(other_host).status == "running"
    assert store.reap_runs() == []


def test_sqlite_file_is_private_and_in_wal_mode(tmp_path: Path) -> None:
    """Defects 9 and 3: the SQLite file was created 0644 (policy text world-readable), in rollback mode."""
    path = tmp_path / "home" / "compliance.db"
    store = Store(f"sqlite:///{path}")
    store.upgrade()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    store.dispose()
    existing = tmp_path / "shared.db"
    existing.touch(mode=0o640)
    os.chmod(existing, 0o640)
    Store(f"sqlite:///{existing}").upgrade()
    assert stat.S_IMODE(existing.stat().st_mode) == 0o640  # an existing file keeps what its owner chose


def test_migration_merges_links_stored_twice(tmp_path: Path) -> None:
    """Databases written before revision 0002 may hold duplicate links: the upgrade keeps the oldest row and
    moves the reviews of the others onto it, then adds the constraint."""
    import sqlalchemy as sa

    store = Store(f"sqlite:///{tmp_path / 'old.db'}")
    store.upgrade("0001")
    now = "2026-01-01 00:00:00"
    with store.engine.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO documents (id, source, title, media_type, latest_version, created_at, updated_at) "
            f"VALUES (1, 'p.txt', '', '', 1, '{now}', '{now}')"
        )
        conn.exec_driver_sql(
            "INSERT INTO document_versions (id, document_id, version, checksum, title, media_type, size_bytes, "
            f"text, paragraph_count, parser_metadata, ingested_at) VALUES (1, 1, 1, 'c', '', '', 1, 't', 1, '{{}}', "
            f"'{now}')"
        )
        conn.exec_driver_sql(
            "INSERT INTO paragraphs (id, version_id, ordinal, text, kind, heading_path, char_start, char_end, "
            "text_sha256) VALUES (1, 1, 0, 't', 'paragraph', '[]', 0, 1, 'h')"
        )
        conn.exec_driver_sql(
            "INSERT INTO laws (id, identifier, short_name, title, jurisdiction, law_type, source, source_format, "
            f"checksum, version, metadata, installed_at) VALUES (1, 'x', 'x', '', 'EU', '', '', '', 'c', 1, '{{}}', "
            f"'{now}')"
        )
        conn.exec_driver_sql(
            "INSERT INTO provisions (id, law_id, key, kind, text, position, ordinal) VALUES (1, 1, 'art:1', "
            "'article', '', 0, 0)"
        )
        for run in (1, 2, 3):
            conn.exec_driver_sql(
                "INSERT INTO runs (id, kind, config, started_at, status, stats) "
                f"VALUES ({run}, '{'audit' if run > 1 else 'law-install'}', '{{}}', '{now}', 'succeeded', '{{}}')"
            )
        for link, run, model in ((1, 2, "m"), (2, 3, "m"), (3, 3, "n")):
            conn.exec_driver_sql(
                "INSERT INTO links (id, run_id, paragraph_id, provision_id, method, score, evidence, status, "
                f"created_at) VALUES ({link}, {run}, 1, 1, 'classifier', 0.5, '{{\"model\": \"{model}\"}}', "
                f"'proposed', '{now}')"
            )
        conn.exec_driver_sql(
            f"INSERT INTO reviews (id, link_id, decision, reviewer, decided_at) VALUES (1, 2, 'accepted', 'a', '{now}')"
        )
    store.upgrade()
    with store.engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT id, model_version FROM links ORDER BY id")).all()
        reviews = conn.execute(sa.text("SELECT link_id FROM reviews")).all()
        numbers = conn.execute(sa.text("SELECT kind, number FROM runs ORDER BY id")).all()
    assert [tuple(r) for r in rows] == [(1, "m"), (3, "n")]
    assert [r[0] for r in reviews] == [1]
    assert [tuple(r) for r in numbers] == [("law-install", 1), ("audit", 1), ("audit", 2)]
    assert store.schema_diff() == []
    store.downgrade("0001")
    store.upgrade()
    store.dispose()
