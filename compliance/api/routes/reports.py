"""The coverage and gap report of a law over the stored documents (HTML, XLSX, JSON): ``compliance report``."""

from __future__ import annotations

import tempfile
from pathlib import Path as FilePath
from typing import Any, Literal

from fastapi import APIRouter, Query
from fastapi.responses import FileResponse

from compliance.api import schemas
from compliance.api.auth import Caller, viewer
from compliance.api.errors import ERROR_RESPONSES
from compliance.api.routes.links import _remove, file_response
from compliance.app.reports import REPORT_MEDIA_TYPES

router = APIRouter(tags=["reports"], responses=ERROR_RESPONSES)

_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The report: JSON, a self-contained HTML page, or an XLSX workbook.",
        "model": schemas.CoverageReport,
        "content": {
            "text/html": {"schema": {"type": "string"}},
            REPORT_MEDIA_TYPES["xlsx"]: {"schema": {"type": "string", "format": "binary"}},
        },
    }
}
_DOCUMENTS = Query(
    None, description="Only these documents (ids or sources; repeat, or separate with commas). Default: all."
)


@router.get(
    "/reports/coverage",
    response_class=FileResponse,
    responses=_RESPONSES,
)
def coverage(
    law: str = Query("gdpr", min_length=1, max_length=64, description="The law whose coverage is reported."),
    documents: list[str] | None = _DOCUMENTS,
    format: Literal["html", "xlsx", "json"] = Query("json", description="json, html or xlsx."),
    caller: Caller = viewer,
) -> FileResponse:
    """Coverage of a law by the stored documents' current links: the document × article matrix, coverage per
    chapter, the gaps (articles without an accepted link), the best evidence per article and the review
    progress. The same use case and files as `compliance report`; HTML and JSON are sent inline, XLSX as an
    attachment."""
    chosen = [d.strip() for item in documents or () for d in item.split(",") if d.strip()]
    return report_file(caller.store, law, chosen, format)


def report_file(store: Any, law: str, documents: list[str], fmt: str) -> FileResponse:
    """The coverage report of ``law`` over ``documents`` (default all) written by the use case of ``compliance
    report`` and streamed as ``fmt`` (HTML and JSON inline, XLSX as an attachment); the web page's download too.

    Raises:
        LawNotFoundError: the law is not stored.
        NotFoundError: an unknown document.
    """
    from compliance.app.reports import coverage_report, write_report

    report = coverage_report(store, law, documents or None)
    folder = FilePath(tempfile.mkdtemp(prefix="compliance-report-"))
    out = folder / f"coverage-{report.law}.{fmt}"
    try:
        write_report(report, out, fmt)
    except BaseException:
        _remove(folder)
        raise
    return file_response(folder, out, REPORT_MEDIA_TYPES[fmt], out.name, inline=fmt != "xlsx")
