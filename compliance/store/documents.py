"""Documents, versions and paragraphs in the store (mixed into :class:`~compliance.store.Store`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from compliance.errors import NotFoundError, StoreError
from compliance.store.base import StoreBase, _chunks, _sha256
from compliance.store.records import (
    DocumentRecord,
    DocumentVersionRecord,
    SavedDocument,
    StoredParagraph,
    to_jsonable,
)

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from compliance.connectors.document import ParsedDocument
    from compliance.store.orm import (
        Document,
        DocumentVersion,
    )

_VERSIONS_PER_READ = 50


class DocumentsMixin(StoreBase):
    """Documents, their versions (one per distinct content) and paragraphs."""

    # -- documents -------------------------------------------------------------------------------------------
    def save_document(self, doc: ParsedDocument, *, actor: str | None = None) -> SavedDocument:
        """Store a parsed document.

        Documents are identified by ``doc.source``. If the latest stored version has the same checksum nothing
        is written (``created=False``); otherwise a new version (1 for a new document) with its paragraphs.

        Atomic: the version, its paragraphs and the audit-log row are one transaction. Safe under concurrency:
        when another process stores the same source at the same moment, this call is retried and finds that
        version (``created=False``) instead of failing.
        """
        if not doc.source:
            raise StoreError("a document needs a source name to be stored")
        return self._retry_on_conflict(lambda: self._save_document_once(doc, actor))

    def _save_document_once(self, doc: ParsedDocument, actor: str | None) -> SavedDocument:
        from sqlalchemy import insert, select

        from compliance.store.orm import Document, DocumentVersion, ParagraphRow, utcnow

        checksum = doc.checksum or _sha256(doc.text)
        with self.session() as s:
            document = s.scalars(select(Document).where(Document.source == doc.source)).first()
            new_document = document is None
            if document is None:
                document = Document(
                    source=doc.source, title=doc.title, media_type=doc.media_type, latest_version=0
                )
                s.add(document)
                s.flush()
            else:
                latest = s.scalars(
                    select(DocumentVersion).where(
                        DocumentVersion.document_id == document.id,
                        DocumentVersion.version == document.latest_version,
                    )
                ).first()
                if latest is not None and latest.checksum == checksum:
                    return SavedDocument(
                        document.id,
                        latest.id,
                        latest.version,
                        False,
                        False,
                        latest.paragraph_count,
                        doc.source,
                    )
            version_no = document.latest_version + 1
            version = DocumentVersion(
                document_id=document.id,
                version=version_no,
                checksum=checksum,
                title=doc.title,
                media_type=doc.media_type,
                size_bytes=doc.size_bytes,
                pages=doc.pages,
                text=doc.text,
                paragraph_count=len(doc.paragraphs),
                parser_metadata=to_jsonable(dict(doc.metadata)),
            )
            s.add(version)
            s.flush()
            # one executemany, not a unit of work per row (an audit stores every paragraph)
            if doc.paragraphs:
                s.execute(
                    insert(ParagraphRow),
                    [
                        {
                            "version_id": version.id,
                            "ordinal": p.ordinal,
                            "text": p.text,
                            "kind": p.kind,
                            "role": p.role,
                            "page": p.page,
                            "heading_path": list(p.heading_path),
                            "char_start": p.char_start,
                            "char_end": p.char_end,
                            "text_sha256": _sha256(p.text),
                        }
                        for p in doc.paragraphs
                    ],
                )
            document.latest_version = version_no
            document.title = doc.title
            document.media_type = doc.media_type
            document.updated_at = utcnow()
            s.flush()
            self._log(
                s,
                "document.save",
                actor=actor,
                target_type="document",
                target_id=document.id,
                details={
                    "source": doc.source,
                    "version": version_no,
                    "checksum": checksum,
                    "paragraphs": len(doc.paragraphs),
                },
            )
            return SavedDocument(
                document.id, version.id, version_no, True, new_document, len(doc.paragraphs), doc.source
            )

    def _document_records(self, s: Session, documents: Sequence[Document]) -> list[DocumentRecord]:
        from sqlalchemy import select

        from compliance.store.orm import DocumentVersion

        versions: dict[int, list[DocumentVersionRecord]] = {d.id: [] for d in documents}
        for chunk in _chunks([d.id for d in documents]):
            stmt = (
                select(DocumentVersion)
                .where(DocumentVersion.document_id.in_(chunk))
                .order_by(DocumentVersion.document_id, DocumentVersion.version)
            )
            for v in s.scalars(stmt):
                versions[v.document_id].append(_version_record(v))
        return [
            DocumentRecord(
                id=d.id,
                source=d.source,
                title=d.title,
                media_type=d.media_type,
                latest_version=d.latest_version,
                created_at=d.created_at,
                updated_at=d.updated_at,
                versions=tuple(versions[d.id]),
            )
            for d in documents
        ]

    def list_documents(self) -> list[DocumentRecord]:
        """Every stored document (ordered by id) with its versions."""
        from sqlalchemy import select

        from compliance.store.orm import Document

        with self.session() as s:
            return self._document_records(s, list(s.scalars(select(Document).order_by(Document.id))))

    def get_document(self, id_or_source: int | str) -> DocumentRecord:
        """A document by id (an int or a string of digits) or by its source name.

        Raises:
            NotFoundError: nothing matches.
        """
        from sqlalchemy import select

        from compliance.store.orm import Document

        with self.session() as s:
            document: Document | None = None
            if isinstance(id_or_source, int) or id_or_source.isdigit():
                document = s.get(Document, int(id_or_source))
            if document is None and isinstance(id_or_source, str):
                document = s.scalars(select(Document).where(Document.source == id_or_source)).first()
            if document is None:
                raise NotFoundError(f"no stored document {id_or_source!r} (see `compliance documents list`)")
            return self._document_records(s, [document])[0]

    def get_document_text(self, document_id: int, version: int | None = None) -> str:
        """The full extracted text of a document version (latest unless ``version``); paragraph
        ``char_start``/``char_end`` offsets index into it.

        Raises:
            NotFoundError: no such document or version.
        """
        from sqlalchemy import select

        from compliance.store.orm import Document, DocumentVersion

        with self.session() as s:
            stmt = select(DocumentVersion.text).join(Document, DocumentVersion.document_id == Document.id)
            stmt = stmt.where(Document.id == document_id)
            if version is None:
                stmt = stmt.where(DocumentVersion.version == Document.latest_version)
            else:
                stmt = stmt.where(DocumentVersion.version == version)
            text = s.scalars(stmt).first()
        if text is None:
            which = "latest version" if version is None else f"version {version}"
            raise NotFoundError(f"no {which} of document {document_id}")
        return text

    def _paragraph_query(self) -> Any:
        from sqlalchemy import select

        from compliance.store.orm import Document, DocumentVersion, ParagraphRow

        # plain columns, not ORM entities: reading 100,000 paragraphs (the controls index of an alert run) costs
        # half as much without the identity map and instance state
        return (
            select(
                ParagraphRow.id,
                ParagraphRow.version_id,
                ParagraphRow.ordinal,
                ParagraphRow.text,
                ParagraphRow.heading_path,
                ParagraphRow.page,
                ParagraphRow.kind,
                ParagraphRow.char_start,
                ParagraphRow.char_end,
                ParagraphRow.role,
                DocumentVersion.document_id,
                DocumentVersion.version,
                Document.source,
            )
            .join(DocumentVersion, ParagraphRow.version_id == DocumentVersion.id)
            .join(Document, DocumentVersion.document_id == Document.id)
        )

    def iter_paragraphs(
        self,
        *,
        latest_only: bool = True,
        document_ids: Iterable[int] | None = None,
        roles: Iterable[str | None] | None = None,
    ) -> Iterator[StoredParagraph]:
        """Stored paragraphs, document by document (by id), version by version, in order.

        Args:
            latest_only: only the latest version of each document (the default), else every version.
            document_ids: restrict to these documents.
            roles: only paragraphs with these roles (None in it selects paragraphs stored without a role).

        Reads a few document versions per short transaction (bounded memory), so it is safe to write while
        iterating.
        """
        from sqlalchemy import select

        from compliance.store.orm import Document, DocumentVersion, ParagraphRow

        stmt = select(DocumentVersion.id).join(Document, DocumentVersion.document_id == Document.id)
        if latest_only:
            stmt = stmt.where(DocumentVersion.version == Document.latest_version)
        if document_ids is not None:
            wanted = sorted(set(document_ids))
            if not wanted:
                return
            stmt = stmt.where(DocumentVersion.document_id.in_(wanted))
        stmt = stmt.order_by(DocumentVersion.document_id, DocumentVersion.version)
        with self.session() as s:
            version_ids = list(s.scalars(stmt))
        role_filter = None
        if roles is not None:
            from sqlalchemy import or_

            wanted_roles = set(roles)
            named = sorted(r for r in wanted_roles if r is not None)
            role_filter = or_(
                ParagraphRow.role.in_(named),
                *([ParagraphRow.role.is_(None)] if None in wanted_roles else []),
            )
        for chunk in _chunks(version_ids, _VERSIONS_PER_READ):
            with self.session() as s:
                query = self._paragraph_query().where(ParagraphRow.version_id.in_(chunk))
                if role_filter is not None:
                    query = query.where(role_filter)
                rows = s.execute(
                    query.order_by(DocumentVersion.document_id, DocumentVersion.version, ParagraphRow.ordinal)
                ).all()
                batch = [_stored_paragraph(row) for row in rows]
            yield from batch

    def paragraph_digests(self, *, latest_only: bool = True) -> list[tuple[int, str, str | None, str]]:
        """``(id, kind, role, text sha256)`` of every stored paragraph (latest document versions by default), by
        id: what an index needs to tell which paragraphs it lacks, without reading their texts. A paragraph row
        is never rewritten (a changed document is a new version with new rows), so id and digest name its text."""
        from sqlalchemy import select

        from compliance.store.orm import Document, DocumentVersion, ParagraphRow

        stmt = select(ParagraphRow.id, ParagraphRow.kind, ParagraphRow.role, ParagraphRow.text_sha256).join(
            DocumentVersion, ParagraphRow.version_id == DocumentVersion.id
        )
        if latest_only:
            stmt = stmt.join(Document, DocumentVersion.document_id == Document.id).where(
                DocumentVersion.version == Document.latest_version
            )
        with self.session() as s:
            return [(int(i), str(k), r, str(h)) for i, k, r, h in s.execute(stmt.order_by(ParagraphRow.id))]

    def get_paragraphs(self, ids: Iterable[int]) -> list[StoredParagraph]:
        """Paragraphs by id, in the order asked.

        Raises:
            NotFoundError: one of the ids does not exist.
        """
        from compliance.store.orm import ParagraphRow

        wanted = list(ids)
        found: dict[int, StoredParagraph] = {}
        with self.session() as s:
            for chunk in _chunks(sorted(set(wanted))):
                for row in s.execute(self._paragraph_query().where(ParagraphRow.id.in_(chunk))):
                    para = _stored_paragraph(row)
                    found[para.id] = para
        missing = [i for i in wanted if i not in found]
        if missing:
            raise NotFoundError(f"no paragraphs with ids {missing[:10]}")
        return [found[i] for i in wanted]


def _version_record(v: DocumentVersion) -> DocumentVersionRecord:
    return DocumentVersionRecord(
        id=v.id,
        version=v.version,
        checksum=v.checksum,
        title=v.title,
        media_type=v.media_type,
        size_bytes=v.size_bytes,
        pages=v.pages,
        paragraph_count=v.paragraph_count,
        ingested_at=v.ingested_at,
        parser_metadata=dict(v.parser_metadata or {}),
    )


def _stored_paragraph(p: Any) -> StoredParagraph:
    """A row of :meth:`DocumentsMixin._paragraph_query` as a record."""
    return StoredParagraph(
        id=p.id,
        document_id=p.document_id,
        version_id=p.version_id,
        version=p.version,
        source=p.source,
        ordinal=p.ordinal,
        text=p.text,
        heading_path=tuple(p.heading_path or ()),
        page=p.page,
        kind=p.kind,
        char_start=p.char_start,
        char_end=p.char_end,
        role=p.role,
    )
