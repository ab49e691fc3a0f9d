"""Read untrusted documents under a per-file time and memory budget.

A hostile file (a PDF whose references loop, a decompression bomb, a page tree of 100,000 pages) must cost one
error line, not the batch. :func:`parse_file` therefore reads each file in a **worker process**:

* the worker (a fresh interpreter: safe beside torch's threads, and it never re-runs the caller's script) starts
  once, imports the parsers, and is reused for every following file, so a batch pays one process start, not one
  per file;
* before each file its address space is capped with ``RLIMIT_AS`` at its resting size plus the memory budget
  (``COMPLIANCE_PARSE_MEMORY_MB``, default 1536 MiB); a parse that needs more fails inside the worker with
  :class:`~compliance.errors.ParseMemoryError` (C306) and the worker stays usable;
* the caller waits at most the time budget (``COMPLIANCE_PARSE_TIMEOUT``, default 120 s); then the worker is
  killed (SIGKILL), :class:`~compliance.errors.ParseTimeoutError` (C305) is raised, and the next file gets a
  fresh worker; a worker that dies on its own (a crash in a C library) gives
  :class:`~compliance.errors.ParserCrashError` (C307); a worker that cannot start at all (a broken parser
  library) gives :class:`~compliance.errors.ParserUnavailableError` (C309), which stops the batch at once;
* ``COMPLIANCE_PARSE_WORKERS`` worker processes (:func:`parse_workers`: half the cores, at most 8) read the files
  of a batch side by side (:func:`worker_pool`), each under these budgets;
* warnings that parsing libraries log (pdfminer's hundreds of "Could not get FontBBox" lines) are collected per
  file and re-logged once each, tagged with the file they concern, at most :data:`MAX_WARNING_LINES` lines.

``COMPLIANCE_PARSE_ISOLATION=inline`` (or ``isolation="inline"``) parses in the calling process instead: for
tests and for embedding where processes cannot be started. Inline mode keeps the time budget where it can (a
``SIGALRM`` timer, in the main thread of a Unix process) but has no memory budget.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import signal
import threading
import time
import warnings
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from compliance.errors import (
    DocumentError,
    ParseMemoryError,
    ParserCrashError,
    ParserUnavailableError,
    ParseTimeoutError,
)

if TYPE_CHECKING:  # pragma: no cover
    import subprocess
    from multiprocessing.connection import Connection

    from compliance.connectors.config import SplitConfig
    from compliance.connectors.document import ParsedDocument

__all__ = [
    "MAX_WARNING_LINES",
    "Isolation",
    "ParseBudget",
    "ParseWorker",
    "parse_file",
    "parse_workers",
    "shutdown",
    "worker_pool",
]

logger = logging.getLogger(__name__)

Isolation = Literal["process", "inline"]

#: distinct warning lines re-logged per file; the rest are counted in one last line
MAX_WARNING_LINES = 5
_MIB = 1024 * 1024
_STARTUP_TIMEOUT = 180.0
#: loggers of parsing libraries whose records are collected per file instead of reaching stderr untagged
_LIBRARY_LOGGERS = ("pdfminer", "pdfplumber", "pypdfium2", "PIL", "docx", "bs4", "markdown_it")


@dataclass(frozen=True, slots=True)
class ParseBudget:
    """What one file may cost: wall-clock seconds and extra address space (MiB; None: unlimited)."""

    timeout_s: float = 120.0
    memory_mb: int | None = 1536

    @classmethod
    def from_settings(cls) -> ParseBudget:
        """The budget from ``COMPLIANCE_PARSE_TIMEOUT`` and ``COMPLIANCE_PARSE_MEMORY_MB``."""
        from compliance.settings import get_settings

        s = get_settings()
        return cls(timeout_s=s.parse_timeout, memory_mb=s.parse_memory_mb)


# -- what travels between the caller and the worker -------------------------------------------------------------
# task:  ("path", absolute path, label, config) | ("bytes", data, name, config, media_type)
# reply: ("ok", document, warnings) | ("error", class name, source, problem, warnings)
Warning_ = tuple[str, str]  # (logger or category, message)


def _run_task(task: tuple[Any, ...]) -> ParsedDocument:
    from compliance.connectors.registry import parse_bytes, parse_path

    if task[0] == "path":
        _, path, label, config = task
        try:
            doc = parse_path(Path(path), config=config)
        except DocumentError as e:  # name the file as the caller did (the worker reads its absolute path)
            raise type(e)(label, e.problem) from e
        return replace(doc, source=label)
    _, data, name, config, media_type = task
    return parse_bytes(data, name, config=config, media_type=media_type)


class _Collector(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[Warning_] = []

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):
            self.records.append((record.name, record.getMessage()))


@contextlib.contextmanager
def _collect_warnings(*, everything: bool) -> Iterator[list[Warning_]]:
    """Collect library log records (and Python warnings) raised while parsing, instead of printing them.

    Args:
        everything: also collect the root logger's records (in the worker, where nothing else listens).
    """
    handler = _Collector()
    libs = [logging.getLogger(name) for name in _LIBRARY_LOGGERS]
    saved = [(lg, lg.propagate) for lg in libs]
    root = logging.getLogger()
    out: list[Warning_] = []
    for lg in libs:
        lg.addHandler(handler)
        lg.propagate = False
    if everything:
        root.addHandler(handler)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                yield out
            finally:
                out.extend((w.category.__name__, str(w.message)) for w in caught)
    finally:
        for lg, propagate in saved:
            lg.removeHandler(handler)
            lg.propagate = propagate
        if everything:
            root.removeHandler(handler)
        out[:0] = handler.records


def report_warnings(source: str, collected: list[Warning_]) -> None:
    """Log the warnings collected while reading ``source``: each distinct one once, tagged with the file."""
    if not collected:
        return
    counts = Counter(collected)
    shown = counts.most_common(MAX_WARNING_LINES)
    for (origin, message), n in shown:
        times = f" (x{n})" if n > 1 else ""
        text = (message.strip().splitlines() or [""])[0]
        text = text.removeprefix(f"{source}: ")  # the package's own warnings already name the file
        logger.warning("%s: %s: %s%s", source, origin, text[:300], times)
    rest = sum(counts.values()) - sum(n for _, n in shown)
    if rest:
        logger.warning("%s: %d more parser warning(s) not shown", source, rest)


# -- inline mode ----------------------------------------------------------------------------------------------
class _Alarm(BaseException):
    """Raised by the SIGALRM handler; a BaseException so that parsers' ``except Exception`` cannot eat it."""


@contextlib.contextmanager
def _time_limit(seconds: float, source: str) -> Iterator[None]:
    usable = (
        hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    )
    if not usable:
        yield
        return

    armed = [True]

    def on_alarm(signum: int, frame: Any) -> None:
        if armed[0]:
            raise _Alarm()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    # the timer repeats: clean-up code run while the first alarm unwinds (pdfplumber's close() walks the
    # same looping page tree) is interrupted again, until control is back here
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.2)
    try:
        yield
    except _Alarm:
        armed[0] = False
        raise ParseTimeoutError(source, _timeout_message(seconds)) from None
    finally:
        armed[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _timeout_message(seconds: float) -> str:
    return (
        f"reading the file took longer than the time budget of {seconds:g} s (a malformed or hostile file?); "
        "raise COMPLIANCE_PARSE_TIMEOUT to allow more"
    )


def _memory_message(mb: int | None) -> str:
    return (
        f"reading the file needed more memory than the budget of {mb} MiB (a decompression bomb?); raise "
        "COMPLIANCE_PARSE_MEMORY_MB to allow more"
    )


def _parse_inline(task: tuple[Any, ...], source: str, budget: ParseBudget) -> ParsedDocument:
    with _collect_warnings(everything=False) as collected:
        try:
            with _time_limit(budget.timeout_s, source):
                return _run_task(task)
        finally:
            report_warnings(source, collected)


# -- the worker process ---------------------------------------------------------------------------------------
def _address_space() -> int:
    """This process's virtual memory size in bytes (Linux ``/proc``; 0 elsewhere)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _worker_main(conn: Connection, memory_mb: int | None) -> None:
    """The worker loop: import the parsers, then parse one task at a time until told to stop."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")  # thread pools reserve address space that the budget would count
    try:
        import resource
    except ImportError:  # pragma: no cover - not Unix
        resource = None  # type: ignore[assignment]
    from compliance.connectors import docx_reader, html_reader, pdf_reader, text_reader  # noqa: F401
    from compliance.connectors.sentences import sentencizer

    sentencizer()
    _, hard = resource.getrlimit(resource.RLIMIT_AS) if resource else (0, 0)
    baseline = _address_space()
    conn.send(("ready", os.getpid()))
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        source = str(task[2])
        with _collect_warnings(everything=True) as collected:
            try:
                if resource is not None and memory_mb is not None and baseline:
                    limit = baseline + memory_mb * _MIB
                    if hard == resource.RLIM_INFINITY or limit < hard:
                        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
                try:
                    doc = _run_task(task)
                finally:
                    if resource is not None:
                        resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
                reply: tuple[Any, ...] = ("ok", doc)
            except MemoryError:
                reply = ("error", "ParseMemoryError", source, _memory_message(memory_mb))
            except DocumentError as e:
                if _caused_by_memory_error(e):
                    reply = ("error", "ParseMemoryError", e.source, _memory_message(memory_mb))
                else:
                    reply = ("error", type(e).__name__, e.source, e.problem)
            except Exception as e:  # pragma: no cover - parse_* convert everything; keep the worker alive
                reply = ("error", "DocumentError", source, f"the parser failed: {type(e).__name__}: {e}")
        try:
            conn.send((*reply, collected))
        except Exception as e:  # an unpicklable or huge result
            conn.send(("error", "DocumentError", source, f"the parsed result cannot be returned: {e}", []))
        del reply, collected
        if memory_mb is not None and baseline and _address_space() > baseline + memory_mb * _MIB // 2:
            return  # a fragmented heap: let the next file get a fresh worker


def _caused_by_memory_error(error: BaseException) -> bool:
    seen: set[int] = set()
    stack: list[object] = [error]
    while stack:
        e = stack.pop()
        if not isinstance(e, BaseException) or id(e) in seen:
            continue
        if isinstance(e, MemoryError):
            return True
        seen.add(id(e))
        stack.extend([*e.args, e.__cause__, e.__context__])
    return False


def _child_main() -> None:
    """Entry point of the worker interpreter: ``argv = [fd of the socket, memory MiB or "none"]``."""
    import sys
    from multiprocessing.connection import Connection

    fd, memory = int(sys.argv[1]), sys.argv[2]
    _worker_main(Connection(fd), None if memory == "none" else int(memory))


def _error_class(name: str) -> type[DocumentError]:
    import compliance.errors as errors

    cls = getattr(errors, name, None)
    return cls if isinstance(cls, type) and issubclass(cls, DocumentError) else DocumentError


class ParseWorker:
    """A worker process that reads documents one at a time under a :class:`ParseBudget`; restarted when killed.

    Thread-safe: callers take turns. Use as a context manager, or call :meth:`close`.
    """

    def __init__(self, budget: ParseBudget | None = None) -> None:
        self.budget = budget or ParseBudget.from_settings()
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None
        self.started = 0  #: how many worker processes were started (tests and benchmarks read it)

    def __enter__(self) -> ParseWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> Connection:
        # A plain interpreter started with subprocess, not multiprocessing's "spawn": spawn re-imports the
        # caller's __main__ module, which re-runs any script that lacks an ``if __name__ == "__main__"`` guard.
        import json
        import socket
        import subprocess
        import sys
        from multiprocessing.connection import Connection

        ours, theirs = socket.socketpair()
        env = dict(os.environ)
        env["COMPLIANCE_WORKER_PATH"] = json.dumps([p for p in sys.path if isinstance(p, str)])
        code = (
            "import json, os, sys; sys.path[:0] = json.loads(os.environ['COMPLIANCE_WORKER_PATH']); "
            "from compliance.connectors.sandbox import _child_main; _child_main()"
        )
        memory = "none" if self.budget.memory_mb is None else str(self.budget.memory_mb)
        try:
            process = subprocess.Popen(
                [sys.executable, "-c", code, str(theirs.fileno()), memory],
                pass_fds=[theirs.fileno()],
                env=env,
                stdin=subprocess.DEVNULL,
            )
        finally:
            theirs.close()
        conn = Connection(ours.detach())
        # a worker that cannot start is the installation's problem, not a document's: the batch stops here
        # rather than paying a failed start for every file (ParserUnavailableError is no DocumentError)
        if not conn.poll(_STARTUP_TIMEOUT):
            process.kill()
            process.wait()
            conn.close()
            raise ParserUnavailableError(
                f"the document-reading worker process did not start within {_STARTUP_TIMEOUT:.0f} s"
            )
        try:
            conn.recv()
        except (EOFError, OSError) as e:
            process.kill()
            code_ = process.wait()
            conn.close()
            raise ParserUnavailableError(
                f"the document-reading worker process failed to start (exit {code_}; its error is printed "
                "above): check that the parser libraries import (python -c 'import pdfplumber, docx, spacy'), "
                "or set COMPLIANCE_PARSE_ISOLATION=inline to read in this process"
            ) from e
        self._process, self._conn = process, conn
        self.started += 1
        return conn

    def _stop(self, *, kill: bool) -> int | None:
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if process is None:
            return None
        if kill:
            process.kill()
        elif conn is not None:
            with contextlib.suppress(Exception):
                conn.send(None)
        try:
            code = process.wait(timeout=5)
        except Exception:  # pragma: no cover - a worker that does not stop when asked
            process.kill()
            code = process.wait()
        if conn is not None:
            conn.close()
        return code

    def close(self) -> None:
        """Stop the worker process (a later call starts a new one)."""
        with self._lock:
            self._stop(kill=False)

    def run(self, task: tuple[Any, ...], source: str) -> ParsedDocument:
        """Send one task, wait for its result within the time budget, raise its error."""
        with self._lock:
            if self._process is not None and self._process.poll() is not None:
                self._stop(kill=True)  # it recycled itself after the last file
            conn = self._conn or self._start()
            try:
                conn.send(task)
            except (OSError, ValueError):  # the worker went away since the last file
                self._stop(kill=True)
                conn = self._start()
                conn.send(task)
            if not conn.poll(self.budget.timeout_s):
                self._stop(kill=True)
                raise ParseTimeoutError(source, _timeout_message(self.budget.timeout_s))
            try:
                reply = conn.recv()
            except (EOFError, OSError) as e:
                process = self._process
                code = None
                if process is not None:
                    with contextlib.suppress(Exception):
                        code = process.wait(timeout=5)
                self._stop(kill=True)
                raise _crash_error(source, code, self.budget.memory_mb) from e
        collected = reply[-1]
        report_warnings(source, collected)
        if reply[0] == "ok":
            doc: ParsedDocument = reply[1]
            return doc
        _, cls_name, err_source, problem, _ = reply
        raise _error_class(cls_name)(err_source, problem)


def _crash_error(source: str, exitcode: int | None, memory_mb: int | None) -> DocumentError:
    how = f"exit status {exitcode}"
    if exitcode is not None and exitcode < 0:
        try:
            how = f"signal {signal.Signals(-exitcode).name}"
        except ValueError:  # pragma: no cover
            how = f"signal {-exitcode}"
    if exitcode == -signal.SIGKILL:  # the kernel's OOM killer
        return ParseMemoryError(source, _memory_message(memory_mb))
    return ParserCrashError(
        source, f"the parsing worker died ({how}) while reading the file (a malformed or hostile file?)"
    )


_SHARED: dict[tuple[ParseBudget, int], ParseWorker] = {}
_SHARED_LOCK = threading.Lock()
#: the automatic pool size is at most this many worker processes
MAX_AUTO_WORKERS = 8


def _shared_worker(budget: ParseBudget, slot: int = 0) -> ParseWorker:
    with _SHARED_LOCK:
        worker = _SHARED.get((budget, slot))
        if worker is None:
            if not _SHARED:
                atexit.register(shutdown)
            worker = _SHARED[(budget, slot)] = ParseWorker(budget)
        return worker


def parse_workers() -> int:
    """How many worker processes read documents side by side: ``COMPLIANCE_PARSE_WORKERS``, or when it is 0
    (the default) half the CPU cores this process may run on, at most :data:`MAX_AUTO_WORKERS`, at least one.
    On two cores that is one worker, beside the encoder's forward; on a machine with many cores (a GPU server,
    where the encoder is no longer the cost) several read PDF and DOCX files at once."""
    from compliance.settings import get_settings

    wanted = get_settings().parse_workers
    if wanted:
        return int(wanted)
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - platforms without affinity masks
        cores = os.cpu_count() or 1
    return max(1, min(MAX_AUTO_WORKERS, cores // 2))


def worker_pool(size: int, budget: ParseBudget | None = None) -> list[ParseWorker]:
    """``size`` shared worker processes of ``budget`` (default: from the settings), started on first use and
    kept for the process like the single shared worker (which is the pool's first)."""
    budget = budget or ParseBudget.from_settings()
    return [_shared_worker(budget, slot) for slot in range(max(1, size))]


def shutdown() -> None:
    """Stop the shared worker processes (they also stop when this process exits)."""
    with _SHARED_LOCK:
        workers = list(_SHARED.values())
        _SHARED.clear()
    for worker in workers:
        worker.close()


def parse_file(
    source: Path | bytes,
    name: str | None = None,
    *,
    config: SplitConfig | None = None,
    media_type: str | None = None,
    label: str | None = None,
    isolation: Isolation | None = None,
    budget: ParseBudget | None = None,
    worker: ParseWorker | None = None,
) -> ParsedDocument:
    """Parse a file (a path) or uploaded bytes under the per-file budgets.

    Args:
        source: a path to read, or the document's bytes.
        name: for bytes, the file name or URI (its extension chooses the parser); for a path, ignored.
        config: splitting choices and limits (default ``SplitConfig()``).
        media_type: for bytes, chooses the parser when the name has no supported extension.
        label: for a path, the ``source`` recorded in the document (default: the path as given).
        isolation: ``process`` or ``inline`` (default: ``COMPLIANCE_PARSE_ISOLATION``).
        budget: time and memory per file (default: from the settings).
        worker: a worker to use instead of the shared one of this budget (process isolation).

    Returns:
        The parsed document.

    Raises:
        ParseTimeoutError: over the time budget (C305).
        ParseMemoryError: over the memory budget (C306).
        ParserCrashError: the worker died (C307).
        ParserUnavailableError: no worker process could be started (C309; not a DocumentError: stop the batch).
        DocumentError: every other reason the file cannot be read (see :func:`~compliance.connectors.parse_bytes`).
    """
    from compliance.connectors.config import SplitConfig
    from compliance.settings import get_settings

    config = config or SplitConfig()
    # the worker must not depend on its own (possibly stale) settings: resolve the byte limit here
    config = replace(config, max_bytes=config.resolved_max_bytes())
    if isinstance(source, bytes):
        shown = name or "(upload)"
        task: tuple[Any, ...] = ("bytes", bytes(source), shown, config, media_type)
    else:
        shown = label if label is not None else str(source)
        # the worker's working directory is the one it started in: hand it an absolute path
        task = ("path", str(Path(source).absolute()), shown, config)
    mode = isolation or get_settings().parse_isolation
    if mode == "inline":
        return _parse_inline(task, shown, budget or ParseBudget.from_settings())
    chosen = worker or _shared_worker(budget or ParseBudget.from_settings())
    started = time.perf_counter()
    try:
        return chosen.run(task, shown)
    finally:
        logger.debug("parsed %s in %.3fs (worker)", shown, time.perf_counter() - started)
