"""PDF connector via pdfplumber: text lines → paragraphs, headings, lists, with page numbers.

Steps, all on pdfplumber's words and text lines (layout off):

0. **Turned pages and text.** A page whose characters are mostly turned by the same right angle (a landscape
   table drawn sideways) is opened again turned upright; on other pages turned characters (a diagonal watermark,
   a label up the margin) are left out. Tables drawn without rules (tab stops; a label/value block; a table
   printed by a web browser, its cells centred in their rows and its header centred over the columns) are found
   before the columns.
1. **Columns.** A vertical white band in the middle of a page that no body line crosses, with text lines of
   some length on both sides, makes the page a two-column page: its rows are cut into horizontal bands (a row
   that crosses the band, such as a title, is a full-width band of its own) and each band is read left column
   first, then right column (reading order per column).
2. **Bullet glyphs.** A bullet glyph (``•``, a private-use symbol-font character, or an unmapped glyph that
   extracts as ``(cid:NNN)``) is a list marker, never a heading: it is left out of a line's font size and
   boldness, and a glyph drawn in a larger font (so that it lands on a text line of its own) is joined to the
   text line beside it.
3. **Running headers/footers.** Among the first and last two lines of every page, a line that recurs (digits
   normalised, so ``"Page 3 of 12"`` matches ``"Page 4 of 12"``) on at least half of the pages (and two or more)
   is removed, as is any line there that is only a page number. On any page (a single-page document
   included) the first or last line that sits in the page's top or bottom margin zone, set apart from the body
   by its smaller font or a wide gap, is page furniture: kept as a paragraph of its own with the role
   ``furniture`` (repetition across the documents of a batch is recognised later, by
   :mod:`compliance.connectors.roles`).
4. **Headings.** The body font size is the most common character size; a line at least 15 % larger, or a short
   all-bold line without final punctuation, is a heading. Larger sizes give outer levels. A heading set in the
   left margin beside its section's first line (a side heading) is cut off that line and heads the section.
5. **Re-flow.** Lines join into one paragraph until a vertical gap clearly larger than the usual line spacing, a
   heading, a list marker, a first-line indent, a sentence ending on a short line, or a page or column break (a
   paragraph continues onto the next page or column when it did not end with punctuation and the next part
   starts in lower case). A list item ends where a line starts left of the item's text (at or before its
   marker) unless that line plainly continues the item's sentence, so that a list's last item does not run into
   the next paragraph. A line ending in ``letter-`` followed by a lower-case word is de-hyphenated
   (``"pro-" + "cessing"`` → ``"processing"``).
"""

from __future__ import annotations

import io
import itertools
import math
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from compliance.connectors.assemble import (
    BULLET_GLYPHS,
    Block,
    assemble,
    capitals_heading,
    guess_header,
    table_blocks,
    typed_heading_depth,
)
from compliance.connectors.config import SplitConfig
from compliance.connectors.contents import contents_items
from compliance.connectors.document import ParsedDocument
from compliance.connectors.pdf_guard import bounded_inflate, check_page_count
from compliance.connectors.safety import check_paragraph_count, check_size
from compliance.errors import DocumentError, DocumentTooLargeError, EncryptedDocumentError

MEDIA_TYPE = "application/pdf"
_GLYPH_BULLETS = BULLET_GLYPHS + "✓"
_BULLET_CHARS = _GLYPH_BULLETS + "–*-"
#: a line that starts with a bullet glyph (never a heading)
_GLYPH_RE = re.compile(r"^(?:\(cid:\d+\)|[" + re.escape(_GLYPH_BULLETS) + r"])")
#: a line made of bullet glyphs only (drawn apart from its text, e.g. in a larger symbol font)
_GLYPH_ONLY_RE = re.compile(r"^(?:(?:\(cid:\d+\)|[" + re.escape(_GLYPH_BULLETS) + r"])\s*)+$")
_BULLET_RE = re.compile(
    r"^(?:(\(cid:\d+\)|["
    + re.escape(_GLYPH_BULLETS)
    + r"])\s*|([–*-]|\(?\d{1,3}[.)]|\(?[a-z][.)]|\(?[ivx]{1,5}[.)])\s+)"
    r"(\S.*)$"
)
#: a clause number of two levels or more at the start of a line ("3.2 ", "10.1.4. "), not a list marker
_CLAUSE_NUMBER_RE = re.compile(r"^(\d{1,3}(?:\.\d{1,3})+)\.?\s+\S")
_PAGE_NUMBER_RE = re.compile(r"^(?:(?:page|p\.|seite)\s*)?#+(?:\s*(?:of|/|von)\s*#+)?$|^[-–—]\s*#+\s*[-–—]$")
_HYPHEN_END_RE = re.compile(r"[a-zà-ÿ]-$")
#: share of the page height, from the top and from the bottom, where page furniture sits
_MARGIN_ZONE = 0.08
#: the narrowest white band (points) taken for the gutter between two columns
_MIN_GUTTER = 7.0

#: column of a line: the whole width, or the left/right column of a two-column band
FULL, LEFT, RIGHT = 0, 1, 2


@dataclass(slots=True)
class _Line:
    text: str
    page: int
    top: float
    bottom: float
    x0: float
    size: float
    bold: bool
    table: list[list[str]] | None = None  # a table found by pdfplumber, standing in for its text lines
    x1: float = 0.0
    text_x0: float = 0.0  # where the text after a list marker starts (x0 when there is no marker)
    band: int = 0  # horizontal band of the page (reading order: band, then column, then top)
    col: int = FULL
    page_height: float = 0.0
    furniture: bool = False  # a page header or footer recognised by its position
    ruled: bool = (
        True  # a table with rules (pdfplumber's); False: read from tab stops, a header only when bold
    )
    side: bool = False  # a heading set in the left margin beside its section's text (a side heading)
    lead: float = 0.0  # the width of the line's first word (whether it would have fit on the line above)
    #: the line cut at a wide gap: (left text, right end of the left part, right text, right part's x0 and text
    #: start); a side heading and its section's first line when :func:`_side_headings` accepts the cut
    cut: tuple[str, float, str, float, float] | None = None
    #: a table read from its words: the gaps between its text lines (within a cell, between rows), which count
    #: towards the page's usual line spacing as they did when the table was read as lines
    gaps: tuple[float, ...] = ()


@dataclass(slots=True)
class _Open:
    kind: str  # "paragraph" | "list-item"
    lines: list[_Line] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)
    marker: str = ""


def _marker(m: re.Match[str]) -> str:
    """The list marker of a :data:`_BULLET_RE` match: ``"-"`` for bullets, else the enumerator."""
    return "-" if m.group(1) is not None or m.group(2) in _BULLET_CHARS else m.group(2)


def _is_glyph(char_text: str) -> bool:
    return char_text.startswith("(cid:") or (len(char_text) == 1 and char_text in _GLYPH_BULLETS)


#: fonts of symbols, whose letters are pictures: Wingdings' "§" is a square, "Ø" an arrow, "ü" a tick
_SYMBOL_FONT_RE = re.compile(r"wingdings|webdings|dingbats|symbol", re.IGNORECASE)
_MONO_FONT_RE = re.compile(r"courier|mono", re.IGNORECASE)


def _letter_bullet(chars: list[dict[str, Any]], size: float) -> bool:
    """Whether a line opens with a bullet that its PDF writes as a letter: a character of a symbol font (Wingdings'
    "§", "Ø", "ü", where the PDF maps no Unicode to them), or Word's second-level bullet, an "o" in Courier New;
    either set apart from the item's text by a tab (more than half the font size), not a space."""
    body = [c for c in chars if str(c.get("text", "")).strip()]
    if len(body) < 2 or len(str(body[0].get("text", ""))) != 1:
        return False
    first, second = body[0], body[1]
    if float(second["x0"]) - float(first["x1"]) <= 0.5 * size:
        return False
    font = str(first.get("fontname", ""))
    # (a converter without Courier New sets it in the monospace font it has: Liberation Mono, DejaVu Sans Mono)
    return bool(_SYMBOL_FONT_RE.search(font)) or (
        first.get("text") == "o" and bool(_MONO_FONT_RE.search(font))
    )


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"\d+", "#", text.lower())).strip()


def _is_encryption_error(exc: BaseException) -> bool:
    seen: set[int] = set()
    stack: list[Any] = [exc]
    while stack:
        e = stack.pop()
        if not isinstance(e, BaseException) or id(e) in seen:
            continue
        seen.add(id(e))
        name = type(e).__name__
        if "Password" in name or "Encrypt" in name:
            return True
        stack.extend([*e.args, e.__cause__, e.__context__])
    return False


def _cell_text(cell: str | None) -> str:
    parts: list[str] = []
    for line in (cell or "").split("\n"):
        if line.strip():
            _join(parts, line.strip())
    return parts[0] if parts else ""


def _bold(chars: list[dict[str, Any]]) -> bool:
    letters = [c for c in chars if str(c.get("text", "")).isalpha()]
    return bool(letters) and all("bold" in str(c.get("fontname", "")).lower() for c in letters)


def _text_start(text: str, chars: list[dict[str, Any]], x0: float) -> float:
    """Where the text after a leading list marker starts (``x0`` when the line has no marker)."""
    m = _BULLET_RE.match(text)
    if not m:
        return x0
    target = "".join((m.group(1) or m.group(2)).split())
    seen = ""
    for i, c in enumerate(chars):
        seen += "".join(str(c.get("text", "")).split())
        if len(seen) >= len(target):
            return float(chars[i + 1]["x0"]) if i + 1 < len(chars) else x0
    return x0


_LIGATURES = str.maketrans({"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "ft", "ﬆ": "st"})


def _chars_text(chars: list[dict[str, Any]], size: float) -> str:
    """The text of some characters of one line, left to right: a space where the PDF has one, or where two
    characters stand further apart than 0.15 of the font size; ligatures spelled out, as pdfplumber's lines are."""
    out: list[str] = []
    prev: dict[str, Any] | None = None
    for c in sorted(chars, key=lambda c: float(c["x0"])):
        text = str(c.get("text", ""))
        if not text.strip():
            out.append(" ")
        else:
            if prev is not None and float(c["x0"]) - float(prev["x1"]) > 0.15 * size:
                out.append(" ")
            out.append(text.translate(_LIGATURES))
        prev = c
    return " ".join("".join(out).split())


def _wide_cut(chars: list[dict[str, Any]], size: float) -> tuple[str, float, str, float, float] | None:
    """The line cut at its widest gap between two characters (``chars``: all of the line's, spaces included) when
    that gap is wider than two and a half times the font size (at least 18 pt), far wider than a space:
    ``(left text, left part's right end, right text, right part's x0, where the right text starts after a list
    marker)``; None otherwise."""
    ordered = sorted((c for c in chars if str(c.get("text", "")).strip()), key=lambda c: float(c["x0"]))
    if len(ordered) < 2:
        return None
    width, i = max(
        (float(b["x0"]) - float(a["x1"]), i) for i, (a, b) in enumerate(itertools.pairwise(ordered))
    )
    if width < max(18.0, 2.5 * size):
        return None
    cut = float(ordered[i]["x1"])
    left = _chars_text([c for c in chars if float(c["x0"]) < cut], size)
    right_chars = ordered[i + 1 :]
    right = _chars_text([c for c in chars if float(c["x0"]) >= cut], size)
    if not left or not right:
        return None
    x0 = float(right_chars[0]["x0"])
    return left, cut, right, x0, _text_start(right, right_chars, x0)


def _lead_width(chars: list[dict[str, Any]], size: float) -> float:
    """The width of a line's first word: from its first character to the last before a space or a gap wider than
    0.15 of the font size."""
    ordered = sorted(chars, key=lambda c: float(c["x0"]))
    start = next((i for i, c in enumerate(ordered) if str(c.get("text", "")).strip()), None)
    if start is None:
        return 0.0
    end = start
    for i in range(start + 1, len(ordered)):
        c = ordered[i]
        if not str(c.get("text", "")).strip() or float(c["x0"]) - float(ordered[end]["x1"]) > 0.15 * size:
            break
        end = i
    return float(ordered[end]["x1"]) - float(ordered[start]["x0"])


def _side_label(text: str) -> bool:
    """Text that can be a side heading: up to eight words, one of them of two letters or more, ending no
    sentence or label (``"Scope"``, ``"Roles and"``; not ``"Owner:"``, ``"1."`` or ``"(a)"``)."""
    words = text.split()
    return (
        len(words) <= 8
        and text[-1] not in ".,;:!?"
        and any(sum(ch.isalpha() for ch in w) >= 2 for w in words)
        and not _GLYPH_RE.match(text)
    )


def _side_headings(lines: list[_Line]) -> list[_Line]:
    """Headings set in the left margin beside their section's text (a side heading, its text starting on the
    baseline of the section's first line) read as headings of their own.

    pdfplumber reads such a heading and the first line beside it as one line (``"Scope It applies to …"``), and a
    heading wrapped onto a second line ran into the section's second line. A line cut at a wide gap
    (:func:`_wide_cut`) is a side heading and a body line when its left part reads as a heading
    (:func:`_side_label`), its right part starts at the body's left edge (at least two other lines of the page
    start there, within 3 pt, one of them filling most of the column: prose, not a label/value block) and the
    right part is prose too (four words or more, or a line at the edge follows it). A line alone beneath a side
    heading, in the same place and no longer than it may be, is the heading's second line; the parts of one heading
    are joined, so the heading comes before its section's first line."""
    text_lines = [ln for ln in lines if ln.table is None]
    cuts = [ln for ln in text_lines if ln.cut is not None and _side_label(ln.cut[0])]
    if not cuts:
        return lines

    def start(ln: _Line) -> float:
        return ln.cut[3] if ln.cut is not None else ln.x0

    right_end = max(ln.x1 for ln in text_lines)
    side: list[_Line] = []
    for ln in cuts:
        assert ln.cut is not None
        left, left_x1, right, x0, text_x0 = ln.cut
        at_edge = [
            o
            for o in text_lines
            if o is not ln and (o.band, o.col) == (ln.band, ln.col) and abs(start(o) - x0) <= 3
        ]
        if len(at_edge) < 2 or not any(o.x1 - x0 >= 0.7 * (right_end - x0) for o in at_edge):
            continue
        height = ln.bottom - ln.top
        continued = any(o.cut is None and 0 < o.top - ln.top <= 1.8 * height for o in at_edge)
        if len(right.split()) < 4 and not continued:
            continue
        side.append(
            _Line(
                left, ln.page, ln.top, ln.bottom, ln.x0, ln.size, ln.bold, x1=left_x1, text_x0=ln.x0,
                band=ln.band, col=ln.col, page_height=ln.page_height, side=True,
            )
        )  # fmt: skip
        ln.text, ln.x0, ln.text_x0, ln.cut = right, x0, text_x0, None
    if not side:
        return lines
    # a heading's second line, alone beneath it (no text beside it)
    widest = max(s.x1 for s in side)
    edge = min((start(o) for o in text_lines if not o.side and o.x0 > widest), default=widest)
    for ln in sorted(text_lines, key=lambda o: o.top):
        above = any(
            (s.band, s.col) == (ln.band, ln.col)
            and abs(s.x0 - ln.x0) <= 3
            and 0 < ln.top - s.bottom <= 0.8 * (s.bottom - s.top)
            for s in side
        )
        if above and ln.cut is None and not ln.side and ln.x1 < edge - 10 and _side_label(ln.text):
            ln.side = True
            side.append(ln)
    # the parts of one heading joined (sorted by their top, each part directly beneath the one before)
    merged: list[_Line] = []
    for s in sorted(side, key=lambda o: (o.band, o.col, o.top)):
        last = merged[-1] if merged else None
        if (
            last is not None
            and (last.band, last.col) == (s.band, s.col)
            and 0 <= s.top - last.bottom <= 0.8 * (s.bottom - s.top)
        ):
            last.text += " " + s.text
            last.bottom, last.x1 = s.bottom, max(last.x1, s.x1)
        else:
            merged.append(s)
    kept = [ln for ln in lines if not ln.side]
    return kept + merged


def _rows(words: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Words grouped into rows by their top (3 pt tolerance), top to bottom."""
    rows: list[list[dict[str, Any]]] = []
    for w in sorted(words, key=lambda w: (float(w["top"]), float(w["x0"]))):
        if rows and float(w["top"]) - float(rows[-1][0]["top"]) <= 3:
            rows[-1].append(w)
        else:
            rows.append([w])
    return rows


def _bands(words: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """:func:`_rows` with the rows that overlap one another vertically by more than a third of the text height
    merged into one band: a table printed by a web browser centres each cell vertically in its row, so a row whose
    cells have one, two and three lines sets them half a line apart ("End of" above "Personnel files  2 years",
    "employment" below), where the lines of running text never overlap."""
    bands: list[list[dict[str, Any]]] = []
    for row in _rows(words):
        top = min(float(w["top"]) for w in row)
        bottom = max(float(w["bottom"]) for w in row)
        if bands:
            prev_bottom = max(float(w["bottom"]) for w in bands[-1])
            height = min(
                bottom - top, statistics.median(float(w["bottom"]) - float(w["top"]) for w in bands[-1])
            )
            if prev_bottom - top > height / 3:
                bands[-1].extend(row)
                continue
        bands.append(list(row))
    return bands


#: a table drawn without rules: at least this many rows, each of at least this many cells (two where every first
#: cell is a short label: a label/value block)
_TEXT_TABLE_ROWS = 3
_TEXT_TABLE_CELLS = 3
#: the most words a label of a label/value block has
_LABEL_WORDS = 6


def _cells(row: list[dict[str, Any]]) -> tuple[list[list[dict[str, Any]]], float]:
    """A row's words split into cells where the gap between two words is wider than one and a half times the text
    height (at least 12 pt): wider than any space between words, even in justified text. Also the text height."""
    words = sorted(row, key=lambda w: float(w["x0"]))
    height = statistics.median(float(w["bottom"]) - float(w["top"]) for w in words)
    gap = max(12.0, 1.5 * height)
    cells = [[words[0]]]
    edge = float(words[0]["x1"])  # the cell's right edge so far (a band's cell has several lines)
    for b in words[1:]:
        if float(b["x0"]) - edge > gap:
            cells.append([b])
            edge = float(b["x1"])
        else:
            cells[-1].append(b)
            edge = max(edge, float(b["x1"]))
    return cells, height


def _label_cell(words: list[dict[str, Any]]) -> bool:
    """A cell that reads as a label ("Document owner", "Version:"), not as prose or a list marker."""
    text = " ".join(str(w["text"]) for w in words).removesuffix(":")
    return bool(text) and len(words) <= _LABEL_WORDS and _side_label(text)


def _cell_lines(cell: list[dict[str, Any]]) -> str:
    """A cell's words line by line, the lines joined as a paragraph's are (a hyphen ending a line is kept:
    "cross-" / "site" → "cross-site")."""
    parts: list[str] = []
    for line in _rows(cell):
        _join(parts, " ".join(str(w["text"]) for w in sorted(line, key=lambda w: float(w["x0"]))))
    return parts[0] if parts else ""


def _column(word: dict[str, Any], stops: list[float]) -> int:
    """The column a word stands in: the last of ``stops`` it starts at or after (6 pt left of a stop counts); the
    first for a word left of every stop."""
    return max((j for j, x in enumerate(stops) if float(word["x0"]) >= x - 6.0), default=0)


def _by_stops(row: list[dict[str, Any]], stops: list[float]) -> list[list[dict[str, Any]]]:
    """A row's words in the columns that start at ``stops`` (:func:`_column`)."""
    cells: list[list[dict[str, Any]]] = [[] for _ in stops]
    for w in row:
        cells[_column(w, stops)].append(w)
    return cells


def _apart(cells: list[list[dict[str, Any]]], height: float) -> bool:
    """Whether a row's filled cells stand apart by at least half the text height (a space between words is about
    a quarter)."""
    filled = [c for c in cells if c]
    return all(
        min(float(w["x0"]) for w in right) - max(float(w["x1"]) for w in left) >= 0.5 * height
        for left, right in itertools.pairwise(filled)
    )


def _parts_at(lines: list[list[tuple[float, float]]], x: float, height: float) -> bool:
    """Whether a line at ``x`` crosses no word of the text ``lines`` (each a list of its words' ``(x0, x1)``) and,
    on every line with words on both sides of it, runs through a gap of at least half the text height: between
    two cells, not between two words of a cell."""
    for line in lines:
        if any(x0 < x - 1 and x1 > x + 1 for x0, x1 in line):
            return False
        left = [x1 for _, x1 in line if x1 <= x + 1]
        right = [x0 for x0, _ in line if x0 >= x - 1]
        if left and right and min(right) - max(left) < 0.5 * height:
            return False
    return True


def _header_stops(rows: list[list[dict[str, Any]]], stops: list[float]) -> list[float]:
    """``stops`` with the columns that only the first row (the header) tells apart: where its cells stand apart
    by a clear gap with no stop in it, and a line through that gap crosses no word of any row, a column starts
    at the first word right of that line. A web browser leaves little room between a table's cells, so
    "2025-02-04 2026-02" stands closer than a gap between cells, under the header cells "Approved on" and "Next
    review"."""
    header, height = _cells(rows[0])
    if len(header) <= len(stops):
        return stops
    out = list(stops)
    lines = [[(float(w["x0"]), float(w["x1"])) for w in line] for row in rows for line in _rows(row)]
    for left, right in itertools.pairwise(header):
        lo = max(float(w["x1"]) for w in left)
        hi = min(float(w["x0"]) for w in right)
        if any(lo - 6.0 < x <= hi + 6.0 for x in out):
            continue
        x = hi
        while x > lo and not _parts_at(lines, x, height):
            x -= 0.5
        if x <= lo:
            continue
        starts = [float(w["x0"]) for row in rows[1:] for w in row if float(w["x0"]) >= x - 1]
        out.append(min(starts, default=x))
    return sorted(out)


#: a row of a table drawn without rules: its words and its cells' words
_Row = tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]


@dataclass(slots=True)
class _TextTable:
    """A table drawn without rules (:func:`_text_tables`)."""

    bbox: tuple[float, float, float, float]
    grid: list[list[str]]
    first_bottom: float  # the bottom of its first row's first line
    second_top: float  # the top of its second row (a rule between the two marks a header)
    gaps: tuple[float, ...] = ()  # between its text lines: the lines of a cell, and one row and the next


def _text_tables(words: list[dict[str, Any]], *, labels: bool = True) -> list[_TextTable]:
    """Tables drawn without rules (a retention schedule set with tab stops, a label/value block of document
    control): runs of at least :data:`_TEXT_TABLE_ROWS` consecutive rows that split into the same number of cells
    starting at the same places (within 6 pt), the rows no further apart than two and a half text heights.

    - A row has at least :data:`_TEXT_TABLE_CELLS` cells, or two whose first is a short label
      (:func:`_label_cell`) when ``labels`` (False on a page set in two columns, whose lines side by side would
      pass for label and value).
    - A row with no word in the first column is a cell, or cells, wrapped onto another line: each word goes to
      the column whose tab stop it stands at or after. Lines beneath a row go on that row; lines just above the
      first row go before it (a header cell of two lines, set at the bottom of its row).
    - A two-column run whose values run over several lines is a text with side headings, not a table, unless its
      first row is a header of two labels ("Role | Responsibilities").

    Each table's label's closing colon is dropped. Read as lines, such a table's rows ran into one paragraph, and
    its columns could be taken for the columns of the page."""
    found: list[_TextTable] = []
    run: list[_Row] = []
    wrapped: list[int] = []  # lines each row of the run has beyond its first
    above: list[dict[str, Any]] | None = None  # the row before the run's first, when it may be its top line
    seen: list[_Row] = []  # every row read, in order
    row_gaps: list[float] = []  # the gaps between the run's rows so far
    first = 0  # the run's first row in ``seen``
    taken = 0  # the rows of ``seen`` before this one belong to a table found already

    def top(row: list[dict[str, Any]]) -> float:
        return min(float(w["top"]) for w in row)

    def bottom(row: list[dict[str, Any]]) -> float:
        return max(float(w["bottom"]) for w in row)

    def columns(row: list[dict[str, Any]], stops: list[float]) -> list[int] | None:
        """Each word's column by the tab stops, or None when a word stands in the first column."""
        out = [_column(w, stops) for w in row]
        return None if 0 in out else out

    def at_stops(row: list[dict[str, Any]], stops: list[float]) -> list[list[dict[str, Any]]] | None:
        """The row's words in the columns of ``stops``, or None when a word crosses a column's edge, stands left of
        the first, leaves the first column empty or fills only one. A cell no further from the one before than a
        space between words must start at its column's edge (a browser's cell does; "Page 1" under a table is
        no row of it)."""
        if any(float(w["x0"]) < x - 1 and float(w["x1"]) > x + 1 for w in row for x in stops[1:]):
            return None
        if min(float(w["x0"]) for w in row) < stops[0] - 6.0:
            return None
        cells = _by_stops(row, stops)
        if not cells[0] or sum(1 for c in cells if c) < 2:
            return None
        height = statistics.median(float(w["bottom"]) - float(w["top"]) for w in row)
        left = cells[0]
        for x, cell in zip(stops[1:], cells[1:], strict=True):
            if not cell:
                continue
            start = min(float(w["x0"]) for w in cell)
            close = start - max(float(w["x1"]) for w in left) < 0.5 * height
            if close and abs(start - x) > 1.0:
                return None
            left = cell
        return cells

    def edged(cells: list[list[dict[str, Any]]], stops: list[float]) -> bool:
        """Whether every filled cell after the first starts at its column's edge (within 1 pt), as a browser sets
        a table's cells; a line of prose meets the edges only by chance."""
        return all(
            abs(min(float(w["x0"]) for w in cell) - x) <= 1.0
            for x, cell in zip(stops[1:], cells[1:], strict=True)
            if cell
        )

    def rows_above() -> list[_Row]:
        """The rows just above the run that fit its columns: its header, whose cells a web browser centres over
        their columns, and a first row whose cells stand too close to be told apart by their gaps alone."""
        stops = [float(c[0]["x0"]) for c in run[0][1]]
        height = _cells(run[0][0])[1]
        out: list[_Row] = []
        below = run[0][0]
        for j in range(first - 1, taken - 1, -1):
            row = seen[j][0]
            size = statistics.median(float(w["bottom"]) - float(w["top"]) for w in row)
            near = top(below) - bottom(row) <= 2.5 * height and size <= 1.25 * height
            cells = at_stops(row, stops) if near else None
            # its cells apart by more than a space between words (a line of prose may break at the stops too),
            # or a label and a value at the column's very edge
            two = len(stops) == 2 and cells is not None and _label_cell(cells[0]) and edged(cells, stops)
            if cells is None or not (_apart(cells, size) or two):
                break
            out.insert(0, (row, cells))
            below = row
        return out

    def flush() -> None:
        nonlocal taken
        row_gaps.clear()
        if len(run) < _TEXT_TABLE_ROWS:
            run.clear()
            wrapped.clear()
            return
        first_cells = run[0][1]
        headed = len(first_cells) == 2 and wrapped[0] == 0 and all(map(_label_cell, first_cells))
        prose = len(first_cells) == 2 and max(wrapped) > 1 and not headed
        if not prose:
            rows = [*rows_above(), *run]
            stops = _header_stops([row for row, _ in rows], [float(c[0]["x0"]) for c in run[0][1]])
            if len(stops) > len(run[0][1]):  # the header's columns: each row's words again, by them
                rows = [(row, _by_stops(row, stops)) for row, _ in rows]
            all_words = [w for row, _ in rows for w in row]
            bbox = (
                min(float(w["x0"]) for w in all_words),
                top(all_words),
                max(float(w["x1"]) for w in all_words),
                bottom(all_words),
            )
            grid = [[_cell_lines(cell) for cell in cells] for _, cells in rows]
            if len(grid[0]) == 2:
                grid = [[row[0].removesuffix(":").rstrip(), row[1]] for row in grid]
            head = rows[0][0]
            last_line = max(float(w["top"]) for w in head)
            first_bottom = max(float(w["bottom"]) for w in head if float(w["top"]) >= last_line - 3)
            gaps = [
                max(0.0, top(b) - bottom(a))
                for _, cells in rows
                for cell in cells
                for a, b in itertools.pairwise(_rows(cell))
            ]
            gaps += [max(0.0, top(b) - bottom(a)) for (a, _), (b, _) in itertools.pairwise(rows)]
            found.append(_TextTable(bbox, grid, first_bottom, top(rows[1][0]), tuple(gaps)))
            taken = len(seen)
        run.clear()
        wrapped.clear()

    for row in _bands(words):
        cells, height = _cells(row)
        if len(run) == 1 and len(cells) >= _TEXT_TABLE_CELLS:
            own = [float(c[0]["x0"]) for c in cells]
            theirs = [float(c[0]["x0"]) for c in run[0][1]]
            if (
                len(own) == len(theirs)
                and any(abs(a - b) > 6.0 for a, b in zip(own, theirs, strict=True))
                and at_stops(run[0][0], own) is not None
            ):  # the run's one row is a header centred over this row's columns: the columns are this row's,
                flush()  # and the header joins the table from above (rows_above)
        if run:
            prev_row, prev_cells = run[-1]
            stops = [float(c[0]["x0"]) for c in run[0][1]]
            near = top(row) - bottom(prev_row) <= 2.5 * height
            fits = (
                near
                and not any(float(w["x0"]) < x - 1 and float(w["x1"]) > x + 1 for w in row for x in stops[1:])
                and min(float(w["x0"]) for w in row) >= stops[0] - 6.0
            )
            cols = columns(row, stops) if fits else None
            gap = top(row) - bottom(prev_row)
            if cols is None and fits and row_gaps and gap < 0.5 * min(row_gaps) and gap <= 0.3 * height:
                # closer to the row above than the rows are to one another (a browser pads its rows): the row's
                # cells go on ("Data Protection" / "Officer"), its first column too
                cols = [_column(w, stops) for w in row]
            if cols is not None:  # cells wrapped onto another line
                for w, j in zip(row, cols, strict=True):
                    prev_cells[j].append(w)
                prev_row.extend(row)
                wrapped[-1] += 1
                continue
            # a row at the run's tab stops, its cells told apart by the stops (a cell may run close to the next
            # one, closer than a gap between cells); two columns need the gap, as label and value; a lone short
            # line after it is no row
            placed = at_stops(row, stops) if fits else None
            if (
                placed is not None
                and len(stops) == 2
                and not (len(cells) <= 2 and _label_cell(placed[0]) and edged(placed, stops))
            ):  # two columns: a label, and a value at the column's very edge (a browser's), and no third cell
                placed = None
            if placed is not None:
                row_gaps.append(gap)
                seen.append((row, placed))
                run.append((row, placed))
                wrapped.append(0)
                continue
        wide = len(cells) >= _TEXT_TABLE_CELLS or (labels and len(cells) == 2 and _label_cell(cells[0]))
        if not wide:
            flush()
            seen.append((row, cells))
            above = row
            continue
        if run:
            prev_row = run[-1][0]
            stops = [float(c[0]["x0"]) for c in run[0][1]]  # the first row's cells are never empty
            aligned = len(cells) == len(stops) and all(
                abs(float(cell[0]["x0"]) - x) <= 6.0 for cell, x in zip(cells, stops, strict=True)
            )
            if not (aligned and top(row) - bottom(prev_row) <= 2.5 * height):
                flush()
        if not run:
            first = len(seen)
        if not run and above is not None and top(row) - bottom(above) <= 0.8 * height:
            cols = columns(above, [float(c[0]["x0"]) for c in cells])
            if cols is not None:  # the top line of a header cell set at the bottom of its row
                for w, j in sorted(zip(above, cols, strict=True), key=lambda p: -float(p[0]["x0"])):
                    cells[j].insert(0, w)
                row = [*above, *row]
                first -= 1  # (the line above, read already, is now the run's)
        if run:
            row_gaps.append(top(row) - bottom(run[-1][0]))
        seen.append((row, cells))
        run.append((row, cells))
        wrapped.append(0)
        above = None
    flush()
    return found


def _covered(row: list[dict[str, Any]], xs: Any) -> Any:
    """Which of the points ``xs`` (a numpy array of x positions) a row's words cover, 1.5 pt around each word."""
    import numpy as np

    mask = np.zeros(len(xs), dtype=bool)
    for w in row:
        mask |= (xs > float(w["x0"]) - 1.5) & (xs < float(w["x1"]) + 1.5)
    return mask


def _gutter(rows: list[list[dict[str, Any]]], x_min: float, x_max: float) -> tuple[float, float] | None:
    """The white band between two text columns, or None for a single-column page.

    Candidates are runs of 1-pt slices of the middle 40 % of the page crossed by the fewest rows, and by few at
    all (a full-width title, a centred footer); the widest run of at least :data:`_MIN_GUTTER` points wins. It is a
    gutter only when at least three rows have words on each side of it and the rows on each side are long
    (their median width at least half the column's), so that label/value lines and short list items set with
    tab stops are not taken for columns.
    """
    import numpy as np

    if len(rows) < 6:
        return None
    width = x_max - x_min
    xs = np.arange(x_min + 0.3 * width, x_min + 0.7 * width, 1.0)
    crossing = np.zeros(len(xs), dtype=int)
    for row in rows:
        crossing += _covered(row, xs)
    fewest = int(crossing.min()) if len(xs) else len(rows)
    if fewest > max(1, len(rows) // 8):
        return None
    allowed = fewest + max(1, len(rows) // 25)  # a title or a centred footer crosses the gutter
    best: tuple[float, float] | None = None
    run_start: int | None = None
    for i, free in enumerate([*(crossing <= allowed), False]):
        if free and run_start is None:
            run_start = i
        elif not free and run_start is not None:
            g0, g1 = float(xs[run_start]), float(xs[i - 1])
            if g1 - g0 >= _MIN_GUTTER and (best is None or g1 - g0 > best[1] - best[0]):
                best = (g0, g1)
            run_start = None
    if best is None:
        return None
    g0, g1 = best
    left_widths: list[float] = []
    right_widths: list[float] = []
    for row in rows:
        left = [w for w in row if float(w["x1"]) <= g0 + 1.5]
        right = [w for w in row if float(w["x0"]) >= g1 - 1.5]
        if len(left) + len(right) < len(row):
            continue  # a row crossing the gutter
        if left:
            left_widths.append(max(float(w["x1"]) for w in left) - min(float(w["x0"]) for w in left))
        if right:
            right_widths.append(max(float(w["x1"]) for w in right) - min(float(w["x0"]) for w in right))
    if len(left_widths) < 3 or len(right_widths) < 3:
        return None
    left_span = g0 - min(float(w["x0"]) for row in rows for w in row)
    right_span = max(float(w["x1"]) for row in rows for w in row) - g1
    if statistics.median(left_widths) < 0.5 * left_span or statistics.median(right_widths) < 0.5 * right_span:
        return None
    return best


def _text_in_columns(
    found: _TextTable, words: list[dict[str, Any]], bbox: tuple[float, float, float, float]
) -> tuple[float, float, float, float] | None:
    """Whether a two-column "table" without rules is two columns of text — a section of a Word document set in
    two columns under text across the page, whose lines share their baselines and so pair up as rows: ``(top,
    bottom, gutter left, gutter right)`` when its rows leave a gutter (:func:`_gutter`, long lines on both sides)
    and the paragraphs of its two sides do not start on the same rows (a table's cells do: a row begins them
    together), else None."""
    if max((len(r) for r in found.grid), default=0) != 2:
        return None
    x0, top, _, bottom = found.bbox
    inside = [w for w in words if top - 1 <= float(w["top"]) <= bottom and float(w["x0"]) >= x0 - 1]
    rows = _rows(inside)
    gutter = _gutter(rows, float(bbox[0]), float(bbox[2]))
    if gutter is None or not _clear(rows, gutter):
        return None
    left = max(float(w["x1"]) for w in inside if float(w["x1"]) <= gutter[0] + 1.5) - x0
    right = max(float(w["x1"]) for w in inside) - gutter[1]
    if abs(left - right) > 0.15 * max(left, right) and _starts_together(rows, gutter):
        return None  # columns of unequal width whose paragraphs start together: a table
    # the columns go on above and below the rows that paired up, as far as no row crosses the gutter (and short of
    # the page's top and bottom tenth, its running header and footer)
    height = float(bbox[3]) - float(bbox[1])
    page_rows = _rows(words)
    at = [i for i, row in enumerate(page_rows) if top - 1 <= min(float(w["top"]) for w in row) <= bottom]

    def inside_columns(row: list[dict[str, Any]]) -> bool:
        row_top, row_bottom = min(float(w["top"]) for w in row), max(float(w["bottom"]) for w in row)
        return (
            _clear([row], gutter)
            and row_top > float(bbox[1]) + 0.1 * height
            and row_bottom < float(bbox[3]) - 0.1 * height
        )

    if not at:
        return None
    first, last = at[0], at[-1]
    while first > 0 and inside_columns(page_rows[first - 1]):
        first -= 1
    while last + 1 < len(page_rows) and inside_columns(page_rows[last + 1]):
        last += 1
    top = min(float(w["top"]) for w in page_rows[first])
    bottom = max(float(w["bottom"]) for w in page_rows[last])
    return top, bottom, gutter[0], gutter[1]


def _column_run(
    words: list[dict[str, Any]], bbox: tuple[float, float, float, float]
) -> tuple[float, float, float, float] | None:
    """Two columns of text under (or over) text across the page that no table took: ``(top, bottom, gutter left,
    gutter right)`` of the longest run of at least six consecutive rows that leave a white band in the page's
    middle 40 % and have a gutter of their own (:func:`_gutter`), unless their paragraphs start on the same rows on
    both sides (:func:`_starts_together`: a table). Rows in the page's top and bottom tenth (a running header or
    footer) end a run."""
    import numpy as np

    rows = _rows(words)
    if len(rows) < 6:
        return None
    x_min, y_min, x_max, y_max = (float(v) for v in bbox)
    width, height = x_max - x_min, y_max - y_min
    xs = np.arange(x_min + 0.3 * width, x_min + 0.7 * width, 1.0)
    tops = [min(float(w["top"]) for w in row) for row in rows]
    bottoms = [max(float(w["bottom"]) for w in row) for row in rows]

    def widest_free(mask: Any) -> int:
        """The longest run of points no word covers."""
        edges = np.flatnonzero(np.diff(np.concatenate(([1], mask.astype(np.int8), [1]))))
        return int((edges[1::2] - edges[::2]).max()) if len(edges) else 0

    runs: list[tuple[int, int]] = []
    start, union = 0, np.zeros(len(xs), dtype=bool)
    for i, row in enumerate(rows):
        margin = bottoms[i] < y_min + 0.1 * height or tops[i] > y_max - 0.1 * height
        grown = union | _covered(row, xs)
        if not margin and widest_free(grown) >= _MIN_GUTTER:
            union = grown
            continue
        runs.append((start, i))
        start, union = i, _covered(row, xs)
        if margin or widest_free(union) < _MIN_GUTTER:  # the row crosses the middle: a run starts after it
            start, union = i + 1, np.zeros(len(xs), dtype=bool)
    runs.append((start, len(rows)))
    for first, end in sorted(runs, key=lambda r: r[0] - r[1]):
        if end - first < 6:
            break
        gutter = _gutter(rows[first:end], x_min, x_max)
        if (
            gutter is not None
            and _clear(rows[first:end], gutter)
            and not _starts_together(rows[first:end], gutter)
        ):
            return tops[first], bottoms[end - 1], gutter[0], gutter[1]
    return None


def _clear(rows: list[list[dict[str, Any]]], gutter: tuple[float, float]) -> bool:
    """Whether every word of ``rows`` stands clear of the middle of ``gutter`` (by 2 pt), on one side of it: the
    regions of the two columns are cut there, and a word across the cut would be lost."""
    mid = (gutter[0] + gutter[1]) / 2
    return all(float(w["x1"]) <= mid - 2 or float(w["x0"]) >= mid + 2 for row in rows for w in row)


def _starts_together(rows: list[list[dict[str, Any]]], gutter: tuple[float, float]) -> bool:
    """Whether every paragraph of either side of ``gutter`` (a line after a gap wider than the side's usual line
    gap) starts on a row where one of the other side starts too."""
    mid = (gutter[0] + gutter[1]) / 2
    starts: list[set[int]] = []
    for right in (False, True):
        lines = [
            (i, min(float(w["top"]) for w in side), max(float(w["bottom"]) for w in side))
            for i, row in enumerate(rows)
            if (side := [w for w in row if (float(w["x0"]) >= mid) == right])
        ]
        gaps = [b[1] - a[2] for a, b in itertools.pairwise(lines)]
        if not gaps:
            return True
        usual = min(gaps)
        starts.append(
            {lines[0][0]}
            | {
                b[0]
                for (_, b), gap in zip(itertools.pairwise(lines), gaps, strict=True)
                if gap > 1.5 * usual + 1
            }
        )
    return starts[0] == starts[1]


def _regions(
    page: Any, words: list[dict[str, Any]], segment: tuple[float, float, float, float] | None = None
) -> list[tuple[int, int, tuple[float, float, float, float]]]:
    """Reading-order regions of a page: ``(band, column, bbox)``; one full-page region without columns. With
    ``segment`` (:func:`_text_in_columns`, :func:`_column_run`), the page is in two columns between its top and
    bottom only, and every row outside them spans the page."""
    x_min, y_min, x_max, y_max = (float(v) for v in page.bbox)
    rows = _rows(words)
    gutter = _gutter(rows, x_min, x_max) if segment is None else segment[2:]
    if gutter is None:
        return [(0, FULL, (x_min, y_min, x_max, y_max))]
    g0, g1 = gutter
    mid = (g0 + g1) / 2
    bands: list[tuple[bool, float, float]] = []  # (crosses the gutter, top, bottom)
    for row in rows:
        # a row crosses the gutter when a word spans its middle: a column's line may reach into the white band's
        # edge, which is found with a tolerance for a few crossing rows
        crosses = any(float(w["x0"]) < mid - 1 and float(w["x1"]) > mid + 1 for w in row)
        top = min(float(w["top"]) for w in row)
        if segment is not None and not segment[0] - 1 <= top <= segment[1]:
            crosses = True
        bottom = max(float(w["bottom"]) for w in row)
        if bands and bands[-1][0] == crosses:
            bands[-1] = (crosses, bands[-1][1], max(bands[-1][2], bottom))
        else:
            bands.append((crosses, top, bottom))
    regions: list[tuple[int, int, tuple[float, float, float, float]]] = []
    for i, (crosses, top, bottom) in enumerate(bands):
        upper = y_min if i == 0 else (bands[i - 1][2] + top) / 2
        lower = y_max if i == len(bands) - 1 else (bottom + bands[i + 1][1]) / 2
        if crosses:
            regions.append((i, FULL, (x_min, upper, x_max, lower)))
        else:
            regions.append((i, LEFT, (x_min, upper, mid, lower)))
            regions.append((i, RIGHT, (mid, upper, x_max, lower)))
    return regions


def _join_glyph_lines(lines: list[_Line]) -> list[_Line]:
    """Join a line made of bullet glyphs only to the text line beside it (same height, to its right)."""
    out: list[_Line] = []
    used: set[int] = set()
    for i, ln in enumerate(lines):
        if i in used or ln.table is not None or not _GLYPH_ONLY_RE.match(ln.text):
            continue
        partners = [
            (j, other)
            for j, other in enumerate(lines)
            if j != i
            and j not in used
            and other.table is None
            and other.col == ln.col
            and other.band == ln.band
            and not _GLYPH_ONLY_RE.match(other.text)
            and other.top < ln.bottom
            and ln.top < other.bottom
            and other.x0 >= ln.x0
        ]
        if not partners:
            continue
        # the line on the glyph's baseline (their bottoms agree within the text's descent)
        j, other = min(partners, key=lambda p: (abs(p[1].bottom - ln.bottom), p[1].x0))
        used.update((i, j))
        other.text = ln.text.strip() + " " + other.text
        other.text_x0 = other.x0
        other.x0 = ln.x0
        other.top, other.bottom = min(ln.top, other.top), max(ln.bottom, other.bottom)
    for i, ln in enumerate(lines):
        if i not in used or not _GLYPH_ONLY_RE.match(ln.text):
            out.append(ln)
    return out


def _mark_drawn_bullets(page: Any, lines: list[_Line]) -> None:
    """Give a line the bullet drawn beside it: a browser printing a web page (and some tools) draws a list's
    bullets as small filled discs or squares, not as characters, and the items ran together as one paragraph. A
    filled shape no larger than half the line's height, centred on the line's height and ending at most two line
    heights left of its text, is the line's bullet: the line reads "• …" from the shape's place."""
    shapes = [
        o
        for o in (*page.curves, *page.rects)
        if o.get("fill") and float(o["width"]) >= 1.0 and float(o["height"]) >= 1.0
    ]
    if not shapes:
        return
    for ln in lines:
        height = ln.bottom - ln.top
        for o in shapes:
            mid = (float(o["top"]) + float(o["bottom"])) / 2
            if (
                float(o["width"]) <= 0.5 * height
                and float(o["height"]) <= 0.5 * height
                and ln.top <= mid <= ln.bottom
                and 0 < ln.x0 - float(o["x1"]) <= 2 * height
            ):
                ln.text, ln.text_x0, ln.x0 = "• " + ln.text, ln.x0, float(o["x0"])
                break


def _horizontal(char: dict[str, Any]) -> bool:
    """Whether a character runs left to right on a level baseline (its text matrix turns it by under 3°).
    pdfminer's ``upright`` is no test: a watermark turned by 45° is "upright" to it."""
    matrix = char.get("matrix") or (1.0, 0.0)
    a, b = float(matrix[0]), float(matrix[1])
    return a > 0 and abs(b) <= 0.05 * a


def _without_tilted_text(page: Any) -> Any:
    """The page without its turned characters — a diagonal "CONFIDENTIAL" or "DRAFT" watermark, a stamp, a
    label written up the margin — when they are fewer than half of its characters. Their letters are set large
    and would otherwise be read as headings, breaking the paragraphs they cross. A page whose text is mostly
    turned (a landscape page drawn sideways) is read as it is."""
    chars = page.chars
    tilted = sum(1 for c in chars if not _horizontal(c))
    if not tilted or tilted * 2 >= len(chars):
        return page
    return page.filter(lambda obj: obj.get("object_type") != "char" or _horizontal(obj))


#: the characters a note's reference mark is set in (a digit, an asterisk, a dagger)
_NOTE_MARKS = frozenset("0123456789*†‡")


def _note_marks(chars: Sequence[dict[str, Any]]) -> set[int]:
    """The ``id`` of each character of the reference marks of notes: a digit, ``*``, ``†`` or ``‡`` in a font at
    most 0.8 of the character just before it on its line, raised above that character's baseline by at least a
    sixth of its size, and right after it (a footnote's "… natural persons.¹ Each breach …", "Article 33²", which
    a reader takes for "persons.1" and "Article 332"). A smaller number on the baseline (a footnote's own number at
    the page's foot, small print) is text; so is a raised letter ("1st")."""
    marks: set[int] = set()
    # the body's size: the most common (a mark is smaller than the text it stands in)
    body = Counter(round(float(c.get("size", 0.0)) * 2) / 2 for c in chars).most_common(1)
    largest = body[0][0] if body else 0.0
    candidates = [
        c for c in chars if c.get("text") in _NOTE_MARKS and float(c.get("size", 0.0)) <= 0.8 * largest
    ]
    if not candidates:
        return marks
    by_band: dict[int, list[dict[str, Any]]] = {}
    for c in chars:
        by_band.setdefault(int(float(c["bottom"]) // 10), []).append(c)
    found: list[dict[str, Any]] = []
    for c in candidates:
        size, x0, bottom = float(c.get("size", 0.0)), float(c["x0"]), float(c["bottom"])
        band = int(bottom // 10)
        for near in (*by_band.get(band, ()), *by_band.get(band + 1, ()), *by_band.get(band + 2, ())):
            before_size = float(near.get("size", 0.0))
            if (
                str(near.get("text", "")).strip()
                and size <= 0.8 * before_size
                and -1.0 <= x0 - float(near["x1"]) <= 1.5
                and float(near["bottom"]) - bottom >= before_size / 6
                and float(near["top"]) < bottom
            ):
                marks.add(id(c))
                found.append(c)
                break
    # a mark of several characters ("12", "2,3"): each character right after a mark on its baseline
    following = [
        c
        for c in chars
        if c.get("text") in _NOTE_MARKS | {","} and float(c.get("size", 0.0)) <= 0.8 * largest
    ]
    while found:
        found = [
            c
            for c in following
            if id(c) not in marks
            and any(
                -0.5 <= float(c["x0"]) - float(m["x1"]) <= 0.5
                and abs(float(m["bottom"]) - float(c["bottom"])) < 0.5
                for m in found
            )
        ]
        marks.update(id(c) for c in found)
    return marks


def _without_note_marks(page: Any) -> tuple[Any, list[tuple[float, float, float]]]:
    """The page without the reference marks of its notes (:func:`_note_marks`; the notes themselves stay), and
    where each mark stood: ``(x, top, bottom)``."""
    marks = _note_marks(page.chars)
    if not marks:
        return page, []
    where = [(float(c["x0"]), float(c["top"]), float(c["bottom"])) for c in page.chars if id(c) in marks]
    return page.filter(lambda obj: obj.get("object_type") != "char" or id(obj) not in marks), where


#: a space the reader put where a mark stood before a full stop, comma or bracket ("Article 33 ." for "Article 33².")
_SPACE_BEFORE_STOP_RE = re.compile(r" (?=[.,;:)\]])")


def _right_angle(char: dict[str, Any]) -> int | None:
    """The right angle (0, 90, 180 or 270 degrees, counter-clockwise) a character's text matrix turns it by,
    within 3°; None for any other angle."""
    matrix = char.get("matrix") or (1.0, 0.0)
    angle = math.degrees(math.atan2(float(matrix[1]), float(matrix[0]))) % 360
    for right in (0, 90, 180, 270, 360):
        if abs(angle - right) <= 3:
            return right % 360
    return None


def _upright(page: Any) -> Any:
    """The page turned so that its text runs left to right, when most of its characters are turned by the same
    right angle (a landscape table drawn sideways on a portrait page); else the page itself.

    pdfplumber reads text turned by 90° word by word in the turned order (a sentence came out letter-reversed),
    and no column, table or paragraph rule applies to it. The page is opened again with its ``/Rotate`` turned
    by that angle, so that pdfminer lays the page out as a viewer shows it once turned."""
    chars = page.chars
    if not chars:
        return page
    turn, count = Counter(_right_angle(c) for c in chars).most_common(1)[0]
    if not turn or count * 2 < len(chars):
        return page
    import copy

    page_obj = copy.copy(page.page_obj)
    page_obj.rotate = (int(page.rotation) + turn) % 360
    page_obj.attrs = {**page_obj.attrs, "Rotate": page_obj.rotate}
    return type(page)(page.pdf, page_obj, page_number=page.page_number, initial_doctop=page.initial_doctop)


#: how far apart two characters may stand and still be one word, where a page writes its spaces as characters
#: (pdfplumber's default, 3 pt, where it does not)
_SPACED_X_TOLERANCE = 1.5


def _x_tolerance(page: Any) -> float:
    """pdfplumber's ``x_tolerance`` for a page: where the page writes the spaces between its words as characters
    (Word, LibreOffice, browsers, reportlab do), a gap without a space is no space within a word, and a word
    ends at a smaller gap — a web browser leaves 2–3 pt between a table's cells, which read as one word at the
    default ("Standard numberSTD-004"). A page without space characters (typeset by TeX) is read at the default,
    its spaces being gaps."""
    chars = page.chars
    spaces = sum(1 for c in chars if c.get("text") == " ")
    letters = sum(1 for c in chars if str(c.get("text", "")).strip())
    return _SPACED_X_TOLERANCE if letters and spaces >= 0.08 * letters else 3.0


def _page_lines(page: Any, number: int) -> list[_Line]:
    """Text lines of a page in reading order; each ruled table is one pseudo-line carrying its cells. Turned
    text (a watermark) is left out (:func:`_without_tilted_text`)."""
    page, marks = _without_note_marks(_without_tilted_text(page))
    x0, y0, x1, y1 = (float(v) for v in page.bbox)
    if not int(page.rotation or 0) and any(
        c["x0"] < x0 - 1 or c["x1"] > x1 + 1 or c["top"] < y0 - 1 or c["bottom"] > y1 + 1 for c in page.chars
    ):  # text drawn off the page (a table wider than its column, run past the edge) is not seen by a reader
        page = page.within_bbox(page.bbox)  # (a turned page's coordinates are not the page box's: left alone)
    tables: list[_Line] = []
    boxes: list[tuple[float, float, float, float]] = []
    height = float(page.height)
    for table in page.find_tables():
        rows = [[_cell_text(c) for c in row] for row in table.extract()]
        if len(rows) < 2 and all(len(r) < 2 for r in rows):
            continue  # a box around a paragraph, not a table
        x0, top, x1, bottom = table.bbox
        boxes.append((x0, top, x1, bottom))
        r0 = table.rows[0].bbox
        head_chars = [c for c in page.chars if r0[1] <= (c["top"] + c["bottom"]) / 2 <= r0[3]]
        tables.append(
            _Line("", number, top, bottom, x0, 0.0, _bold(head_chars), table=rows, x1=x1, page_height=height)
        )

    def in_table(top: float, bottom: float, x0: float) -> bool:
        mid = (top + bottom) / 2
        return any(bt <= mid <= bb and bx0 - 1 <= x0 <= bx1 for bx0, bt, bx1, bb in boxes)

    tolerance = _x_tolerance(page)
    words = [
        w
        for w in page.extract_words(x_tolerance=tolerance)
        if not in_table(float(w["top"]), float(w["bottom"]), float(w["x0"]))
    ]
    columns = _gutter(_rows(words), float(page.bbox[0]), float(page.bbox[2])) is not None if words else False
    segment: tuple[float, float, float, float] | None = None  # two columns of text under text across the page
    for found in _text_tables(words, labels=not columns):  # tables drawn without rules
        x0, top, x1, bottom = found.bbox
        if (
            segment is None
            and not columns
            and (flow := _text_in_columns(found, words, page.bbox)) is not None
        ):
            segment = flow
            continue
        boxes.append(found.bbox)
        head_chars = [c for c in page.chars if top <= (c["top"] + c["bottom"]) / 2 <= found.first_bottom]
        # a rule under the first row, across the table, marks it as the header (a table set with only horizontal
        # rules, as pandoc and many templates draw them)
        head_rule = any(
            found.first_bottom - 1 <= float(e["top"]) <= found.second_top + 1
            and float(e["x0"]) <= x0 + 0.2 * (x1 - x0)
            and float(e["x1"]) >= x1 - 0.2 * (x1 - x0)
            for e in page.horizontal_edges
        )
        tables.append(
            _Line(
                "", number, top, bottom, x0, 0.0, _bold(head_chars) or head_rule, table=found.grid, x1=x1,
                page_height=height, ruled=False, gaps=found.gaps,
            )
        )  # fmt: skip
    words = [w for w in words if not in_table(float(w["top"]), float(w["bottom"]), float(w["x0"]))]
    if segment is None and not columns:
        segment = _column_run(words, page.bbox)
    regions = _regions(page, words, segment)
    lines: list[_Line] = []
    for band, col, bbox in regions:
        view = page if len(regions) == 1 else page.within_bbox(bbox)
        for raw in view.extract_text_lines(strip=True, return_chars=True, x_tolerance=tolerance):
            text = raw["text"].strip()
            if any(
                raw["x0"] <= x <= raw["x1"] and raw["top"] - 4 <= top and bottom <= raw["bottom"] + 1
                for x, top, bottom in marks
            ):
                text = _SPACE_BEFORE_STOP_RE.sub("", text)
            chars = [c for c in raw.get("chars", []) if c.get("text", "").strip()]
            if not text or not chars or in_table(float(raw["top"]), float(raw["bottom"]), float(raw["x0"])):
                continue
            if _letter_bullet(chars, float(chars[-1].get("size", 0.0))) and text[:1] == chars[0].get("text"):
                text = "◦" + text[1:]  # read as the bullet it draws
                chars = [{**chars[0], "text": "◦"}, *chars[1:]]
            body_chars = [c for c in chars if not _is_glyph(str(c.get("text", "")))] or chars
            size = Counter(round(float(c.get("size", 0.0)) * 2) / 2 for c in body_chars).most_common(1)[0][0]
            x0 = float(raw["x0"])
            lines.append(
                _Line(
                    text,
                    number,
                    float(raw["top"]),
                    float(raw["bottom"]),
                    x0,
                    size,
                    _bold(body_chars),
                    x1=float(raw["x1"]),
                    text_x0=_text_start(text, chars, x0),
                    band=band,
                    col=col,
                    page_height=height,
                    cut=_wide_cut(raw.get("chars", []), size),
                    lead=_lead_width(raw.get("chars", []), size),
                )
            )
    for t in tables:  # a table belongs to the region holding its top-left corner
        for band, col, (rx0, rtop, rx1, rbottom) in regions:
            if rtop <= t.top + 1 <= rbottom and rx0 <= t.x0 + 1 <= rx1:
                t.band, t.col = band, col
                break
    _mark_drawn_bullets(page, lines)
    lines = _side_headings(_join_glyph_lines(lines)) + tables
    lines.sort(key=lambda ln: (ln.band, ln.col, round(ln.top, 1), ln.x0))
    return lines


def _label_like(text: str) -> bool:
    """A short line that does not end a sentence (a header or footer, not the body's first or last line)."""
    return len(text.split()) <= 14 and text.rstrip()[-1:] not in ".;:!?"


def _mark_margin_lines(pages: list[list[_Line]]) -> None:
    """Mark a page's first/last text line as furniture when it sits in the page's margin zone, set apart from
    the body by a smaller font, or by a gap of at least twice its own height when it is short and ends no
    sentence (headers and footers of single-page documents, which no repetition across pages can reveal)."""
    sizes: Counter[float] = Counter()
    for lines in pages:
        for ln in lines:
            if ln.table is None:
                sizes[ln.size] += len(ln.text)
    if not sizes:
        return
    body_size = sizes.most_common(1)[0][0]
    for lines in pages:
        text_lines = [ln for ln in lines if ln.table is None]
        if len(text_lines) < 2:
            continue
        by_top = sorted(text_lines, key=lambda ln: ln.top)
        first, second = by_top[0], by_top[1]
        last, before = by_top[-1], by_top[-2]
        height = first.bottom - first.top
        if (
            first.page_height
            and first.bottom <= _MARGIN_ZONE * first.page_height
            and first.size <= body_size
            and (
                first.size < body_size
                or (second.top - first.bottom >= 2 * height and _label_like(first.text))
            )
        ):
            first.furniture = True
        height = last.bottom - last.top
        if (
            last.page_height
            and last.top >= (1 - _MARGIN_ZONE) * last.page_height
            and last.size <= body_size
            and (last.size < body_size or (last.top - before.bottom >= 2 * height and _label_like(last.text)))
        ):
            last.furniture = True


def _drop_running_lines(pages: list[list[_Line]]) -> list[list[_Line]]:
    """Remove running headers/footers and bare page numbers from the top/bottom two lines of every page."""
    n = len(pages)
    counts: Counter[str] = Counter()
    for lines in pages:
        text_lines = [ln for ln in lines if ln.table is None]
        zone = {_normalise(ln.text) for ln in text_lines[:2] + text_lines[-2:]}
        counts.update(zone)
    needed = max(2, math.ceil(n / 2))
    out: list[list[_Line]] = []
    for lines in pages:
        text_lines = [ln for ln in lines if ln.table is None]
        edge = {id(ln) for ln in text_lines[:2] + text_lines[-2:]}
        kept = []
        for ln in lines:
            norm = _normalise(ln.text)
            if id(ln) in edge and ((n >= 2 and counts[norm] >= needed) or _PAGE_NUMBER_RE.match(norm)):
                continue
            kept.append(ln)
        out.append(kept)
    return out


_WORD_RE = re.compile(r"[a-zà-ÿ]+(?:-[a-zà-ÿ]+)*")
_LAST_WORD_RE = re.compile(r"([a-zà-ÿ]+)-$", re.IGNORECASE)
_RANGE_END_RE = re.compile(r"\d[-–]$")
_WORD_HYPHEN_END_RE = re.compile(r"\w-$")
#: a web address at a line's end, broken after a character a browser or a word processor breaks it at
_URL_END_RE = re.compile(r"(?:https?://|www\.)\S*[-/?&=#]$", re.IGNORECASE)
#: the rest of an address on the next line: no space before a character of a path or a query ("lang=en&…",
#: "retention/schedule.pdf"); a plain word ("and") is not one
_URL_REST_RE = re.compile(r"[\w%~+-]*[/?&=#.%]\S*[\w/=&#%~-]")


def _join_broken_rows(pages: list[list[_Line]]) -> list[list[_Line]]:
    """Join a table row broken across a page break to its first part: a table that opens a page, where the
    previous page ended with a table of as many columns, and whose first row (after a repeated header row) has
    an empty first cell holds the rest of the previous page's last row (``"Policy violation without"`` /
    ``"impact"``). Read as a row of its own, that rest became a row "Criteria: impact"."""
    last: _Line | None = None  # the last body line of the pages so far
    for lines in pages:
        body = [ln for ln in lines if not ln.furniture]
        first = body[0] if body else None
        if (
            first is not None
            and first.table is not None
            and last is not None
            and last.table is not None
            and last.table
            and first.table
            and max(len(r) for r in first.table) == max(len(r) for r in last.table)
        ):
            rows = first.table
            skip = 1 if len(rows) > 1 and rows[0] == last.table[0] else 0  # a header repeated on the new page
            head = rows[skip]
            tail = last.table[-1]
            if not head[0].strip() and any(c.strip() for c in head) and len(head) == len(tail):
                for i, cell in enumerate(head):
                    if cell.strip():
                        parts = [tail[i]] if tail[i] else []
                        _join(parts, cell.strip())
                        tail[i] = parts[0]
                del rows[skip]
                if len(rows) <= skip:
                    lines.remove(first)
                    body.remove(first)
        if body:
            last = body[-1]
    return pages


def _without_contents(pages: list[list[_Line]]) -> list[list[_Line]]:
    """The pages without the document's table of contents (:func:`compliance.connectors.contents.contents_items`):
    its entries, with a leader or under a contents heading, are a line each, or one table read from their tab
    stops ("1. Purpose" | "2")."""
    body = [ln for lines in pages for ln in lines if not ln.furniture]
    texts = [
        ln.text if ln.table is None else "\n".join(" ".join(c for c in row if c) for row in ln.table)
        for ln in body
    ]
    dropped = {id(body[i]) for i in contents_items(texts)}
    if not dropped:
        return pages
    return [[ln for ln in lines if id(ln) not in dropped] for lines in pages]


def _words(lines: Iterable[str]) -> set[str]:
    """The lower-cased words (hyphenated compounds whole) of some text, for :func:`_join`."""
    return {w for line in lines for w in _WORD_RE.findall(line.lower())}


def _broken_word(last: str, text: str) -> tuple[str, str] | None:
    """``(joined, hyphenated)`` for a word broken at a hyphen between ``last`` and the line ``text`` after it
    (``"pro-"`` + ``"cessing …"`` → ``("processing", "pro-cessing")``), lower-cased; None when it is not one."""
    if not (_HYPHEN_END_RE.search(last) and text[:1].islower()):
        return None
    m = _LAST_WORD_RE.search(last)
    first = _WORD_RE.match(text)
    if not (m and first):
        return None
    return (m.group(1) + first.group(0)).lower(), (m.group(1) + "-" + first.group(0)).lower()


def _hyphenates(lines: Sequence[_Line], words: set[str]) -> bool:
    """Whether a document's lines read as hyphenated by its typesetter (LaTeX, InDesign, Word with hyphenation
    on): at least two words broken at a line end that the document writes whole elsewhere, and none that it
    writes hyphenated."""
    whole = own = 0
    for a, b in itertools.pairwise(lines):
        broken = _broken_word(a.text, b.text)
        if broken is not None:
            whole += broken[0] in words and broken[1] not in words
            own += broken[1] in words
    return whole >= 2 and own == 0


def _join(parts: list[str], text: str, words: set[str] | None = None, *, hyphenated: bool = False) -> None:
    """Append a line to the last part of a paragraph.

    A line that ends in ``letter-`` before a lower-case word is a word broken at a hyphen. The hyphen is dropped
    (``"pro-" + "cessing"`` → ``"processing"``) only where the document has the joined word elsewhere and not the
    hyphenated one (``words``, :func:`_words`); otherwise it is kept (``"multi-" + "factor"`` → ``"multi-factor"``):
    Word and LibreOffice do not hyphenate by default, so a hyphen at the end of their lines is the word's own. In a
    document its typesetter hyphenated (``hyphenated``, :func:`_hyphenates`), a word the document writes neither
    way is joined too. A range broken after its dash (``"5.24–" + "5.28"``), or a code or compound broken after a hyphen before a digit
    or a capital (``"NWL-PRO-" + "002"``), is joined without a space, and so is a web address broken after a
    ``/ ? & = # -`` before the rest of its path or query (``"…/form?" + "lang=en&source=policy"``)."""
    if not parts:
        parts.append(text)
        return
    last = parts[-1]
    if _URL_END_RE.search(last) and _URL_REST_RE.match(text):  # an address goes on, its hyphen kept
        parts[-1] = last + text
    elif _HYPHEN_END_RE.search(last) and text[:1].islower():
        broken = _broken_word(last, text)
        known = words or set()
        whole = broken is not None and broken[0] in known and broken[1] not in known
        unknown = broken is None or (broken[0] not in known and broken[1] not in known)
        if whole or (hyphenated and unknown):
            parts[-1] = last[:-1] + text
        else:
            parts[-1] = last + text
    elif (
        (_RANGE_END_RE.search(last) and text[:1].isdigit())
        or (_WORD_HYPHEN_END_RE.search(last) and text[:1].isalnum())
        or (last.endswith("__") and text.startswith("_"))
    ):  # "5.24–" + "5.28"; "NWL-PRO-" + "002", "Personal-" + "Data-Breach"; a blank wrapped in two
        parts[-1] = last + text
    else:
        parts[-1] = last + " " + text


def _wrapped(last: _Line, ln: _Line, right_edge: float | None) -> bool:
    """Whether ``ln`` starts on a new line only because its first word did not fit at the end of ``last``: that
    word (its width measured from its characters), after a space, would run past the column's right edge."""
    if right_edge is None or ln.lead <= 0:
        return False
    return last.x1 + 0.25 * last.size + ln.lead > right_edge - 1


def _blocks(pages: list[list[_Line]]) -> Iterator[Block]:
    body = [ln for lines in pages for ln in lines]
    text_body = [ln for ln in body if ln.table is None and not ln.furniture]
    if not body:
        return
    words = _words(ln.text for ln in text_body)
    typeset = _hyphenates(text_body, words)
    size_weight: Counter[float] = Counter()
    for ln in text_body:
        size_weight[ln.size] += len(ln.text)
    body_size = size_weight.most_common(1)[0][0] if size_weight else 0.0
    # a heading in capitals is a short line (the width of each page's text, column by column), not a wrapped line of
    # a paragraph set in capitals (a contract's limitation of liability) ...
    extent: dict[tuple[int, int, int], tuple[float, float]] = {}
    for ln in text_body:
        key = (ln.page, ln.band, ln.col)
        lo, hi = extent.get(key, (ln.x0, ln.x1))
        extent[key] = (min(lo, ln.x0), max(hi, ln.x1))

    # ... and it starts where a line may start a section: first in its column, after a line that ended a sentence or
    # was a heading's, or set apart by space
    after_break: set[int] = set()
    for lines in pages:
        prev_ln: _Line | None = None
        for ln in lines:
            if ln.furniture:
                continue
            if (
                prev_ln is None
                or prev_ln.table is not None
                or (prev_ln.page, prev_ln.band, prev_ln.col) != (ln.page, ln.band, ln.col)
                or prev_ln.text[-1:] in ".!?:;"
                or prev_ln.bold
                or capitals_heading(prev_ln.text)
                or ln.top - prev_ln.bottom > 0.5 * (ln.bottom - ln.top)
            ):
                after_break.add(id(ln))
            prev_ln = ln

    def capitals(ln: _Line) -> bool:
        lo, hi = extent.get((ln.page, ln.band, ln.col), (ln.x0, ln.x1))
        return capitals_heading(ln.text) and ln.x1 - ln.x0 < 0.7 * (hi - lo) and id(ln) in after_break

    def heading_size(ln: _Line) -> float | None:
        if ln.table is not None or ln.furniture or _GLYPH_RE.match(ln.text):
            return None  # a bullet glyph marks a list item, whatever its font
        if ln.size >= body_size * 1.15:
            return ln.size
        if ln.side:
            return body_size
        words = ln.text.split()
        if len(words) > 12 or ln.text[-1] in ".,;:!?" or "__" in ln.text:
            return None  # a fill-in blank's bold label ("Name: ____") is no heading
        if not ln.bold and not capitals(ln):
            return None
        m = _BULLET_RE.match(ln.text)
        if m is None:
            return body_size
        # a bold numbered line that reads as a heading ("1. Your details"), as a Word heading numbered by its list
        # style prints; a bulleted or lettered one stays an item
        numbered = m.group(2) is not None and m.group(2)[:1].isdigit()
        return body_size if numbered and typed_heading_depth(ln.text) is not None else None

    heading_sizes = sorted({s for ln in text_body if (s := heading_size(ln)) is not None}, reverse=True)
    # the largest size, used only by the first line(s) of the document, is the title: kept out of heading paths
    title_size: float | None = None
    if len(heading_sizes) > 1:
        top_lines = [i for i, ln in enumerate(text_body) if heading_size(ln) == heading_sizes[0]]
        if top_lines == list(range(len(top_lines))):
            title_size = heading_sizes[0]
    level_of = {s: i + 1 for i, s in enumerate(h for h in heading_sizes if h != title_size)}
    if title_size is not None:
        level_of[title_size] = 0

    # the text edges of each column (the full width, the left and the right column of two-column bands)
    left: dict[int, float] = {}
    right: dict[int, float] = {}
    for ln in text_body:
        if heading_size(ln) is None:
            left[ln.col] = min(left.get(ln.col, ln.x0), ln.x0)
            right[ln.col] = max(right.get(ln.col, ln.x1), ln.x1)

    gaps: list[float] = []
    wraps: list[float] = []  # the gaps where a sentence goes on because its next word did not fit
    heights: list[float] = []
    for lines in pages:
        text_lines = [ln for ln in lines if ln.table is None and not ln.furniture]
        for a, b in itertools.pairwise(text_lines):
            same_column = (a.band, a.col) == (b.band, b.col)
            if same_column and heading_size(a) is None and heading_size(b) is None and b.top > a.top:
                gaps.append(max(0.0, b.top - a.bottom))
                if a.text[-1:] not in ".!?:;" and _wrapped(a, b, right.get(a.col)):
                    wraps.append(gaps[-1])
        heights.extend(ln.bottom - ln.top for ln in text_lines)
        gaps.extend(g for ln in lines if ln.table is not None for g in ln.gaps)
    # the lower quartile: gaps inside paragraphs outnumber the gaps between them, in most documents; in a short
    # one of one-line paragraphs they do not, and the gaps where a sentence wraps say what a line's gap is
    typical_gap = sorted(gaps)[len(gaps) // 4] if gaps else 2.0
    if wraps:
        typical_gap = min(typical_gap, statistics.median(wraps))
    typical_height = statistics.median(heights) if heights else body_size
    para_gap = max(typical_gap * 1.8, typical_gap + 0.5 * typical_height)
    current: _Open | None = None
    heading: tuple[float, list[_Line]] | None = None
    last_table: tuple[list[str] | None, int] | None = None  # (header, columns) of a table that may continue
    furniture: list[_Line] = []  # page headers/footers, emitted after the paragraph they interrupt

    def flush() -> Iterator[Block]:
        nonlocal current, heading
        if heading is not None:
            size, hl = heading
            yield Block("heading", " ".join(ln.text for ln in hl), level=level_of[size], page=hl[0].page)
            heading = None
        if current is not None:
            kind: Literal["list-item", "paragraph"] = (
                "list-item" if current.kind == "list-item" else "paragraph"
            )
            yield Block(kind, " ".join(current.parts), page=current.lines[0].page, marker=current.marker)
            current = None
        for ln in furniture:
            yield Block("paragraph", ln.text, page=ln.page, role="furniture")
        furniture.clear()

    prev: _Line | None = None
    for ln in body:
        if ln.furniture:
            furniture.append(ln)
            continue
        if ln.table is not None:
            yield from flush()
            rows = ln.table
            width = max(len(r) for r in rows)
            continues = (
                last_table is not None
                and last_table[1] == width
                and prev is not None
                and prev.page != ln.page
            )
            if continues and last_table is not None and last_table[0] is not None:
                header = last_table[0]
                if rows[0] == header:  # the header row repeated on the new page
                    rows = rows[1:]
                yield from table_blocks([header, *rows], header=True, page=ln.page)
            else:
                header_flag = True if ln.bold else (None if ln.ruled else False)
                yield from table_blocks(rows, header=header_flag, page=ln.page)
                has_header = header_flag is True or (header_flag is None and guess_header(rows))
                last_table = (rows[0] if has_header else None, width)
            prev = ln
            continue
        last_table = None
        hs = heading_size(ln)
        if hs is not None:
            if (
                heading is not None
                and heading[0] == hs
                and prev is not None
                and prev.table is None
                and (prev.page, prev.band, prev.col) == (ln.page, ln.band, ln.col)
                and ln.top - prev.bottom < para_gap
            ):
                heading[1].append(ln)
            else:
                yield from flush()
                heading = (hs, [ln])
            prev = ln
            continue
        if heading is not None:
            yield from flush()
        m = _BULLET_RE.match(ln.text)
        if m and current is not None and _WORD_HYPHEN_END_RE.search(current.parts[-1]):
            m = None  # "(NWL-PRO-" / "002) …": the rest of a code broken at its hyphen, not a numbered item
        # a new page, or a new column or band of a two-column page
        new_part = prev is not None and (prev.page, prev.band, prev.col) != (ln.page, ln.band, ln.col)
        gap = (ln.top - prev.bottom) if prev is not None and not new_part else 0.0
        if m:
            yield from flush()
            current = _Open("list-item", [ln], [m.group(3)], _marker(m))
        elif current is None:
            current = _Open("paragraph", [ln], [ln.text])
        else:
            last = current.lines[-1]
            ends_sentence = current.parts[-1][-1:] in ".!?:;"
            col_left = left.get(ln.col, ln.x0)
            if new_part:
                # a paragraph goes on in the next column or page when it ended mid-sentence, whatever its next
                # word ("… Agreement between" / "Evergreen Bank plc …")
                breaks = (ends_sentence or current.parts[-1].endswith("__")) and not ln.text[:1].islower()
            else:
                indented_start = ln.x0 - col_left > 8 and ends_sentence and current.kind == "paragraph"
                hanging = current.kind == "list-item" and ln.x0 + 2 < last.x0 and ends_sentence
                # a list ends where a line starts left of the item's text, unless it plainly goes on with it
                # ... unless the item's line was full: its text wrapped to the margin ("(a) The Provider shall
                # encrypt" / "Customer Personal Data …", a lettered paragraph with no hanging indent)
                list_end = (
                    current.kind == "list-item"
                    and ln.x0 < current.lines[0].text_x0 - 3
                    and (
                        ends_sentence
                        or (not ln.text[:1].islower() and not _wrapped(last, ln, right.get(ln.col)))
                    )
                )
                line_width = right.get(ln.col, last.x1) - col_left
                # (a short line that ends a sentence ends the paragraph even where the next word would not have fit:
                # split there, a paragraph is two whole sentences; a field's line, below, is not split so)
                wrapped = _wrapped(last, ln, right.get(ln.col))
                short_end = (
                    ends_sentence and last.x1 - col_left < 0.8 * line_width and current.kind == "paragraph"
                )
                # a line that ends a sentence although the next line's first word would have fit on it was ended
                # by its author: a paragraph set without space after it ends so, however long its last line
                kept_short = (
                    ends_sentence
                    and current.kind == "paragraph"
                    and ln.lead > 0
                    and ln.col in right
                    and not wrapped
                )
                # the document's next clause: a sentence ended and the line starts with a clause number of the
                # paragraph's own depth ("… every 24 hours." / "3.2 At least one copy …")
                next_clause = (
                    ends_sentence
                    and (number := _CLAUSE_NUMBER_RE.match(ln.text)) is not None
                    and (own := _CLAUSE_NUMBER_RE.match(current.parts[0])) is not None
                    and number.group(1).count(".") == own.group(1).count(".")
                )
                # a fill-in blank on the line after its label ("Name of the controller:" / "________")
                blank = ln.text.startswith("__")
                # a short line that ends in a fill-in blank ends its field ("Name: ____" / "Department: ____");
                # a full one wraps (… "Signature: ____" / "Date: ____")
                field_end = (
                    current.parts[-1].endswith("__")
                    and (
                        (not blank and last.x1 - col_left < 0.8 * line_width and not wrapped)
                        # whatever its length, a field is not followed by a line of text that is no field
                        # ("Signature: ____" / "IT keeps completed checklists …"; a field goes on with "Project
                        # manager:" / "____", or "Date: [DD/MM/YYYY]")
                        or (ln.text[:1].isupper() and "__" not in ln.text and ":" not in ln.text)
                    )
                )
                breaks = gap > para_gap or (
                    not blank
                    and (
                        indented_start
                        or hanging
                        or list_end
                        or short_end
                        or kept_short
                        or next_clause
                        or field_end
                    )
                )
            if breaks:
                yield from flush()
                current = _Open("paragraph", [ln], [ln.text])
            else:
                current.lines.append(ln)
                _join(current.parts, ln.text, words, hyphenated=typeset)
        prev = ln
    yield from flush()


#: a title a program wrote in the PDF's metadata rather than its author: a placeholder ("untitled", "Document1"),
#: a printer driver's "Microsoft Word - policy.docx", a file name or path
_GENERATED_TITLE_RE = re.compile(
    r"^(?:untitled\b.*|(?:document|doc|dokument)\s*\d*|microsoft\s+\w+\s+-\s.*"
    r"|.*\.(?:docx?|dotx?|odt|rtf|pdf|pptx?|xlsx?|html?|txt|md)|[a-z]:\\.*|/.*)$",
    re.IGNORECASE,
)


_CID_RE = re.compile(r"\(cid:\d+\)")


def _without_undecodable(pages: list[list[_Line]]) -> tuple[list[list[_Line]], float]:
    """The pages without the lines whose text is mostly glyph codes the PDF maps to no character ("(cid:68)(cid:97)
    …": a font embedded without its Unicode map), and the share of all the text's glyphs those codes are. A bullet
    that comes out as "(cid:127)" before a line of text keeps its line; tables are kept."""
    codes = glyphs = 0
    out: list[list[_Line]] = []
    for lines in pages:
        kept: list[_Line] = []
        for ln in lines:
            n = len(_CID_RE.findall(ln.text))
            letters = sum(c.isalnum() for c in _CID_RE.sub("", ln.text))
            codes += n
            glyphs += n + letters
            if ln.table is not None or n <= letters:
                kept.append(ln)
        out.append(kept)
    return out, codes / glyphs if glyphs else 0.0


def _title(metadata: dict[str, Any]) -> str:
    """The title in the PDF's metadata, unless a program wrote it (:data:`_GENERATED_TITLE_RE`): then none, and the
    document's first heading or its file name is its title."""
    value = metadata.get("Title")
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    title = value.strip() if isinstance(value, str) else ""
    return "" if _GENERATED_TITLE_RE.match(title) else title


def parse_pdf(data: bytes, source: str, config: SplitConfig) -> ParsedDocument:
    """Parse a PDF file.

    Args:
        data: The file's bytes.
        source: File name or URI (for provenance and error messages).
        config: Splitting choices and limits (``max_pages``).

    Returns:
        The parsed document, every paragraph with its page number.

    Raises:
        DocumentError: Not a PDF or corrupt.
        EncryptedDocumentError: Password-protected.
        DocumentTooLargeError: Over the byte or page limit.
    """
    check_size(data, source, config)
    if b"%PDF-" not in data[:1024]:
        raise DocumentError(source, "not a PDF file (no %PDF- header)")
    import pdfplumber

    try:
        with (
            bounded_inflate(source, config.max_unpacked_bytes),
            pdfplumber.open(io.BytesIO(data)) as pdf,
        ):
            check_page_count(pdf, source, config.max_pages)
            n_pages = len(pdf.pages)
            if n_pages > config.max_pages:
                raise DocumentTooLargeError(
                    source, f"the PDF has {n_pages:,} pages, more than the limit of {config.max_pages:,}"
                )
            pages = []
            for i, page in enumerate(pdf.pages):
                upright = _upright(page)
                pages.append(_page_lines(upright, i + 1))
                if upright is not page:
                    upright.close()
                page.close()  # drop the page's cached layout objects: memory stays flat on long PDFs
            title = _title(pdf.metadata)
    except DocumentError:
        raise
    except Exception as e:
        if _is_encryption_error(e):
            raise EncryptedDocumentError(source, "the PDF is password-protected; remove the password") from e
        raise DocumentError(source, f"the PDF could not be read: {type(e).__name__}: {e}") from e
    pages, garbled = _without_undecodable(pages)
    if garbled > 0.5:
        raise DocumentError(
            source,
            "the PDF's text cannot be decoded: its fonts map their glyphs to no characters (the text reads as "
            "(cid:…) codes); save it again as PDF with its fonts embedded, or run OCR",
        )
    pages = _drop_running_lines(pages)
    _mark_margin_lines(pages)
    pages = _join_broken_rows(pages)
    pages = _without_contents(pages)
    blocks = list(_blocks(pages))
    check_paragraph_count(len(blocks), source, config)
    if not blocks:
        raise DocumentError(source, "the PDF has no extractable text (a scanned image? run OCR first)")
    return assemble(
        blocks,
        data=data,
        source=source,
        media_type=MEDIA_TYPE,
        config=config,
        title=title,
        pages=n_pages,
        metadata={"connector": "pdf"},
    )
