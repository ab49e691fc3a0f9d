"""Plain-text helpers used across the package: cleaning, snippets and splitting texts into passages.

* :func:`clean_text` — one normaliser for extracted document text and for law text (``legal=True`` also strips
  consolidation markers and keeps blank lines, which separate a law's blocks).
* :func:`snippet` — a one-line excerpt for evidence and listings.
* :func:`word_windows` — fixed-size word windows with overlap: the one word-window splitter. The alert run cuts
  articles with it, :func:`split_passages` cuts over-long paragraphs with it.
* :func:`split_passages` — paragraphs packed into passages of at most ``size`` words (BM25 passage mode, best
  passage, re-ranker passages); every word is kept.
* :func:`merge_blocks` — blank-line blocks merged up to at least ``min_words`` words and cut at ``max_words``
  (the link decision's training passages, where a passage must be long enough to carry meaning and may lose
  its tail).
* :func:`split_clauses` — a text's clauses (sentences, comma-separated parts, and what follows a reason or
  relative connective: "… fined a controller €3,000 | for failing to inform …"): the classifier reads a text
  about a sanction clause by clause to find what it was for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["clean_text", "merge_blocks", "snippet", "split_clauses", "split_passages", "word_windows"]

_SPACE_RE = re.compile(r"[ \t\u00a0\u2000-\u200a\u202f\u205f\u3000]+")
_ZERO_WIDTH_RE = re.compile(r"[\u200b\u200c\u200d\u2060\ufeff\u00ad\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_MARKERS_RE = re.compile(r"[▼►◄][A-Z]?\d*")
_PARA_BREAK = re.compile(r"\n\s*\n|\n(?=\s*(?:\(?[0-9a-z]{1,3}[.)]\s))")
_BLANK_LINE = re.compile(r"\n\s*\n")
#: where a clause ends: after a sentence's or a clause's closing punctuation, at a comma, and before a connective
#: that introduces a reason, a means or a relative clause
_CLAUSE_BREAK = re.compile(
    r"(?<=[.;:])\s+|,\s+|\s+(?=\b(?:for|after|because|since|as it|which|by)\b)", re.IGNORECASE
)


def clean_text(text: str, *, legal: bool = False) -> str:
    """Normalise spacing: drop control and zero-width characters and soft hyphens, unify line ends, collapse
    runs of spaces and trim every line.

    Args:
        text: the text.
        legal: law text (consolidated acts): also replace the consolidation markers (``▼M2``, ``►M2``, ``◄``) by
            a space and keep empty lines, since a blank line separates a law's blocks (:func:`merge_blocks`).
            Without it (document text, where every block is one paragraph already) empty lines are dropped.
    """
    text = _ZERO_WIDTH_RE.sub("", text).replace("\r\n", "\n").replace("\r", "\n")
    if legal:
        text = _MARKERS_RE.sub(" ", text)
    lines = [_SPACE_RE.sub(" ", line).strip() for line in text.split("\n")]
    if legal:
        return "\n".join(lines).strip()
    return "\n".join(line for line in lines if line)


def snippet(text: str, n: int) -> str:
    """``text`` on one line (whitespace collapsed), cut to at most ``n`` characters with a closing ``…``."""
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def word_windows(words: Sequence[str], size: int, overlap: int) -> list[list[str]]:
    """Windows of ``size`` words, consecutive windows sharing ``overlap`` words; the last one ends at the last
    word. A sequence of at most ``size`` words is one window (an empty one gives one empty window).

    Raises:
        ValueError: ``size`` < 1 or ``overlap`` not in ``[0, size)``.
    """
    if size < 1 or not 0 <= overlap < size:
        raise ValueError(f"word windows need size >= 1 and 0 <= overlap < size (got {size}, {overlap})")
    words = list(words)
    if len(words) <= size:
        return [words]
    step = size - overlap
    out = []
    for start in range(0, len(words), step):
        out.append(words[start : start + size])
        if start + size >= len(words):
            break
    return out


def split_passages(text: str, size: int = 200, overlap: int = 50) -> list[str]:
    """Passages of at most ``size`` words.

    Paragraphs (blank-line or numbered-line breaks) are packed greedily into passages; a paragraph longer than
    ``size`` is cut into :func:`word_windows` of ``size`` words sharing ``overlap`` words. Every word of ``text``
    lands in at least one passage; an empty text gives one empty passage (so every document has a passage).

    Raises:
        ValueError: ``size`` < 1.
    """
    if size < 1:
        raise ValueError("passage size must be positive")
    overlap = min(max(0, overlap), size - 1)
    paragraphs = [p.split() for p in _PARA_BREAK.split(text)]
    paragraphs = [p for p in paragraphs if p]
    if not paragraphs:
        return [""]
    passages: list[list[str]] = []
    current: list[str] = []
    for para in paragraphs:
        if len(para) > size:
            if current:
                passages.append(current)
                current = []
            passages.extend(word_windows(para, size, overlap))
            continue
        if current and len(current) + len(para) > size:
            passages.append(current)
            current = []
        current = current + para
    if current:
        passages.append(current)
    return [" ".join(p) for p in passages]


def merge_blocks(text: str, min_words: int, max_words: int) -> list[str]:
    """Blank-line separated blocks merged until each has at least ``min_words`` words, each cut at ``max_words``
    words; a short tail (under ``min_words // 2`` words) joins the last block, up to ``max_words + min_words``."""
    pieces = [p.strip() for p in _BLANK_LINE.split(text) if p.strip()]
    out: list[str] = []
    current: list[str] = []
    count = 0
    for piece in pieces:
        current.append(piece)
        count += len(piece.split())
        if count >= min_words:
            out.append(" ".join(" ".join(current).split()[:max_words]))
            current, count = [], 0
    if current:
        tail = " ".join(current)
        if out and count < min_words // 2:
            out[-1] = " ".join((out[-1] + " " + tail).split()[: max_words + min_words])
        else:
            out.append(tail)
    return out


def split_clauses(text: str, min_words: int = 3) -> list[str]:
    """The clauses of ``text`` with at least ``min_words`` words, in order: split after ``.;:``, at commas and
    before "for", "after", "because", "since", "as it", "which" and "by" ("The DPA fined a controller €3,000 |
    for failing to inform the data subjects" → two clauses). Shorter pieces are dropped, not merged."""
    parts = (p.strip() for p in _CLAUSE_BREAK.split(text) if p)
    return [p for p in parts if len(p.split()) >= min_words]
