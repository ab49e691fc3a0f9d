"""One progress helper. Library code reports progress through it; the CLI switches the bar on.

Library users get silence by default; ``enable_progress()`` turns tqdm bars on (written to stderr, so that
stdout stays clean for JSON output).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")

_enabled = False


def enable_progress(enabled: bool = True) -> None:
    """Show progress bars (on stderr) from now on."""
    global _enabled
    _enabled = enabled


def progress_enabled() -> bool:
    return _enabled


def track(
    iterable: Iterable[T], *, total: int | None = None, desc: str = "", unit: str = "it"
) -> Iterator[T]:
    """Iterate, with a progress bar when progress is enabled."""
    if not _enabled:
        yield from iterable
        return
    from tqdm.auto import tqdm

    yield from tqdm(iterable, total=total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True)


class _NullBar:
    def update(self, n: int = 1) -> None:
        pass

    def set_postfix(self, *args: Any, **kwargs: Any) -> None:
        pass

    def set_description(self, desc: str) -> None:
        pass


@contextmanager
def bar(total: int | None, *, desc: str = "", unit: str = "it") -> Iterator[Any]:
    """A manual progress bar (``.update(n)``, ``.set_postfix(...)``), or a silent stand-in."""
    if not _enabled:
        yield _NullBar()
        return
    from tqdm.auto import tqdm

    with tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True) as b:
        yield b
