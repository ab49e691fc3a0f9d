"""Documents, their paragraphs and suggested links; links by filter."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Path, Query

from compliance.api import schemas
from compliance.api.auth import Caller, reviewer, viewer
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


@router.get("/links", response_model=list[schemas.Link], tags=["links"])
def links_list(
    document_id: int | None = Query(None, ge=1, le=2**31 - 1),
    law: str | None = Query(None, max_length=64),
    status: Literal["proposed", "accepted", "rejected", "needs-review"] | None = None,
    run_id: int | None = Query(None, ge=1, le=2**31 - 1),
    limit: int = Query(500, ge=1, le=10_000),
    offset: int = Query(0, ge=0, le=2**31 - 1),
    caller: Caller = viewer,
) -> list[dict[str, Any]]:
    """Links with their current status, filtered."""
    found = caller.store.list_links(
        document_id=document_id, law=law, status=status, run_id=run_id, limit=limit, offset=offset
    )
    return [link.to_dict() for link in found]


@router.get("/links/{link_id}", response_model=schemas.Link, tags=["links"])
def link_show(link_id: int = Path(ge=1, le=2**31 - 1), caller: Caller = viewer) -> dict[str, Any]:
    """One link with its current status and evidence, and every review of it (``reviews``)."""
    link = caller.store.get_link(link_id)
    data = link.to_dict()
    data["reviews"] = [r.to_dict() for r in caller.store.list_reviews(link_id)]
    return data


@router.post("/links/{link_id}/review", response_model=schemas.LinkReviewed, tags=["links"])
def link_review(
    body: schemas.LinkReview, link_id: int = Path(ge=1, le=2**31 - 1), caller: Caller = reviewer
) -> dict[str, Any]:
    """Accept, reject, send back to review, reopen or comment a suggested link (a new review row with the token's
    name: earlier decisions are kept); answers the link and its document's review progress. Reviewer."""
    from compliance.app.review import review_link

    return review_link(caller.store, link_id, body.decision, caller.principal.name, body.comment)
