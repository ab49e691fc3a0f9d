"""Job workers: audits fanned out as one task per document.

Two ways to run the same jobs (:mod:`compliance.app.jobs`):

* **Celery** (``COMPLIANCE_BROKER_URL``, e.g. ``redis://127.0.0.1:6379/0``): ``compliance serve`` and ``compliance
  jobs audit`` queue one task per document; ``compliance worker`` processes (as many as you like, on any machine
  that reaches the broker and the database) load the models once and run them. Tasks are acknowledged late and
  claimed under a lease, so a worker killed mid-document loses nothing and another one finishes it.
* **In-process** (no broker configured): a thread pool inside the server or command runs them; the embedded
  default needs no server.

Importing this package loads neither Celery nor a model; :func:`job_dispatcher` picks the mode.
"""

from __future__ import annotations

from compliance._lazy import lazy_exports

__all__ = ["CeleryDispatcher", "ThreadDispatcher", "job_dispatcher", "run_worker"]

_LAZY = {
    "ThreadDispatcher": "compliance.workers.inprocess",
    "job_dispatcher": "compliance.workers.inprocess",
    "CeleryDispatcher": "compliance.workers.celery_app",
    "run_worker": "compliance.workers.celery_app",
}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
