"""Limits for the PDF connector, checked before and during the work.

* :func:`bounded_inflate`: pdfminer inflates FlateDecode streams with ``zlib.decompress`` in one piece, so a
  0.3 MB file can expand to gigabytes. Inside this context the module's ``zlib`` is a counting stand-in: every
  stream is inflated in chunks and the running total of one document is compared with
  ``SplitConfig.max_unpacked_bytes`` while inflating; past it the parse stops with
  :class:`~compliance.errors.DocumentTooLargeError`.
* :func:`check_page_count`: the page count is read from the page tree's ``/Count`` and then by walking at most
  ``max_pages + 1`` pages, before pdfplumber builds its page objects (a 100,000-page file is refused in
  milliseconds, not after loading every page).

Reference loops (``/Length 6 0 R`` with ``6 0 obj 7 0 R`` and ``7 0 obj 6 0 R``) make pdfminer loop forever; the
per-file time budget of :mod:`compliance.connectors.sandbox` stops those.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import zlib
from collections.abc import Iterator
from typing import Any

from compliance.errors import DocumentTooLargeError

__all__ = ["bounded_inflate", "check_page_count"]

_CHUNK = 1024 * 1024
_state = threading.local()


class _Exceeded(Exception):
    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self.limit = limit


def _count(n: int) -> None:
    limit = getattr(_state, "limit", None)
    if limit is None:
        return
    _state.used += n
    if _state.used > limit:
        raise _Exceeded(limit)


class _CountingInflater:
    """``zlib.decompressobj()`` whose output counts against the document's budget."""

    def __init__(self, *args: Any) -> None:
        self._inner = zlib.decompressobj(*args)

    def decompress(self, data: bytes, max_length: int = 0) -> bytes:
        out = self._inner.decompress(data, max_length) if max_length else self._inner.decompress(data)
        _count(len(out))
        return out

    def flush(self, *args: Any) -> bytes:
        out = self._inner.flush(*args)
        _count(len(out))
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _CountingZlib:
    """The part of the ``zlib`` module pdfminer uses, inflating in chunks and counting every byte."""

    error = zlib.error
    MAX_WBITS = zlib.MAX_WBITS

    @staticmethod
    def decompress(data: bytes, wbits: int = zlib.MAX_WBITS, bufsize: int = zlib.DEF_BUF_SIZE) -> bytes:
        inflater = zlib.decompressobj(wbits)
        parts: list[bytes] = []
        chunk = inflater.decompress(data, _CHUNK)
        while True:
            _count(len(chunk))
            parts.append(chunk)
            if not inflater.unconsumed_tail:
                break
            chunk = inflater.decompress(inflater.unconsumed_tail, _CHUNK)
        tail = inflater.flush()
        _count(len(tail))
        parts.append(tail)
        if not inflater.eof:
            raise zlib.error("Error -5 while decompressing data: incomplete or truncated stream")
        return b"".join(parts)

    @staticmethod
    def decompressobj(*args: Any) -> _CountingInflater:
        return _CountingInflater(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(zlib, name)


_install_lock = threading.Lock()


def _install() -> None:
    import pdfminer.pdftypes as pdftypes

    with _install_lock:
        if not isinstance(pdftypes.zlib, _CountingZlib):
            pdftypes.zlib = _CountingZlib()  # type: ignore[assignment]


@contextlib.contextmanager
def bounded_inflate(source: str, limit: int) -> Iterator[None]:
    """Count the bytes pdfminer inflates in this thread; past ``limit`` raise DocumentTooLargeError.

    Raises:
        DocumentTooLargeError: The document's streams inflate to more than ``limit`` bytes.
    """
    _install()
    _state.limit, _state.used = limit, 0
    try:
        yield
    except Exception as e:  # pdfminer/pdfplumber may wrap our signal in their own exception
        exceeded = _find_exceeded(e)
        if exceeded is None:
            raise
        raise DocumentTooLargeError(
            source,
            f"the PDF's streams inflate to more than {exceeded.limit:,} bytes (possible decompression bomb); "
            "raise SplitConfig.max_unpacked_bytes to accept it",
        ) from None
    finally:
        _state.limit = None


def _find_exceeded(error: BaseException) -> _Exceeded | None:
    seen: set[int] = set()
    stack: list[object] = [error]
    while stack:
        e = stack.pop()
        if not isinstance(e, BaseException) or id(e) in seen:
            continue
        if isinstance(e, _Exceeded):
            return e
        seen.add(id(e))
        stack.extend([*e.args, e.__cause__, e.__context__])
    return None


def check_page_count(pdf: Any, source: str, max_pages: int) -> None:
    """Refuse a PDF with more than ``max_pages`` pages before its pages are built.

    Args:
        pdf: an open ``pdfplumber.PDF``.
        source: the file name for messages.
        max_pages: the limit.

    Raises:
        DocumentTooLargeError: ``/Count`` or the page tree says more than ``max_pages``.
    """
    from pdfminer.pdfpage import PDFPage
    from pdfminer.pdftypes import resolve1

    declared: int | None = None
    with contextlib.suppress(Exception):
        count = resolve1(resolve1(pdf.doc.catalog.get("Pages")).get("Count"))
        declared = int(count) if isinstance(count, int) else None
    problem = None
    if declared is not None and declared > max_pages:
        problem = f"the PDF has {declared:,} pages, more than the limit of {max_pages:,}"
    elif sum(1 for _ in itertools.islice(PDFPage.create_pages(pdf.doc), max_pages + 1)) > max_pages:
        problem = f"the PDF has more than {max_pages:,} pages, the limit"
    if problem is not None:
        # pdfplumber's close() flushes its caches and then builds every page just to close it: keep it from that
        pdf._pages = []
        pdf.cached_properties = [p for p in pdf.cached_properties if p != "_pages"]
        raise DocumentTooLargeError(source, problem)
