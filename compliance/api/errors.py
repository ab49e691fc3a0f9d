"""One JSON error body for every route: ``{"ok": false, "error": message, "code": "C402", "status": 404}``.

The status is always the raising :class:`~compliance.errors.ComplianceError`'s ``http_status``; errors raised by
the framework itself (an unknown route, a wrong method, a body that does not match its schema) are first turned
into the matching ``ComplianceError``. ``tests/test_api_errors.py`` enforces the shape over every route.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from compliance.errors import (
    AuthenticationError,
    ComplianceError,
    InvalidRequestError,
    MethodNotAllowedError,
    NotFoundError,
    PermissionDeniedError,
    RequestTooLargeError,
    UnsupportedMediaTypeError,
)

__all__ = ["ERROR_RESPONSES", "ErrorBody", "error_body", "install_error_handlers"]

logger = logging.getLogger(__name__)


class ErrorBody(BaseModel):
    """The body of every error response."""

    model_config = ConfigDict(extra="forbid")

    ok: bool = Field(False, description="Always false.")
    error: str = Field(description="What was wrong, and what to do.")
    code: str = Field(description="The stable error code (C801 …).", pattern=r"^C\d{3}$")
    status: int = Field(description="The HTTP status, repeated.")


def _response(status: int, what: str) -> dict[str, Any]:
    return {"model": ErrorBody, "description": what}


#: the error responses every authenticated route documents (schemathesis checks responses against them)
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: _response(400, "Invalid option or setting."),
    401: _response(401, "No API token, or an unknown or revoked one."),
    403: _response(403, "The token's role does not allow this."),
    404: _response(404, "No such object."),
    405: _response(405, "Method not allowed."),
    409: _response(409, "Conflicts with what is stored."),
    413: _response(413, "The body is too large."),
    415: _response(415, "Unsupported content type."),
    422: _response(422, "The request or its content is invalid."),
    500: _response(500, "Internal error (the code says which part failed)."),
    501: _response(501, "An optional extra is not installed."),
    502: _response(502, "An upstream service (download, webhook) failed."),
    503: _response(503, "The job queue is unavailable."),
}

_BY_STATUS: dict[int, type[ComplianceError]] = {
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    405: MethodNotAllowedError,
    413: RequestTooLargeError,
    415: UnsupportedMediaTypeError,
}


def error_body(exc: ComplianceError) -> dict[str, Any]:
    """The JSON body for ``exc``."""
    return {"ok": False, "error": str(exc), "code": exc.code, "status": exc.http_status}


def error_response(exc: ComplianceError) -> JSONResponse:
    """The response for ``exc`` (``WWW-Authenticate`` on 401, as RFC 6750 asks)."""
    headers = {"WWW-Authenticate": "Bearer"} if exc.http_status == 401 else None
    return JSONResponse(error_body(exc), status_code=exc.http_status, headers=headers)


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "invalid request: " + "; ".join(parts)


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers that turn every error into :class:`ErrorBody`."""

    @app.exception_handler(ComplianceError)
    async def compliance_error(request: Request, exc: ComplianceError) -> JSONResponse:
        if exc.http_status >= 500:
            logger.error("%s %s failed: [%s] %s", request.method, request.url.path, exc.code, exc)
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(InvalidRequestError(_validation_message(exc)))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        kind = _BY_STATUS.get(exc.status_code)
        if kind is None:
            error: ComplianceError = InvalidRequestError(str(exc.detail))
        elif kind is NotFoundError and exc.detail == "Not Found":
            error = NotFoundError(
                f"no route {request.method} {request.url.path}; see GET /api/v1/openapi.json"
            )
        else:
            error = kind(str(exc.detail))
        return error_response(error)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        logger.exception("%s %s failed", request.method, request.url.path)
        return error_response(ComplianceError(f"internal error ({type(exc).__name__}); see the server log"))
