"""The two indexes the product keeps (seed 001's two use cases), built from plain ``(id, text, metadata)``
rows so that nothing here depends on the database:

* the **law index** over provisions: a control (or a whole policy) → the laws and provisions it must comply
  with;
* the **control index** over stored control paragraphs: a new law or provision → the affected controls.

Both are :class:`~compliance.retrieval.hybrid.HybridRetriever` directories under
``<settings.index_dir>/<name>``, incrementally updatable with ``add``/``remove`` and reloaded with
:func:`open_index`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import Any, Literal

from compliance.retrieval.config import BM25Config, DenseConfig, FusionConfig, RetrievalConfig
from compliance.retrieval.hybrid import HybridRetriever
from compliance.retrieval.types import Document

__all__ = [
    "CONTROL_INDEX",
    "LAW_INDEX",
    "build_control_index",
    "build_law_index",
    "documents_from_rows",
    "index_path",
    "open_index",
    "recommended_config",
]

LAW_INDEX = "laws"
CONTROL_INDEX = "controls"


def recommended_config(
    dense: bool = True, dense_model: str | None = None, target: Literal["laws", "controls"] = "laws"
) -> RetrievalConfig:
    """The configuration ``docs/retrieval.md`` supports.

    ``target="laws"`` (controls → provisions of several acts): BM25 document-wise with k1/b tuned on the
    gdprhub-eu dev split (k1=7.87, b=0.53) fused with the dense encoder at the dev-tuned α=0.55.
    ``target="controls"`` (a law's provisions → stored paragraphs): no development data exists for this
    direction, so textbook BM25 (k1=1.2, b=0.75) and α=0.5, which were best on the eprivacy-controls check.
    ``dense=False`` gives the BM25 stage alone (no torch needed).
    """
    bm25 = BM25Config(k1=7.87, b=0.53) if target == "laws" else BM25Config(k1=1.2, b=0.75)
    alpha = 0.55 if target == "laws" else 0.5
    if not dense:
        return RetrievalConfig(bm25=bm25)
    return RetrievalConfig(
        bm25=bm25, dense=DenseConfig(model=dense_model), fusion=FusionConfig(method="linear", alpha=alpha)
    )


def index_path(name: str) -> Path:
    """``<index dir>/<name>`` (``COMPLIANCE_INDEX_DIR`` or ``<home>/indexes``)."""
    from compliance.settings import get_settings

    return get_settings().resolved_index_dir / name


def documents_from_rows(rows: Iterable[tuple[Any, str, Mapping[str, Any] | None]]) -> list[Document]:
    """``(id, text, metadata)`` rows → documents; a ``date`` (``datetime.date`` or ISO string) in the metadata
    becomes the document's date for the date filter. Ids are turned into strings."""
    docs = []
    for doc_id, text, meta in rows:
        meta = dict(meta or {})
        when = meta.get("date")
        if isinstance(when, str):
            when = date.fromisoformat(when[:10])
            meta["date"] = when.isoformat()
        elif isinstance(when, date):
            meta["date"] = when.isoformat()
        docs.append(Document(str(doc_id), text, meta, when if isinstance(when, date) else None))
    return docs


def build_law_index(
    laws: Sequence[Any],
    config: RetrievalConfig | None = None,
    level: str = "article",
    include_recitals: bool = False,
    path: Path | None = None,
    encoder: Any = None,
) -> HybridRetriever:
    """Index the provisions of ``laws`` (:class:`~compliance.rules.corpus.Law`) and save it (default
    ``<index dir>/laws``)."""
    from compliance.retrieval.adapters import law_documents

    docs = [d for law in laws for d in law_documents(law, level, include_recitals)]  # type: ignore[arg-type]
    retriever = HybridRetriever.build(docs, config or recommended_config(), encoder=encoder)
    retriever.save(path or index_path(LAW_INDEX))
    return retriever


def build_control_index(
    rows: Iterable[tuple[Any, str, Mapping[str, Any] | None]],
    config: RetrievalConfig | None = None,
    path: Path | None = None,
    encoder: Any = None,
) -> HybridRetriever:
    """Index stored control paragraphs given as ``(id, text, metadata)`` rows and save it (default
    ``<index dir>/controls``)."""
    retriever = HybridRetriever.build(
        documents_from_rows(rows), config or recommended_config(), encoder=encoder
    )
    retriever.save(path or index_path(CONTROL_INDEX))
    return retriever


def open_index(name_or_path: str | Path, encoder: Any = None) -> HybridRetriever:
    """Load an index by name (under the index dir) or by path."""
    path = Path(name_or_path)
    if not path.is_absolute() and not path.exists():
        path = index_path(str(name_or_path))
    return HybridRetriever.load(path, encoder=encoder)
