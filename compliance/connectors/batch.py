"""Many documents at once: expand folders, parse each file, keep going past broken ones."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePath

from compliance.connectors.config import SplitConfig
from compliance.connectors.document import ParsedDocument
from compliance.connectors.registry import CONNECTORS, SUPPORTED_EXTENSIONS
from compliance.connectors.sandbox import parse_file
from compliance.connectors.sheet_reader import own_export
from compliance.errors import DocumentError

#: spreadsheet extensions (those the sheet reader parses), checked for this tool's own exports in a folder walk
_SHEETS = frozenset(ext for ext, spec in CONNECTORS.items() if spec.name in ("xlsx", "csv"))

logger = logging.getLogger(__name__)

SkipCallback = Callable[[Path, str], None]
ErrorCallback = Callable[[Path, DocumentError], None]


def _hidden(name: str) -> bool:
    return name.startswith((".", "~$"))


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def iter_paths(
    paths: Iterable[Path | str],
    *,
    recursive: bool = True,
    on_skip: SkipCallback | None = None,
    on_error: ErrorCallback | None = None,
) -> Iterator[Path]:
    """Expand files and folders into the document files to parse, in a stable order.

    Folders are walked (recursively by default) in sorted order; inside them, hidden files and folders (name
    starting with ``.``), Office lock files (``~$…``) and files with unsupported extensions are skipped, each
    with a reason passed to ``on_skip`` and logged at debug level. Files named explicitly are always yielded, so
    that parsing reports an unsupported or missing file as an error instead of dropping it silently. A path is
    yielded at most once.

    The walk is safe on hostile trees: symbolic links are never followed out of the folder given (skipped, with
    the reason), a link to a folder inside it is skipped (the folder is walked once, by its real path), a folder
    is entered at most once (loops through links or bind mounts end there), and FIFOs, sockets and devices are
    skipped with a reason instead of being opened (reading a FIFO blocks). What cannot be read is an error, not
    a skip: an unreadable sub-folder, a link that loops or points nowhere while named like a document; each goes
    to ``on_error`` (logged as a warning when there is none).

    Args:
        paths: Files and folders.
        recursive: Descend into sub-folders.
        on_skip: Called with ``(path, reason)`` for every skipped file or folder.
        on_error: Called with ``(path, error)`` for every folder or link that could not be read.

    Yields:
        File paths.
    """
    seen: set[Path] = set()
    entered: set[tuple[int, int]] = set()

    def skip(path: Path, reason: str) -> None:
        logger.debug("skipping %s: %s", path, reason)
        if on_skip is not None:
            on_skip(path, reason)

    def fail(path: Path, problem: str) -> None:
        error = DocumentError(str(path), problem)
        if on_error is not None:
            on_error(path, error)
        else:
            logger.warning("%s", error)

    def walk(folder: Path, root: Path) -> Iterator[Path]:
        try:
            info = folder.stat()
            key = (info.st_dev, info.st_ino)
            if key in entered:
                skip(folder, "folder already walked (a loop through links or mounts)")
                return
            entered.add(key)
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as e:
            fail(folder, f"cannot list the folder: {e.strerror or e}")
            return
        for entry in entries:
            path = folder / entry.name
            if _hidden(entry.name):
                skip(path, "hidden")
                continue
            supported = PurePath(entry.name).suffix.lower() in SUPPORTED_EXTENSIONS
            try:
                if entry.is_symlink():
                    try:
                        target = path.resolve(strict=True)
                    except (OSError, RuntimeError) as e:  # a loop, or a link to nothing
                        why = (
                            "loops"
                            if isinstance(e, RuntimeError) or "loop" in str(e).lower()
                            else "is broken"
                        )
                        if supported:
                            fail(path, f"the symbolic link {why}; it cannot be read")
                        else:
                            skip(path, f"symbolic link that {why}")
                        continue
                    if not _inside(target, root):
                        skip(path, "symbolic link to outside the folder (not followed)")
                        continue
                    if target.is_dir():
                        skip(path, "symbolic link to a folder inside the tree (walked by its real path)")
                        continue
                    mode = target.stat().st_mode
                elif entry.is_dir(follow_symlinks=False):
                    if recursive:
                        yield from walk(path, root)
                    else:
                        skip(path, "sub-folder (not recursive)")
                    continue
                else:
                    mode = entry.stat(follow_symlinks=False).st_mode
            except OSError as e:
                fail(path, f"cannot inspect the file: {e.strerror or e}")
                continue
            if not supported:
                skip(path, f"unsupported extension {PurePath(entry.name).suffix or '(none)'!r}")
            elif not stat.S_ISREG(mode):
                skip(path, f"not a regular file ({_kind(mode)})")
            elif path.suffix.lower() in _SHEETS and own_export(path):
                skip(path, "an export of this tool (review spreadsheet or coverage workbook), not a document")
            else:
                yield path

    for raw in paths:
        path = Path(raw)
        found = walk(path, path.resolve()) if path.is_dir() else iter([path])
        for item in found:
            try:
                key = item.resolve()
            except (OSError, RuntimeError):
                key = item.absolute()
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
    Each file is read under the per-file time and memory budgets (:func:`compliance.connectors.sandbox.parse_file`).

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
    failed: list[ParseOutcome] = []
    walked = iter_paths(
        paths,
        recursive=recursive,
        on_skip=on_skip,
        on_error=lambda p, e: failed.append(ParseOutcome(p, error=e)),
    )
    for path in track(walked, desc="parsing", unit="file"):
        while failed:
            yield failed.pop(0)
        try:
            yield ParseOutcome(path, document=parse_file(path, config=config))
        except DocumentError as e:
            logger.info("could not parse %s: [%s] %s", path, e.code, e)
            yield ParseOutcome(path, error=e)
    yield from failed
