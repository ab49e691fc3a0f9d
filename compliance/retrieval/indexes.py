"""The product's two retrieval indexes: their names, their tuned configuration and how they are kept current.

* the **provision index** (``provisions``) over the articles of every stored law: a control (or a whole policy)
  → the laws and provisions it must comply with (:meth:`compliance.search.LawSearch.laws_for_text`);
* the **control index** (``controls``) over the stored control paragraphs: a new law or provision → the affected
  controls (:meth:`compliance.search.LawSearch.controls_for_law`, the alert runs).

Both are :class:`~compliance.retrieval.hybrid.HybridRetriever` directories under ``<index dir>/<name>``
(:func:`compliance.runtime.default_index_dir`), brought up to date incrementally by :func:`sync_index` and
rebuilt when their configuration changes. :func:`index_configs` is the configuration the product uses — search,
alerts and the LangChain retrievers all take it through :class:`~compliance.search.LawSearch`::

    index_configs(dense=True) -> IndexConfigs      # .provisions, .controls: the tuned RetrievalConfig of each
    index_config("provisions" | "controls", dense=True) -> RetrievalConfig
    LawSearch(store)                               # = LawSearch(store, index_configs())
    LawSearch(store, dense=False)                  # BM25 only (no model; --bm25-only and the fast tests)

:func:`build_law_index` and :func:`build_control_index` build the same two indexes from laws or plain
``(id, text, metadata)`` rows without a database.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Literal

from compliance.errors import ConfigurationError, RetrievalError
from compliance.retrieval.config import BM25Config, DenseConfig, FusionConfig, RetrievalConfig
from compliance.retrieval.dense import StoredVectors
from compliance.retrieval.hybrid import HybridRetriever
from compliance.retrieval.types import Document

__all__ = [
    "CONTROL_INDEX",
    "INDEX_NAMES",
    "PROVISION_INDEX",
    "IndexConfigs",
    "IndexName",
    "build_control_index",
    "build_law_index",
    "documents_from_rows",
    "index_config",
    "index_configs",
    "index_path",
    "open_index",
    "sync_index",
]

logger = logging.getLogger(__name__)

IndexName = Literal["provisions", "controls"]
#: The index over law provisions (control → laws).
PROVISION_INDEX: IndexName = "provisions"
#: The index over stored control paragraphs (law → controls).
CONTROL_INDEX: IndexName = "controls"
INDEX_NAMES: tuple[IndexName, ...] = (PROVISION_INDEX, CONTROL_INDEX)

# BM25 k1/b and the dense weight α of linear fusion per index (docs/retrieval.md, "The product's configuration").
_TUNED: dict[str, tuple[float, float, float]] = {
    # controls → provisions of several acts: k1/b tuned on the gdprhub-eu dev split, α tuned on dev
    PROVISION_INDEX: (7.87, 0.53, 0.55),
    # a law's provisions → stored paragraphs: no development data for this direction, so textbook BM25 and
    # α 0.5, which were best on the eprivacy-controls check
    CONTROL_INDEX: (1.2, 0.75, 0.5),
}


def index_config(name: IndexName, *, dense: bool = True, dense_model: str | None = None) -> RetrievalConfig:
    """The tuned configuration of one of the product's indexes.

    Args:
        name: ``"provisions"`` (denoised BM25 with k1=7.87, b=0.53, fused with the dense encoder at α=0.55) or
            ``"controls"`` (k1=1.2, b=0.75, α=0.5).
        dense: False gives the BM25 stage alone (no model, no torch).
        dense_model: the dense encoder (default: the fine-tuned classifier encoder when one exists, else the
            packaged all-MiniLM-L6-v2).

    Raises:
        ConfigurationError: an unknown index name.
    """
    if name not in _TUNED:
        raise ConfigurationError(
            f"unknown index {name!r}; the product's indexes are {', '.join(INDEX_NAMES)}"
        )
    k1, b, alpha = _TUNED[name]
    bm25 = BM25Config(k1=k1, b=b)
    if not dense:
        return RetrievalConfig(bm25=bm25, fusion=FusionConfig(method="bm25"))
    # the controls index embeds a paragraph as the shipped classifier reads it (abbreviations written out), so that
    # the audit's forward gives its vectors from the classifier's own windows (docs/performance.md, session 50)
    dense_config = DenseConfig(model=dense_model, abbreviations=name == CONTROL_INDEX)
    return RetrievalConfig(bm25=bm25, dense=dense_config, fusion=FusionConfig(method="linear", alpha=alpha))


@dataclass(frozen=True, slots=True)
class IndexConfigs:
    """The retrieval configuration of each of the product's indexes.

    Attributes:
        provisions: the provision index's (control → laws).
        controls: the control index's (law → controls).
    """

    provisions: RetrievalConfig
    controls: RetrievalConfig

    @classmethod
    def uniform(cls, config: RetrievalConfig) -> IndexConfigs:
        """The same configuration for both indexes (experiments)."""
        return cls(provisions=config, controls=config)

    def for_index(self, name: IndexName) -> RetrievalConfig:
        """The configuration of the index called ``name``."""
        if name == PROVISION_INDEX:
            return self.provisions
        if name == CONTROL_INDEX:
            return self.controls
        raise ConfigurationError(
            f"unknown index {name!r}; the product's indexes are {', '.join(INDEX_NAMES)}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {PROVISION_INDEX: self.provisions.to_dict(), CONTROL_INDEX: self.controls.to_dict()}


def index_configs(*, dense: bool = True, dense_model: str | None = None) -> IndexConfigs:
    """The product's configuration: :func:`index_config` of both indexes."""
    return IndexConfigs(
        provisions=index_config(PROVISION_INDEX, dense=dense, dense_model=dense_model),
        controls=index_config(CONTROL_INDEX, dense=dense, dense_model=dense_model),
    )


def index_path(name: str, index_dir: str | Path | None = None) -> Path:
    """``<index dir>/<name>`` (``index_dir`` default: ``COMPLIANCE_INDEX_DIR`` or ``<home>/indexes``)."""
    from compliance.runtime import default_index_dir

    return (Path(index_dir) if index_dir is not None else default_index_dir()) / name


def sync_index(
    path: Path,
    docs: Sequence[Document],
    config: RetrievalConfig,
    encoder: Any = None,
    stored: StoredVectors | None = None,
) -> HybridRetriever:
    """Load the index at ``path`` and bring it in line with ``docs``; build it when absent or stale.

    Only new or changed documents are indexed again; removed ones are deleted. The index is saved when it
    changed. A different stored configuration, or an index that cannot be loaded (missing files, an old or newer
    format), triggers a full rebuild. Documents whose dense vectors ``stored`` has (in the index's embedding space)
    are not embedded again.
    """
    retriever = _load_current(path, config, encoder)
    if retriever is None:
        return _build_saved(path, list(docs), config, encoder, stored)
    wanted = {d.id: d for d in docs}
    stale = [i for i, d in retriever.documents.items() if i not in wanted or d.text != wanted[i].text]
    stale_set = set(stale)
    fresh = [d for i, d in wanted.items() if i not in retriever.documents or i in stale_set]
    return _apply(path, retriever, stale, fresh, stored)


def sync_index_by_digest(
    path: Path,
    digests: Mapping[str, str],
    fetch: Callable[[Sequence[str]], Sequence[Document]],
    config: RetrievalConfig,
    encoder: Any = None,
    stored: StoredVectors | None = None,
) -> HybridRetriever:
    """:func:`sync_index` for a corpus known by ``{id: sha256 of the text}``: only the documents the index lacks,
    or holds with another text, are read (``fetch(ids)``), so a large unchanged corpus costs its digests, not its
    texts. A fetched document may come back without text (whitespace only): it is left out of the index."""
    retriever = _load_current(path, config, encoder)
    if retriever is None:
        docs = [d for d in fetch(list(digests)) if d.text.strip()]
        return _build_saved(path, docs, config, encoder, stored)
    have = retriever.text_hashes()
    wanted = {i: h[:16] for i, h in digests.items()}
    stale = [i for i, h in have.items() if wanted.get(i) != h]
    missing = [i for i, h in wanted.items() if have.get(i) != h]
    fresh = [d for d in fetch(missing) if d.text.strip()] if missing else []
    return _apply(path, retriever, stale, fresh, stored)


def _load_current(path: Path, config: RetrievalConfig, encoder: Any) -> HybridRetriever | None:
    """The index at ``path`` when it loads and was built with ``config``; None means build it anew."""
    if not (path / "config.json").is_file():
        return None
    try:
        retriever = HybridRetriever.load(path, encoder=encoder)
    except RetrievalError as exc:
        logger.warning("index %s unusable (%s); rebuilding", path, exc)
        return None
    if retriever.config != config:
        logger.info("index %s was built with another configuration; rebuilding", path)
        return None
    return retriever


def _build_saved(
    path: Path, docs: list[Document], config: RetrievalConfig, encoder: Any, stored: StoredVectors | None
) -> HybridRetriever:
    retriever = HybridRetriever.build(docs, config, encoder=encoder, stored=stored)
    if docs:
        retriever.save(path)
    return retriever


def _apply(
    path: Path,
    retriever: HybridRetriever,
    stale: Sequence[str],
    fresh: Sequence[Document],
    stored: StoredVectors | None,
) -> HybridRetriever:
    """Remove ``stale``, add ``fresh`` (vectors from ``stored`` where it has them), save when anything changed."""
    if stale:
        retriever.remove(stale)
    if fresh:
        if stored is not None and retriever.dense is not None:
            retriever.add(fresh, stored)
        else:
            retriever.add(fresh)
    if stale or fresh:
        logger.info("index %s: %d removed/changed, %d added", path, len(stale), len(fresh))
        retriever.save(path)
    return retriever


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
    ``<index dir>/provisions`` with :func:`index_config` ``("provisions")``)."""
    from compliance.retrieval.adapters import law_documents

    docs = [d for law in laws for d in law_documents(law, level, include_recitals)]  # type: ignore[arg-type]
    retriever = HybridRetriever.build(docs, config or index_config(PROVISION_INDEX), encoder=encoder)
    retriever.save(path or index_path(PROVISION_INDEX))
    return retriever


def build_control_index(
    rows: Iterable[tuple[Any, str, Mapping[str, Any] | None]],
    config: RetrievalConfig | None = None,
    path: Path | None = None,
    encoder: Any = None,
) -> HybridRetriever:
    """Index control paragraphs given as ``(id, text, metadata)`` rows and save it (default
    ``<index dir>/controls`` with :func:`index_config` ``("controls")``)."""
    retriever = HybridRetriever.build(
        documents_from_rows(rows), config or index_config(CONTROL_INDEX), encoder=encoder
    )
    retriever.save(path or index_path(CONTROL_INDEX))
    return retriever


def open_index(
    name_or_path: str | Path, encoder: Any = None, *, index_dir: str | Path | None = None
) -> HybridRetriever:
    """Load an index by name (``"provisions"``, ``"controls"``, under the index dir) or by path.

    Raises:
        RetrievalError: no index there, or one that cannot be read (the message says how to rebuild it).
    """
    path = Path(name_or_path)
    if not path.is_absolute() and not path.exists():
        path = index_path(str(name_or_path), index_dir)
    return HybridRetriever.load(path, encoder=encoder)
