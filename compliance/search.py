"""Both retrieval directions through one API.

* **control → laws**: a text or a whole :class:`~compliance.connectors.document.ParsedDocument` is the query
  against every stored law's articles; provisions are ranked, and laws are ranked by max-pooling their
  provisions' scores (:meth:`LawSearch.laws_for_text`, :meth:`LawSearch.laws_for_document`).
* **law → controls**: a stored law (its articles joined) or one provision is the query against every stored
  control paragraph (:meth:`LawSearch.controls_for_law`).

Both directions run on the product's two indexes (:mod:`compliance.retrieval.indexes`): built from the store,
persisted under the index directory (``provisions/`` and ``controls/``), each with its tuned configuration
(:func:`~compliance.retrieval.indexes.index_configs`), and brought up to date incrementally on use: only
documents that are new or whose text changed are (re-)indexed, deleted ones are removed. A changed retrieval
configuration, or an index that cannot be read, rebuilds the index.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compliance.errors import LawNotFoundError

if TYPE_CHECKING:  # pragma: no cover
    from compliance.connectors.document import ParsedDocument
    from compliance.retrieval import Document, HybridRetriever, RetrievalConfig
    from compliance.retrieval.indexes import IndexConfigs
    from compliance.rules.corpus import Law
    from compliance.store import Store

__all__ = [
    "ControlHit",
    "LawHit",
    "LawSearch",
    "LawSearchResult",
    "ProvisionHit",
    "law_query_text",
]

#: paragraphs of these roles are indexed as controls by default (statements and definitions: not headings,
#: document metadata, forms, page furniture, pointers or descriptive text); see :mod:`compliance.connectors.roles`
CONTROL_ROLES: frozenset[str] = frozenset({"statement", "definition"})


@dataclass(frozen=True, slots=True)
class ProvisionHit:
    """A provision ranked for a query."""

    law: str
    key: str
    title: str
    score: float
    rank: int
    provision_id: int | None = None
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "law": self.law,
            "key": self.key,
            "title": self.title,
            "score": self.score,
            "rank": self.rank,
            "provision_id": self.provision_id,
            "evidence": self.evidence,
        }


@dataclass(frozen=True, slots=True)
class LawHit:
    """A law ranked by the best score of its provisions (max-pooling)."""

    law: str
    title: str
    score: float
    rank: int
    best_provision: str
    provisions: tuple[ProvisionHit, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "law": self.law,
            "title": self.title,
            "score": self.score,
            "rank": self.rank,
            "best_provision": self.best_provision,
            "provisions": [p.key for p in self.provisions],
        }


@dataclass(frozen=True, slots=True)
class LawSearchResult:
    """Laws and provisions ranked for one query."""

    laws: tuple[LawHit, ...]
    provisions: tuple[ProvisionHit, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "laws": [h.to_dict() for h in self.laws],
            "provisions": [p.to_dict() for p in self.provisions],
        }


@dataclass(frozen=True, slots=True)
class ControlHit:
    """A stored control paragraph ranked for a law or provision query."""

    paragraph_id: int
    document_id: int
    source: str
    text: str
    score: float
    rank: int
    heading_path: tuple[str, ...] = ()
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "paragraph_id": self.paragraph_id,
            "document_id": self.document_id,
            "source": self.source,
            "text": self.text,
            "score": self.score,
            "rank": self.rank,
            "heading_path": list(self.heading_path),
            "evidence": self.evidence,
        }


def law_query_text(law: Law, keys: Sequence[str] | None = None) -> str:
    """A law as one query: its title and its articles (or only ``keys``), each as title + text."""
    articles = [a for a in law.articles if keys is None or a.key in set(keys)]
    parts = [law.title] + [f"{a.title or ''}\n{law.text_of(a.key)}".strip() for a in articles]
    return "\n\n".join(p for p in parts if p)


class LawSearch:
    """Search laws for controls and controls for laws, over indexes kept in sync with the store.

    Args:
        store: where laws and controls are read from.
        config: the retrieval configuration: both indexes' (:class:`~compliance.retrieval.indexes.IndexConfigs`),
            or one :class:`~compliance.retrieval.RetrievalConfig` for both (experiments); default
            :func:`~compliance.retrieval.indexes.index_configs` (the tuned one of each index).
        index_dir: where the indexes live (default :func:`compliance.runtime.default_index_dir`).
        encoder: a loaded :class:`~compliance.retrieval.TextEncoder` shared by both indexes.
        dense: with the default configuration, False gives BM25 alone (no model; ``--bm25-only``).
        control_roles: the paragraph roles indexed as controls (default :data:`CONTROL_ROLES`); None indexes
            every paragraph but headings. Paragraphs stored before roles existed (no role) are always indexed.
    """

    def __init__(
        self,
        store: Store,
        config: IndexConfigs | RetrievalConfig | None = None,
        index_dir: str | Path | None = None,
        encoder: Any = None,
        *,
        dense: bool = True,
        control_roles: Collection[str] | None = CONTROL_ROLES,
    ) -> None:
        from compliance.retrieval.indexes import IndexConfigs, index_configs
        from compliance.runtime import default_index_dir

        self.store = store
        if config is None:
            self.configs = index_configs(dense=dense)
        elif isinstance(config, IndexConfigs):
            self.configs = config
        else:
            self.configs = IndexConfigs.uniform(config)
        self.index_dir = Path(index_dir) if index_dir is not None else default_index_dir()
        self.encoder = encoder
        self.control_roles = frozenset(control_roles) if control_roles is not None else None
        self._provisions: HybridRetriever | None = None
        self._controls: HybridRetriever | None = None
        self._provision_ids: dict[str, int] = {}
        self._law_titles: dict[str, str] = {}

    # -- indexes -------------------------------------------------------------------------------------------
    def provisions_index(self, *, refresh: bool = False) -> HybridRetriever:
        """The index of every stored law's articles (latest versions), ids ``<law>/<key>``."""
        if self._provisions is None or refresh:
            from compliance.retrieval import law_documents
            from compliance.retrieval.indexes import PROVISION_INDEX, sync_index

            docs: list[Document] = []
            for record in self.store.list_laws():
                law = self.store.get_law(record.id)
                self._law_titles[law.short_name] = law.title
                ids = self.store.provision_id_map(record.id)
                for doc in law_documents(law, level="article"):
                    docs.append(doc)
                    key = str(doc.metadata.get("key", ""))
                    if key in ids:
                        self._provision_ids[doc.id] = ids[key]
            self._provisions = sync_index(
                self.index_dir / PROVISION_INDEX, docs, self.configs.provisions, self.encoder
            )
            self._share_encoder(self._provisions)
        return self._provisions

    def controls_index(self, *, refresh: bool = False) -> HybridRetriever:
        """The index of every stored control paragraph (latest document versions, roles ``control_roles``),
        ids = paragraph ids."""
        if self._controls is None or refresh:
            from compliance.retrieval.indexes import CONTROL_INDEX, sync_index_by_digest

            # ids and text digests only: a run over an unchanged store reads no paragraph text
            digests = {
                str(pid): digest
                for pid, kind, role, digest in self.store.paragraph_digests()
                if self._is_control(kind, role)
            }
            self._controls = sync_index_by_digest(
                self.index_dir / CONTROL_INDEX,
                digests,
                self._control_documents,
                self.configs.controls,
                self.encoder,
                stored=self._stored_vectors,
            )
            self._share_encoder(self._controls)
        return self._controls

    def _control_documents(self, ids: Sequence[str]) -> list[Any]:
        """The stored paragraphs ``ids`` as index documents (id = paragraph id)."""
        from compliance.retrieval import Document

        return [
            Document(
                id=str(p.id),
                text=p.text,
                metadata={
                    "paragraph_id": p.id,
                    "document_id": p.document_id,
                    "source": p.source,
                    "ordinal": p.ordinal,
                    "heading_path": list(p.heading_path),
                },
            )
            for p in self.store.get_paragraphs(int(i) for i in ids)
        ]

    def _stored_vectors(self, space: str, ids: Sequence[str]) -> dict[str, Any]:
        """The chunk vectors the store keeps in ``space`` for those of the paragraphs ``ids`` that have some (the
        audit's forward stored them): the controls index takes them instead of embedding the paragraphs again."""
        rows = self.store.paragraph_vectors(space, [int(i) for i in ids])
        return {str(pid): v.array() for pid, v in rows.items()}

    def _is_control(self, kind: str, role: str | None) -> bool:
        if role is None:  # stored before paragraph roles existed
            return kind != "heading"
        if self.control_roles is None:
            return role != "heading"
        return role in self.control_roles

    def _share_encoder(self, retriever: HybridRetriever) -> None:
        if self.encoder is None and retriever.dense is not None:
            self.encoder = retriever.dense.encoder

    # -- control → laws ------------------------------------------------------------------------------------
    def laws_for_text(
        self, text: str, *, k: int = 10, provisions_k: int = 50, law: str | None = None
    ) -> LawSearchResult:
        """Laws and provisions ranked for a control text (a paragraph or a whole document's text).

        Args:
            text: the query.
            k: number of laws returned (provisions: ``provisions_k``).
            provisions_k: provisions retrieved before max-pooling to laws.
            law: restrict to one law (short name).
        """
        index = self.provisions_index()
        exclude = [i for i in index.ids if law is not None and not i.startswith(f"{law}/")]
        hits = index.search(text, k=provisions_k, exclude=exclude)
        provisions = tuple(
            ProvisionHit(
                law=str(h.id.split("/", 1)[0]),
                key=str(index.documents[h.id].metadata.get("key", h.id.split("/", 1)[-1])),
                title=str(index.documents[h.id].metadata.get("title", "")),
                score=float(h.score),
                rank=rank,
                provision_id=self._provision_ids.get(h.id),
                evidence=dict(h.evidence),
            )
            for rank, h in enumerate(hits, start=1)
        )
        pooled: dict[str, list[ProvisionHit]] = {}
        for p in provisions:
            pooled.setdefault(p.law, []).append(p)
        ranked = sorted(pooled.items(), key=lambda item: -max(p.score for p in item[1]))
        laws = tuple(
            LawHit(
                law=name,
                title=self._law_titles.get(name, ""),
                score=max(p.score for p in group),
                rank=rank,
                best_provision=max(group, key=lambda p: p.score).key,
                provisions=tuple(group),
            )
            for rank, (name, group) in enumerate(ranked[:k], start=1)
        )
        return LawSearchResult(laws, provisions)

    def laws_for_document(
        self, document: ParsedDocument, *, k: int = 10, provisions_k: int = 50
    ) -> LawSearchResult:
        """:meth:`laws_for_text` with a whole parsed document as the query (document-to-document)."""
        text = "\n\n".join(p.text for p in document.paragraphs if p.kind != "heading") or document.text
        return self.laws_for_text(text, k=k, provisions_k=provisions_k)

    # -- law → controls ------------------------------------------------------------------------------------
    def controls_for_law(
        self, law: str | Law, *, provision: str | None = None, k: int = 20, terms: int = 6
    ) -> list[ControlHit]:
        """Stored control paragraphs ranked for a law (all its articles) or one of its provisions.

        Args:
            law: a stored law's short name or identifier, or a :class:`~compliance.rules.corpus.Law`.
            provision: a provision key (``art:5``, ``art:5/par:3``) to query with instead of the whole law.
            k: number of paragraphs returned.
            terms: shared salient terms added to each hit's evidence.

        Raises:
            LawNotFoundError: unknown law or provision key.
        """
        from compliance.rules.corpus import Law as LawModel

        resolved = law if isinstance(law, LawModel) else self.store.get_law(law)
        if provision is not None:
            try:
                prov = resolved.get(provision)
            except KeyError as exc:
                raise LawNotFoundError(f"{resolved.short_name} has no provision {provision!r}") from exc
            query = f"{prov.title or ''}\n{resolved.text_of(prov.key)}".strip()
        else:
            query = law_query_text(resolved)
        return self.controls_for_query(query, k=k, terms=terms)

    def controls_for_query(self, query: str, *, k: int = 20, terms: int = 6) -> list[ControlHit]:
        """Stored control paragraphs ranked for any query text."""
        index = self.controls_index()
        out: list[ControlHit] = []
        for rank, h in enumerate(index.search(query, k=k), start=1):
            doc = index.documents[h.id]
            meta = doc.metadata
            evidence = dict(h.evidence)
            if terms:
                evidence["shared_terms"] = [t for t, _ in index.salient_terms(query, h.id, n=terms)]
            out.append(
                ControlHit(
                    paragraph_id=int(meta.get("paragraph_id", h.id)),
                    document_id=int(meta.get("document_id", 0)),
                    source=str(meta.get("source", "")),
                    text=doc.text,
                    score=float(h.score),
                    rank=rank,
                    heading_path=tuple(meta.get("heading_path", ())),
                    evidence=evidence,
                )
            )
        return out
