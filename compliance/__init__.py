"""Compliance checking for document workflows.

Map internal policies and controls to the GDPR articles they implement, find the EU/UK laws each control must
comply with, and keep every control↔law link with its evidence in a SQL database for review.

Importing this package is cheap: no torch, transformers, FastAPI, LangChain or database engine is loaded here.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from compliance._lazy import lazy_exports
from compliance.errors import ComplianceError

try:
    __version__ = version("compliance-plugin")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0+local"

__all__ = ["ComplianceError", "__version__", "get_settings"]

_LAZY = {"get_settings": "compliance.settings"}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
