"""Which connector reads which file type, and the single entry points :func:`parse_bytes` / :func:`parse_path`.

Connector modules (python-docx, pdfplumber, BeautifulSoup …) are imported only when a file of their type is
parsed, so importing this module is cheap.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path, PurePath
from urllib.parse import urlsplit

from compliance.connectors.config import SplitConfig
from compliance.connectors.document import ParsedDocument
from compliance.connectors.safety import check_paragraph_count
from compliance.errors import (
    ComplianceError,
    DocumentError,
    DocumentTooLargeError,
    UnsafeDocumentError,
    UnsupportedFormatError,
)


@dataclass(frozen=True, slots=True)
class ConnectorSpec:
    """A connector: its media type and the ``module:function`` that parses ``(data, source, config)``."""

    name: str
    media_type: str
    target: str

    def load(self) -> Callable[[bytes, str, SplitConfig], ParsedDocument]:
        """Import and return the parse function."""
        module, _, func = self.target.partition(":")
        return getattr(import_module(module), func)  # type: ignore[no-any-return]


_DOCX = ConnectorSpec(
    "docx",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "compliance.connectors.docx_reader:parse_docx",
)
_ODT = ConnectorSpec(
    "odt", "application/vnd.oasis.opendocument.text", "compliance.connectors.odt_reader:parse_odt"
)
_PDF = ConnectorSpec("pdf", "application/pdf", "compliance.connectors.pdf_reader:parse_pdf")
_TEXT = ConnectorSpec("text", "text/plain", "compliance.connectors.text_reader:parse_text")
_MD = ConnectorSpec("markdown", "text/markdown", "compliance.connectors.text_reader:parse_markdown")
_HTML = ConnectorSpec("html", "text/html", "compliance.connectors.html_reader:parse_html")
_XLSX = ConnectorSpec(
    "xlsx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "compliance.connectors.sheet_reader:parse_xlsx",
)
_CSV = ConnectorSpec("csv", "text/csv", "compliance.connectors.sheet_reader:parse_csv")

CONNECTORS: dict[str, ConnectorSpec] = {
    ".docx": _DOCX,
    ".docm": _DOCX,  # a Word document with macros (never run: only its text is read)
    ".dotx": _DOCX,  # a Word template
    ".dotm": _DOCX,
    ".odt": _ODT,
    ".pdf": _PDF,
    ".txt": _TEXT,
    ".text": _TEXT,
    ".md": _MD,
    ".markdown": _MD,
    ".html": _HTML,
    ".htm": _HTML,
    ".xhtml": _HTML,
    ".xlsx": _XLSX,
    ".xlsm": _XLSX,
    ".csv": _CSV,
}

SUPPORTED_EXTENSIONS: frozenset[str] = frozenset(CONNECTORS)

_BY_MEDIA_TYPE = {spec.media_type: ext for ext, spec in reversed(CONNECTORS.items())}
_BY_MEDIA_TYPE["application/xhtml+xml"] = ".xhtml"


def extension_for_media_type(media_type: str | None) -> str | None:
    """The file extension a connector uses for a media type (``"application/pdf"`` → ``".pdf"``), or None."""
    if not media_type:
        return None
    return _BY_MEDIA_TYPE.get(media_type.split(";")[0].strip().lower())


def connector_for(filename: str, *, media_type: str | None = None) -> ConnectorSpec:
    """The connector for a file name or URL (by extension, case-insensitive), else for ``media_type``.

    Raises:
        UnsupportedFormatError: Neither the extension nor the media type is supported.
    """
    name = urlsplit(filename).path if "://" in filename else filename  # "https://…/p.pdf?x=1" → "/p.pdf"
    ext = PurePath(name).suffix.lower()
    spec = CONNECTORS.get(ext)
    if spec is None:
        by_type = extension_for_media_type(media_type)
        if by_type is not None:
            return CONNECTORS[by_type]
        if ext == ".doc":
            hint = "legacy .doc files are not supported; save the document as .docx"
        else:
            hint = f"supported extensions: {', '.join(sorted(SUPPORTED_EXTENSIONS))}"
        raise UnsupportedFormatError(filename, f"unsupported file type {ext or '(no extension)'!r}; {hint}")
    return spec


def parse_bytes(
    data: bytes, filename: str, *, config: SplitConfig | None = None, media_type: str | None = None
) -> ParsedDocument:
    """Parse a document from its bytes.

    Args:
        data: The file content.
        filename: File name or URI; its extension chooses the connector and it becomes ``source``.
        config: Splitting choices and limits (default :class:`SplitConfig()`).
        media_type: Used to choose the connector when the file name has no supported extension.

    Returns:
        The parsed document with its paragraphs.

    Raises:
        UnsupportedFormatError: The file type is not supported.
        EncryptedDocumentError: The document is password-protected.
        DocumentTooLargeError: Over the size/page limits, or a zip bomb.
        DocumentError: Anything else that makes the file unreadable (empty, corrupt, unsafe).
    """
    config = config or SplitConfig()
    spec = connector_for(filename, media_type=media_type)
    parse = spec.load()
    try:
        doc = parse(bytes(data), filename, config)
    except ComplianceError:
        raise
    except (MemoryError, RecursionError) as e:
        raise DocumentError(filename, f"the document is too complex to parse ({type(e).__name__})") from e
    except Exception as e:  # a third-party parser failing on untrusted input
        raise DocumentError(filename, f"the {spec.name} parser failed: {type(e).__name__}: {e}") from e
    check_paragraph_count(len(doc.paragraphs), filename, config)
    return doc


def parse_path(path: Path | str, *, config: SplitConfig | None = None) -> ParsedDocument:
    """Read and parse a document file in this process; ``source`` is the path as given.

    Only regular files are read: a FIFO, socket or device named like a document is refused without opening it
    (opening a FIFO would block). For untrusted files prefer :func:`compliance.connectors.sandbox.parse_file`,
    which adds the per-file time and memory budgets.

    Raises:
        DocumentError: The file cannot be read, or any error of :func:`parse_bytes`.
        UnsafeDocumentError: Not a regular file.
    """
    path = Path(path)
    config = config or SplitConfig()
    connector_for(path.name)  # fail on the type before reading the bytes
    try:
        data = _read_regular_file(path, config.resolved_max_bytes())
    except OSError as e:
        raise DocumentError(str(path), f"cannot read the file: {e.strerror or e}") from e
    return parse_bytes(data, str(path), config=config)


def _read_regular_file(path: Path, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (opened without blocking, checked after opening)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeDocumentError(
                str(path), f"not a regular file ({_file_kind(info.st_mode)}); only regular files are read"
            )
        if info.st_size > limit:
            raise DocumentTooLargeError(
                str(path), f"the file has {info.st_size:,} bytes, more than the limit of {limit:,}"
            )
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, 1024 * 1024):
            total += len(chunk)
            if total > limit:  # the file grew while being read
                raise DocumentTooLargeError(str(path), f"the file has more than {limit:,} bytes")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _file_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "a special file"
