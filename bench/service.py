"""The service: audit throughput on Celery workers (1 vs 2 workers, Redis broker, PostgreSQL store) and the HTTP
API's overhead over the in-process use case for ``map``.

    python -m bench service                     # from the repository root (Redis and PostgreSQL on loopback)
    COMPLIANCE_BENCH_MODEL=DIR python -m bench service   # another classifier than the tiny test one
    COMPLIANCE_BENCH_DOCUMENTS=400 python -m bench service

Timings on a shared 2-core machine are noisy: each figure is a ratio within one run. Throughput counts from the
first document claimed to the job's end (the workers' start-up and model load are apart); each worker runs torch on
one thread (``OMP_NUM_THREADS=1``), so two workers can use the two cores. The classifier is the tiny one of the
tests unless ``COMPLIANCE_BENCH_MODEL`` names another.
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
REDIS_URL = os.environ.get("COMPLIANCE_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
PARAGRAPHS = [
    "All laptops issued to staff use full disk encryption and the security measures are reviewed every year.",
    "A personal data breach is notified to the supervisory authority within 72 hours by the security team.",
    "A data subject may request a copy of the personal data we hold; the request is answered within one month.",
    "Access rights to production systems are reviewed every quarter by the system owner.",
    "Personal data is erased when it is no longer needed for the purpose it was collected for.",
]


def _model() -> Path:
    given = os.environ.get("COMPLIANCE_BENCH_MODEL")
    if given:
        return Path(given)
    from tests.fixtures.classifier.tiny import shared_tiny_classifier

    return shared_tiny_classifier()


def _document(n: int) -> bytes:
    return (f"Policy {n}\n\n" + "\n\n".join(f"{p} (policy {n})" for p in PARAGRAPHS) + "\n").encode()


def _audit_seconds(workers: int, documents: int, model: Path, law: Any) -> dict[str, Any]:
    """Audit ``documents`` on ``workers`` fresh worker processes; seconds from the first claim to the job's end."""
    from compliance.app.ingest import Upload
    from compliance.app.jobs import AuditJobParams, submit_audit_job
    from compliance.settings import reset_settings
    from compliance.store import Store
    from compliance.store.testing import temporary_postgres_schema
    from compliance.workers.celery_app import CeleryDispatcher

    queue = f"compliance-bench-{uuid.uuid4().hex[:8]}"
    with temporary_postgres_schema(prefix="compliance_bench") as url:
        env = {
            **os.environ,
            "COMPLIANCE_DATABASE_URL": url,
            "COMPLIANCE_BROKER_URL": REDIS_URL,
            "COMPLIANCE_QUEUE": queue,
            "COMPLIANCE_DEVICE": "cpu",
            "OMP_NUM_THREADS": "1",
            "PYTHONPATH": str(REPO),
        }
        os.environ.update({k: env[k] for k in ("COMPLIANCE_DATABASE_URL", "COMPLIANCE_QUEUE")})
        reset_settings()
        store = Store(url)
        store.upgrade()
        store.save_law(law)
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "compliance",
                    "worker",
                    "--name",
                    f"bench{n}@{queue}",
                    "--model",
                    str(model),
                ],
                cwd=REPO,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for n in range(workers)
        ]
        try:
            warm = submit_audit_job(  # one document per worker first: every worker has loaded its model
                store,
                [Upload(f"warm-{n}.txt", _document(10_000 + n)) for n in range(workers)],
                CeleryDispatcher(REDIS_URL),
                params=AuditJobParams(top_k=3, model=str(model)),
            )
            _wait(store, warm.id, 600)
            uploads = [Upload(f"policy-{n:04d}.txt", _document(n)) for n in range(documents)]
            job = submit_audit_job(
                store, uploads, CeleryDispatcher(REDIS_URL), params=AuditJobParams(top_k=3, model=str(model))
            )
            _wait(store, job.id, 3600)
            items = store.list_job_items(job.id)
            first = min(i.started_at for i in items if i.started_at)
            finished = store.get_job(job.id)
            assert finished.finished_at is not None and finished.counts["done"] == documents
            return {
                "seconds": round((finished.finished_at - first).total_seconds(), 2),
                "workers_used": len({i.worker for i in items}),
            }
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                try:
                    p.wait(20)
                except subprocess.TimeoutExpired:
                    p.kill()
            store.dispose()
            import redis

            redis.Redis.from_url(REDIS_URL).delete(queue)


def _wait(store: Any, job_id: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while store.get_job(job_id).finished_at is None:
        if time.monotonic() > deadline:
            raise TimeoutError(f"job {job_id} did not finish in {timeout}s")
        time.sleep(0.5)


def workers_throughput(documents: int = 200) -> dict[str, Any]:
    """Documents per second with 1 and 2 workers, and the speed-up (2 workers / 1 worker)."""
    import redis

    from compliance.store.testing import postgres_unavailable_reason
    from tests.fixtures.classifier.tiny import mini_gdpr

    redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    if reason := postgres_unavailable_reason():
        raise RuntimeError(reason)
    model = _model()
    one = _audit_seconds(1, documents, model, mini_gdpr())
    two = _audit_seconds(2, documents, model, mini_gdpr())
    return {
        "documents": documents,
        "paragraphs_per_document": len(PARAGRAPHS) + 1,
        "one_worker_s": one["seconds"],
        "two_workers_s": two["seconds"],
        "docs_per_s_one": round(documents / one["seconds"], 2),
        "docs_per_s_two": round(documents / two["seconds"], 2),
        "speedup_two_over_one": round(one["seconds"] / two["seconds"], 2),
        "workers_used": [one["workers_used"], two["workers_used"]],
    }


def api_overhead(batches: int = 9, texts: int = 64) -> dict[str, Any]:
    """Seconds per ``map`` batch through ``POST /api/v1/map`` on a real socket vs the in-process use case,
    alternating, medians; the ratio API / in-process."""
    import httpx
    import uvicorn

    from compliance.api import create_app
    from compliance.app import map_texts
    from compliance.app.tokens import create_token
    from compliance.models.classifier import load
    from compliance.store.testing import migrated_store
    from compliance.workers.inprocess import ThreadDispatcher

    clf = load(_model(), device="cpu", bf16=False)
    rows = [(n, f"{PARAGRAPHS[n % len(PARAGRAPHS)]} ({n})") for n in range(texts)]
    body = {"texts": [{"id": n, "text": t} for n, t in rows], "top_k": 5}
    with tempfile.TemporaryDirectory() as tmp, migrated_store("sqlite", Path(tmp)) as store:
        token = create_token(store, "bench", "viewer").secret
        app = create_app(store, dispatcher=ThreadDispatcher(store), classifier=lambda: clf)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:
                headers = {"Authorization": f"Bearer {token}"}
                direct, http = [], []
                expected = list(map_texts(clf, rows, top_k=5))
                assert client.post("/api/v1/map", json=body, headers=headers).json()["results"] == expected
                for _ in range(batches):
                    t0 = time.perf_counter()
                    list(map_texts(clf, rows, top_k=5))
                    direct.append(time.perf_counter() - t0)
                    t0 = time.perf_counter()
                    response = client.post("/api/v1/map", json=body, headers=headers)
                    http.append(time.perf_counter() - t0)
                    response.raise_for_status()
        finally:
            server.should_exit = True
            thread.join(10)
    d, h = statistics.median(direct), statistics.median(http)
    return {
        "texts_per_batch": texts,
        "in_process_s": round(d, 4),
        "http_s": round(h, 4),
        "ratio_http_over_in_process": round(h / d, 3),
        "overhead_ms": round((h - d) * 1000, 1),
    }


def run() -> dict[str, Any]:
    documents = int(os.environ.get("COMPLIANCE_BENCH_DOCUMENTS", "200"))
    out: dict[str, Any] = {
        "model": str(_model()),
        "cpu_count": os.cpu_count(),
        "load_before": os.getloadavg(),
    }
    out["map_api_overhead"] = api_overhead()
    try:
        out["workers"] = workers_throughput(documents)
    except Exception as e:  # no Redis or PostgreSQL here: the API figure still stands
        out["workers"] = {"skipped": f"{type(e).__name__}: {e}"}
    out["load_after"] = os.getloadavg()  # other work on the machine takes cores from the workers
    return out
