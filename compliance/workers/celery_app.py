"""The Celery side of the jobs: the task, the dispatcher that queues it, and the worker that runs it.

Delivery guarantees, and who gives them:

* ``task_acks_late`` + ``task_reject_on_worker_lost``: a task is acknowledged only after it ran, so a worker
  killed mid-document leaves its message unacknowledged; the broker re-delivers it (Redis: after
  ``COMPLIANCE_BROKER_VISIBILITY_TIMEOUT``).
* ``worker_prefetch_multiplier = 1`` with the solo pool and ``--concurrency=1`` (Celery's default concurrency is
  the CPU count even for the solo pool, and it reserves concurrency × multiplier messages): a worker holds one
  message at a time, so a killed worker strands at most its current document.
* A message delivered to a worker that dies before it claims the item (the gap between delivery and claim) is
  out of the lease's reach: the item is still ``queued``. Redis gives it back after the visibility timeout, on
  its restore sweep; kombu's default sweep scans only every tenth tick, about every 100 s, and a sweep whose
  worker died holding the sweep's lock blocks the others for 300 s. The sweep here scans on each tick
  (every 10 s, or a third of a shorter visibility timeout) and its lock expires after 30 s.
* The item's lease (:meth:`compliance.store.Store.claim_job_item`): every worker checks for items whose lease
  expired (:func:`compliance.app.jobs.recover_stale_items`) and queues them again, so recovery does not wait for
  the broker's visibility timeout; a re-delivered task whose item is finished stores nothing, and one whose item
  another worker holds under a live lease is dropped (that worker finishes it, or its lease expires and the
  recovery queues it again), as the in-process pool does, rather than retried with a countdown: a countdown
  parks an ETA message in the solo worker, the path of Celery's known prefetch and ETA stalls.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from compliance.errors import MissingDependencyError, QueueUnavailableError

try:
    from celery import Celery
except ImportError as e:  # pragma: no cover - exercised by the core-install check
    raise MissingDependencyError.for_extra("workers", "celery") from e

if TYPE_CHECKING:  # pragma: no cover
    from compliance.store import Store

__all__ = ["QUEUE", "TASK_NAME", "CeleryDispatcher", "celery_app", "run_worker"]

logger = logging.getLogger(__name__)

TASK_NAME = "compliance.run_job_item"
QUEUE = "compliance"  #: the default queue (``COMPLIANCE_QUEUE``)


def _queue() -> str:
    from compliance.settings import get_settings

    return get_settings().queue or QUEUE


@lru_cache(maxsize=4)
def celery_app(broker_url: str) -> Celery:
    """The Celery application for ``broker_url`` (one per process and URL), with the task registered."""
    from compliance.settings import get_settings

    settings = get_settings()
    app = Celery("compliance", broker=broker_url, set_as_current=False)
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_ignore_result=True,
        task_serializer="json",
        accept_content=["json"],
        task_default_queue=_queue(),
        worker_prefetch_multiplier=1,
        worker_hijack_root_logger=False,
        worker_cancel_long_running_tasks_on_connection_loss=False,
        broker_connection_retry_on_startup=True,
        broker_connection_timeout=5,
        broker_transport_options=_transport_options(settings.broker_visibility_timeout),
        task_publish_retry_policy={
            "max_retries": 3,
            "interval_start": 0,
            "interval_step": 0.5,
            "interval_max": 1,
        },
    )

    @app.task(name=TASK_NAME, bind=True, max_retries=None)  # type: ignore[untyped-decorator]
    def run_item(self: Any, item_id: int) -> dict[str, Any]:
        from compliance.app.jobs import run_job_item

        worker = getattr(self.request, "hostname", None) or _worker_name()  # the node name (--name)
        outcome = run_job_item(_worker_store(), item_id, worker=worker)
        if outcome.status == "busy":
            # another worker holds a live lease: it finishes the item, or its lease expires and a worker's
            # recovery loop queues the item again; a delayed retry would only park an ETA message in this worker
            logger.info("job item %s is held by another worker; message dropped", item_id)
        if outcome.status == "retry":
            raise self.retry(countdown=min(2.0 ** (self.request.retries + 1), 60.0))
        return {"item": item_id, "status": outcome.status}

    return app


def _transport_options(visibility_timeout: int) -> dict[str, Any]:
    """Redis transport options: the visibility timeout, and a restore sweep that scans on each tick."""
    return {
        "visibility_timeout": visibility_timeout,
        "unacked_restore_interval": max(1, min(10, visibility_timeout // 3)),
        "unacked_restore_throttle": 1,
        "unacked_mutex_expire": 30,
    }


@lru_cache(maxsize=1)
def _worker_store() -> Store:
    from compliance.app import open_store

    return open_store()


@lru_cache(maxsize=1)
def _worker_name() -> str:
    return f"worker@{socket.gethostname()}-{os.getpid()}"


class CeleryDispatcher:
    """Queues one Celery task per job item on the broker at ``broker_url``."""

    def __init__(self, broker_url: str) -> None:
        self.broker_url = broker_url
        self.app = celery_app(broker_url)

    def dispatch(self, job_id: int, item_ids: Sequence[int]) -> None:
        """Queue the items' tasks.

        Raises:
            QueueUnavailableError: the broker cannot be reached (the job stays stored, its items queued).
        """
        from kombu.exceptions import OperationalError

        try:
            with self.app.producer_or_acquire() as producer:
                for item_id in item_ids:
                    self.app.send_task(TASK_NAME, args=[item_id], queue=_queue(), producer=producer)
        except (OperationalError, OSError) as e:
            raise QueueUnavailableError(
                f"the job queue at {_redacted(self.broker_url)} cannot be reached ({e}); job {job_id} is stored "
                "and will run when it can be queued again"
            ) from e


def _redacted(url: str) -> str:
    from kombu.utils.url import maybe_sanitize_url

    return str(maybe_sanitize_url(url))


def _recovery_loop(store: Store, dispatcher: CeleryDispatcher, every: float, stop: threading.Event) -> None:
    from compliance.app.jobs import recover_stale_items
    from compliance.errors import ComplianceError

    while not stop.wait(every):
        try:
            recover_stale_items(store, dispatcher)
        except ComplianceError as e:  # the database or the broker is away for a moment: next round
            logger.warning("stale job recovery failed: %s", e)


def run_worker(
    broker_url: str | None = None,
    *,
    model: str | None = None,
    loglevel: str = "INFO",
    name: str | None = None,
    warm: bool = True,
) -> None:
    """Run a worker in this process until it is stopped: load the classifier once, recover stale items
    periodically, execute one task at a time (the solo pool: the model stays in this process).

    Args:
        broker_url: the broker (default ``COMPLIANCE_BROKER_URL``).
        model: the classifier for jobs that name none, loaded once into the process-wide cache
            (:func:`~compliance.app.jobs.cached_classifier`; default: the default classifier).
        loglevel: Celery's log level.
        name: the worker's node name (default ``worker@<host>-<pid>``).
        warm: load the classifier before taking tasks.

    Raises:
        ConfigurationError: no broker configured.
    """
    from compliance.app.jobs import cached_classifier, set_default_classifier
    from compliance.errors import ConfigurationError
    from compliance.settings import get_settings

    settings = get_settings()
    url = broker_url or settings.broker_url
    if not url:
        raise ConfigurationError(
            "no broker configured: set COMPLIANCE_BROKER_URL (e.g. redis://127.0.0.1:6379/0); without one, "
            "jobs run inside `compliance serve`"
        )
    store = _worker_store()
    set_default_classifier(model)  # jobs that name no model use this one: the model loaded here, not a second
    if warm:
        cached_classifier()
    dispatcher = CeleryDispatcher(url)
    stop = threading.Event()
    every = max(0.5, settings.job_lease_seconds / 2)
    recovery = threading.Thread(
        target=_recovery_loop, args=(store, dispatcher, every, stop), daemon=True, name="job-recovery"
    )
    recovery.start()
    argv = [
        "worker",
        "--pool=solo",
        "--concurrency=1",  # one reserved message (see the module docstring)
        f"--loglevel={loglevel}",
        f"--hostname={name or _worker_name()}",
        f"--queues={_queue()}",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]
    try:
        dispatcher.app.worker_main(argv)
    finally:
        stop.set()
