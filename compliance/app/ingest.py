"""Ingest: documents (files, folders or uploaded bytes) → parsed paragraphs with provenance → the store.

One loop reads and saves documents for every use case that needs it (:func:`save_sources`: ``ingest``,
``audit``, the HTTP API and the workers), with one error policy: a document that cannot be read (a
:class:`~compliance.errors.DocumentError`: corrupt, encrypted, oversized, unsupported) is reported and the batch
goes on; a failing store (:class:`~compliance.errors.StoreError`) stops the batch, since every later document
would fail the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from compliance.errors import ConfigurationError, DocumentError

if TYPE_CHECKING:  # pragma: no cover
    from compliance.connectors import ParsedDocument, SplitConfig
    from compliance.connectors.roles import Embedder
    from compliance.connectors.sandbox import ParseWorker
    from compliance.store import SavedDocument, Store

__all__ = [
    "DocumentStatus",
    "FileFailure",
    "IngestReport",
    "IngestedDocument",
    "SavedSource",
    "Source",
    "Upload",
    "common_folder",
    "expand_sources",
    "ingest_documents",
    "parse_source",
    "role_embedder",
    "role_windows",
    "save_sources",
    "source_labels",
]

DocumentStatus = Literal["new", "new-version", "unchanged"]


@dataclass(frozen=True, slots=True)
class Upload:
    """A document received as bytes (an HTTP upload, a document-management hook, a worker task).

    Attributes:
        name: the file name (its extension chooses the parser) or URI; stored as the document's source.
        data: the file content.
        media_type: chooses the parser when the name has no supported extension.
    """

    name: str
    data: bytes
    media_type: str | None = None


#: what the ingest and audit use cases accept: files, folders (walked) and uploads
Source = Path | str | Upload

OnError = Callable[[str, "FileFailure"], None]


@dataclass(frozen=True, slots=True)
class FileFailure:
    """A document that could not be read, with the error's stable code."""

    path: str
    code: str
    error: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "code": self.code, "error": self.error}


@dataclass(frozen=True, slots=True)
class SavedSource:
    """One document read and saved by :func:`save_sources`."""

    label: str  #: the path or upload name it came from
    document: ParsedDocument
    saved: SavedDocument

    @property
    def status(self) -> DocumentStatus:
        """``new``, ``new-version`` or ``unchanged``."""
        if not self.saved.created:
            return "unchanged"
        return "new" if self.saved.new_document else "new-version"


@dataclass(frozen=True, slots=True)
class IngestedDocument:
    """What the ingest did with one document."""

    source: str
    document_id: int
    version: int
    status: DocumentStatus
    paragraphs: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "document_id": self.document_id,
            "version": self.version,
            "status": self.status,
            "paragraphs": self.paragraphs,
        }


@dataclass
class IngestReport:
    """The result of :func:`ingest_documents` (also stored as the run's stats)."""

    run_id: int
    files: int
    documents: list[IngestedDocument] = field(default_factory=list)
    failures: list[FileFailure] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    #: the run's number among ingests ("ingest 2"); ``run_id`` is unique over all runs
    run_number: int | None = None

    def _count(self, status: DocumentStatus) -> int:
        return sum(d.status == status for d in self.documents)

    @property
    def paragraphs_stored(self) -> int:
        """Paragraphs of the new documents and new versions."""
        return sum(d.paragraphs for d in self.documents if d.status != "unchanged")

    def counts(self) -> dict[str, int]:
        return {
            "files": self.files,
            "new_documents": self._count("new"),
            "new_versions": self._count("new-version"),
            "unchanged": self._count("unchanged"),
            "failed": len(self.failures),
            "paragraphs_stored": self.paragraphs_stored,
            "skipped": len(self.skipped),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.counts(),
            "documents": [d.to_dict() for d in self.documents],
            "failures": [f.to_dict() for f in self.failures],
            "skipped_paths": [{"path": p, "reason": why} for p, why in self.skipped],
            "run_id": self.run_id,
            "run_number": self.run_number,
        }


def expand_sources(
    sources: Iterable[Source],
    *,
    recursive: bool = True,
    on_skip: Callable[[Path, str], None] | None = None,
    on_failure: Callable[[FileFailure], None] | None = None,
) -> list[Path | Upload]:
    """Folders walked into their document files (see :func:`compliance.connectors.iter_paths`), uploads kept.

    Args:
        sources: files, folders and uploads.
        recursive: descend into sub-folders.
        on_skip: told about each file or folder skipped on purpose (hidden, unsupported, special file).
        on_failure: told about each folder or link that could not be read (an unreadable sub-folder is a
            failure of the batch, not a skip).
    """
    from compliance.connectors import iter_paths

    out: list[Path | Upload] = []
    paths: list[Path] = []

    def failed(path: Path, error: DocumentError) -> None:
        if on_failure is not None:
            on_failure(FileFailure(str(path), error.code, str(error)))

    def flush() -> None:
        out.extend(iter_paths(paths, recursive=recursive, on_skip=on_skip, on_error=failed))
        paths.clear()

    for source in sources:
        if isinstance(source, Upload):
            flush()
            out.append(source)
        else:
            paths.append(Path(source))
    flush()
    return out


def parse_source(
    source: Path | Upload,
    *,
    config: SplitConfig | None = None,
    relative_to: Path | None = None,
    worker: ParseWorker | None = None,
) -> ParsedDocument:
    """Parse one file or upload; a file's ``source`` is its path (relative to ``relative_to`` when below it).

    The file is read under the per-file time and memory budgets (:func:`compliance.connectors.sandbox.parse_file`:
    a worker process by default — ``worker`` when given, else the shared one —, ``COMPLIANCE_PARSE_ISOLATION=
    inline`` to read in this process).

    Raises:
        DocumentError: the document cannot be read (over a budget: ParseTimeoutError C305, ParseMemoryError C306).
    """
    from compliance.connectors import source_name
    from compliance.connectors.sandbox import parse_file

    if isinstance(source, Upload):
        return parse_file(
            source.data, source.name, config=config, media_type=source.media_type, worker=worker
        )
    doc = parse_file(source, config=config, worker=worker)
    return replace(doc, source=source_name(source, relative_to))


def common_folder(sources: Iterable[Source]) -> Path | None:
    """The folder that the given files and folders share (a folder counts as itself, a file as its folder): what
    stored sources are relative to by default. None when only uploads are given."""
    import os

    folders = [
        path.resolve() if path.is_dir() else path.resolve().parent
        for path in (Path(s) for s in sources if not isinstance(s, Upload))
    ]
    return Path(os.path.commonpath(folders)) if folders else None


def _label(source: Source) -> str:
    return source.name if isinstance(source, Upload) else str(source)


def source_labels(sources: Iterable[Source]) -> list[str]:
    """How sources are recorded in a run's configuration: paths as given, uploads by name."""
    return [_label(s) for s in sources]


def role_embedder() -> Embedder | None:
    """Sentence embeddings for the paragraph role model's embedding head: the packaged all-MiniLM-L6-v2 when
    the role model has that head and the ``ml`` extra is installed, else None (its structure head decides)."""
    from compliance.connectors.roles import default_role_model
    from compliance.errors import MissingDependencyError, ModelError

    try:
        if not default_role_model().has_embedding_head:
            return None
        from compliance.models.roles import minilm_embedder

        return minilm_embedder()
    except (MissingDependencyError, ModelError):  # no usable role model: assign_roles says so and goes on
        return None


#: documents parsed ahead of the one being saved (a background thread; bounded)
PARSE_AHEAD = 8


def role_windows(total: int, window: int | None = None) -> list[int]:
    """Sizes of the windows a batch of ``total`` documents is split into: as even as possible, none larger than
    ``window`` (default ``COMPLIANCE_ROLE_WINDOW``, 100: repetition across the documents of a window counts, and
    memory stays bounded by one window), so that the last window is not a lone document without others to compare
    its lines with."""
    if window is None:
        from compliance.settings import get_settings

        window = get_settings().role_window
    if total <= 0:
        return []
    count = -(-total // max(1, window))
    base, extra = divmod(total, count)
    return [base + (1 if i < extra else 0) for i in range(count)]


def _parse_worker_count(wanted: int | None = None) -> int:
    """Worker processes that read documents side by side: ``wanted`` or
    :func:`~compliance.connectors.sandbox.parse_workers`; one with inline parsing (it holds the GIL, and its time
    budget needs the main thread)."""
    from compliance.connectors.sandbox import parse_workers
    from compliance.settings import get_settings

    if get_settings().parse_isolation != "process":
        return 1
    return wanted if wanted is not None else parse_workers()


def _parse_ahead(
    sources: Sequence[Path | Upload],
    *,
    config: SplitConfig | None,
    relative_to: Path | None,
    depth: int,
    workers: int | None = None,
) -> Generator[tuple[str, ParsedDocument | FileFailure], None, None]:
    """Parse ``sources`` in a background thread, at most ``depth`` documents ahead of the consumer; yields
    ``(label, parsed document or failure)`` in order. With process isolation, ``workers`` worker processes
    (default :func:`~compliance.connectors.sandbox.parse_workers`) read documents side by side, each under its
    own budgets. An unexpected error of the parser is raised here; closing the iterator stops the threads."""
    import queue
    import threading

    from compliance.connectors.sandbox import worker_pool

    workers = _parse_worker_count(workers)
    done = object()
    results: queue.Queue[Any] = queue.Queue(maxsize=max(1, depth))
    stop = threading.Event()

    def put(item: Any) -> bool:
        while not stop.is_set():
            try:
                results.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def parse_one(
        source: Path | Upload, worker: ParseWorker | None
    ) -> tuple[str, ParsedDocument | FileFailure]:
        label = _label(source)
        try:
            return label, parse_source(source, config=config, relative_to=relative_to, worker=worker)
        except DocumentError as e:
            return label, FileFailure(label, e.code, str(e))

    def in_parallel(pool: list[ParseWorker]) -> bool:
        """Every worker process reads one document at a time; results are handed on in input order."""
        from collections import deque
        from concurrent.futures import Future, ThreadPoolExecutor

        free: queue.Queue[ParseWorker] = queue.Queue()
        for worker in pool:
            free.put(worker)

        def task(source: Path | Upload) -> tuple[str, ParsedDocument | FileFailure]:
            worker = free.get()
            try:
                return parse_one(source, worker)
            finally:
                free.put(worker)

        executor = ThreadPoolExecutor(len(pool), thread_name_prefix="compliance-parse")
        running: deque[Future[tuple[str, ParsedDocument | FileFailure]]] = deque()
        try:
            for source in sources:
                running.append(executor.submit(task, source))
                if len(running) >= len(pool) and not put(running.popleft().result()):
                    return False
            while running:
                if not put(running.popleft().result()):
                    return False
            return True
        finally:
            executor.shutdown(wait=False, cancel_futures=True)

    def work() -> None:
        try:
            if workers > 1 and len(sources) > 1:
                if not in_parallel(worker_pool(workers)):
                    return
            else:
                for source in sources:
                    if not put(parse_one(source, None)):
                        return
        except BaseException as e:  # handed to the consumer, which raises it
            put(e)
            return
        put(done)

    thread = threading.Thread(target=work, name="compliance-parse-ahead", daemon=True)
    thread.start()
    try:
        while True:
            item = results.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        thread.join(timeout=5)


def save_sources(
    store: Store,
    sources: Sequence[Path | Upload],
    *,
    config: SplitConfig | None = None,
    relative_to: Path | None = None,
    on_error: OnError | None = None,
    embed: Embedder | Literal["auto"] | None = "auto",
    window: int | None = None,
    parse_ahead: int | None = None,
    windows: Sequence[int] | None = None,
) -> Iterator[SavedSource | FileFailure]:
    """Parse every source, give the paragraphs their roles window by window, then save each document in turn:
    the saved document, or the failure of one that could not be read.

    Documents are parsed ahead in a background thread (at most ``parse_ahead`` waiting), so that parsing overlaps
    with what the caller does with each saved document (the audit classifies it). Paragraph roles are decided
    over a window of documents (:func:`compliance.connectors.roles.assign_roles`: a line repeated at the edge of
    the pages of most documents is page furniture): the batch is split into even windows of at most ``window``
    documents (:func:`role_windows`), each parsed before its first document is saved; a batch of up to
    ``window`` documents is one window, as before. Memory is bounded by one window.

    Args:
        store: an open, migrated store.
        sources: files and uploads (folders already expanded: :func:`expand_sources`).
        config: splitting choices and limits.
        relative_to: store file sources relative to this folder.
        on_error: called with ``(label, failure)`` for each document that could not be read.
        embed: sentence embeddings for the role model (``"auto"``: :func:`role_embedder`; None: the role
            model's structure head).
        window: documents whose roles are decided together (default ``COMPLIANCE_ROLE_WINDOW``, 100).
        windows: the windows' sizes, given (they add up to the number of sources; default :func:`role_windows`):
            an audit shared among processes gives each the windows one process would have made of its documents.
        parse_ahead: documents parsed ahead of the one being saved (default: a whole window, at least
            :data:`PARSE_AHEAD`, so that the next window is read while this one is classified — with one parse
            worker too: eight documents ahead made the audit wait at every window boundary for the rest of the
            next window to be read).

    Raises:
        StoreError: the database failed (the batch stops).
    """
    from compliance.connectors import SplitConfig
    from compliance.connectors.roles import assign_roles
    from compliance.progress import bar

    sizes = list(windows) if windows is not None else role_windows(len(sources), window)
    if sum(sizes) != len(sources) or any(size < 1 for size in sizes):
        raise ConfigurationError(f"role windows {sizes} do not cover {len(sources)} source(s)")
    embedder: Embedder | None = None if embed == "auto" else embed
    embedder_ready = embed != "auto"
    # the roles are decided below, over each window: the parser need not decide them per document first
    config = replace(config or SplitConfig(), assign_roles=False)
    workers = _parse_worker_count()
    if parse_ahead is None:  # the next window is read while this one is classified, not after it
        parse_ahead = max(PARSE_AHEAD, max(sizes, default=0))
    parsed = _parse_ahead(sources, config=config, relative_to=relative_to, depth=parse_ahead, workers=workers)
    try:
        with bar(len(sources), desc="reading documents", unit="file") as progress:
            for size in sizes:
                batch: list[tuple[str, ParsedDocument | FileFailure]] = []
                for label, item in parsed:
                    if isinstance(item, FileFailure) and on_error is not None:
                        on_error(label, item)
                    batch.append((label, item))
                    progress.update(1)
                    if len(batch) == size:
                        break
                docs = [item for _, item in batch if not isinstance(item, FileFailure)]
                if docs:
                    if not embedder_ready:
                        embedder, embedder_ready = role_embedder(), True
                    with_roles = iter(assign_roles(docs, embed=embedder))
                for label, item in batch:
                    if isinstance(item, FileFailure):
                        yield item
                    else:
                        doc = next(with_roles)
                        yield SavedSource(label, doc, store.save_document(doc))
    finally:
        parsed.close()


def ingest_documents(
    store: Store,
    sources: Iterable[Source],
    *,
    config: SplitConfig | None = None,
    relative_to: Path | None = None,
    recursive: bool = True,
    on_error: OnError | None = None,
) -> IngestReport:
    """Parse and store every document under ``sources`` inside a recorded ``ingest`` run.

    Re-ingesting unchanged content adds nothing; changed content becomes a new version (the old one is kept).

    Args:
        store: an open, migrated store.
        sources: files, folders and uploads.
        config: splitting choices and limits (default ``SplitConfig()``).
        relative_to: store file sources relative to this folder (default: the folder the given paths share,
            :func:`common_folder`, so that ``documents show`` finds them by the names under that folder).
        recursive: descend into sub-folders.
        on_error: called for each document that could not be read (the batch goes on).
    """
    from compliance.connectors import SplitConfig

    config = config or SplitConfig()
    skipped: list[tuple[str, str]] = []
    walk_failures: list[FileFailure] = []

    def failed(failure: FileFailure) -> None:
        walk_failures.append(failure)
        if on_error is not None:
            on_error(failure.path, failure)

    given = list(sources)
    items = expand_sources(
        given,
        recursive=recursive,
        on_skip=lambda p, why: skipped.append((str(p), why)),
        on_failure=failed,
    )
    run_config = {
        "paths": source_labels(given),
        "split": config,
        "recursive": recursive,
    }
    relative_to = relative_to if relative_to is not None else common_folder(given)
    with store.run("ingest", run_config) as run:
        report = IngestReport(
            run_id=run.id,
            files=len(items) + len(walk_failures),
            skipped=skipped,
            failures=list(walk_failures),
            run_number=run.number,
        )
        for outcome in save_sources(store, items, config=config, relative_to=relative_to, on_error=on_error):
            if isinstance(outcome, FileFailure):
                report.failures.append(outcome)
                continue
            saved = outcome.saved
            report.documents.append(
                IngestedDocument(
                    saved.source, saved.document_id, saved.version, outcome.status, saved.paragraph_count
                )
            )
        run.stats.update(report.counts())
        run.stats["failures"] = [f.to_dict() for f in report.failures]
    return report
