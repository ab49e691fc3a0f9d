"""Document use cases: list stored documents, show one with its versions and paragraphs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from compliance.store import DocumentRecord, Store

__all__ = ["document_detail", "document_summary", "list_documents"]


def document_summary(record: DocumentRecord) -> dict[str, Any]:
    """A stored document with its latest version: id, source, title, media type, version, paragraph and page
    counts, size, checksum, times."""
    latest = record.latest
    return {
        "id": record.id,
        "source": record.source,
        "title": record.title,
        "media_type": record.media_type,
        "version": record.latest_version,
        "versions": len(record.versions),
        "paragraphs": latest.paragraph_count,
        "pages": latest.pages,
        "size_bytes": latest.size_bytes,
        "checksum": latest.checksum,
        "ingested_at": latest.ingested_at.isoformat(),
        "created_at": record.created_at.isoformat(),
    }


def list_documents(store: Store) -> list[dict[str, Any]]:
    """Every stored document (:func:`document_summary`)."""
    return [document_summary(d) for d in store.list_documents()]


def document_detail(store: Store, document: int | str, *, all_versions: bool = False) -> dict[str, Any]:
    """One document (by id or source): its summary, ``history`` (every version) and ``paragraphs`` (of the
    latest version, or of every version).

    Raises:
        NotFoundError: no such document.
    """
    record = store.get_document(document)
    paragraphs = store.iter_paragraphs(latest_only=not all_versions, document_ids=[record.id])
    data = document_summary(record)
    data["history"] = [v.to_dict() for v in record.versions]
    data["paragraphs"] = [
        {k: v for k, v in p.to_dict().items() if k not in ("document_id", "source")} for p in paragraphs
    ]
    return data
