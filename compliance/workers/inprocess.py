"""Jobs run in-process by a thread pool: the embedded default when no broker is configured.

The threads call the same use case as the Celery workers (:func:`compliance.app.jobs.run_job_item`), so a job
gives the same links whichever way it runs. The classifier comes from the process-wide cache
(:func:`compliance.app.jobs.cached_classifier`, shared with the API's ``map``): loaded once per process; with more
than one thread (``COMPLIANCE_JOB_THREADS``) documents are parsed and stored side by side while the model calls
take turns.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from compliance.app.jobs import AuditJobParams, ItemOutcome, JobDispatcher
    from compliance.models.classifier import ArticleClassifier
    from compliance.store import Store

__all__ = ["ThreadDispatcher", "job_dispatcher"]

logger = logging.getLogger(__name__)


class ThreadDispatcher:
    """Runs job items on a thread pool of this process.

    Args:
        store: the database.
        threads: pool size (default ``COMPLIANCE_JOB_THREADS``, 1).
        classifier: the classifier for a job's parameters (default: the process-wide
            :func:`~compliance.app.jobs.cached_classifier`).
        name: the worker name recorded with each item's lease.
    """

    def __init__(
        self,
        store: Store,
        *,
        threads: int | None = None,
        classifier: Callable[[AuditJobParams], ArticleClassifier] | None = None,
        name: str | None = None,
    ) -> None:
        from compliance.settings import get_settings

        self.store = store
        self.name = name or f"inprocess@{socket.gethostname()}-{os.getpid()}"
        self._classifier = classifier
        self._model_lock = threading.Lock()
        self._executor = ThreadPoolExecutor(
            max_workers=threads or get_settings().job_threads, thread_name_prefix="compliance-job"
        )
        self._futures: set[Future[ItemOutcome]] = set()
        self._lock = threading.Lock()

    def _load(self, params: AuditJobParams) -> ArticleClassifier:
        from compliance.app.jobs import SerialClassifier, cached_classifier

        if self._classifier is None:
            return cached_classifier(
                params.model
            )  # the process-wide cache: already serialised, shared with map
        return SerialClassifier(self._classifier(params), self._model_lock)  # type: ignore[return-value]

    def _run(self, item_id: int) -> ItemOutcome:
        from compliance.app.jobs import run_job_item

        try:
            outcome = run_job_item(self.store, item_id, worker=self.name, classifier=self._load)
        except Exception:  # the claim could not even be taken (database down): logged, the item stays queued
            logger.exception("job item %s could not be run", item_id)
            raise
        if outcome.status == "retry":
            self._submit(item_id)
        return outcome

    def _submit(self, item_id: int) -> None:
        with self._lock:
            future = self._executor.submit(self._run, item_id)
            self._futures.add(future)
            future.add_done_callback(self._forget)

    def _forget(self, future: Future[ItemOutcome]) -> None:
        with self._lock:
            self._futures.discard(future)

    def dispatch(self, job_id: int, item_ids: Sequence[int]) -> None:
        """Queue the items on the pool (returns at once)."""
        for item_id in item_ids:
            self._submit(item_id)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every dispatched item (and its retries) has run; False on timeout."""
        while True:
            with self._lock:
                pending = set(self._futures)
            if not pending:
                return True
            _done, not_done = wait_futures(pending, timeout=timeout)
            if not_done:
                return False

    def shutdown(self, *, wait: bool = True) -> None:
        """Stop the pool (waiting for running items when ``wait``)."""
        self._executor.shutdown(wait=wait, cancel_futures=not wait)


def job_dispatcher(
    store: Store, *, broker_url: str | None = None, threads: int | None = None
) -> JobDispatcher:
    """The dispatcher for this deployment: the Celery queue when a broker is configured (``broker_url`` or
    ``COMPLIANCE_BROKER_URL``), else a thread pool in this process.

    Raises:
        MissingDependencyError: a broker is configured but the ``workers`` extra is not installed.
    """
    from compliance.settings import get_settings

    url = broker_url or get_settings().broker_url
    if url:
        from compliance.workers.celery_app import CeleryDispatcher

        return CeleryDispatcher(url)
    return ThreadDispatcher(store, threads=threads)
