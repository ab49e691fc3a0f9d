"""Linking: classifier and retriever outputs → scored paragraph ↔ provision links with a status.

Modules: :mod:`compliance.linking.classifier_links` (GDPR article classifier → links with the calibrated
review band), :mod:`compliance.linking.decision` and :mod:`compliance.linking.pairs` (bi-encoder link decision).
Nothing heavy is imported here.
"""

from __future__ import annotations

__all__: list[str] = []  # modules are imported directly: classifier_links, decision, pairs
