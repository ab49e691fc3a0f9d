"""The FastAPI application: the JSON API under ``/api/v1``, the web review page under ``/ui``, ``/health``.

:func:`create_app` wires the services every route uses (the store, the job dispatcher, the classifier for
``map``) into ``app.state.services``; tests pass their own.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI

from compliance.api.errors import install_error_handlers

if TYPE_CHECKING:  # pragma: no cover
    from compliance.app.jobs import JobDispatcher
    from compliance.models.classifier import ArticleClassifier
    from compliance.store import Store

__all__ = ["Services", "create_app"]

logger = logging.getLogger(__name__)


@dataclass
class Services:
    """What the routes need, created once per application.

    Attributes:
        store: the database (requests write through ``store.as_actor(token name)``).
        dispatcher: runs job items (Celery queue or in-process threads).
        classifier: the classifier for ``map`` (loaded on first use and kept).
        mode: ``celery`` or ``in-process``.
        owns_dispatcher: shut the dispatcher down with the application.
    """

    store: Store
    dispatcher: JobDispatcher
    classifier: Callable[[], ArticleClassifier]
    mode: str = "in-process"
    owns_dispatcher: bool = False
    extras: dict[str, Any] = field(default_factory=dict)


#: routes that take a document's bytes (they stream the body against ``max_document_bytes`` themselves); a batch
#: may hold this many times that
RAW_BODY_ROUTES = ("/api/v1/audits", "/api/v1/laws", "/api/v1/links/import")
BATCH_FACTOR = 20


class BodyLimitMiddleware:
    """Refuses request bodies over the limit with 413 — as declared (``Content-Length``) or as they stream in —
    before a route parses them: ``max_request_bytes`` for JSON and forms, ``max_document_bytes`` times
    ``BATCH_FACTOR`` for a batch upload; raw document uploads check their own, smaller limit."""

    def __init__(self, app: Any) -> None:
        self.app = app

    def _limit(self, path: str) -> int | None:
        from compliance.settings import get_settings

        settings = get_settings()
        if path == "/api/v1/audits/batch":
            return settings.max_document_bytes * BATCH_FACTOR
        if path in RAW_BODY_ROUTES:
            return None
        return settings.max_request_bytes

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        from compliance.api.errors import error_body
        from compliance.errors import RequestTooLargeError

        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self._limit(scope["path"])
        if limit is None:
            await self.app(scope, receive, send)
            return
        too_large = RequestTooLargeError(f"the request body is larger than {limit:,} bytes")
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            from fastapi.responses import JSONResponse

            await JSONResponse(error_body(too_large), status_code=413)(scope, receive, send)
            return
        received = 0

        async def limited() -> Any:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise too_large
            return message

        await self.app(scope, limited, send)


def _default_classifier() -> ArticleClassifier:
    from compliance.app.jobs import cached_classifier

    return cached_classifier()  # the process-wide cache the in-process job threads use too


def create_app(
    store: Store | None = None,
    *,
    dispatcher: JobDispatcher | None = None,
    classifier: Callable[[], ArticleClassifier] | None = None,
    resume_jobs: bool = True,
) -> FastAPI:
    """The application.

    Args:
        store: the database (default: the configured one, created at head when empty).
        dispatcher: where job items go (default: the Celery queue if ``COMPLIANCE_BROKER_URL`` is set, else a
            thread pool in this process).
        classifier: returns the classifier for ``map`` (default: the default classifier, loaded once).
        resume_jobs: in-process mode: on start-up, dispatch again the items a previous process left unfinished.
    """
    from compliance import __version__
    from compliance.api.routes import register_routes
    from compliance.api.web import register_web
    from compliance.app import open_store
    from compliance.workers.inprocess import ThreadDispatcher, job_dispatcher

    store = store or open_store()
    owns = dispatcher is None
    dispatcher = dispatcher or job_dispatcher(store)
    mode = "in-process" if isinstance(dispatcher, ThreadDispatcher) else "celery"
    services = Services(store, dispatcher, classifier or _default_classifier, mode, owns)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if resume_jobs and mode == "in-process":
            from compliance.app.jobs import resume_queued_items

            store.requeue_stale_job_items()  # a previous process died with these running
            resumed = resume_queued_items(store, dispatcher)
            if resumed:
                logger.info("resumed %d unfinished job item(s)", resumed)
        yield
        if services.owns_dispatcher and isinstance(dispatcher, ThreadDispatcher):
            dispatcher.shutdown(wait=True)

    app = FastAPI(
        title="compliance",
        version=__version__,
        summary="Map internal policies and controls to the laws they implement; review the links.",
        description=(
            "Every route but `/health` needs `Authorization: Bearer <token>` (`compliance tokens create`). "
            'Errors have one body: `{"ok": false, "error", "code", "status"}`. See docs/api.md.'
        ),
        lifespan=lifespan,
        # no route but /health answers without a token: the OpenAPI document is served to signed-in callers
        # (GET /api/v1/openapi.json), and the interactive docs pages (which load scripts from a CDN) are off
        openapi_url=None,
        docs_url=None,
        redoc_url=None,
    )
    app.state.services = services
    app.add_middleware(BodyLimitMiddleware)
    install_error_handlers(app)
    register_routes(app)
    register_web(app)
    return app
