"""Integrations with other frameworks (each behind its extra): :mod:`compliance.integrations.langchain`."""

from __future__ import annotations

__all__: list[str] = []  # each integration is its own module, imported directly (it needs its extra)
