"""The JSON API's routes, one module per area, all under ``/api/v1`` (``/health`` apart)."""

from __future__ import annotations

from fastapi import FastAPI

__all__ = ["API_PREFIX", "register_routes"]

API_PREFIX = "/api/v1"


def register_routes(app: FastAPI) -> None:
    """Mount every router of the JSON API on ``app``."""
    from compliance.api.routes import alerts, documents, jobs, laws, links, reports, service

    app.include_router(service.health_router)
    for module in (service, jobs, documents, links, reports, alerts, laws):
        app.include_router(module.router, prefix=API_PREFIX)
