"""A document's own table of contents: entries that point to pages, not text to map.

A policy written in Word and saved as PDF opens with its table of contents: "3. Access control ........ 4", one
line per section, the dots of the tab leader printed as characters; without a leader the page number stands at
the right margin ("3. Access control      4") and a PDF reader takes the two as a table. Word's own DOCX keeps
the entries in its TOC styles (the DOCX reader drops them) and an HTML page links them to places on the page (the
HTML and Markdown readers drop those), but a PDF, or a text converted from one, has nothing but the line. Read
as text, each entry became a paragraph: a list item with a blank to fill in (the leader), or a statement ("4.
Incident management and notification of personal data breaches to the supervisory authority …… 5") that the
classifier puts on Art. 33 at 0.97, and a wrapped entry ran into the next one.

:func:`contents_items` finds them in a sequence of texts in reading order (a PDF's lines, a document's blocks):

* an **entry with a leader**: a title with a letter, then at least four dots (``.`` with or without a space
  between; or two of ``…``, ``·``), then a page number (at most three digits, or a Roman numeral) at the end —
  wherever it stands, as long as the sequence holds at least three of them (one such line alone is more likely
  a price or a form) and the pages of the entries standing together never go back (a list set with leaders,
  "Payroll records ..... 7" / "Job applications ..... 1", is no table of contents);
* an entry's **first line** when the title wraps: a line with no sentence end right before an entry, which itself
  follows an entry or the contents heading;
* **entries without a leader** under a heading that names the contents ("Contents", "Table of contents",
  "Inhaltsverzeichnis", "Sommaire" …): the lines that follow it while each ends in a page number (digits, never
  going back) after a title with no sentence end; at least two, and the heading goes with them.

An item may hold several lines (a block's line breaks): it is an entry when every line is. The text of what is
found is not the document's: the connectors leave it out, as they leave out a DOCX's TOC field.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["CONTENTS_HEADING_RE", "MIN_LEADER_ENTRIES", "contents_items"]

#: a heading that names the table of contents (the whole heading, any case, an optional number before it)
CONTENTS_HEADING_RE = re.compile(
    r"^\s*(?:\d{1,2}\.?\s+)?(?:table\s+of\s+contents?|contents?|inhaltsverzeichnis|inhalt|sommaire|"
    r"table\s+des\s+mati[eè]res|[íi]ndice|inhoud(?:sopgave)?|spis\s+tre[śs]ci|innehåll(?:sförteckning)?)"
    r"\s*:?\s*$",
    re.IGNORECASE,
)
#: fewer entries with a leader than this in the whole sequence are no table of contents
MIN_LEADER_ENTRIES = 3

_LETTER = r"[^\W\d_]"
_LEADER_ENTRY_RE = re.compile(
    rf"^(?=.*{_LETTER}).*?\S\s*(?:(?:\.\s?){{4,}}|(?:[…·‥]\s?){{2,}})\s*(?P<page>\d{{1,3}}|[ivxlcdm]{{1,7}})$",
    re.IGNORECASE,
)
# a title, then the page number at the end after a space (a two-column row read as "Title: 4" too)
_PAGED_RE = re.compile(rf"^(?P<title>(?=.*{_LETTER}).*?[^\s.!?;:,])[\s:]+(?P<page>\d{{1,3}})$")
_SENTENCE_END_RE = re.compile(r"[.!?;:]$")
#: a title that wraps spans at most this many words before its last line
_MAX_WRAP_WORDS = 20


def contents_items(items: Sequence[str]) -> set[int]:
    """The indices of ``items`` (texts in reading order; an item's line breaks separate its lines) that belong to
    the document's table of contents, the heading that names it included when entries follow it."""
    lines = [[ln.strip() for ln in item.splitlines() if ln.strip()] for item in items]
    leader = [i for i, ls in enumerate(lines) if ls and _leader_lines(ls)]
    # entries close together (at most two items between: a wrapped title) make a group; a table of contents' pages
    # never go back, where a list set with leaders does ("Payroll records ..... 7", "Job applications ..... 1")
    groups: list[list[int]] = []
    for i in leader:
        if groups and i - groups[-1][-1] <= 3:
            groups[-1].append(i)
        else:
            groups.append([i])
    entries = [i for group in groups if _pages_go_on([lines[i] for i in group]) for i in group]
    found: set[int] = set()
    if sum(sum(1 for ln in lines[i] if _LEADER_ENTRY_RE.match(ln)) for i in entries) >= MIN_LEADER_ENTRIES:
        found = set(entries)
        for i in sorted(found):
            # an entry's wrapped title: one or two items before it, after an entry or the contents heading
            for first in (i - 1, i - 2):
                wrap = range(first, i)
                if first < 1 or any(j in found or not _wraps(lines[j]) for j in wrap):
                    continue
                if first - 1 in found or _names_contents(lines[first - 1]):
                    found.update(wrap)
                    break
    for i, ls in enumerate(lines):
        if _names_contents(ls):
            run = _paged_run(lines, i + 1, found)
            if run:
                found.update(run)
                found.add(i)
    return found


def _pages_go_on(items: list[list[str]]) -> bool:
    """Whether the page numbers (in digits) of some entries with a leader never go back."""
    pages = [
        int(m.group("page"))
        for ls in items
        for ln in ls
        if (m := _LEADER_ENTRY_RE.match(ln)) and m.group("page").isdigit()
    ]
    return pages == sorted(pages)


def _leader_lines(lines: list[str]) -> bool:
    """Every line an entry with a leader, or the wrapped start of the entry after it within the item."""
    if not _LEADER_ENTRY_RE.match(lines[-1]):
        return False
    return all(_LEADER_ENTRY_RE.match(ln) or _wraps([ln]) for ln in lines[:-1])


def _wraps(lines: list[str]) -> bool:
    return (
        bool(lines)
        and not _SENTENCE_END_RE.search(lines[-1])
        and sum(len(ln.split()) for ln in lines) <= _MAX_WRAP_WORDS
    )


def _names_contents(lines: list[str]) -> bool:
    return len(lines) == 1 and CONTENTS_HEADING_RE.match(lines[0]) is not None


def _paged_run(lines: list[list[str]], start: int, found: set[int]) -> list[int]:
    """The items from ``start`` that read as entries without a leader (or are already found), while the pages
    never go back; empty when fewer than two."""
    run: list[int] = []
    last_page = 0
    pending: list[int] = []  # a wrapped title waiting for its last line
    for i in range(start, len(lines)):
        if i in found:
            run.extend([*pending, i])
            pending = []
            continue
        pages = [_page(ln) for ln in lines[i]]
        if lines[i] and pages[-1] is not None:
            numbered = [p for p in pages if p is not None]
            if numbered[0] >= last_page and numbered == sorted(numbered) and _wraps_between(lines[i], pages):
                last_page = numbered[-1]
                run.extend([*pending, i])
                pending = []
                continue
        if not pending and _wraps(lines[i]):
            pending = [i]
            continue
        break
    return run if len(run) >= 2 else []


def _wraps_between(lines: list[str], pages: list[int | None]) -> bool:
    """Within one item: each line without a page number is a wrapped title (no sentence end)."""
    return all(p is not None or _wraps([ln]) for ln, p in zip(lines, pages, strict=True))


def _page(line: str) -> int | None:
    m = _PAGED_RE.match(line)
    return int(m.group("page")) if m else None
