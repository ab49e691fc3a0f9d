"""Document use cases: list stored documents, show one with its versions and paragraphs."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from compliance.store import DocumentRecord, Store

__all__ = ["document_detail", "document_summary", "find_document", "list_documents"]


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


def find_document(store: Store, document: int | str) -> DocumentRecord:
    """A stored document by id, by its stored source, or by a path to the file.

    A path finds the document whose stored source is the path's tail (sources are stored relative to the
    audited folder, so ``examples/privacy-notice.pdf`` finds ``privacy-notice.pdf``) or, for a source stored
    as an absolute path, the document of the same file.

    Raises:
        NotFoundError: nothing matches, or several documents do (the message lists them).
    """
    from pathlib import PurePosixPath

    from compliance.errors import NotFoundError

    try:
        return store.get_document(document)
    except NotFoundError:
        if isinstance(document, int):
            raise
    given = Path(document).expanduser()
    resolved = PurePosixPath(given.resolve().as_posix()).parts
    tail = PurePosixPath(given.as_posix()).parts
    matches = []
    for record in store.list_documents():
        stored = PurePosixPath(record.source).parts
        if stored and (resolved[-len(stored) :] == stored or stored[-len(tail) :] == tail):
            matches.append(record)
    if len(matches) == 1:
        return matches[0]
    if matches:
        names = ", ".join(f"{r.id} ({r.source})" for r in matches[:10])
        raise NotFoundError(f"{document!r} matches several stored documents: {names}; give the id")
    raise NotFoundError(f"no stored document {document!r} (see `compliance documents list`)")


def document_detail(
    store: Store,
    document: int | str,
    *,
    all_versions: bool = False,
    roles: Collection[str | None] | None = None,
) -> dict[str, Any]:
    """One document (by id, source or path: :func:`find_document`): its summary, ``history`` (every version),
    ``roles`` (paragraphs per role) and ``paragraphs`` (of the latest version, or of every version), each with
    its role.

    Args:
        store: the store.
        document: id, stored source, or path.
        all_versions: paragraphs of every version, not only the latest.
        roles: only paragraphs with these roles (None: all).

    Raises:
        NotFoundError: no such document.
    """
    from compliance.connectors.roles import role_counts

    record = find_document(store, document)
    paragraphs = list(store.iter_paragraphs(latest_only=not all_versions, document_ids=[record.id]))
    data = document_summary(record)
    data["history"] = [v.to_dict() for v in record.versions]
    data["roles"] = role_counts(paragraphs)
    data["paragraphs"] = [
        {k: v for k, v in p.to_dict().items() if k not in ("document_id", "source")}
        for p in paragraphs
        if roles is None or p.role in roles
    ]
    return data
