"""Documents, their paragraphs and suggested links."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Path, Query

from compliance.api import schemas
from compliance.api.auth import Caller, viewer
from compliance.api.errors import ERROR_RESPONSES

router = APIRouter(tags=["documents"], responses=ERROR_RESPONSES)


@router.get("/documents", response_model=list[schemas.DocumentListItem])
def documents_list(caller: Caller = viewer) -> list[dict[str, Any]]:
    """Every stored document with its latest version and review progress."""
    from compliance.app.review import documents_with_progress

    return documents_with_progress(caller.store)


@router.get("/documents/{document_id}", response_model=schemas.DocumentDetail)
def document_show(
    document_id: int = Path(ge=1, le=2**31 - 1),
    all_versions: bool = Query(False, description="Paragraphs of every version, not only the latest."),
    caller: Caller = viewer,
) -> dict[str, Any]:
    """One document: its versions and paragraphs (with page, headings and offsets)."""
    from compliance.app.documents import document_detail

    return document_detail(caller.store, document_id, all_versions=all_versions)


@router.get("/documents/{document_id}/links", response_model=schemas.DocumentLinks)
def document_links(document_id: int = Path(ge=1, le=2**31 - 1), caller: Caller = viewer) -> dict[str, Any]:
    """The latest version's paragraphs, each with its suggested links (score, evidence terms, the provision's
    text) and current status, and the document's review progress."""
    from compliance.app.review import document_links as links

    return links(caller.store, document_id)
