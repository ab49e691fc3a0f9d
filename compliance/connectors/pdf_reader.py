"""PDF connector via pdfplumber: text lines → paragraphs, headings, lists, with page numbers.

Steps, all on pdfplumber's text lines (reading order, layout off):

1. **Running headers/footers.** Among the first and last two lines of every page, a line that recurs (digits
   normalised, so ``"Page 3 of 12"`` matches ``"Page 4 of 12"``) on at least half of the pages (and two or more)
   is removed, as is any line there that is only a page number.
2. **Headings.** The body font size is the most common character size; a line at least 15 % larger, or a short
   all-bold line without final punctuation, is a heading. Larger sizes give outer levels.
3. **Re-flow.** Lines join into one paragraph until a vertical gap clearly larger than the usual line spacing, a
   heading, a list marker, a first-line indent, a sentence ending on a short line, or a page break (a paragraph
   continues onto the next page when it did not end with punctuation and the next page starts in lower case). A line ending in ``letter-`` followed by a lower-case
   word is de-hyphenated (``"pro-" + "cessing"`` → ``"processing"``).
"""

from __future__ import annotations

import io
import itertools
import math
import re
import statistics
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from compliance.connectors.assemble import Block, assemble, table_blocks
from compliance.connectors.config import SplitConfig
from compliance.connectors.document import ParsedDocument
from compliance.connectors.pdf_guard import bounded_inflate, check_page_count
from compliance.connectors.safety import check_paragraph_count, check_size
from compliance.errors import DocumentError, DocumentTooLargeError, EncryptedDocumentError

MEDIA_TYPE = "application/pdf"
_BULLET_CHARS = "•▪◦●○■□➢✓\uf0b7\uf0a7\uf076\uf0d8–*-"
_BULLET_RE = re.compile(
    r"^(\(cid:\d+\)|["
    + re.escape(_BULLET_CHARS)
    + r"]|\(?\d{1,3}[.)]|\(?[a-z][.)]|\(?[ivx]{1,5}[.)])\s+(\S.*)$"
)
_PAGE_NUMBER_RE = re.compile(r"^(?:(?:page|p\.|seite)\s*)?#+(?:\s*(?:of|/|von)\s*#+)?$|^[-–—]\s*#+\s*[-–—]$")
_HYPHEN_END_RE = re.compile(r"[a-zà-ÿ]-$")


@dataclass(slots=True)
class _Line:
    text: str
    page: int
    top: float
    bottom: float
    x0: float
    size: float
    bold: bool
    table: list[list[str]] | None = None
    x1: float = 0.0  # a table found by pdfplumber, standing in for its text lines


@dataclass(slots=True)
class _Open:
    kind: str  # "paragraph" | "list-item"
    lines: list[_Line] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)
    marker: str = ""


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


def _page_lines(page: Any, number: int) -> list[_Line]:
    """Text lines of a page in reading order; each ruled table is one pseudo-line carrying its cells."""
    tables: list[_Line] = []
    boxes: list[tuple[float, float, float, float]] = []
    for table in page.find_tables():
        rows = [[_cell_text(c) for c in row] for row in table.extract()]
        if len(rows) < 2 and all(len(r) < 2 for r in rows):
            continue  # a box around a paragraph, not a table
        x0, top, x1, bottom = table.bbox
        boxes.append((x0, top, x1, bottom))
        r0 = table.rows[0].bbox
        head_chars = [c for c in page.chars if r0[1] <= (c["top"] + c["bottom"]) / 2 <= r0[3]]
        tables.append(_Line("", number, top, bottom, x0, 0.0, _bold(head_chars), table=rows))

    def in_table(top: float, bottom: float, x0: float) -> bool:
        mid = (top + bottom) / 2
        return any(bt <= mid <= bb and bx0 - 1 <= x0 <= bx1 for bx0, bt, bx1, bb in boxes)

    lines: list[_Line] = list(tables)
    for raw in page.extract_text_lines(strip=True, return_chars=True):
        text = raw["text"].strip()
        chars = [c for c in raw.get("chars", []) if c.get("text", "").strip()]
        if not text or not chars or in_table(float(raw["top"]), float(raw["bottom"]), float(raw["x0"])):
            continue
        size = Counter(round(float(c.get("size", 0.0)) * 2) / 2 for c in chars).most_common(1)[0][0]
        lines.append(
            _Line(
                text,
                number,
                float(raw["top"]),
                float(raw["bottom"]),
                float(raw["x0"]),
                size,
                _bold(chars),
                x1=float(raw["x1"]),
            )
        )
    lines.sort(key=lambda ln: (round(ln.top, 1), ln.x0))
    return lines


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


def _join(parts: list[str], text: str) -> None:
    if parts and _HYPHEN_END_RE.search(parts[-1]) and text[:1].islower():
        parts[-1] = parts[-1][:-1] + text
    elif parts:
        parts[-1] = parts[-1] + " " + text
    else:
        parts.append(text)


def _blocks(pages: list[list[_Line]]) -> Iterator[Block]:
    body = [ln for lines in pages for ln in lines]
    text_body = [ln for ln in body if ln.table is None]
    if not body:
        return
    size_weight: Counter[float] = Counter()
    for ln in text_body:
        size_weight[ln.size] += len(ln.text)
    body_size = size_weight.most_common(1)[0][0] if size_weight else 0.0

    def heading_size(ln: _Line) -> float | None:
        if ln.table is not None:
            return None
        if ln.size >= body_size * 1.15:
            return ln.size
        words = ln.text.split()
        if ln.bold and len(words) <= 12 and ln.text[-1] not in ".,;:!?" and not _BULLET_RE.match(ln.text):
            return body_size
        return None

    heading_sizes = sorted({s for ln in text_body if (s := heading_size(ln)) is not None}, reverse=True)
    # the largest size, used only by the first line(s) of the document, is the title: kept out of heading paths
    title_size: float | None = None
    if len(heading_sizes) > 1:
        top_lines = [i for i, ln in enumerate(body) if heading_size(ln) == heading_sizes[0]]
        if top_lines == list(range(len(top_lines))):
            title_size = heading_sizes[0]
    level_of = {s: i + 1 for i, s in enumerate(h for h in heading_sizes if h != title_size)}
    if title_size is not None:
        level_of[title_size] = 0

    gaps: list[float] = []
    heights: list[float] = []
    for lines in pages:
        text_lines = [ln for ln in lines if ln.table is None]
        for a, b in itertools.pairwise(text_lines):
            if heading_size(a) is None and heading_size(b) is None and b.top > a.top:
                gaps.append(max(0.0, b.top - a.bottom))
        heights.extend(ln.bottom - ln.top for ln in text_lines)
    # the lower quartile: gaps inside paragraphs outnumber the gaps between them, even in short documents
    typical_gap = sorted(gaps)[len(gaps) // 4] if gaps else 2.0
    typical_height = statistics.median(heights) if heights else body_size
    para_gap = max(typical_gap * 1.8, typical_gap + 0.5 * typical_height)
    left = min((ln.x0 for ln in text_body if heading_size(ln) is None), default=0.0)
    right = max((ln.x1 for ln in text_body if heading_size(ln) is None), default=0.0)
    short_line = 0.8 * (right - left)  # a sentence ending on a line shorter than this ends its paragraph

    current: _Open | None = None
    heading: tuple[float, list[_Line]] | None = None
    last_table: tuple[list[str] | None, int] | None = None  # (header, columns) of a table that may continue

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

    prev: _Line | None = None
    for ln in body:
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
                header_flag = True if ln.bold else None
                yield from table_blocks(rows, header=header_flag, page=ln.page)
                has_header = header_flag is True or (
                    header_flag is None and not (width == 2 and len(rows) > 1)
                )
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
                and prev.page == ln.page
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
        new_page = prev is not None and prev.page != ln.page
        gap = (ln.top - prev.bottom) if prev is not None and not new_page else 0.0
        if m:
            yield from flush()
            marker = "-" if m.group(1) in _BULLET_CHARS or m.group(1).startswith("(cid:") else m.group(1)
            current = _Open("list-item", [ln], [m.group(2)], marker)
        elif current is None:
            current = _Open("paragraph", [ln], [ln.text])
        else:
            last = current.lines[-1]
            ends_sentence = current.parts[-1][-1:] in ".!?:;"
            if new_page:
                breaks = ends_sentence or not ln.text[:1].islower()
            else:
                indented_start = ln.x0 - left > 8 and ends_sentence and current.kind == "paragraph"
                hanging = current.kind == "list-item" and ln.x0 + 2 < last.x0 and ends_sentence
                short_end = ends_sentence and last.x1 - left < short_line and current.kind == "paragraph"
                breaks = gap > para_gap or indented_start or hanging or short_end
            if breaks:
                yield from flush()
                current = _Open("paragraph", [ln], [ln.text])
            else:
                current.lines.append(ln)
                _join(current.parts, ln.text)
        prev = ln
    yield from flush()


def _title(metadata: dict[str, Any]) -> str:
    value = metadata.get("Title")
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    return value.strip() if isinstance(value, str) else ""


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
                pages.append(_page_lines(page, i + 1))
                page.close()  # drop the page's cached layout objects: memory stays flat on long PDFs
            title = _title(pdf.metadata)
    except DocumentError:
        raise
    except Exception as e:
        if _is_encryption_error(e):
            raise EncryptedDocumentError(source, "the PDF is password-protected; remove the password") from e
        raise DocumentError(source, f"the PDF could not be read: {type(e).__name__}: {e}") from e
    blocks = list(_blocks(_drop_running_lines(pages)))
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
