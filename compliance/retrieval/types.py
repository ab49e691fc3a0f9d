"""The data that flows through retrieval: documents in, hits out, and the retriever protocol."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Protocol, runtime_checkable

__all__ = ["Document", "Hit", "Retriever"]


@dataclass(frozen=True, slots=True)
class Document:
    """One retrievable unit: a law provision, a whole law, or a stored control paragraph.

    Attributes:
        id: unique id inside one index (e.g. ``"eprivacy/art:5"`` or a paragraph's database id as text).
        text: the text that is indexed.
        metadata: free JSON-serialisable fields kept with the index (law, key, kind, title, document id …).
        date: the date used by the date filter (a law's date in force or adoption), if known.
    """

    id: str
    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    date: date | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "text": self.text,
            "metadata": dict(self.metadata),
            "date": self.date.isoformat() if self.date else None,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Document:
        raw = data.get("date")
        return cls(
            id=str(data["id"]),
            text=str(data["text"]),
            metadata=dict(data.get("metadata") or {}),
            date=date.fromisoformat(raw) if raw else None,
        )


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked result.

    Attributes:
        id: the document id.
        score: the final score of the last stage that ran (higher is better; comparable within one query).
        evidence: per-stage scores and ranks (``bm25``, ``dense``, ``fused``, ``rerank``), the best-matching
            passage (``passage``), and, when requested, shared salient terms (``terms``).
    """

    id: str
    score: float
    evidence: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class Retriever(Protocol):
    """Anything that ranks documents for a text query."""

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """The ``k`` best documents for ``query``, best first."""
        ...

    def search_many(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        """:meth:`search` for several queries (batched where the implementation can)."""
        ...
