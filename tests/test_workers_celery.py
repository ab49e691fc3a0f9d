"""Scale-out audits on real Celery workers (the machine's Redis broker, PostgreSQL store): two `compliance
worker` processes audit 50 documents; one is killed with SIGKILL in the middle of a document; every document is
audited exactly once and no link is stored twice; a consumer killed between taking a message and claiming its
item strands it only until the visibility timeout. Skipped where Redis or PostgreSQL is unreachable (never in CI).
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
            "-v",  # INFO on stderr: each task received and done, recoveries (what a failure message shows)
            "worker",
            "--name",
            name,
            "--model",
            str(model),
            "--log-level",
            "INFO",
        ],
        cwd=REPO,
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )


def _job_setting(
    redis_url: str, pg_url: str, monkeypatch: pytest.MonkeyPatch, **settings: str
) -> tuple[str, Any, dict[str, str]]:
    """A fresh queue name, the store (migrated, with the mini GDPR) and the workers' environment, the settings
    (``COMPLIANCE_*`` names) set in this process too."""
    from compliance.settings import reset_settings
    from compliance.store import Store
    from tests.fixtures.classifier.tiny import mini_gdpr

    queue = f"compliance-test-{uuid.uuid4().hex[:8]}"
    settings_env = {
        "COMPLIANCE_DATABASE_URL": pg_url,
        "COMPLIANCE_BROKER_URL": redis_url,
        "COMPLIANCE_QUEUE": queue,
        "COMPLIANCE_DEVICE": "cpu",
        **settings,
    }
    for key, value in settings_env.items():
        monkeypatch.setenv(key, value)
    reset_settings()
    store = Store(pg_url)
    store.upgrade()
    store.save_law(mini_gdpr())
    return queue, store, {**os.environ, **settings_env, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}


def _unacked_messages(redis_url: str, queue: str) -> int:
    """Messages of ``queue`` delivered to a consumer and not acknowledged (kombu's Redis ``unacked`` hash holds
    ``[message, exchange, routing key]`` per delivery tag)."""
    import json

    import redis

    raw: dict[bytes, bytes] = redis.Redis.from_url(redis_url).hgetall("unacked")  # type: ignore[assignment]
    return sum(1 for value in raw.values() if json.loads(value)[2] == queue)


def _forget_queue(redis_url: str, queue: str) -> None:
    """Remove the test queue from Redis: its list, its bindings and any of its messages still unacknowledged."""
    import json

    import redis

    client = redis.Redis.from_url(redis_url)
    client.delete(queue, f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}")
    raw: dict[bytes, bytes] = client.hgetall("unacked")  # type: ignore[assignment]
    if tags := [tag for tag, value in raw.items() if json.loads(value)[2] == queue]:
        client.hdel("unacked", *tags)
        client.zrem("unacked_index", *tags)


def _job_state(store: Any, job_id: int, redis_url: str, queue: str) -> str:
    """Where a job stands, for a failure message: its items that are not done (status, worker, attempts, lease)
    and the broker's side (messages waiting in the queue, delivered and unacknowledged)."""
    import redis

    items = [
        (i.id, i.status, i.worker, i.attempts, str(i.lease_until))
        for i in store.list_job_items(job_id)
        if i.status != "done"
    ]
    waiting = redis.Redis.from_url(redis_url).llen(queue)
    return f"items not done {items}; queue {waiting} waiting, {_unacked_messages(redis_url, queue)} unacked"


def _wait(condition: Any, timeout: float, what: str, poll: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(poll)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


@pytest.mark.slow  # 32 s (a worker killed mid-audit): `make test-slow`
def test_two_workers_one_killed_every_document_audited_once(
    redis_url: str, pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("torch")
    from compliance.app.ingest import Upload
    from compliance.app.jobs import AuditJobParams, job_detail, submit_audit_job
    from compliance.workers.celery_app import CeleryDispatcher
    from tests.fixtures.classifier.tiny import shared_tiny_classifier

    model = shared_tiny_classifier()
    queue, store, env = _job_setting(
        redis_url,
        pg_url,
        monkeypatch,
        COMPLIANCE_JOB_LEASE_SECONDS="3",
        COMPLIANCE_BROKER_VISIBILITY_TIMEOUT="15",
    )
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

        try:
            _wait(finished, 180, "the job to finish with one worker left", poll=0.5)
        except AssertionError as e:  # say where the job stands: which items wait, and what the broker holds
            log = (tmp_path / "beta.log").read_text(errors="replace")[-3000:]
            raise AssertionError(
                f"{e}; {_job_state(store, job.id, redis_url, queue)}; beta's log ends:\n{log}"
            ) from None
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
        _forget_queue(redis_url, queue)


_THIEF = """
import sys, time
from kombu import Connection, Consumer, Exchange, Queue

url, name = sys.argv[1:3]
with Connection(url) as conn:
    queue = Queue(name, Exchange(name, type="direct"), routing_key=name)

    def take(body, message):  # never acknowledged: this process dies holding the message
        print("took", body[0], flush=True)
        time.sleep(3600)

    with Consumer(conn, queues=[queue], callbacks=[take], accept=["json"], no_ack=False):
        conn.drain_events(timeout=60)
"""


@pytest.mark.slow  # 23 s (waits out the broker's visibility timeout): `make test-slow`
def test_a_message_held_by_a_dead_consumer_comes_back_after_the_visibility_timeout(
    redis_url: str, pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker killed between taking a message and claiming its item leaves the item ``queued`` (out of the
    lease's reach): the broker gives the message back once the visibility timeout has passed, on the next restore
    sweep (kombu's default sweep scanned only every 100 s)."""
    pytest.importorskip("torch")
    from compliance.app.ingest import Upload
    from compliance.app.jobs import AuditJobParams, submit_audit_job
    from compliance.workers.celery_app import CeleryDispatcher
    from tests.fixtures.classifier.tiny import shared_tiny_classifier

    model = shared_tiny_classifier()
    # longer than the worker takes to start, so its first sweep cannot be the one that restores
    queue, store, env = _job_setting(
        redis_url, pg_url, monkeypatch, COMPLIANCE_BROKER_VISIBILITY_TIMEOUT="20"
    )
    thief = subprocess.Popen(
        [sys.executable, "-c", _THIEF, redis_url, queue], cwd=REPO, env=env, stdout=subprocess.PIPE
    )
    worker = None
    try:
        uploads = [Upload(f"policy-{n}.txt", _document(n), "text/plain") for n in range(2)]
        job = submit_audit_job(
            store, uploads, CeleryDispatcher(redis_url), params=AuditJobParams(model=str(model)), by="t"
        )
        assert thief.stdout is not None
        assert thief.stdout.readline().startswith(b"took")
        took = time.monotonic()
        thief.send_signal(signal.SIGKILL)
        thief.wait(10)
        assert _unacked_messages(redis_url, queue) == 1
        worker = _worker("beta@test", env, model, tmp_path / "beta.log")
        assert all(i.status == "queued" for i in store.list_job_items(job.id))

        def finished() -> bool:
            return store.get_job(job.id).finished_at is not None

        # visibility timeout + one sweep (a third of it) + the worker's start, with room; kombu's default
        # sweep would take until about 100 s after the worker started
        _wait(finished, 60, "the job to finish after the stranded message came back", poll=0.5)
        print(f"job finished {time.monotonic() - took:.1f}s after the message was taken")
        assert store.get_job(job.id).counts["done"] == 2
        assert _unacked_messages(redis_url, queue) == 0
    finally:
        for proc in (thief, worker):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(15)
        store.dispose()
        _forget_queue(redis_url, queue)
