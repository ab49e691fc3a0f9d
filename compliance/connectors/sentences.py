"""Sentence boundaries with spaCy's rule-based sentencizer (``spacy.blank("en")``; no model download).

The pipeline is created once, lazily, on first use, and cached for the process.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

_FALLBACK_RE = re.compile(r"[^.!?]+(?:[.!?]+[\"')\]]*|$)")


@lru_cache(maxsize=1)
def sentencizer() -> Any:
    """The shared spaCy pipeline: a blank English tokenizer plus the ``sentencizer`` component."""
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of ``text``, whitespace trimmed, in order.

    Args:
        text: A paragraph.

    Returns:
        ``(start, end)`` pairs with ``text[start:end]`` one sentence and no leading/trailing whitespace.
    """
    nlp = sentencizer()
    spans: list[tuple[int, int]] = []
    if len(text) < nlp.max_length:
        raw = [(s.start_char, s.end_char) for s in nlp(text).sents]
    else:  # pragma: no cover - a single "paragraph" of a million characters; use a regex instead
        raw = [(m.start(), m.end()) for m in _FALLBACK_RE.finditer(text)]
    for start, end in raw:
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if end > start:
            spans.append((start, end))
    return spans
