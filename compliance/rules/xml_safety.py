"""The one place where law files are parsed as XML, hardened against hostile input.

Every importer (Formex, CLML) calls :func:`parse_xml`. It uses lxml with entity resolution, network access and
DTD loading switched off and ``huge_tree`` left off (libxml2's limits on depth and text size stay on), and it
rejects any document whose DOCTYPE declares entities (XXE, "billion laughs"), whether or not they are used.
Everything that goes wrong becomes a :class:`~compliance.errors.CorpusFormatError` naming the input.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from compliance.errors import CorpusFormatError

if TYPE_CHECKING:
    from lxml import etree

__all__ = ["local_name", "parse_xml"]

# A DOCTYPE (or an entity declaration) must come before the root element; looking at the start is enough.
_PROLOG_BYTES = 64 * 1024
_ENTITY_DECL = re.compile(rb"<!ENTITY", re.IGNORECASE)
_ENTITY_DECL_UTF16 = ("<!ENTITY".encode("utf-16-le"), "<!ENTITY".encode("utf-16-be"))


def _declares_entities(data: bytes) -> bool:
    head = data[:_PROLOG_BYTES]
    return bool(_ENTITY_DECL.search(head)) or any(marker in head for marker in _ENTITY_DECL_UTF16)


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
    if _declares_entities(data):
        raise CorpusFormatError(
            source,
            "the XML declares entities in a DOCTYPE (possible XXE or entity-expansion attack); refused",
        )
    parser = etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_blank_text=False,
    )
    try:
        root = etree.fromstring(data, parser=parser)
    except etree.XMLSyntaxError as e:
        raise CorpusFormatError(source, f"not well-formed XML (truncated or corrupt?): {e}") from e
    except (ValueError, etree.LxmlError) as e:
        raise CorpusFormatError(source, f"cannot parse XML: {e}") from e
    if root is None:  # pragma: no cover - lxml raises instead for empty documents
        raise CorpusFormatError(source, "the XML has no root element")
    docinfo = root.getroottree().docinfo
    dtd = docinfo.internalDTD
    if dtd is not None and any(True for _ in dtd.iterentities()):  # belt and braces after the byte scan
        raise CorpusFormatError(source, "the XML declares entities in its DOCTYPE; refused")
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
