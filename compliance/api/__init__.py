"""The HTTP API and the web review page (FastAPI), started by ``compliance serve``.

Needs the ``api`` extra (FastAPI, Uvicorn, Jinja2, python-multipart)::

    from compliance.api import create_app
    app = create_app()          # the configured store; jobs on the broker, or in-process without one

Every route calls a use case of :mod:`compliance.app`; errors become one JSON body
``{"ok": false, "error", "code", "status"}`` (``docs/api.md``).
"""

from __future__ import annotations

from compliance.errors import MissingDependencyError

try:
    import fastapi  # noqa: F401
    import jinja2  # noqa: F401
except ImportError as e:  # pragma: no cover - exercised by the core-install check
    raise MissingDependencyError.for_extra("api", e.name or "fastapi") from e

from compliance._lazy import lazy_exports

__all__ = ["create_app"]

_LAZY = {"create_app": "compliance.api.app"}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
