"""Scale-out audits on real Celery workers (the machine's Redis broker, PostgreSQL store): two `compliance
worker` processes audit 50 documents; one is killed with SIGKILL in the middle of a document; every document is
audited exactly once and no link is stored twice. Skipped where Redis or PostgreSQL is unreachable (never in CI).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.api import POLICY

REDIS_URL = os.environ.get("COMPLIANCE_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
REPO = Path(__file__).resolve().parent.parent


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture
def redis_url() -> str:
    pytest.importorskip("celery")
    import redis

    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    except Exception as e:
        _unavailable(f"Redis at {REDIS_URL} unreachable: {type(e).__name__}")
    return REDIS_URL


@pytest.fixture
def pg_url() -> Iterator[str]:
    from compliance.store.testing import postgres_unavailable_reason, temporary_postgres_schema

    if reason := postgres_unavailable_reason():
        _unavailable(reason)
    with temporary_postgres_schema(prefix="compliance_workers") as url:
        yield url


def _document(n: int) -> bytes:
    """A policy of a dozen paragraphs (long enough that a worker is caught in the middle of one)."""
    body = POLICY.split("\n", 2)[2]
    extra = "\n".join(
        f"Control {n}.{k}: access rights to system {k} are reviewed every quarter by owner {n}.\n"
        for k in range(4)
    )
    return f"Policy {n}\n\n{body}\n{extra}".encode()


def _worker(name: str, env: dict[str, str], model: Path, log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "compliance",
            "worker",
            "--name",
            name,
            "--model",
            str(model),
            "--log-level",
            "WARNING",
        ],
        cwd=REPO,
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )


def _wait(condition: Any, timeout: float, what: str, poll: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(poll)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def test_two_workers_one_killed_every_document_audited_once(
    redis_url: str, pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("torch")
    from compliance.app.ingest import Upload
    from compliance.app.jobs import AuditJobParams, job_detail, submit_audit_job
    from compliance.settings import reset_settings
    from compliance.store import Store
    from compliance.workers.celery_app import CeleryDispatcher
    from tests.fixtures.classifier.tiny import mini_gdpr, shared_tiny_classifier

    model = shared_tiny_classifier()
    queue = f"compliance-test-{uuid.uuid4().hex[:8]}"
    settings_env = {
        "COMPLIANCE_DATABASE_URL": pg_url,
        "COMPLIANCE_BROKER_URL": redis_url,
        "COMPLIANCE_QUEUE": queue,
        "COMPLIANCE_JOB_LEASE_SECONDS": "3",
        "COMPLIANCE_BROKER_VISIBILITY_TIMEOUT": "15",
        "COMPLIANCE_DEVICE": "cpu",
    }
    for key, value in settings_env.items():
        monkeypatch.setenv(key, value)
    reset_settings()
    store = Store(pg_url)
    store.upgrade()
    store.save_law(mini_gdpr())
    env = {**os.environ, **settings_env, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    workers = {
        name: _worker(f"{name}@test", env, model, tmp_path / f"{name}.log") for name in ("alpha", "beta")
    }
    try:
        uploads = [Upload(f"policy-{n:02d}.txt", _document(n), "text/plain") for n in range(50)]
        job = submit_audit_job(
            store,
            uploads,
            CeleryDispatcher(redis_url),
            params=AuditJobParams(top_k=3, model=str(model)),
            by="t",
        )

        def alpha_in_a_document() -> int | None:
            busy = [
                i for i in store.list_job_items(job.id) if i.status == "running" and i.worker == "alpha@test"
            ]
            done = store.get_job(job.id).counts["done"]
            return busy[0].id if busy and done >= 3 else None

        started = time.monotonic()
        victim = _wait(alpha_in_a_document, 120, "worker alpha in the middle of a document")
        print(f"alpha caught after {time.monotonic() - started:.1f}s")
        workers["alpha"].send_signal(signal.SIGKILL)
        workers["alpha"].wait(10)
        killed_item = next(i for i in store.list_job_items(job.id) if i.id == victim)

        def finished() -> bool:
            return store.get_job(job.id).finished_at is not None

        _wait(finished, 180, "the job to finish with one worker left", poll=0.5)
        print(f"job finished after {time.monotonic() - started:.1f}s")
        assert workers["beta"].poll() is None, (tmp_path / "beta.log").read_text()
        detail = job_detail(store, job.id)
        assert detail["status"] == "succeeded", detail
        assert detail["counts"] == {"queued": 0, "running": 0, "done": 50, "failed": 0, "total": 50}
        items = {i["id"]: i for i in detail["items"]}
        # the document alpha was killed in was taken over and finished by beta
        if killed_item.status == "running":
            assert items[victim]["worker"] == "beta@test" and items[victim]["attempts"] >= 2
        # every document stored once, with one version, and audited by exactly one successful run
        documents = store.list_documents()
        assert sorted(d.source for d in documents) == sorted(u.name for u in uploads)
        assert all(d.latest_version == 1 and len(d.versions) == 1 for d in documents)
        rows = store.export_links()
        keys = Counter((r["paragraph_id"], r["provision_id"], r["method"]) for r in rows)
        assert rows and max(keys.values()) == 1, [k for k, n in keys.items() if n > 1][:5]
        per_document_runs: dict[str, set[int]] = {}
        for r in rows:
            per_document_runs.setdefault(r["document_source"], set()).add(r["run_id"])
        assert all(len(runs) == 1 for runs in per_document_runs.values())
        assert len(per_document_runs) == 50
        # each linked paragraph has its full top 3 (none half-stored by the killed worker)
        per_paragraph = Counter(r["paragraph_id"] for r in rows)
        assert set(per_paragraph.values()) <= {1, 2, 3}
        assert {i["worker"] for i in detail["items"]} <= {"alpha@test", "beta@test"}
    finally:
        for proc in workers.values():
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()
        store.dispose()
        import redis

        redis.Redis.from_url(redis_url).delete(queue)
