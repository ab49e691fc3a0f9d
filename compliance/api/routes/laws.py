"""Laws: list, show, install a law pack's official text, add a law file. Storing a new law runs the alert pass."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool

from compliance.api import schemas
from compliance.api.auth import Caller, admin, viewer
from compliance.api.errors import ERROR_RESPONSES
from compliance.api.routes.body import binary_body, media_type_of, read_document

router = APIRouter(tags=["laws"], responses=ERROR_RESPONSES)

LAW_MEDIA_TYPES = frozenset({"application/octet-stream", "application/xml", "text/xml", "application/json"})


@router.get("/laws", response_model=list[schemas.LawSummary])
def laws_list(
    all_versions: bool = Query(False, description="Every stored version, not only the latest."),
    caller: Caller = viewer,
) -> list[dict[str, Any]]:
    """Stored laws with their provision counts."""
    from compliance.app.laws import list_laws

    return [r.to_dict() for r in list_laws(caller.store, all_versions=all_versions)]


@router.get("/laws/{name}", response_model=schemas.LawDetail)
def law_show(
    name: str,
    version: int | None = Query(None, ge=1, le=2**31 - 1),
    caller: Caller = viewer,
) -> dict[str, Any]:
    """A stored law: metadata, articles (with their text) and recitals."""
    from compliance.app.laws import law_detail

    return law_detail(caller.store, name, version)


@router.post("/laws/install", response_model=schemas.LawStoredOut, tags=["laws"])
def law_install(body: schemas.LawInstall, caller: Caller = admin) -> dict[str, Any]:
    """Install a law pack's official text (mirror or download, checksum checked); a new law or version is
    followed by the alert pass over the stored controls. Admin."""
    from compliance.app.laws import install_law

    stored = install_law(caller.store, body.name.strip().lower())
    return stored.to_dict()


@router.post("/laws", response_model=schemas.LawStoredOut, openapi_extra=binary_body(LAW_MEDIA_TYPES))
async def law_add(
    request: Request,
    name: str = Query(min_length=1, max_length=255, pattern=r"\S", description="The file's name."),
    short_name: str | None = Query(None, max_length=64, description="Store the law under this short name."),
    caller: Caller = admin,
) -> dict[str, Any]:
    """Add a law from its file (Formex XML, EUR-Lex JSON, UK CLML) as the raw body; a new law is followed by
    the alert pass. Admin."""
    from compliance.app.ingest import Upload
    from compliance.app.laws import add_law
    from compliance.settings import get_settings

    media_type_of(request, LAW_MEDIA_TYPES)
    data = await read_document(request, name, get_settings().max_document_bytes)
    stored = await run_in_threadpool(add_law, caller.store, Upload(name, data), short_name=short_name)
    return stored.to_dict()
