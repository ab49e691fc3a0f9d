"""From connector blocks to a :class:`ParsedDocument`: lists with lead-ins, splitting, merging, offsets.

Every connector turns its format into a flat sequence of :class:`Block` (headings, paragraphs, list items, table
rows, in reading order). :func:`assemble` does the rest, identically for every format:

0. a table of contents typed or converted as text is left out (:mod:`compliance.connectors.contents`);
1. headings build the ``heading_path`` of what follows (a heading of level *n* closes those of level >= *n*);
2. consecutive list items become one ``"list"`` segment, together with the lead-in paragraph right before them
   when that paragraph ends with ``":"``; a list with no lead-in whose items are all enumerated sentences
   (``"(a) The supplier shall …."``) is a run of numbered statements instead, one paragraph each, as a Word
   document with typed-in letters gives them; a block with a role (page furniture) stands alone;
3. the document text is the segments (and headings) joined with blank lines;
4. segments over the token budget are split — lists between items, paragraphs between sentences, a single
   over-long sentence between words — and very short paragraphs are merged with a neighbour of the same
   section (a short line that ends no sentence, such as ``"Page 3 of 9"``, stays apart). Every paragraph is a
   span of the document text, so ``doc.text[p.char_start:p.char_end] == p.text``;
5. every paragraph gets its role (:mod:`compliance.connectors.roles`); the roles a connector set from the layout
   are recorded in ``metadata["layout_roles"]`` so that a later pass over a whole batch keeps them.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Literal

from compliance.connectors.config import TOKEN_RE, SplitConfig, count_tokens
from compliance.connectors.contents import contents_items
from compliance.connectors.document import Paragraph, ParagraphKind, ParagraphRole, ParsedDocument
from compliance.text import clean_text

BlockKind = Literal["paragraph", "heading", "list-item", "table-row"]


@dataclass(frozen=True, slots=True)
class Block:
    """One reading-order unit produced by a connector.

    Attributes:
        kind: ``"heading"``, ``"paragraph"``, ``"list-item"`` or ``"table-row"``.
        text: The text; newlines inside are kept as line breaks, runs of spaces are collapsed.
        level: Heading level (1 = outermost; 0 = the document title, kept out of heading paths) or list
            nesting depth (0 = top level).
        page: 1-based page number (paginated formats only).
        marker: List marker (``"-"``, ``"1."``, ``"a)"``); ``"-"`` when empty.
        role: The paragraph role when the layout makes it certain (``"furniture"`` for a page footer); such a
            block is never merged with its neighbours.
    """

    kind: BlockKind
    text: str
    level: int = 0
    page: int | None = None
    marker: str = ""
    role: ParagraphRole | None = None


_SECTION_NUMBER_RE = re.compile(
    r"^(?:(?P<number>\d{1,2}(?:\.\d{1,2}){0,3})\.?|[A-Z][.)]|(?:section|part|chapter|annex|appendix)\s+\w+)\s",
    re.IGNORECASE,
)


#: a list's number formats by their names in Word (``numFmt``) and their one-letter codes in ODF (``style:num-format``)
#: and HTML (``<ol type>``)
_NUMBER_FORMATS = {
    "lowerLetter": "a",
    "upperLetter": "A",
    "lowerRoman": "i",
    "upperRoman": "I",
    # CSS list-style-type
    "lower-alpha": "a",
    "lower-latin": "a",
    "upper-alpha": "A",
    "upper-latin": "A",
    "lower-roman": "i",
    "upper-roman": "I",
}


def format_number(n: int, fmt: str) -> str:
    """``n`` as a list numbers it: ``fmt`` is a one-letter code (``1``, ``a``, ``A``, ``i``, ``I``: ODF's
    ``style:num-format``, HTML's ``<ol type>``), Word's ``numFmt`` (``lowerLetter``, ``upperRoman``,
    ``decimalZero`` …) or CSS's ``list-style-type`` (``lower-alpha`` …); decimal for anything else. Letters run
    on as in Word (``z``, ``aa``, ``ab``)."""
    code = _NUMBER_FORMATS.get(fmt, fmt)
    if code in ("a", "A") and n > 0:
        out = ""
        while n > 0:
            n, r = divmod(n - 1, 26)
            out = chr(ord("a") + r) + out
        return out if code == "a" else out.upper()
    if code in ("i", "I") and 0 < n < 4000:
        out = ""
        for value, numeral in ((1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"), (50, "l"),
                               (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i")):  # fmt: skip
            while n >= value:
                out += numeral
                n -= value
        return out if code == "i" else out.upper()
    if fmt.startswith("decimalZero"):
        return f"{n:02d}"
    return str(n)


def typed_heading_depth(text: str) -> int | None:
    """Whether a bold paragraph's ``text`` reads as a heading typed by hand, and how deep: at most ten words, no
    sentence punctuation at its end, and numbered ("2.1 Email": 2), in capitals ("ACCEPTABLE USE POLICY": 1) or in
    title case ("Data Retention": 1). A bold rule in sentence case ("Do not share passwords") is no heading. The
    caller checks that the whole paragraph is bold."""
    stripped = " ".join(text.split())
    words = stripped.split()
    if not words or len(words) > 10 or stripped.endswith(tuple(".!?;:,")):
        return None
    numbered = _SECTION_NUMBER_RE.match(stripped)
    if numbered is not None:
        number = numbered.group("number")
        return number.count(".") + 1 if number else 1
    letters = [w for w in words if any(c.isalpha() for c in w)]
    if not letters:
        return None
    if stripped.isupper() or all(w[0].isupper() for w in letters if len(w) > 3):
        return 1
    return None


def capitals_heading(text: str) -> bool:
    """Whether a line reads as a heading by its capitals alone ("1. PURPOSE", "DATA PROTECTION POLICY"), as a policy
    typed without heading styles sets them: after an optional section number, one to eight words, each of capital
    letters (hyphens between them, brackets and quotes around them, and "&" allowed), four letters at least. A code
    ("ISO 27001", "PR-07") or a line ending a sentence is none. The PDF reader checks
    that the line is short and starts where a section may (docs/roles.md)."""
    words = text.split()
    if words and re.fullmatch(r"(?:\d+(?:\.\d+)*|[A-Z]|[IVX]+)[.)]?", words[0]):
        words = words[1:]
    if not words or len(words) > 8:
        return False
    for word in words:
        core = word.strip("()[]\"'“”‘’")
        if core != "&" and not all(part.isalpha() and part.isupper() for part in core.split("-")):
            return False
    return sum(c.isalpha() for c in text) >= 4


def without_page_navigation(text: str, in_page_links: list[str]) -> str:
    """A block's ``text`` (whitespace collapsed) without the page's own navigation, given the texts of its links to
    places on the same page (HTML ``href="#…"``, Markdown ``[…](#…)``): empty when the block is nothing but such
    links (an entry of the page's table of contents, a "Skip to main content" link), and without a last such link
    that follows a finished sentence ("… at any time. Back to top"). A link inside a sentence ("see your rights
    below") is text."""
    text = " ".join(text.split())
    linked = [" ".join(t.split()) for t in in_page_links]
    if not text or not linked:
        return text
    if "".join("".join(linked).split()) == "".join(text.split()):
        return ""
    last = linked[-1]
    before = text[: len(text) - len(last)].rstrip()
    if last and text.endswith(last) and before[-1:] in ".!?":
        return before
    return text


#: the whole text of a note's reference mark set as a superscript ("1", "2,3", "[4]", "*", "†"; "st" of "1st" or
#: "(a)" is none), which the DOCX and HTML readers leave out (the PDF reader finds its characters by their size)
NOTE_MARK_RE = re.compile(r"\[?[\d*†‡]+(?:[,–-]\s?[\d*†‡]+)*\]?")

#: bullet glyphs (the private-use ones are symbol-font bullets: U+F0B7 …), shared with the PDF reader
BULLET_GLYPHS = "•▪◦●○■□➢\uf0b7\uf0a7\uf076\uf0d8\uf06c\uf0fc"
#: the bullets a list item's own text may start with (and that a paragraph typed as a list item starts with)
TYPED_BULLET_RE = re.compile(r"^(?:[" + re.escape(BULLET_GLYPHS + "·") + r"]+\s*|[–-]\s+)")


def typed_list_blocks(text: str) -> list[Block] | None:
    """A paragraph that is a list typed by hand, else None: its lines (one line, or lines broken by hand) start
    with a typed bullet ("• ", "▪ ", "- "), as a policy written without Word's list styles has them. The lines
    before the first bullet are the list's lead-in, a line without a bullet goes on with the item above it.
    The DOCX reader reads a paragraph so (lines broken with Shift+Enter), the HTML reader a ``<p>`` (lines broken
    with ``<br>``)."""
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    marks = [TYPED_BULLET_RE.match(line) for line in lines]
    first = next((i for i, m in enumerate(marks) if m is not None and lines[i][m.end() :].strip()), None)
    if first is None:
        return None
    blocks = [Block("paragraph", " ".join(lines[:first]))] if first else []
    item: list[str] = []
    for line, m in zip(lines[first:], marks[first:], strict=True):
        if m is not None and line[m.end() :].strip():
            if item:
                blocks.append(Block("list-item", " ".join(item), level=0, marker="-"))
            item = [line[m.end() :].strip()]
        else:
            item.append(line)
    blocks.append(Block("list-item", " ".join(item), level=0, marker="-"))
    return blocks


def _without_own_marker(text: str, marker: str) -> str:
    """A list item's text without a copy of its own marker at its start: an exported page that writes the number
    or the bullet into the item ("<li><span>1.</span>Store …</li>", a symbol-font bullet U+F0B7) read as
    "1. 1.Store …" or "- \uf0b7Acceptable Use Policy", and the numbered items were not split."""
    stripped = text.lstrip()
    if marker != "-":
        after = stripped[len(marker) :]
        if stripped.startswith(marker) and not after[:1].isdigit() and after.strip():
            return after.lstrip()
        return text
    m = TYPED_BULLET_RE.match(stripped)
    return stripped[m.end() :] if m and stripped[m.end() :].strip() else text


#: an identifier in a table's first column: "3.1", "12.", "AC-01", "A.5.1"
_ROW_ID_RE = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[A-Z]{1,5}[-.]?\d+(?:\.\d+)*)$")


def guess_header(rows: Sequence[Sequence[str]]) -> bool:
    """Whether the first row of a table that no format mark (bold, a repeating header row) singles out is its header.

    A two-column table is read as label/value pairs (no header). A wider table has a header unless its first row
    reads as data: a cell of more than six words, or of four or more ending in a question mark (a question of a
    questionnaire, not a column's name such as "Read only?"), or a first cell that is a row identifier ("3.1",
    "AC-01") like the next row's. Such a first row had become the header of the rows beneath it ("3.1: 3.2; Is
    multi-factor authentication enforced …?: Is data encrypted at rest?")."""
    width = max((len(row) for row in rows), default=0)
    if width == 2 and len(rows) > 1:
        return False
    head = [str(c or "").strip() for c in rows[0]] if rows else []
    if any(len(c.split()) > 6 or (c.endswith("?") and len(c.split()) >= 4) for c in head):
        return False
    nxt = [str(c or "").strip() for c in rows[1]] if len(rows) > 1 else []
    return not (head and nxt and _ROW_ID_RE.match(head[0]) and _ROW_ID_RE.match(nxt[0]))


def table_blocks(
    grid: Sequence[Sequence[str]], *, header: bool | None = None, page: int | None = None
) -> list[Block]:
    """Turn a table (rows of cell texts) into ``"table-row"`` blocks.

    With a header row each data row reads ``"Header: value; Header: value"`` (empty cells left out); a row whose
    only filled cell is its first (a label with blanks beside it) carries the role ``"form"``. Without one, a
    two-column table is read as label/value pairs (``"Label: value"``) and wider tables as their cells joined
    with ``"; "``.

    Args:
        grid: Rows of cell texts (cell line breaks are folded into spaces).
        header: True when the first row is a header (bold or marked as repeating header), False when it is
            known not to be, None to decide (:func:`guess_header`).
        page: Page number for every row.
    """
    rows = [[" ".join(str(c or "").split()) for c in row] for row in grid]
    if header and rows and not any(rows[0]):
        header = False  # an empty header row (a Markdown key/value table has to have one): the rows are data
    rows = [row for row in rows if any(row)]
    if not rows:
        return []
    width = max(len(row) for row in rows)
    if header is None:
        header = guess_header(rows)
    if not header or len(rows) == 1:
        if width == 2:
            texts = [
                f"{r[0]}: {r[1]}" if r[0] and len(r) > 1 and r[1] else "; ".join(c for c in r if c)
                for r in rows
            ]
        else:
            texts = ["; ".join(c for c in r if c) for r in rows]
        return [
            Block("table-row", t, page=page, role="form" if _blank_row(r, width) else None)
            for t, r in zip(texts, rows, strict=True)
        ]
    head = rows[0]
    out = []
    for row in rows[1:]:
        parts = [
            f"{head[i]}: {cell}" if i < len(head) and head[i] and head[i] != cell else cell
            for i, cell in enumerate(row)
            if cell
        ]
        out.append(
            Block("table-row", "; ".join(parts), page=page, role="form" if _blank_row(row, width) else None)
        )
    return out


def _blank_row(row: Sequence[str], width: int) -> bool:
    """A label whose value cells are all empty: a blank to fill in, a form field."""
    return width > 1 and 0 < len(row[0]) <= 120 and not any(row[1:])


@dataclass(slots=True)
class _Segment:
    kind: ParagraphKind
    lines: list[str]
    heading_path: tuple[str, ...]
    page: int | None
    section: int
    start: int = 0
    line_starts: list[int] = field(default_factory=list)
    role: ParagraphRole | None = None
    lead_in: bool = False
    line_pages: list[int | None] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


@dataclass(slots=True)
class _Unit:
    start: int
    end: int
    kind: ParagraphKind
    heading_path: tuple[str, ...]
    page: int | None
    section: int
    tokens: int
    role: ParagraphRole | None = None


# a clause that opens like a sentence (a capital, then three words or more) …
_SENTENCE_START = r"^[\"'“‘(]?[A-Z]\S*(?:\s+\S+){3,}"
_SENTENCE_START_RE = re.compile(_SENTENCE_START)
# … and ends like one
_SENTENCE_ITEM_RE = re.compile(_SENTENCE_START + r"[.!?][\"'”’)]?$")


def _statement_items(seg: _Segment) -> list[list[int]] | None:
    """The items of a list that are clauses of their own, as the indices of each item's lines (its nested lines
    with it); None for any other list.

    Every top-level item must be enumerated ("(a)", "1.", not a bullet) and read as a sentence: a capital, four
    words or more, a final stop — or, for an item with items nested under it, the sentence those items go on with
    ("(f) Data retention periods are defined. More specifically," / "  - customer data …"). A bullet after an
    enumerated item is nested under it, indented or not (a PDF's lines keep no nesting). A lead-in (the list's
    first line, ending in a colon) is not an item: Word's numbered list of duties under "The policy requires
    that:" is read as the same lettered paragraphs typed text gives, each read with that lead-in by the audit
    (:func:`compliance.connectors.lists.lead_in_contexts`)."""
    if seg.kind != "list" or seg.role is not None:
        return None
    groups: list[list[int]] = []
    for i in range(1 if seg.lead_in else 0, len(seg.lines)):
        line = seg.lines[i]
        marker, _, rest = line.partition(" ")
        # nested under the item above: indented, or a bullet under an enumerated item (a PDF keeps no indentation)
        if line[:1].isspace() or marker == "-":
            if not groups:
                return None
            groups[-1].append(i)
            continue
        if not _SENTENCE_START_RE.match(rest.strip()):
            return None
        groups.append([i])
    for group in groups:
        own = seg.lines[group[0]].partition(" ")[2].strip()
        if len(group) == 1 and not _SENTENCE_ITEM_RE.match(own):
            return None
    return groups or None


def _split_statements(segments: list[_Segment]) -> list[_Segment]:
    out: list[_Segment] = []
    for seg in segments:
        groups = _statement_items(seg)
        if groups is None:
            out.append(seg)
            continue
        pages = seg.line_pages or [seg.page] * len(seg.lines)
        if seg.lead_in:
            out.append(_Segment("paragraph", [seg.lines[0]], seg.heading_path, pages[0], seg.section))
        for group in groups:
            lines = [seg.lines[i] for i in group]
            kind: ParagraphKind = "paragraph" if len(lines) == 1 else "list"
            out.append(
                _Segment(
                    kind,
                    lines,
                    seg.heading_path,
                    pages[group[0]],
                    seg.section,
                    line_pages=[pages[i] for i in group],
                )
            )
    return out


def _segments(blocks: Iterable[Block]) -> list[_Segment]:
    stack: list[tuple[int, str]] = []
    section = 0
    segments: list[_Segment] = []
    in_list = False
    list_base = 0
    for block in blocks:
        text = clean_text(block.text)
        if not text:
            continue
        path = tuple(t for _, t in stack)
        if block.role is not None and block.kind != "heading":
            text = " ".join(text.split("\n"))
            kind_of: ParagraphKind = "table-row" if block.kind == "table-row" else "paragraph"
            segments.append(_Segment(kind_of, [text], path, block.page, section, role=block.role))
            in_list = False
            continue
        if block.kind == "heading":
            text = " ".join(text.split("\n"))
            if block.level <= 0:  # the document title: in the text, not in any heading path
                stack.clear()
                path = ()
            else:
                while stack and stack[-1][0] >= block.level:
                    stack.pop()
                path = tuple(t for _, t in stack)
                stack.append((block.level, text))
            section += 1
            segments.append(_Segment("heading", [text], path, block.page, section))
            in_list = False
            continue
        if block.kind == "list-item":
            marker = block.marker.strip() or "-"
            last = segments[-1] if segments else None
            if not (in_list and last is not None and last.kind == "list"):
                list_base = block.level  # nesting is shown relative to the list's first item
            indent = "  " * max(0, block.level - list_base)
            line = indent + marker + " " + " ".join(_without_own_marker(text, marker).split("\n"))
            if in_list and last is not None and last.kind == "list":
                last.lines.append(line)
                last.line_pages.append(block.page)
                continue
            if (
                last is not None
                and last.kind == "paragraph"
                and last.role is None
                and last.section == section
                and len(last.lines) == 1
                and last.lines[0].rstrip().endswith(":")
            ):
                last.kind = "list"
                last.lead_in = True
                last.lines.append(line)
                last.line_pages.append(block.page)
            else:
                segments.append(_Segment("list", [line], path, block.page, section, line_pages=[block.page]))
            in_list = True
            continue
        in_list = False
        kind: ParagraphKind = "table-row" if block.kind == "table-row" else "paragraph"
        if kind == "paragraph":
            text = " ".join(text.split("\n")) if block.kind == "paragraph" else text
        segments.append(_Segment(kind, [text], path, block.page, section, line_pages=[block.page]))
    return _split_statements(segments)


def _word_windows(text: str, start: int, end: int, budget: int) -> list[tuple[int, int]]:
    """Split ``text[start:end]`` between tokens into pieces of at most ``budget`` tokens."""
    pieces: list[tuple[int, int]] = []
    tokens = list(TOKEN_RE.finditer(text, start, end))
    for i in range(0, len(tokens), budget):
        chunk = tokens[i : i + budget]
        pieces.append((chunk[0].start(), chunk[-1].end()))
    return pieces


def _atoms(text: str, seg: _Segment, budget: int) -> list[tuple[int, int, int]]:
    """Smallest pieces a segment may be split into: (start, end, tokens) with absolute offsets."""
    from compliance.connectors.sentences import sentence_spans

    if seg.kind == "list":
        coarse = [(s, s + len(line)) for s, line in zip(seg.line_starts, seg.lines, strict=True)]
    elif seg.kind == "table-row":
        coarse = []
        pos = seg.start
        for part in text[seg.start : seg.start + len(seg.text)].split("; "):
            coarse.append((pos, pos + len(part)))
            pos += len(part) + 2
    else:
        coarse = [(seg.start, seg.start + len(seg.text))]
    atoms: list[tuple[int, int, int]] = []
    for start, end in coarse:
        n = count_tokens(text[start:end])
        if n <= budget:
            atoms.append((start, end, n))
            continue
        for s_start, s_end in sentence_spans(text[start:end]):
            a, b = start + s_start, start + s_end
            m = count_tokens(text[a:b])
            if m <= budget:
                atoms.append((a, b, m))
            else:
                atoms.extend((x, y, count_tokens(text[x:y])) for x, y in _word_windows(text, a, b, budget))
    return atoms


def _split(text: str, seg: _Segment, config: SplitConfig) -> list[_Unit]:
    end = seg.start + len(seg.text)
    total = count_tokens(seg.text)
    if total <= config.max_tokens:
        return [_Unit(seg.start, end, seg.kind, seg.heading_path, seg.page, seg.section, total, seg.role)]
    units: list[_Unit] = []
    cur: list[tuple[int, int, int]] = []
    for atom in _atoms(text, seg, config.max_tokens):
        # count the candidate span itself: separators between atoms ("; " in table rows) are tokens too
        if cur and count_tokens(text[cur[0][0] : atom[1]]) > config.max_tokens:
            units.append(_pack(text, cur, seg))
            cur = []
        cur.append(atom)
    if cur:
        units.append(_pack(text, cur, seg))
    return units


def _pack(text: str, atoms: Sequence[tuple[int, int, int]], seg: _Segment) -> _Unit:
    start, end = atoms[0][0], atoms[-1][1]
    while start < end and text[start].isspace():  # a nested list item's indent when a list is split
        start += 1
    return _Unit(
        start, end, seg.kind, seg.heading_path, seg.page, seg.section, count_tokens(text[start:end]), seg.role
    )


def _merge_short(units: list[_Unit], config: SplitConfig, text: str) -> list[_Unit]:
    def short(u: _Unit) -> bool:
        return u.end - u.start < config.min_chars

    def label_like(u: _Unit) -> bool:  # "Page 3 of 9", "Uncontrolled when printed": not a sentence to join
        return short(u) and text[u.end - 1] not in ".!?;:,)\"'”’"

    out: list[_Unit] = []
    for unit in units:
        prev = out[-1] if out else None
        if (
            prev is not None
            and prev.kind == "paragraph"
            and unit.kind == "paragraph"
            and prev.role is None
            and unit.role is None
            and prev.section == unit.section
            and prev.heading_path == unit.heading_path
            and (short(prev) or short(unit))
            and not (label_like(prev) or label_like(unit))
            and prev.tokens + unit.tokens <= config.max_tokens
        ):
            prev.end = unit.end
            prev.tokens += unit.tokens
            continue
        out.append(unit)
    return out


def assemble(
    blocks: Iterable[Block],
    *,
    data: bytes,
    source: str,
    media_type: str,
    config: SplitConfig,
    title: str | None = None,
    pages: int | None = None,
    metadata: dict[str, str] | None = None,
) -> ParsedDocument:
    """Build the parsed document from a connector's blocks.

    Args:
        blocks: Reading-order blocks from a connector.
        data: The original bytes (for the checksum and size).
        source: The file name or URI as given.
        media_type: The document's media type.
        config: Splitting choices.
        title: Title from the format's metadata; when empty, the first heading, else the file name stem.
        pages: Page count (paginated formats).
        metadata: Extra connector metadata (string values).

    Returns:
        The parsed document, with paragraph offsets into its text and every paragraph's role
        (:func:`compliance.connectors.roles.assign_roles` over this one document, structure features only; none
        when ``config.assign_roles`` is off).
    """
    blocks = list(blocks)
    if contents := contents_items([b.text for b in blocks]):  # a table of contents typed or converted as text
        blocks = [b for i, b in enumerate(blocks) if i not in contents]
    segments = _segments(blocks)
    parts: list[str] = []
    pos = 0
    for seg in segments:
        if parts:
            pos += 2
        seg.start = pos
        seg.line_starts = []
        line_pos = pos
        for line in seg.lines:
            seg.line_starts.append(line_pos)
            line_pos += len(line) + 1
        parts.append(seg.text)
        pos += len(seg.text)
    text = "\n\n".join(parts)

    units: list[_Unit] = []
    for seg in segments:
        if seg.kind == "heading":
            if config.include_headings:
                end = seg.start + len(seg.text)
                units.append(
                    _Unit(seg.start, end, "heading", seg.heading_path, seg.page, seg.section, 0, "heading")
                )
            continue
        units.extend(_split(text, seg, config))
    units = _merge_short(units, config, text)

    paragraphs = tuple(
        Paragraph(
            ordinal=i,
            text=text[u.start : u.end],
            char_start=u.start,
            char_end=u.end,
            heading_path=u.heading_path,
            page=u.page,
            kind=u.kind,
            role=u.role,
        )
        for i, u in enumerate(units)
    )
    first_heading = next((s.lines[0] for s in segments if s.kind == "heading"), None)
    resolved_title = (title or "").strip() or first_heading or PurePath(source).stem or source
    meta = {"split_config": config.to_json()}
    layout = {str(p.ordinal): p.role for p in paragraphs if p.role is not None and p.kind != "heading"}
    if layout:
        meta["layout_roles"] = json.dumps(layout, sort_keys=True)
    meta.update(metadata or {})
    doc = ParsedDocument(
        source=source,
        media_type=media_type,
        checksum=hashlib.sha256(data).hexdigest(),
        title=resolved_title,
        text=text,
        paragraphs=paragraphs,
        size_bytes=len(data),
        pages=pages,
        metadata=meta,
    )
    if not config.assign_roles:  # the caller decides the roles over a batch of documents
        return doc
    from compliance.connectors.roles import assign_roles

    return assign_roles([doc])[0]
