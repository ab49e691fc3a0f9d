"""Audit worker processes: one audit's documents shared among processes that each hold a copy of the classifier.

On a GPU the encoder forward is nearly free (25,000+ paragraphs/s on one H100) and an audit is bound by the Python
around it — reading, roles, ranking, evidence, provision targets, storing — which runs on one core. Several
processes, each auditing its share of the documents with its own copy of the model on the same device, scale that
work over the machine's cores. They write into the parent's run through the store's URL (SQLite in WAL mode takes
their transactions in turn; PostgreSQL side by side).

Each process gets whole role windows (:func:`~compliance.app.ingest.role_windows`: the documents whose paragraph
roles are decided together), so every paragraph gets the role, and so the links, that one process gives it.

The pool is started once per model (directory and identity), device and size and kept for the process (an API
server or a benchmark audits many times; the model loads once per worker). Every worker loads the classifier in
its initializer; each task brings the parent's classifier settings (inference config, bf16) so that the links are
those one process gives.
"""

from __future__ import annotations

import atexit
import dataclasses
import logging
import os
import queue
import threading
from collections.abc import Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compliance.errors import ModelError

if TYPE_CHECKING:  # pragma: no cover
    from compliance.app.audit import AuditedDocument, AuditShard
    from compliance.app.ingest import FileFailure, Upload
    from compliance.models.classifier import ArticleClassifier
    from compliance.store import Store

__all__ = ["audit_in_processes", "close_pools", "split_windows", "start_pool"]

logger = logging.getLogger(__name__)

#: (model directory, device, workers, classifier identity) → the kept pool
_POOLS: dict[tuple[str, str, int, str], _Pool] = {}
_POOLS_LOCK = threading.Lock()

# in a worker process: the classifier loaded by the initializer and the parent's progress queue
_WORKER: dict[str, Any] = {}


@dataclasses.dataclass
class _Pool:
    executor: ProcessPoolExecutor
    progress: Any  # multiprocessing queue: paragraphs classified, from every worker
    barrier: Any  # multiprocessing barrier of the pool's size: start_pool's tasks meet there, one per worker


def split_windows(items: Sequence[Path | Upload], shares: int) -> list[tuple[list[int], list[int]]]:
    """``items`` split into at most ``shares`` shares of whole role windows (:func:`~compliance.app.ingest.
    role_windows`, the windows one process makes), of about equal size in bytes: the largest window first, each
    to the lightest share. Each share is ``(positions of its items in input order, its windows' sizes)``."""
    from compliance.app.ingest import role_windows

    spans: list[range] = []
    start = 0
    for size in role_windows(len(items)):
        spans.append(range(start, start + size))
        start += size
    weights = [sum(max(1, _size(items[i])) for i in span) for span in spans]
    loads = [0] * shares
    chosen: list[list[int]] = [[] for _ in range(shares)]
    for w in sorted(range(len(spans)), key=lambda w: (-weights[w], w)):
        share = min(range(shares), key=lambda s: (loads[s], len(chosen[s])))
        chosen[share].append(w)
        loads[share] += weights[w]
    return [
        ([i for w in sorted(ws) for i in spans[w]], [len(spans[w]) for w in sorted(ws)])
        for ws in chosen
        if ws
    ]


def _size(item: Path | Upload) -> int:
    if isinstance(item, Path):
        try:
            return item.stat().st_size
        except OSError:
            return 0
    return len(item.data)


def audit_in_processes(
    store: Store,
    items: Sequence[Path | Upload],
    classifier: ArticleClassifier,
    processes: int,
    template: AuditShard,
) -> tuple[list[tuple[int, AuditedDocument]], list[FileFailure], int]:
    """Audit ``items`` in a kept pool of ``processes`` worker processes (one share of whole role windows each, so
    fewer when there are fewer windows) inside the run of ``template`` (its ``items``, ``positions`` and
    ``windows`` are filled in per share): ``(position, summary)`` of every audited document, the failures and
    the number of links stored, as :func:`compliance.app.audit.audit_items` gives them for one process.

    Raises:
        ModelError: a worker process stopped (killed, out of memory) or could not load the classifier.
    """
    from compliance.progress import bar

    pool = _pool(classifier, processes)
    shares = split_windows(items, processes)
    inference = dataclasses.replace(classifier.config)
    bf16 = bool(classifier.encoder.use_bf16)
    finished: list[tuple[int, AuditedDocument]] = []
    failures: list[FileFailure] = []
    links = 0
    try:
        futures: list[Future[Any]] = [
            pool.executor.submit(
                _audit_share,
                dataclasses.replace(
                    template, items=[items[i] for i in share], positions=share, windows=windows
                ),
                classifier.identity,
                inference,
                bf16,
            )
            for share, windows in shares
        ]
        with bar(None, desc="classifying paragraphs", unit="para") as shown:
            waiting = set(futures)
            while waiting:
                done, waiting = wait(waiting, timeout=0.2, return_when=FIRST_EXCEPTION)
                _drain(pool.progress, shown.update)
                if any(f.exception() is not None for f in done):
                    break
            _drain(pool.progress, shown.update)
        for future in futures:
            share_finished, share_failures, share_links = future.result()
            finished.extend(share_finished)
            failures.extend(share_failures)
            links += share_links
    except BrokenProcessPool as e:
        _discard(pool)
        raise ModelError(
            f"an audit worker process stopped ({e}); the documents it had stored are kept, audit again to finish "
            "the rest (with fewer --processes if memory ran out)"
        ) from e
    return finished, failures, links


def start_pool(classifier: ArticleClassifier, processes: int) -> list[int]:
    """Start the kept pool of ``processes`` workers for ``classifier`` now, each with its model loaded, instead of
    at the first audit that needs it (a server at start-up, a benchmark before its clock); the workers'
    process ids."""
    pool = _pool(classifier, processes)
    # one task per worker: each waits at the barrier until all are running, so no worker takes two
    futures = [pool.executor.submit(_ready) for _ in range(processes)]
    try:
        return sorted({future.result() for future in futures})
    except BrokenProcessPool as e:
        _discard(pool)
        raise ModelError(f"the audit worker processes could not start ({e})") from e


def _ready() -> int:
    _WORKER["barrier"].wait(timeout=600)
    return os.getpid()


def _drain(progress: Any, update: Any) -> None:
    while True:
        try:
            update(progress.get_nowait())
        except queue.Empty:
            return


def _pool(classifier: ArticleClassifier, processes: int) -> _Pool:
    """The kept pool for this classifier's directory and device with ``processes`` workers, started if needed."""
    import multiprocessing

    path = classifier.meta.get("path")
    if not path:
        raise ModelError(
            "the classifier was not loaded from a directory: an audit in several processes needs one"
        )
    device = str(classifier.encoder.device)
    key = (str(Path(path).resolve()), device, processes, classifier.identity)
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        # a model retrained in its directory since: the workers holding the old one are stopped
        stale = [k for k in _POOLS if k[:3] == key[:3] and k != key]
        for k in stale:
            _POOLS.pop(k).executor.shutdown(wait=False, cancel_futures=True)
        if pool is None:
            # spawned, not forked: CUDA and the parent's threads do not survive a fork
            context = multiprocessing.get_context("spawn")
            progress = context.Queue()
            barrier = context.Barrier(processes)
            threads = _threads_per_worker(device, processes)
            executor = ProcessPoolExecutor(
                max_workers=processes,
                mp_context=context,
                initializer=_start_worker,
                initargs=(key[0], device, threads, _parse_workers(processes), progress, barrier),
            )
            pool = _POOLS[key] = _Pool(executor, progress, barrier)
            logger.info("started %d audit worker process(es) for %s on %s", processes, key[0], device)
        return pool


def _threads_per_worker(device: str, processes: int) -> int:
    """The CPU's threads shared among the workers on a CPU; two each on a GPU (tokenising, the host side)."""
    import torch

    if device.startswith("cuda"):
        return 2
    return max(1, torch.get_num_threads() // processes)


def _parse_workers(processes: int) -> int:
    """Parse worker processes per audit worker: ``COMPLIANCE_PARSE_WORKERS`` when set, else the cores shared."""
    from compliance.settings import get_settings

    wanted = get_settings().parse_workers
    if wanted:
        return wanted
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - platforms without affinity masks
        cores = os.cpu_count() or 1
    return max(1, cores // (2 * processes))


def _discard(pool: _Pool) -> None:
    with _POOLS_LOCK:
        for key, kept in list(_POOLS.items()):
            if kept is pool:
                del _POOLS[key]
    pool.executor.shutdown(wait=False, cancel_futures=True)


def close_pools() -> None:
    """Stop every kept audit worker pool (at exit, and in tests)."""
    with _POOLS_LOCK:
        pools = list(_POOLS.values())
        _POOLS.clear()
    for pool in pools:
        pool.executor.shutdown(wait=True, cancel_futures=True)


atexit.register(close_pools)


def _start_worker(
    path: str, device: str, threads: int, parse_workers: int, progress: Any, barrier: Any
) -> None:
    """A worker's initializer: its share of the CPU, then the classifier, loaded once for the worker's life."""
    os.environ["COMPLIANCE_PARSE_WORKERS"] = str(parse_workers)
    # JAX, where installed beside torch and started by a library, reserves 75 % of the GPU's memory by default
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import torch

    from compliance.models.classifier import load

    torch.set_num_threads(threads)
    _WORKER["classifier"] = load(path, device=device)
    _WORKER["progress"] = progress
    _WORKER["barrier"] = barrier


def _audit_share(
    share: AuditShard, identity: str, inference: Any, bf16: bool
) -> tuple[list[tuple[int, AuditedDocument]], list[FileFailure], int]:
    """A worker's task: its share of the documents, audited into the parent's run."""
    from compliance.app.audit import _LazyPicker, audit_items, controls_space, corroboration
    from compliance.store import Store

    classifier: ArticleClassifier = _WORKER["classifier"]
    classifier.config = inference
    classifier.encoder.use_bf16 = bf16
    if classifier.identity != identity:
        raise ModelError(
            f"the audit worker's classifier is {classifier.identity}, the audit's {identity}: the model directory "
            "changed while its workers were running"
        )
    progress = _WORKER["progress"]
    store = Store(share.store_url, actor=share.actor)  # the audit log names whom the parent's store names
    try:
        law_id = int(store.law_record("gdpr").id)
        config = share.config
        space = controls_space(classifier) if share.store_vectors else None
        level = corroboration(classifier) if config.corroborate else None
        picker = (
            _LazyPicker(store, law_id, classifier, config.provision_authority_weight)
            if share.provision_targets or level is not None
            else None
        )
        return audit_items(
            store,
            share.items,
            share.positions,
            classifier,
            config,
            share.run_id,
            roles=share.roles,
            reclassify=share.reclassify,
            relative_to=share.relative_to,
            on_error=None,
            space=space,
            level=level,
            picker=picker,
            provision_ids=store.provision_id_map(law_id),
            provision_targets=share.provision_targets,
            shown=progress.put,
            windows=share.windows,
        )
    finally:
        store.dispose()
