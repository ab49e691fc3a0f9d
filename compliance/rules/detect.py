"""Read a law file in any supported format: detect Formex / EU JSON / CLML from the content and dispatch."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from importlib import import_module
from pathlib import Path

from compliance.errors import CorpusFormatError
from compliance.rules.corpus import Law

__all__ = ["PARSERS", "detect_format", "load_law_file", "parse_law"]

_CLML_NS = b"http://www.legislation.gov.uk/namespaces/legislation"
_ROOT_TAG = re.compile(rb"<([A-Za-z_][\w.:-]*)[\s/>]")


def _root_tag(data: bytes) -> str | None:
    """The first element name in ``data`` (after the prolog), without parsing the whole document."""
    head = data[:8192]
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16: decode the start for sniffing only
        head = head.decode("utf-16", errors="ignore").encode("utf-8")
    pos = 0
    while True:
        m = _ROOT_TAG.search(head, pos)
        if m is None:
            return None
        before = head[max(0, m.start() - 2) : m.start() + 1]
        if before.endswith((b"<?", b"<!")):  # declarations, comments
            pos = m.end()
            continue
        name = m.group(1).decode("ascii", errors="replace")
        return name.split(":", 1)[-1]


def detect_format(data: bytes, *, source: str = "<data>") -> str:
    """``"formex4"``, ``"eu-json"`` or ``"clml"`` for ``data``.

    Raises:
        CorpusFormatError: empty, or none of the supported formats.
    """
    stripped = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not stripped:
        raise CorpusFormatError(source, "the file is empty")
    if stripped[:1] in (b"{", b"["):
        return "eu-json"
    if stripped[:1] == b"<" or data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        root = _root_tag(stripped)
        if root in ("ACT", "CONS.ACT", "DOC", "CORR", "CONS.DOC"):
            return "formex4"
        if root == "Legislation" or _CLML_NS in stripped[:4096]:
            return "clml"
        raise CorpusFormatError(
            source,
            f"XML with root element {root or '?'} is not a supported law format "
            "(Formex ACT/CONS.ACT or legislation.gov.uk CLML Legislation)",
        )
    raise CorpusFormatError(source, "not a law file: neither XML (Formex, CLML) nor JSON")


_PARSER_PATHS = {
    "formex4": ("compliance.rules.formex", "parse_formex"),
    "eu-json": ("compliance.rules.eu_json", "parse_eu_json"),
    "clml": ("compliance.rules.clml", "parse_clml"),
}
PARSERS = tuple(_PARSER_PATHS)


def _parser(fmt: str) -> Callable[..., Law] | None:
    entry = _PARSER_PATHS.get(fmt)
    if entry is None:
        return None
    parser: Callable[..., Law] = getattr(import_module(entry[0]), entry[1])
    return parser


def parse_law(data: bytes, *, source: str, fmt: str | None = None) -> Law:
    """Parse ``data`` with the parser for ``fmt`` (detected from the content when ``None``)."""
    fmt = fmt or detect_format(data, source=source)
    parser = _parser(fmt)
    if parser is None:
        raise CorpusFormatError(source, f"unknown law format {fmt!r}; known: {', '.join(PARSERS)}")
    return parser(data, source=source)


def load_law_file(path: Path | str, *, data: bytes | None = None, apply_pack: bool = True) -> Law:
    """Read a law file (Formex 4, EU JSON or CLML, detected from the content) into a :class:`Law`.

    Args:
        path: The file (also used as the law's ``source``).
        data: The bytes, if already read (then ``path`` is only a name).
        apply_pack: When a shipped law pack has the law's CELEX/identifier, take its short name, title, type
            and dates (the file's own values are kept where the pack has none).

    Raises:
        CorpusFormatError: unreadable, unsupported or malformed.
    """
    source = str(path)
    if data is None:
        try:
            data = Path(path).read_bytes()
        except OSError as e:
            raise CorpusFormatError(source, f"cannot read the file: {e.strerror or e}") from e
    law = parse_law(data, source=source)
    if apply_pack:
        from compliance.rules.packs import apply_pack_metadata, find_pack_for

        pack = find_pack_for(law.identifier)
        if pack is not None:
            law = apply_pack_metadata(law, pack)
    return law


def with_source(law: Law, source: str) -> Law:
    """``law`` with another ``source`` (a URL instead of a temp path)."""
    return replace(law, source=source)
