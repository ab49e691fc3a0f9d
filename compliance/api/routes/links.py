"""Links: list (the filters of ``compliance links list``), show, review (one or several: the use case of
``compliance links review``), add a missed link, compare two runs, export (review spreadsheet, JSON, OSCAL, CISO
Assistant: ``compliance links export``) and import a filled-in review spreadsheet (``compliance links import``) —
each route calls the use case of its command in :mod:`compliance.app.links`."""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path as FilePath
from typing import Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse
from starlette.background import BackgroundTask

from compliance.api import schemas
from compliance.api.auth import Caller, reviewer, viewer
from compliance.api.errors import ERROR_RESPONSES
from compliance.api.routes.body import binary_body, media_type_of, read_document
from compliance.app.links import EXPORT_MEDIA_TYPES, LinkQuery

router = APIRouter(tags=["links"], responses=ERROR_RESPONSES)

_ID = Path(ge=1, le=2**31 - 1)
ExportFormat = Literal["xlsx", "csv", "json", "oscal", "ciso-assistant"]
#: what ``POST /links/import`` accepts; the file name's extension (.xlsx, .csv) says how to read it
SHEET_MEDIA_TYPES = frozenset(
    {
        "application/octet-stream",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "text/csv",
    }
)
SHEET_NAME = r"^.*\S.*\.([xX][lL][sS][xX]|[cC][sS][vV])$"
_STATUS = Query(None, description="Current status (repeat for several).")
_EXPORT_FORMAT = Query("xlsx", description="xlsx, csv, json, oscal or ciso-assistant (YAML).")


def link_query(
    document: str | None = Query(
        None, min_length=1, max_length=1024, description="A document id or its stored source."
    ),
    law: str | None = Query(None, max_length=64, description="A law's short name or identifier."),
    provision: str | None = Query(
        None, max_length=255, description="A provision key (art:32 also matches its paragraphs)."
    ),
    status: list[schemas.LinkStatus] | None = _STATUS,
    min_score: float | None = Query(None, allow_inf_nan=False, description="Score at least this."),
    max_score: float | None = Query(None, allow_inf_nan=False, description="Score below this."),
    model: str | None = Query(None, max_length=255, description="The suggesting model's identity (prefix)."),
    run_id: int | None = Query(None, ge=1, le=2**31 - 1, description="Links of this run only."),
    method: Literal["classifier", "retriever", "manual"] | None = Query(None, description="How made."),
    all_versions: bool = Query(
        False, description="Also links of older document versions and superseded runs."
    ),
) -> LinkQuery:
    """The filters of ``compliance links list`` / ``links export``."""
    return LinkQuery(
        document=document,
        law=law,
        provision=provision,
        status=tuple(status or ()),
        min_score=min_score,
        max_score=max_score,
        model=model,
        run=run_id,
        method=method,
        include_superseded=all_versions,
    )


_QUERY = Depends(link_query)


def _link_row(link: Any) -> dict[str, Any]:
    return {**link.to_dict(), "id": link.link_id, "article": link.article}


@router.get("/links", response_model=list[schemas.Link])
def links_list(
    query: LinkQuery = _QUERY,
    limit: int = Query(500, ge=1, le=10_000),
    offset: int = Query(0, ge=0, le=2**31 - 1),
    caller: Caller = viewer,
) -> list[dict[str, Any]]:
    """Current links with their status (by document, paragraph, law, rank), filtered as `compliance links
    list` filters them."""
    from compliance.app.links import page_links

    return [_link_row(link) for link in page_links(caller.store, query, offset=offset, limit=limit)]


def _export_responses() -> dict[int | str, dict[str, Any]]:
    content: dict[str, Any] = {}
    for media, _suffix in EXPORT_MEDIA_TYPES.values():
        content[media] = {"schema": {"type": "string", "format": "binary"}}
    content["application/json"] = {
        "schema": {"description": "The rows with their evidence, or an OSCAL document."}
    }
    content["application/yaml"] = {"schema": {"type": "object", "description": "A CISO Assistant library."}}
    return {200: {"description": "The export file (Content-Disposition: attachment).", "content": content}}


def _remove(folder: FilePath) -> None:
    shutil.rmtree(folder, ignore_errors=True)


def file_response(
    folder: FilePath, path: FilePath, media_type: str, name: str, *, inline: bool
) -> FileResponse:
    """Stream ``path`` (in chunks) and remove its temporary ``folder`` once sent."""
    return FileResponse(
        path,
        media_type=media_type,
        filename=name,
        content_disposition_type="inline" if inline else "attachment",
        background=BackgroundTask(_remove, folder),
    )


@router.get("/links/export", response_class=FileResponse, responses=_export_responses())
def links_export(
    format: ExportFormat = _EXPORT_FORMAT,
    organisation: str = Query(
        "Our organisation", min_length=1, max_length=255, description="Named in OSCAL / CISO Assistant."
    ),
    query: LinkQuery = _QUERY,
    caller: Caller = viewer,
) -> FileResponse:
    """Every current link (filtered) as a file: the review spreadsheet (`xlsx`, `csv`, with a decision column to
    fill in and `POST /links/import`), `json` (the same rows with the full evidence), `oscal` (an OSCAL mapping
    collection) or `ciso-assistant` (a CISO Assistant mapping library); the OSCAL and CISO Assistant exports are
    of one law (`law`, default gdpr) and leave rejected links out. The same use case as `compliance links
    export`."""
    from compliance.app.links import export_links_file

    media, suffix = EXPORT_MEDIA_TYPES[format]
    folder = FilePath(tempfile.mkdtemp(prefix="compliance-export-"))
    try:
        out = folder / f"links.{suffix}"
        export_links_file(caller.store, out, format, query, organisation=organisation)
    except BaseException:
        _remove(folder)
        raise
    return file_response(folder, out, media, out.name, inline=False)


@router.post("/links/review", response_model=list[schemas.Review])
def links_review(body: schemas.LinksReview, caller: Caller = reviewer) -> list[dict[str, Any]]:
    """Record one decision on several links, all or none (a new review row each, with the token's name; earlier
    decisions are kept): `compliance links review ID… --accept`. Reviewer."""
    from compliance.app.links import review_links

    recorded = review_links(
        caller.store, body.link_ids, body.decision, caller.principal.name, body.comment, source="api"
    )
    return [r.to_dict() for r in recorded]


def _clean(error: Exception, path: FilePath, name: str) -> str:
    return re.sub(re.escape(str(path)), name, str(error))


@router.post(
    "/links/import", response_model=schemas.ReviewsImported, openapi_extra=binary_body(SHEET_MEDIA_TYPES)
)
async def links_import(
    request: Request,
    name: str = Query(
        min_length=1, max_length=255, pattern=SHEET_NAME, description="The file's name (.xlsx or .csv)."
    ),
    caller: Caller = reviewer,
) -> dict[str, Any]:
    """Record the decisions of a filled-in review spreadsheet (from `GET /links/export?format=xlsx|csv`) under
    the token's name: every row is checked first, and one bad row applies nothing (422, `C410`, each bad row
    named; a file that is not a readable review sheet is 422, `C301`). The same use case as `compliance links
    import`. Reviewer."""
    from compliance.app.links import import_reviews
    from compliance.errors import ConfigurationError, DocumentError, ReviewImportError
    from compliance.settings import get_settings

    media_type_of(request, SHEET_MEDIA_TYPES)
    data = await read_document(request, name, get_settings().max_document_bytes)
    folder = FilePath(tempfile.mkdtemp(prefix="compliance-import-"))
    path = folder / ("reviews" + FilePath(name).suffix.lower())
    try:
        path.write_bytes(data)
        result = await run_in_threadpool(
            import_reviews, caller.store, path, caller.principal.name, source="import"
        )
    except ReviewImportError as e:
        raise ReviewImportError(name, e.problems) from None
    except ConfigurationError as e:  # not a readable XLSX/CSV review file: what the upload holds, so 422
        raise DocumentError(name, _clean(e, path, name).removeprefix(f"{name}: ")) from None
    finally:
        _remove(folder)
    return {**result.to_dict(), "path": name}


@router.post("/links", response_model=schemas.Link, status_code=201)
def link_add(body: schemas.LinkAdd, caller: Caller = reviewer) -> dict[str, Any]:
    """Add a link the model missed, accepted by the token's name (`compliance links add`): the paragraph by its
    id, or by its document and number. Reviewer."""
    from compliance.app.links import add_link

    if isinstance(body, schemas.LinkAddById):
        where: dict[str, Any] = {"paragraph_id": body.paragraph_id}
    else:
        where = {"document": body.document, "paragraph": body.paragraph}
    link = add_link(
        caller.store,
        law=body.law,
        provision=body.provision.strip(),
        reviewer=caller.principal.name,
        comment=body.comment,
        **where,
    )
    return _link_row(link)


@router.get("/links/diff", response_model=schemas.LinkDiff)
def links_diff(
    run_a: int = Query(ge=1, le=2**31 - 1, description="The earlier run."),
    run_b: int = Query(ge=1, le=2**31 - 1, description="The later run."),
    caller: Caller = viewer,
) -> dict[str, Any]:
    """Links gained, lost and re-ranked from run A to run B over the paragraphs both scored, and the accepted
    links whose score fell below the review band (`compliance links diff`)."""
    from compliance.app.links import diff_runs

    return diff_runs(caller.store, run_a, run_b).to_dict()


@router.get("/links/{link_id}", response_model=schemas.LinkDetail)
def link_show(link_id: int = _ID, caller: Caller = viewer) -> dict[str, Any]:
    """One link: paragraph, provision, suggestion and evidence, every decision on it (oldest first, each with the
    run and model it decided on) and its audit-log entries: `compliance links show`."""
    from compliance.app.links import link_detail

    return {**link_detail(caller.store, link_id), "id": link_id}


@router.post("/links/{link_id}/review", response_model=schemas.LinkReviewed)
def link_review(body: schemas.LinkReview, link_id: int = _ID, caller: Caller = reviewer) -> dict[str, Any]:
    """Accept, reject, send back to review, reopen or comment a suggested link (a new review row with the token's
    name: earlier decisions are kept) — `compliance links review`; answers the recorded review, the link and its
    document's review progress. Reviewer."""
    from compliance.app.links import review_links
    from compliance.app.review import reviewed_link

    recorded = review_links(
        caller.store, [link_id], body.decision, caller.principal.name, body.comment, source="api"
    )
    return {**reviewed_link(caller.store, link_id), "recorded": [r.to_dict() for r in recorded]}
