"""Many documents at once: expand folders, parse each file, keep going past broken ones."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from compliance.connectors.config import SplitConfig
from compliance.connectors.document import ParsedDocument
from compliance.connectors.registry import SUPPORTED_EXTENSIONS, parse_path
from compliance.errors import DocumentError

logger = logging.getLogger(__name__)

SkipCallback = Callable[[Path, str], None]


def _hidden(path: Path) -> bool:
    return path.name.startswith((".", "~$"))


def iter_paths(
    paths: Iterable[Path | str], *, recursive: bool = True, on_skip: SkipCallback | None = None
) -> Iterator[Path]:
    """Expand files and folders into the document files to parse, in a stable order.

    Folders are walked (recursively by default) in sorted order; inside them, hidden files and folders (name
    starting with ``.``), Office lock files (``~$…``) and files with unsupported extensions are skipped, each
    with a reason passed to ``on_skip`` and logged at debug level. Files named explicitly are always yielded, so
    that parsing reports an unsupported or missing file as an error instead of dropping it silently. A path is
    yielded at most once.

    Args:
        paths: Files and folders.
        recursive: Descend into sub-folders.
        on_skip: Called with ``(path, reason)`` for every skipped file or folder.

    Yields:
        File paths.
    """
    seen: set[Path] = set()

    def skip(path: Path, reason: str) -> None:
        logger.debug("skipping %s: %s", path, reason)
        if on_skip is not None:
            on_skip(path, reason)

    def walk(folder: Path) -> Iterator[Path]:
        try:
            entries = sorted(folder.iterdir(), key=lambda p: p.name)
        except OSError as e:
            skip(folder, f"cannot list the folder: {e.strerror or e}")
            return
        for entry in entries:
            if _hidden(entry):
                skip(entry, "hidden")
            elif entry.is_dir():
                if recursive:
                    yield from walk(entry)
                else:
                    skip(entry, "sub-folder (not recursive)")
            elif entry.suffix.lower() not in SUPPORTED_EXTENSIONS:
                skip(entry, f"unsupported extension {entry.suffix or '(none)'!r}")
            else:
                yield entry

    for raw in paths:
        path = Path(raw)
        found = walk(path) if path.is_dir() else iter([path])
        for item in found:
            key = item.resolve()
            if key not in seen:
                seen.add(key)
                yield item


def source_name(path: Path, relative_to: Path | None = None) -> str:
    """The name a document is stored under: its absolute POSIX path, or the path relative to ``relative_to``
    when it lies below that folder (so the same file is recognised from any working directory)."""
    resolved = path.resolve()
    if relative_to is not None:
        try:
            return resolved.relative_to(relative_to.resolve()).as_posix()
        except ValueError:
            pass
    return resolved.as_posix()


@dataclass(frozen=True, slots=True)
class ParseOutcome:
    """The result for one file of a batch: a document, or the error that stopped it."""

    path: Path
    document: ParsedDocument | None = None
    error: DocumentError | None = None

    @property
    def ok(self) -> bool:
        """True when the file was parsed."""
        return self.document is not None


def parse_many(
    paths: Iterable[Path | str],
    config: SplitConfig | None = None,
    *,
    recursive: bool = True,
    on_skip: SkipCallback | None = None,
) -> Iterator[ParseOutcome]:
    """Parse every document under ``paths`` (see :func:`iter_paths`), one outcome per file.

    A file that cannot be parsed yields an outcome carrying its :class:`DocumentError` and the batch goes on.

    Args:
        paths: Files and folders.
        config: Splitting choices and limits.
        recursive: Descend into sub-folders.
        on_skip: Called for files skipped while expanding folders.

    Yields:
        One :class:`ParseOutcome` per file, in :func:`iter_paths` order.
    """
    from compliance.progress import track

    config = config or SplitConfig()
    for path in track(iter_paths(paths, recursive=recursive, on_skip=on_skip), desc="parsing", unit="file"):
        try:
            yield ParseOutcome(path, document=parse_path(path, config=config))
        except DocumentError as e:
            logger.info("could not parse %s: [%s] %s", path, e.code, e)
            yield ParseOutcome(path, error=e)
