"""The one place where law files are parsed as XML, hardened against hostile input.

Every importer (Formex, CLML) calls :func:`parse_xml`. It uses lxml with entity resolution, network access and
DTD loading switched off and ``huge_tree`` left off (libxml2's limits on depth and text size stay on), and it
rejects any document whose DOCTYPE declares entities (XXE, "billion laughs"), whether or not they are used. The
decision is taken from what the parser reports (its internal DTD), not from a byte scan, so encodings and long
comments before the DOCTYPE cannot hide it. :func:`dtd_problem` gives the same view to the document connectors
(DOCX parts), which refuse any DTD.
Everything that goes wrong becomes a :class:`~compliance.errors.CorpusFormatError` naming the input.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from compliance.errors import CorpusFormatError

if TYPE_CHECKING:
    from lxml import etree

__all__ = ["declared_entities", "dtd_problem", "local_name", "parse_xml"]

_SAFE_PARSER_OPTIONS = {
    "resolve_entities": False,
    "no_network": True,
    "load_dtd": False,
    "dtd_validation": False,
    "huge_tree": False,
}


def _declares_entities(root: etree._Element) -> bool:
    dtd = root.getroottree().docinfo.internalDTD
    return dtd is not None and any(True for _ in dtd.iterentities())  # general and parameter entities


_ENTITY_REFUSAL = "the XML declares entities in a DOCTYPE (possible XXE or entity-expansion attack); refused"


def _recovered_docinfo(data: bytes) -> etree.DocInfo | None:
    from lxml import etree

    if not data:
        return None
    parser = etree.XMLParser(recover=True, **_SAFE_PARSER_OPTIONS)
    try:
        root = etree.fromstring(data, parser=parser)
    except (etree.LxmlError, ValueError):
        return None  # not XML at all: the reading library fails on it by itself
    return None if root is None else root.getroottree().docinfo


def dtd_problem(data: bytes) -> str | None:
    """What libxml2 itself sees in an XML document's prolog that untrusted documents must not have.

    The document is parsed (in recovery mode, entities unresolved, no network, no DTD loading); when the parser
    reports a DOCTYPE, internal subset or external DTD, the answer says so. The decision is the parser's, not a
    byte scan: a DOCTYPE in UTF-16 (with or without a byte-order mark), after a long comment or after many
    processing instructions is seen exactly as the reading library will see it.

    Returns:
        ``"declares a DTD (DOCTYPE name)"`` or ``None`` when there is none (or nothing could be parsed).
    """
    info = _recovered_docinfo(data)
    if info is None:
        return None
    if info.internalDTD is not None or info.externalDTD is not None or info.doctype or info.system_url:
        return f"declares a DTD (DOCTYPE {info.root_name or '?'})"
    return None


def declared_entities(data: bytes) -> list[str]:
    """The names of the entities (general and parameter) that a document's DOCTYPE declares, as libxml2 parses
    it in recovery mode; ``[]`` for none, or for bytes that do not parse as XML at all.

    HTML never needs an entity declaration; the HTML connector refuses a page that has one (``xxe.xhtml``,
    ``billion-laughs.html``), where the HTML parser would otherwise keep the DOCTYPE's tail as text.
    """
    info = _recovered_docinfo(data)
    dtd = None if info is None else info.internalDTD
    return [] if dtd is None else [str(e.name) for e in dtd.iterentities()]


def parse_xml(data: bytes, *, source: str) -> etree._Element:
    """Parse ``data`` as XML safely and return the root element.

    Args:
        data: The raw bytes of the file (the XML declaration decides the encoding).
        source: A name for the input (path or URL), used in error messages.

    Returns:
        The root element (comments and processing instructions are kept; callers skip them).

    Raises:
        CorpusFormatError: empty input, not well-formed (including truncated files), a DOCTYPE that declares
            entities, or any other parser failure.
    """
    from lxml import etree

    if not data or not data.strip():
        raise CorpusFormatError(source, "the file is empty")
    parser = etree.XMLParser(remove_blank_text=False, **_SAFE_PARSER_OPTIONS)
    try:
        root = etree.fromstring(data, parser=parser)
    except etree.XMLSyntaxError as e:
        if "entit" in str(e).lower():  # libxml2 stopped on an entity (amplification limit, undefined …)
            raise CorpusFormatError(source, f"{_ENTITY_REFUSAL}: {e}") from e
        raise CorpusFormatError(source, f"not well-formed XML (truncated or corrupt?): {e}") from e
    except (ValueError, etree.LxmlError) as e:
        raise CorpusFormatError(source, f"cannot parse XML: {e}") from e
    if root is None:  # pragma: no cover - lxml raises instead for empty documents
        raise CorpusFormatError(source, "the XML has no root element")
    if _declares_entities(root):  # the parser's view of the DOCTYPE, whatever the encoding or the comments
        raise CorpusFormatError(source, _ENTITY_REFUSAL)
    # With an external DTD named but not loaded, libxml2 keeps unknown entity references as nodes: refuse them
    # rather than silently dropping text.
    unresolved = next(root.iter(etree.Entity), None)
    if unresolved is not None:
        raise CorpusFormatError(source, f"the XML uses an undefined entity {unresolved.text}; refused")
    return root


def local_name(element: etree._Element) -> str:
    """The element's tag without namespace (``""`` for comments and processing instructions)."""
    tag = element.tag
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1]
