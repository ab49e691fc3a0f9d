"""How documents are split into paragraphs and which inputs are refused: :class:`SplitConfig`.

Token counting is deliberately simple and dependency-free: :func:`count_tokens` counts the matches of
``\\w+(?:['’-]\\w+)*|[^\\w\\s]`` — a word (with inner apostrophes/hyphens) or a single punctuation mark. For English
policy text a sub-word tokenizer (BERT WordPiece) produces roughly 1.2–1.4 times as many pieces, so the default
budget of 200 tokens keeps a paragraph inside a 256/512-piece encoder window.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import Any

from compliance.errors import ConfigurationError

TOKEN_RE = re.compile(r"\w+(?:['’-]\w+)*|[^\w\s]")


def count_tokens(text: str) -> int:
    """Count tokens with the package's simple regex tokenizer (words and punctuation marks).

    Args:
        text: Any text.

    Returns:
        The number of tokens (``0`` for empty or whitespace-only text).
    """
    return sum(1 for _ in TOKEN_RE.finditer(text))


@dataclass(frozen=True, slots=True)
class SplitConfig:
    """Pipeline choices for turning a document into paragraphs, stored with every parsed document.

    Attributes:
        max_tokens: Largest paragraph, in :func:`count_tokens` tokens. Longer paragraphs are split on sentence
            boundaries (spaCy sentencizer); a single over-long sentence is split between words.
        min_chars: Paragraphs shorter than this are merged with a neighbour under the same heading (when the
            merged text stays within ``max_tokens``). Lists and table rows are never merged.
        include_headings: Also emit headings as paragraphs of kind ``"heading"``. By default headings only
            populate ``heading_path`` so that classifiers see body text.
        max_pages: Largest accepted PDF, in pages.
        max_bytes: Largest accepted input in bytes; ``None`` uses the ``max_document_bytes`` setting.
        max_unpacked_bytes: Largest total uncompressed size of the members of a .docx (zip-bomb guard).
        max_compression_ratio: Largest uncompressed/compressed ratio of one .docx member bigger than 1 MiB.
        max_zip_members: Largest number of members in a .docx.
        max_paragraphs: Largest number of blocks (headings, paragraphs, list items, table rows) a document may
            have; checked before splitting, and again on the paragraphs.
        assign_roles: give every paragraph its role while the document is parsed (structure features of this one
            document, :func:`compliance.connectors.roles.assign_roles`). The ingest and the audit turn it off for
            the documents they read, because they decide the roles again over a window of documents (repetition
            across them counts) — deciding them twice cost more than the parse itself (docs/performance.md).

    ``max_unpacked_bytes`` also bounds the decompressed size of a PDF's streams (FlateDecode), counted while
    they are inflated.
    """

    max_tokens: int = 200
    min_chars: int = 40
    include_headings: bool = False
    max_pages: int = 1000
    max_bytes: int | None = None
    max_unpacked_bytes: int = 100 * 1024 * 1024
    max_compression_ratio: float = 100.0
    max_zip_members: int = 5000
    max_paragraphs: int = 50_000
    assign_roles: bool = True

    def __post_init__(self) -> None:
        if self.max_tokens < 8:
            raise ConfigurationError(f"SplitConfig.max_tokens must be at least 8, got {self.max_tokens}")
        if self.min_chars < 0:
            raise ConfigurationError(f"SplitConfig.min_chars must be >= 0, got {self.min_chars}")
        for name in ("max_pages", "max_unpacked_bytes", "max_zip_members", "max_paragraphs"):
            if getattr(self, name) <= 0:
                raise ConfigurationError(f"SplitConfig.{name} must be positive, got {getattr(self, name)}")
        if self.max_bytes is not None and self.max_bytes <= 0:
            raise ConfigurationError(f"SplitConfig.max_bytes must be positive, got {self.max_bytes}")
        if self.max_compression_ratio <= 1:
            raise ConfigurationError("SplitConfig.max_compression_ratio must be > 1")

    def resolved_max_bytes(self) -> int:
        """The byte limit: ``max_bytes`` or, when unset, the ``max_document_bytes`` setting."""
        if self.max_bytes is not None:
            return self.max_bytes
        from compliance.settings import get_settings

        return get_settings().max_document_bytes

    def to_dict(self) -> dict[str, Any]:
        """The config as a JSON-ready dict (stored with parsed documents and runs)."""
        return asdict(self)

    def to_json(self) -> str:
        """The config as compact, key-sorted JSON."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SplitConfig:
        """Rebuild a config from :meth:`to_dict` output (unknown keys are an error)."""
        known = set(cls.__dataclass_fields__)
        unknown = set(data) - known
        if unknown:
            raise ConfigurationError(f"unknown SplitConfig keys: {sorted(unknown)}")
        return cls(**data)
