"""Audits: upload a document (or a batch) → a job, one task per document; job status and progress."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, File, Form, Path, Query, Request, UploadFile
from fastapi.concurrency import run_in_threadpool

from compliance.api import schemas
from compliance.api.auth import Caller, reviewer, viewer
from compliance.api.errors import ERROR_RESPONSES
from compliance.api.routes.body import binary_body, media_type_of, read_document

router = APIRouter(tags=["audits"], responses=ERROR_RESPONSES)

#: what ``POST /audits`` accepts (the file name's extension chooses the parser when the type is generic)
DOCUMENT_MEDIA_TYPES = frozenset(
    {
        "application/octet-stream",
        "application/pdf",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "text/plain",
        "text/markdown",
        "text/html",
        "application/xhtml+xml",
    }
)
_FILES = File(min_length=1, description="The documents (multipart/form-data, one part per file).")
#: a document's file name: a supported extension
_EXTENSIONS = ("docx", "pdf", "txt", "text", "md", "markdown", "html", "htm", "xhtml")
DOCUMENT_NAME = (
    r"^.*\S.*\.(" + "|".join("".join(f"[{c}{c.upper()}]" for c in ext) for ext in _EXTENSIONS) + ")$"
)
#: how many documents one batch may hold
MAX_BATCH = 500


def _submit(caller: Caller, uploads: list[Any], top_k: int) -> dict[str, Any]:
    from compliance.app.jobs import AuditJobParams, job_detail, submit_audit_job

    job = submit_audit_job(
        caller.store,
        uploads,
        caller.services.dispatcher,
        params=AuditJobParams(top_k=top_k),
        by=caller.principal.name,
    )
    return job_detail(caller.store, job.id)


@router.post(
    "/audits",
    response_model=schemas.JobDetail,
    status_code=202,
    openapi_extra=binary_body(DOCUMENT_MEDIA_TYPES),
)
async def submit_audit(
    request: Request,
    name: str = Query(
        min_length=1,
        max_length=1024,
        pattern=DOCUMENT_NAME,
        description="File name; its extension picks the parser (.docx, .pdf, .txt, .md, .html, .xlsx, .csv …).",
    ),
    top_k: int = Query(5, ge=1, le=99, description="At most this many articles linked per paragraph."),
    caller: Caller = reviewer,
) -> dict[str, Any]:
    """Upload one document (the raw bytes as the body) for audit: a job is queued and its id returned at once;
    follow it at `/jobs/{id}`. Reviewer."""
    from compliance.app.ingest import Upload
    from compliance.connectors import connector_for
    from compliance.settings import get_settings

    media = media_type_of(request, DOCUMENT_MEDIA_TYPES)
    given_type = None if media == "application/octet-stream" else media
    connector_for(name, media_type=given_type)  # 415 for an unsupported type, before reading the body
    data = await read_document(request, name, get_settings().max_document_bytes)
    return await run_in_threadpool(_submit, caller, [Upload(name, data, given_type)], top_k)


@router.post("/audits/batch", response_model=schemas.JobDetail, status_code=202)
async def submit_audit_batch(
    files: list[UploadFile] = _FILES,
    top_k: int = Form(5, ge=1, le=99),
    caller: Caller = reviewer,
) -> dict[str, Any]:
    """Upload several documents as one audit job (one task per document). Files that cannot be taken are listed
    in the job's `params.rejected`. Reviewer."""
    from compliance.app.ingest import Upload
    from compliance.errors import InvalidRequestError
    from compliance.settings import get_settings

    if len(files) > MAX_BATCH:
        raise InvalidRequestError(f"{len(files)} files: at most {MAX_BATCH} per batch")
    limit = get_settings().max_document_bytes
    uploads = []
    for n, f in enumerate(files, 1):
        name = f.filename or f"upload-{n}"
        data = await f.read(limit + 1)
        media = (f.content_type or "").split(";")[0].strip().lower()
        uploads.append(Upload(name, data, None if media in ("", "application/octet-stream") else media))
    return await run_in_threadpool(_submit, caller, uploads, top_k)


@router.get("/jobs", response_model=list[schemas.Job])
def jobs_list(limit: int = Query(50, ge=1, le=1000), caller: Caller = viewer) -> list[dict[str, Any]]:
    """Jobs, newest first, with their item counts."""
    from compliance.app.jobs import list_jobs

    return list_jobs(caller.store, limit=limit)


@router.get("/jobs/{job_id}", response_model=schemas.JobDetail)
def job_show(job_id: int = Path(ge=1, le=2**31 - 1), caller: Caller = viewer) -> dict[str, Any]:
    """A job's status and progress, and each document's outcome (document id, links, error)."""
    from compliance.app.jobs import job_detail

    return job_detail(caller.store, job_id)
