"""Small helpers shared by the importers: whitespace normalisation, provision lists, dates, checksums."""

from __future__ import annotations

import hashlib
import re
from datetime import date

from compliance.errors import CorpusFormatError
from compliance.rules.corpus import Provision, ProvisionKind

__all__ = ["ProvisionList", "normalise_space", "parse_iso_date", "sha256_hex"]

_SPACE = re.compile(r"\s+")
MAX_KEY_LENGTH = 255  # what stores may assume (the SQL store uses VARCHAR(255) / VARCHAR(64))
MAX_NUMBER_LENGTH = 64


def normalise_space(text: str) -> str:
    """Collapse every run of whitespace (including newlines) to one space and strip the ends."""
    return _SPACE.sub(" ", text).strip()


def normalise_lines(text: str) -> str:
    """Collapse whitespace inside each line, drop empty lines, keep line breaks between blocks."""
    lines = (normalise_space(line) for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


def sha256_hex(data: bytes) -> str:
    """The sha256 of ``data`` as lower-case hex."""
    return hashlib.sha256(data).hexdigest()


def parse_iso_date(value: str | None) -> date | None:
    """``"20160427"`` or ``"2016-04-27"`` → :class:`date`; anything else (``"99999999"``, ``None``) → ``None``."""
    if not value:
        return None
    digits = value.replace("-", "").strip()
    if len(digits) != 8 or not digits.isdigit():
        return None
    try:
        return date(int(digits[:4]), int(digits[4:6]), int(digits[6:]))
    except ValueError:
        return None


class ProvisionList:
    """Provisions in document order; assigns ordinals and refuses duplicate keys."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._items: list[Provision] = []
        self._keys: set[str] = set()

    def add(
        self,
        kind: ProvisionKind,
        key: str,
        number: str | None,
        text: str,
        *,
        title: str | None = None,
        parent_key: str | None = None,
    ) -> Provision:
        """Append a provision; ``key`` must be new, ``parent_key`` already added (or ``None``)."""
        if key in self._keys:
            raise CorpusFormatError(self.source, f"duplicate provision {key!r} (numbering is not unique)")
        if len(key) > MAX_KEY_LENGTH or (number is not None and len(number) > MAX_NUMBER_LENGTH):
            raise CorpusFormatError(
                self.source,
                f"provision key or number too long ({key[:80]!r}…): the structure was not recognised",
            )
        if parent_key is not None and parent_key not in self._keys:
            raise CorpusFormatError(self.source, f"provision {key!r} refers to unknown parent {parent_key!r}")
        prov = Provision(
            kind=kind,
            key=key,
            number=number,
            text=text,
            title=title or None,
            parent_key=parent_key,
            ordinal=len(self._items),
        )
        self._items.append(prov)
        self._keys.add(key)
        return prov

    def unique_key(self, key: str) -> str:
        """``key`` if unused, else ``key~2``, ``key~3`` … (for documents that repeat a number)."""
        if key not in self._keys:
            return key
        n = 2
        while f"{key}~{n}" in self._keys:
            n += 1
        return f"{key}~{n}"

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __len__(self) -> int:
        return len(self._items)

    def to_tuple(self) -> tuple[Provision, ...]:
        return tuple(self._items)
