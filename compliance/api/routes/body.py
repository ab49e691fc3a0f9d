"""Request bodies read with a size limit while they stream in (nothing over the limit is held in memory)."""

from __future__ import annotations

from typing import Any

from fastapi import Request

from compliance.errors import DocumentTooLargeError, RequestTooLargeError, UnsupportedMediaTypeError

__all__ = ["binary_body", "media_type_of", "read_document"]


def binary_body(media_types: frozenset[str]) -> dict[str, Any]:
    """The OpenAPI request body of a route that takes a raw file of one of ``media_types``."""
    return {
        "requestBody": {
            "required": True,
            "description": "The file's bytes; the Content-Type header is its media type.",
            "content": {m: {"schema": {"type": "string", "format": "binary"}} for m in sorted(media_types)},
        }
    }


def media_type_of(request: Request, accepted: frozenset[str]) -> str:
    """The request's media type (lower case, without parameters), if ``accepted``.

    Raises:
        UnsupportedMediaTypeError: another content type.
    """
    media = request.headers.get("content-type", "application/octet-stream").split(";")[0].strip().lower()
    if media not in accepted:
        raise UnsupportedMediaTypeError(
            f"content type {media!r} is not accepted here; send one of: {', '.join(sorted(accepted))}"
        )
    return media


async def read_document(request: Request, name: str, limit: int) -> bytes:
    """The body, streamed in, refused as soon as it passes ``limit`` bytes.

    Raises:
        DocumentTooLargeError: over the limit (the declared Content-Length is checked before reading).
        RequestTooLargeError: an invalid Content-Length header.
    """
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            size = int(declared)
        except ValueError as e:
            raise RequestTooLargeError(f"invalid Content-Length {declared!r}") from e
        if size > limit:
            raise DocumentTooLargeError(name, f"{size:,} bytes, more than the limit of {limit:,}")
    chunks: list[bytes] = []
    received = 0
    async for chunk in request.stream():
        received += len(chunk)
        if received > limit:
            raise DocumentTooLargeError(name, f"more than the limit of {limit:,} bytes")
        chunks.append(chunk)
    return b"".join(chunks)
