"""Job use cases: submit an audit as one task per document, run one task, follow progress, recover.

A job is stored with its documents' bytes (``jobs`` and ``job_items``), so that a worker anywhere needs only the
database and the broker. A *dispatcher* (the Celery queue in :mod:`compliance.workers.celery_app`, or a thread
pool in :mod:`compliance.workers.inprocess` when no broker is configured) hands each item id to
:func:`run_job_item`, which

1. claims the item under a lease (``Store.claim_job_item``: a finished item is skipped, one another worker holds
   is ``busy``), renewing the lease from a heartbeat thread while it works;
2. audits the document with :func:`compliance.app.audit.audit_documents` — the same use case as ``compliance
   audit``, so the links are the same — which classifies only paragraphs without links from this model and stores
   a document's links in one transaction: a task re-delivered after its worker was killed stores nothing twice;
3. finishes the item with its result, if its claim still holds, and the last item to finish closes the job and
   posts the signed webhook (``audit.finished``).

A worker killed mid-document leaves its item ``running`` under a lease that is no longer renewed; when the lease
expires, :func:`recover_stale_items` (run periodically by every worker) queues it again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

from compliance.app.ingest import Source, Upload, common_folder, expand_sources
from compliance.errors import ComplianceError, ConfigurationError, DocumentError, ModelNotFoundError

if TYPE_CHECKING:  # pragma: no cover
    from compliance.models.classifier import ArticleClassifier
    from compliance.store import JobRecord, Store

__all__ = [
    "AuditJobParams",
    "ItemOutcome",
    "JobDispatcher",
    "SerialClassifier",
    "TrainJobParams",
    "cached_classifier",
    "clear_classifier_cache",
    "forget_classifier",
    "job_detail",
    "list_jobs",
    "loaded_classifiers",
    "notify_job_finished",
    "recover_stale_items",
    "resume_queued_items",
    "run_job_item",
    "set_default_classifier",
    "submit_audit_job",
    "submit_train_job",
]

logger = logging.getLogger(__name__)

#: attempts of one item (counting the first) before an unexpected error marks it failed
MAX_ATTEMPTS = 3
JOB_FINISHED_EVENT = "audit.finished"


class JobDispatcher(Protocol):
    """Hands job items to whatever runs them (a Celery queue, a thread pool)."""

    def dispatch(self, job_id: int, item_ids: Sequence[int]) -> None:
        """Run :func:`run_job_item` for each item, eventually.

        Raises:
            QueueUnavailableError: the queue cannot be reached.
        """


@dataclass(frozen=True)
class AuditJobParams:
    """How the documents of an audit job are linked (stored with the job; every task reads them).

    Attributes:
        top_k: at most this many articles linked per paragraph (as ``compliance audit --top-k``).
        model: the classifier directory (default: the worker's default classifier).
        review_band: the calibrated review band to use instead of the model's.
    """

    top_k: int = 5
    model: str | None = None
    review_band: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.top_k <= 99:
            raise ConfigurationError(f"top_k must be in 1..99, got {self.top_k}")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AuditJobParams:
        band = data.get("review_band")
        return cls(
            top_k=int(data.get("top_k", 5)),
            model=data.get("model"),
            review_band=(float(band[0]), float(band[1])) if band else None,
        )


@dataclass(frozen=True)
class TrainJobParams:
    """A job that improves the classifier from the store's reviews (kind ``train``), run by a worker like an audit
    item: ``train`` retrains with the reviewed links as extra supervision (:func:`compliance.app.classifier.
    train_classifier` with ``with_reviews``, as ``compliance train --with-reviews``); ``calibrate`` only refits
    the temperature and review band on them (``compliance calibrate --from-reviews``).

    Attributes:
        mode: ``train`` or ``calibrate``.
        recipe: the training recipe (``train``).
        overrides: recipe fields to change (``epochs``, ``min_k``, ``base_model`` …).
        model: the classifier directory to write (``train``) or recalibrate (default: the process's default
            classifier, so the next audit uses the improved model).
    """

    mode: Literal["train", "calibrate"] = "train"
    recipe: str = "r"
    overrides: dict[str, Any] | None = None
    model: str | None = None

    def __post_init__(self) -> None:
        if self.mode not in ("train", "calibrate"):
            raise ConfigurationError(f"a train job's mode is train or calibrate, not {self.mode!r}")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainJobParams:
        return cls(
            mode=data.get("mode", "train"),
            recipe=str(data.get("recipe", "r")),
            overrides=dict(data["overrides"]) if data.get("overrides") else None,
            model=data.get("model"),
        )


TRAIN_ITEM = "reviews"


def submit_train_job(
    store: Store, dispatcher: JobDispatcher, params: TrainJobParams | None = None, *, by: str | None = None
) -> JobRecord:
    """Store a ``train`` job (one item) and dispatch it: a worker trains or recalibrates the classifier from the
    reviews, then drops the old model from its process-wide cache.

    Raises:
        ConfigurationError: no reviewed link in the store yet.
        QueueUnavailableError: the queue cannot be reached (the job stays stored, queued).
    """
    from compliance.app.classifier import reviewed_items
    from compliance.store import NewJobItem

    params = params or TrainJobParams()
    if not reviewed_items(store):
        raise ConfigurationError("no reviewed GDPR links in the database yet: review some links first")
    job = store.create_job("train", asdict(params), [NewJobItem(TRAIN_ITEM, b"", "")], actor=by)
    dispatcher.dispatch(job.id, [i.id for i in store.list_job_items(job.id)])
    return job


def _train(store: Store, params: TrainJobParams) -> dict[str, Any]:
    """Run a train job's use case; the model written is forgotten by this process's cache."""
    from compliance.app.classifier import TrainRequest, calibrate_classifier_from_reviews, train_classifier
    from compliance.runtime import default_classifier_dir

    named = params.model or _DEFAULT_MODEL[0]
    target = Path(named) if named else default_classifier_dir()
    try:
        if params.mode == "calibrate":
            # with no model named: the home's classifier, else a recalibrated copy of the shipped one in the home
            summary = calibrate_classifier_from_reviews(
                Path(named) if named else None, database_url=store.url
            )
            target = Path(summary["path"])
        else:
            summary = train_classifier(
                TrainRequest(
                    recipe=params.recipe,
                    overrides=params.overrides,
                    out_dir=target,
                    with_reviews=True,
                    database_url=store.url,
                )
            )
    finally:
        forget_classifier(target)
    return {"mode": params.mode, "model": str(target), "summary": summary}


def _read_items(
    sources: Iterable[Source], *, relative_to: Path | None, recursive: bool, max_bytes: int
) -> tuple[list[Any], list[dict[str, str]]]:
    """Job items from files, folders and uploads; what could not be taken, with the error's code."""
    from compliance.connectors import connector_for, source_name
    from compliance.errors import DocumentTooLargeError
    from compliance.store import NewJobItem

    items: list[NewJobItem] = []
    rejected: list[dict[str, str]] = []
    for source in expand_sources(sources, recursive=recursive):
        label = source.name if isinstance(source, Upload) else str(source)
        try:
            if isinstance(source, Upload):
                connector_for(source.name, media_type=source.media_type)
                data, name, media_type = source.data, source.name, source.media_type or ""
            else:
                spec = connector_for(source.name)
                size = source.stat().st_size
                if size > max_bytes:
                    raise DocumentTooLargeError(
                        label, f"{size:,} bytes, more than the limit of {max_bytes:,}"
                    )
                data, name, media_type = (
                    source.read_bytes(),
                    source_name(source, relative_to),
                    spec.media_type,
                )
            if len(data) > max_bytes:
                raise DocumentTooLargeError(
                    label, f"{len(data):,} bytes, more than the limit of {max_bytes:,}"
                )
        except DocumentError as e:
            rejected.append({"path": label, "code": e.code, "error": str(e)})
            continue
        except OSError as e:
            rejected.append(
                {"path": label, "code": DocumentError.code, "error": f"{label}: {e.strerror or e}"}
            )
            continue
        items.append(NewJobItem(name, data, media_type))
    return items, rejected


def submit_audit_job(
    store: Store,
    sources: Iterable[Source],
    dispatcher: JobDispatcher,
    *,
    params: AuditJobParams | None = None,
    relative_to: Path | None = None,
    recursive: bool = True,
    by: str | None = None,
) -> JobRecord:
    """Store an audit job (one item per document) and dispatch its items.

    Folders are walked; each file is read now (stored under the name ``compliance audit`` would give it), so
    workers need no access to these files. Files that cannot be taken (unsupported type, over the size limit)
    are listed in the job's ``params["rejected"]``.

    Raises:
        ConfigurationError: no document to audit.
        QueueUnavailableError: the queue cannot be reached (the job stays stored, queued: ``compliance worker``
            or a restarted server runs it).
    """
    from compliance.settings import get_settings

    params = params or AuditJobParams()
    sources = list(sources)
    if relative_to is None:  # as `compliance audit` does: relative to the folder the given paths share
        relative_to = common_folder(sources)
    items, rejected = _read_items(
        sources, relative_to=relative_to, recursive=recursive, max_bytes=get_settings().max_document_bytes
    )
    if not items:
        detail = "; ".join(r["error"] for r in rejected[:3])
        raise ConfigurationError("no document to audit" + (f": {detail}" if detail else ""))
    job = store.create_job("audit", {**asdict(params), "rejected": rejected}, items, actor=by)
    item_ids = [i.id for i in store.list_job_items(job.id)]
    dispatcher.dispatch(job.id, item_ids)
    return job


@dataclass
class ItemOutcome:
    """What :func:`run_job_item` did with one item.

    ``status``: ``done`` / ``failed`` (this call finished it), ``skipped`` (finished already), ``busy`` (another
    worker holds it: try later), ``retry`` (an unexpected error; the item is queued again), ``lost`` (the lease
    was taken over while working: nothing was recorded for the item by this call).
    """

    item_id: int
    job_id: int
    status: Literal["done", "failed", "skipped", "busy", "retry", "lost"]
    result: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    job_finished: JobRecord | None = None


class SerialClassifier:
    """A classifier whose ``rank`` calls take turns (tokenizers and models are not made for concurrent calls); every
    other attribute is the wrapped classifier's."""

    def __init__(self, inner: ArticleClassifier, lock: threading.Lock | None = None) -> None:
        self._inner = inner
        self._lock = lock or threading.Lock()

    @property
    def wrapped(self) -> ArticleClassifier:
        return self._inner

    def rank(self, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return self._inner.rank(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


#: the process-wide classifier cache: (resolved model directory, resolved device) → the loaded classifier and the
#: modification time of its config.json when it was loaded
_CLASSIFIERS: dict[tuple[str, str], tuple[SerialClassifier, int | None]] = {}
_CLASSIFIERS_LOCK = threading.Lock()
_DEFAULT_MODEL: list[str | None] = [None]


def set_default_classifier(model: str | Path | None) -> None:
    """Make ``model`` this process's default classifier: what :func:`cached_classifier` loads for a job or a
    ``map`` call that names none (``compliance worker --model``); None: back to the default (``<model_dir>/gdpr-classifier``, else the shipped one)."""
    _DEFAULT_MODEL[0] = str(model) if model else None


def _classifier_key(model: str | Path | None, device: str | None) -> tuple[str, str]:
    from compliance.runtime import classifier_dir, resolve_device

    # the home's trained classifier when there is one, else the one shipped with the package
    path = Path(model or _DEFAULT_MODEL[0] or classifier_dir()).expanduser().resolve()
    return str(path), str(resolve_device(device))


def cached_classifier(model: str | Path | None = None, *, device: str | None = None) -> ArticleClassifier:
    """The classifier at ``model`` (default: this process's default classifier) on ``device`` (default
    ``COMPLIANCE_DEVICE``), loaded once per process and kept.

    One cache serves the whole process — the API's ``map``, in-process job threads and a Celery worker's tasks —
    keyed by the resolved model directory and the resolved device, so ``None``, the default directory's path and
    ``auto``/``cpu`` name the same entry and a model is never loaded twice — unless its ``config.json`` changed
    since (a train job, here or in another process, rewrote it): then it is loaded again. The classifier returned
    serialises its ``rank`` calls (one lock per model), so threads of one process can share it.
    """
    from compliance.app.classifier import load_classifier

    key = _classifier_key(model, device)
    with _CLASSIFIERS_LOCK:
        stamp = _config_stamp(key[0])
        cached = _CLASSIFIERS.get(key)
        if cached is None or cached[1] != stamp:
            logger.info("loading the classifier %s on %s (once for this process)", *key)
            cached = (SerialClassifier(load_classifier(Path(key[0]), device=key[1])), stamp)
            _CLASSIFIERS[key] = cached
        return cast("ArticleClassifier", cached[0])


def _config_stamp(model_dir: str) -> int | None:
    """When the model's config.json last changed (a retrained or recalibrated model is loaded again)."""
    try:
        return (Path(model_dir) / "config.json").stat().st_mtime_ns
    except OSError:
        return None


def loaded_classifiers() -> list[tuple[str, str]]:
    """The (model directory, device) pairs this process has loaded."""
    with _CLASSIFIERS_LOCK:
        return sorted(_CLASSIFIERS)


def forget_classifier(model: str | Path) -> int:
    """Drop ``model`` (on every device) from this process's cache, so that its next use loads it again (after a
    train job rewrote it); returns how many entries were dropped."""
    path = str(Path(model).expanduser().resolve())
    with _CLASSIFIERS_LOCK:
        gone = [key for key in _CLASSIFIERS if key[0] == path]
        for key in gone:
            del _CLASSIFIERS[key]
    return len(gone)


def clear_classifier_cache() -> None:
    """Forget every loaded classifier (tests; a process that replaced its model files)."""
    with _CLASSIFIERS_LOCK:
        _CLASSIFIERS.clear()


class _Heartbeat:
    """Renews an item's lease every third of its length until stopped (or the claim is lost)."""

    def __init__(self, store: Store, item_id: int, claim: str, lease_s: float) -> None:
        self._stop = threading.Event()
        self.lost = False
        self._thread = threading.Thread(
            target=self._run, args=(store, item_id, claim, lease_s), daemon=True, name=f"lease-{item_id}"
        )

    def _run(self, store: Store, item_id: int, claim: str, lease_s: float) -> None:
        while not self._stop.wait(lease_s / 3):
            try:
                if not store.renew_job_item(item_id, claim, lease_s):
                    self.lost = True
                    return
            except ComplianceError as e:  # a database hiccup: try again at the next beat
                logger.warning("could not renew the lease of job item %s: %s", item_id, e)

    def __enter__(self) -> _Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def run_job_item(
    store: Store,
    item_id: int,
    *,
    worker: str,
    classifier: Callable[[AuditJobParams], ArticleClassifier] | None = None,
    lease_s: float | None = None,
) -> ItemOutcome:
    """Run one item of an audit job (see the module docstring); safe to call again for the same item.

    Args:
        store: the database.
        item_id: the job item.
        worker: this worker's name (recorded with the lease).
        classifier: the classifier for a job's parameters (default :func:`cached_classifier`).
        lease_s: the lease (default ``COMPLIANCE_JOB_LEASE_SECONDS``).
    """
    from compliance.app.audit import audit_documents
    from compliance.linking.classifier_links import ClassifierLinkConfig
    from compliance.settings import get_settings

    settings = get_settings()
    lease = lease_s or settings.job_lease_seconds
    claimed = store.claim_job_item(item_id, worker, lease)
    item = claimed.item
    if claimed.outcome != "claimed":
        status: Literal["skipped", "busy"] = "skipped" if claimed.outcome == "finished" else "busy"
        return ItemOutcome(item_id, item.job_id, status, dict(item.result), item.error)
    assert claimed.claim is not None
    job = store.get_job(item.job_id)
    if job.kind == "train":
        return _run_train_item(store, item, claimed.claim, job, worker, lease)
    params = AuditJobParams.from_dict(job.params)
    load = classifier or (lambda p: cached_classifier(p.model))
    upload = Upload(item.source, claimed.content or b"", item.media_type or None)
    try:
        with _Heartbeat(store, item_id, claimed.claim, lease) as beat:
            report = audit_documents(
                store.as_actor(job.created_by),  # the audit log names who asked for the job
                [upload],
                load(params),
                config=ClassifierLinkConfig(top_k=params.top_k, review_band=params.review_band),
            )
    except Exception as e:  # not a document problem (those are failures in the report): the database, a model
        error = f"{type(e).__name__}: {e}"
        if item.attempts >= MAX_ATTEMPTS:
            logger.error("job item %s failed for good after %d attempts: %s", item_id, item.attempts, error)
            return _finish(store, item.job_id, item_id, claimed.claim, "failed", {}, error, worker)
        logger.warning("job item %s attempt %d failed (%s); queued again", item_id, item.attempts, error)
        store.release_job_item(item_id, claimed.claim)
        return ItemOutcome(item_id, item.job_id, "retry", error=error)
    if beat.lost:
        return ItemOutcome(item_id, item.job_id, "lost")
    if report.failures:
        failure = report.failures[0]
        return _finish(
            store,
            item.job_id,
            item_id,
            claimed.claim,
            "failed",
            {"run_id": report.run_id, "code": failure.code},
            failure.error,
            worker,
        )
    result = {"run_id": report.run_id, "model": report.model.get("identity")}
    result.update(asdict(report.documents[0]))
    return _finish(store, item.job_id, item_id, claimed.claim, "done", result, None, worker)


def _run_train_item(
    store: Store, item: Any, claim: str, job: JobRecord, worker: str, lease: float
) -> ItemOutcome:
    """The one item of a ``train`` job: train or recalibrate under the item's lease; a problem with the data (too
    few reviews, an unknown recipe) fails the job at once, anything else is retried like an audit item."""
    try:
        with _Heartbeat(store, item.id, claim, lease) as beat:
            result = _train(store, TrainJobParams.from_dict(job.params))
    except (
        ConfigurationError,
        ModelNotFoundError,
    ) as e:  # the data or the model: another try changes nothing
        return _finish(store, job.id, item.id, claim, "failed", {"code": e.code}, str(e), worker)
    except Exception as e:
        error = f"{type(e).__name__}: {e}"
        if item.attempts >= MAX_ATTEMPTS:
            return _finish(store, job.id, item.id, claim, "failed", {}, error, worker)
        logger.warning("train job %s attempt %d failed (%s); queued again", job.id, item.attempts, error)
        store.release_job_item(item.id, claim)
        return ItemOutcome(item.id, job.id, "retry", error=error)
    if beat.lost:
        return ItemOutcome(item.id, job.id, "lost")
    return _finish(store, job.id, item.id, claim, "done", result, None, worker)


def _finish(
    store: Store,
    job_id: int,
    item_id: int,
    claim: str,
    status: Literal["done", "failed"],
    result: dict[str, Any],
    error: str | None,
    worker: str,
) -> ItemOutcome:
    if not store.finish_job_item(item_id, claim, status, result, error, actor=worker):
        return ItemOutcome(item_id, job_id, "lost")
    closed = store.finish_job_if_done(job_id, actor=worker)
    if closed is not None:
        store.set_job_notification(job_id, notify_job_finished(store, closed))
    return ItemOutcome(item_id, job_id, status, result, error, closed)


def notify_job_finished(store: Store, job: JobRecord) -> dict[str, Any]:
    """Post the finished job's summary to the webhook (``X-Compliance-Event: audit.finished``), signed like the
    alert notifications; a failed delivery is reported, not raised."""
    from compliance.alerts.notify import WebhookConfig, send_webhook

    config = WebhookConfig.from_settings()
    if config is None:
        return {"webhook": "not configured"}
    event = JOB_FINISHED_EVENT if job.kind == "audit" else f"{job.kind}.finished"
    payload = {"event": event, "job": job_detail(store, job.id)}
    try:
        delivery = send_webhook(payload, config, event=event)
    except ComplianceError as e:
        logger.warning("job %s notification failed: %s", job.id, e)
        return {"webhook": "failed", "error": str(e)}
    return {"webhook": "delivered", "status_code": delivery.status_code, "attempts": delivery.attempts}


def job_detail(store: Store, job_id: int) -> dict[str, Any]:
    """A job with its progress, its items (source, status, result, error) and totals (links, documents).

    Raises:
        NotFoundError: no such job.
    """
    job = store.get_job(job_id)
    items = store.list_job_items(job_id)
    data = job.to_dict()
    finished = job.counts["done"] + job.counts["failed"]
    data["progress"] = round(finished / job.counts["total"], 4) if job.counts["total"] else 1.0
    data["links"] = sum(int(i.result.get("links", 0)) for i in items)
    data["items"] = [
        {
            "id": i.id,
            "position": i.position,
            "source": i.source,
            "media_type": i.media_type,
            "size_bytes": i.size_bytes,
            "status": i.status,
            "attempts": i.attempts,
            "worker": i.worker,
            "document_id": i.result.get("document_id"),
            "run_id": i.result.get("run_id"),
            "links": i.result.get("links"),
            "error": i.error,
        }
        for i in items
    ]
    return data


def list_jobs(store: Store, *, limit: int | None = 50) -> list[dict[str, Any]]:
    """Jobs, newest first, with their item counts."""
    return [j.to_dict() for j in store.list_jobs(limit=limit)]


def recover_stale_items(store: Store, dispatcher: JobDispatcher) -> int:
    """Queue again the items whose worker stopped renewing its lease (killed, hung), and dispatch them."""
    stale = store.requeue_stale_job_items()
    by_job: dict[int, list[int]] = {}
    for job_id, item_id in stale:
        by_job.setdefault(job_id, []).append(item_id)
    for job_id, item_ids in by_job.items():
        logger.warning("job %s: %d item(s) lost their worker; dispatched again", job_id, len(item_ids))
        dispatcher.dispatch(job_id, item_ids)
    return len(stale)


def resume_queued_items(store: Store, dispatcher: JobDispatcher) -> int:
    """Dispatch every queued item again (an in-process server restarted with work left)."""
    pending = store.unfinished_job_items()
    by_job: dict[int, list[int]] = {}
    for job_id, item_id in pending:
        by_job.setdefault(job_id, []).append(item_id)
    for job_id, item_ids in by_job.items():
        dispatcher.dispatch(job_id, item_ids)
    return len(pending)
