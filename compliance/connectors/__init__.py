"""Connectors: document bytes in, paragraphs with provenance out.

``parse_bytes``/``parse_path`` read one document (.docx, .pdf, .txt, .md, .html); ``parse_many`` reads files and
folders and keeps going past broken files. Every paragraph carries its ordinal, heading path, page (PDF), kind
and character offsets into :attr:`ParsedDocument.text`. Importing this package is cheap: the format libraries are
imported only when a file of their type is parsed.
"""

from __future__ import annotations

from compliance.connectors.batch import ParseOutcome, iter_paths, parse_many, source_name
from compliance.connectors.config import SplitConfig, count_tokens
from compliance.connectors.document import Paragraph, ParagraphKind, ParsedDocument
from compliance.connectors.registry import (
    CONNECTORS,
    SUPPORTED_EXTENSIONS,
    connector_for,
    parse_bytes,
    parse_path,
)

__all__ = [
    "CONNECTORS",
    "SUPPORTED_EXTENSIONS",
    "Paragraph",
    "ParagraphKind",
    "ParseOutcome",
    "ParsedDocument",
    "SplitConfig",
    "connector_for",
    "count_tokens",
    "iter_paths",
    "parse_bytes",
    "parse_many",
    "parse_path",
    "source_name",
]
