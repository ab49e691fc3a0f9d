"""Word (.docx) connector: body paragraphs and tables in reading order, via python-docx.

Only the main document body is read, so page headers and footers (separate parts), footnotes and comments never
appear. Deleted text (tracked changes) and the fallback copy of alternate content are skipped. A text box (a
callout, a cover page's title block, a shape of a diagram) is read as paragraphs of its own after the paragraph it is
anchored in, never into that paragraph's text, as a PDF of the document shows its text among the page's.
Heading styles (``Heading 1`` …, or an outline level) build the heading path; ``Title`` gives the document title.
Numbered and bulleted paragraphs become list items with a marker computed from the numbering definitions.
Tables are read row by row as ``"Header: value; Header: value"`` using the first row as header.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from compliance.connectors.assemble import (
    NOTE_MARK_RE,
    Block,
    assemble,
    capitals_heading,
    format_number,
    table_blocks,
    typed_heading_depth,
    typed_list_blocks,
)
from compliance.connectors.config import SplitConfig
from compliance.connectors.document import ParsedDocument
from compliance.connectors.safety import check_paragraph_count, check_size, open_ooxml_zip
from compliance.errors import DocumentError

MEDIA_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
_HEADING_RE = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)


def _w(tag: str) -> str:
    return f"{{{W}}}{tag}"


_SKIP = {_w("txbxContent"), _w("del"), _w("moveFrom"), f"{{{MC}}}Fallback", _w("rPr"), _w("pPr")}
_NESTED_BLOCKS = {_w("tbl")}


def _val(el: Any, tag: str) -> str | None:
    child = el.find(_w(tag)) if el is not None else None
    return None if child is None else child.get(_w("val"))


def _note_mark(run: Any) -> bool:
    """A run set as a superscript that holds only a note's reference mark ("… within 72 hours¹", "Article 33²"):
    no text of the paragraph (a raised "st" of "1st" is)."""
    rpr = run.find(_w("rPr"))
    align = rpr.find(_w("vertAlign")) if rpr is not None else None
    if align is None or align.get(_w("val")) != "superscript":
        return False
    text = "".join(t.text or "" for t in run.iter(_w("t")))
    return bool(NOTE_MARK_RE.fullmatch(text.strip()))


def run_text(el: Any, *, into_tables: bool = False) -> str:
    """Visible text of a paragraph (or any element), skipping text boxes (read on their own, :func:`_text_boxes`),
    deletions and fallbacks."""
    out: list[str] = []

    def walk(node: Any) -> None:
        for child in node:
            tag = child.tag
            if not isinstance(tag, str) or tag in _SKIP:
                continue
            if tag in _NESTED_BLOCKS and not into_tables:
                continue
            if tag == _w("r") and _note_mark(child):
                continue
            if tag == _w("t"):
                # text plus the tails of any (unresolved) entity references inside
                out.append((child.text or "") + "".join(sub.tail or "" for sub in child))
            elif tag == _w("tab"):
                out.append(" ")
            elif tag in (_w("br"), _w("cr")):
                out.append(" " if child.get(_w("type")) == "page" else "\n")
            elif tag == _w("noBreakHyphen"):
                out.append("-")
            elif tag == _w("p") and out:
                out.append("\n")
                walk(child)
            else:
                walk(child)

    walk(el)
    return "".join(out)


@dataclass(frozen=True, slots=True)
class _StyleInfo:
    name: str
    heading: int | None  # 0 = title, 1.. = heading level
    num_id: str | None
    ilvl: int


class _Styles:
    def __init__(self, document: Any) -> None:
        self._raw: dict[str, tuple[str, str | None, Any]] = {}
        self.default_id: str | None = None
        for style in document.styles.element.findall(_w("style")):
            sid = style.get(_w("styleId"))
            if sid is None:
                continue
            name = _val(style, "name") or sid
            self._raw[sid] = (name, _val(style, "basedOn"), style.find(_w("pPr")))
            if style.get(_w("type")) == "paragraph" and style.get(_w("default")) in ("1", "true"):
                self.default_id = sid
        self._cache: dict[str | None, _StyleInfo] = {}

    def info(self, style_id: str | None) -> _StyleInfo:
        style_id = style_id or self.default_id
        if style_id in self._cache:
            return self._cache[style_id]
        name = ""
        heading: int | None = None
        num_id: str | None = None
        ilvl = 0
        seen: set[str] = set()
        sid = style_id
        first = True
        while sid is not None and sid in self._raw and sid not in seen:
            seen.add(sid)
            sname, based_on, ppr = self._raw[sid]
            if first:
                name = sname
                first = False
            if heading is None:
                m = _HEADING_RE.match(sname.strip())
                if sname.strip().lower() == "title":
                    heading = 0
                elif m:
                    heading = int(m.group(1))
                elif (lvl := _val(ppr, "outlineLvl")) is not None and lvl.isdigit() and int(lvl) < 9:
                    heading = int(lvl) + 1
            if num_id is None and ppr is not None and (numpr := ppr.find(_w("numPr"))) is not None:
                num_id = _val(numpr, "numId")
                ilvl = int(_val(numpr, "ilvl") or 0)
            sid = based_on
        result = _StyleInfo(name, heading, num_id, ilvl)
        self._cache[style_id] = result
        return result


@dataclass(frozen=True, slots=True)
class _Level:
    fmt: str  # numFmt: decimal, lowerLetter, bullet …
    text: str | None  # lvlText such as "%1.%2." (None: not given)
    start: int


class _Numbering:
    """Marker text for numbered paragraphs (``lvlText`` such as ``"%1.%2"``), with Word's per-list counters."""

    def __init__(self, document: Any) -> None:
        self._levels: dict[tuple[str, int], _Level] = {}
        self._counters: dict[str, list[int | None]] = {}
        try:
            root = document.part.numbering_part.element
        except (KeyError, NotImplementedError, AttributeError):  # pragma: no cover - no numbering part
            return
        abstract: dict[str, dict[int, _Level]] = {}
        for an in root.findall(_w("abstractNum")):
            levels: dict[int, _Level] = {}
            for lvl in an.findall(_w("lvl")):
                ilvl = lvl.get(_w("ilvl"))
                if ilvl is not None and ilvl.isdigit():
                    start = _val(lvl, "start")
                    levels[int(ilvl)] = _Level(
                        _val(lvl, "numFmt") or "decimal",
                        _val(lvl, "lvlText"),
                        int(start) if start and start.isdigit() else 1,
                    )
            abstract[an.get(_w("abstractNumId")) or ""] = levels
        for num in root.findall(_w("num")):
            num_id = num.get(_w("numId"))
            abs_id = _val(num, "abstractNumId")
            if num_id is None or abs_id is None:
                continue
            for ilvl, level in abstract.get(abs_id, {}).items():
                self._levels[(num_id, ilvl)] = level

    def marker(self, num_id: str, ilvl: int, style_name: str) -> str:
        """Advance the list's counter at ``ilvl`` and return the marker text (``"-"`` for bullets)."""
        ilvl = min(max(ilvl, 0), 8)
        level = self._levels.get((num_id, ilvl))
        if level is None:
            level = _Level("decimal" if "number" in style_name.lower() else "bullet", None, 1)
        counters = self._counters.setdefault(num_id, [None] * 9)
        for above in range(ilvl):  # a level used before its parent counts the parent as started
            if counters[above] is None:
                parent = self._levels.get((num_id, above))
                counters[above] = parent.start if parent is not None else 1
        current = counters[ilvl]
        counters[ilvl] = level.start if current is None else current + 1
        for deeper in range(ilvl + 1, 9):
            counters[deeper] = None
        if level.fmt == "bullet":
            return "-"
        if level.fmt == "none":
            return ""
        if level.text is None:
            return f"{format_number(counters[ilvl] or 0, level.fmt)}."

        def number(m: re.Match[str]) -> str:
            k = int(m.group(1)) - 1
            if not 0 <= k <= 8:
                return ""
            lv = self._levels.get((num_id, k))
            return format_number(counters[k] or 0, lv.fmt if lv is not None else "decimal")

        return re.sub(r"%(\d)", number, level.text).strip()


def _paragraph_blocks(p: Any, styles: _Styles, numbering: _Numbering) -> list[Block]:
    """A paragraph's block, or the list it types by hand (:func:`~compliance.connectors.assemble.typed_list_blocks`)."""
    block = _paragraph_block(p, styles, numbering)
    if block is None:
        return []
    if block.kind == "paragraph" and (typed := typed_list_blocks(block.text)) is not None:
        return typed
    return [block]


def _paragraph_block(p: Any, styles: _Styles, numbering: _Numbering) -> Block | None:
    text = run_text(p)
    if not text.strip():
        return None
    ppr = p.find(_w("pPr"))
    info = styles.info(_val(ppr, "pStyle"))
    if re.fullmatch(r"toc\s*\d", info.name.lower()):
        return None  # an entry of Word's table of contents (styles "toc 1" … "toc 9")
    # the table of contents' own heading is a heading, which entries typed by hand may follow
    heading = 1 if info.name.lower() == "toc heading" else info.heading
    if (lvl := _val(ppr, "outlineLvl")) is not None and lvl.isdigit() and int(lvl) < 9:
        heading = int(lvl) + 1
    num_id, ilvl = info.num_id, info.ilvl
    numpr = ppr.find(_w("numPr")) if ppr is not None else None
    if numpr is not None:
        num_id = _val(numpr, "numId") or num_id
        ilvl_val = _val(numpr, "ilvl")
        ilvl = int(ilvl_val) if ilvl_val and ilvl_val.isdigit() else ilvl
    if heading is not None:
        if num_id is not None and num_id != "0" and heading > 0:  # auto-numbered heading: "2.1 Scope"
            number = numbering.marker(num_id, ilvl, info.name)
            if number and number != "-":
                text = f"{number} {text.strip()}"
        return Block("heading", text, level=heading)
    if num_id is not None and num_id != "0":
        marker = numbering.marker(num_id, ilvl, info.name)
        if marker != "-" and _bold_heading_level(p, text) is not None:  # "1. Purpose", numbered by the list
            return Block("heading", f"{marker} {text.strip()}", level=ilvl + 1)
        return Block("list-item", text, level=ilvl, marker=marker)
    if info.name.lower().startswith("list bullet"):
        return Block("list-item", text, level=0, marker="-")
    if (level := _bold_heading_level(p, text)) is not None or (
        level := _capitals_heading_level(p, text)
    ) is not None:
        return Block("heading", text.strip(), level=level)
    return Block("paragraph", text)


def _bold_heading_level(p: Any, text: str) -> int | None:
    """The heading level of a paragraph typed as a heading by hand: every run bold and the text reading as a heading
    (:func:`~compliance.connectors.assemble.typed_heading_depth`). Many policies are written so, and their sections
    were lost."""
    depth = typed_heading_depth(text)
    return depth if depth is not None and _is_bold_row(p) else None


def _capitals_heading_level(p: Any, text: str) -> int | None:
    """The heading level of a paragraph typed as a heading in capitals of the body's font ("1. PURPOSE", "DATA
    PROTECTION POLICY": :func:`~compliance.connectors.assemble.capitals_heading`), written in capitals or set in
    them by Word's "All caps" on every run; a numbered one is as deep as its number."""
    if "\n" in text.strip() or not capitals_heading(text.upper().strip()):
        return None  # (no run needs reading for a paragraph that would be no heading even in capitals)
    shown = text if text.isupper() else text.upper() if _all_runs(p, "caps") else None
    if shown is None or not capitals_heading(shown.strip()):
        return None
    return typed_heading_depth(shown) or 1


def _all_runs(p: Any, prop: str) -> bool:
    """Whether every run of a paragraph that holds text has the on/off run property ``prop`` on."""
    runs = [r for r in p.iter(_w("r")) if "".join(t.text or "" for t in r.iter(_w("t"))).strip()]
    if not runs:
        return False
    for r in runs:
        rpr = r.find(_w("rPr"))
        el = rpr.find(_w(prop)) if rpr is not None else None
        if el is None or el.get(_w("val")) in ("0", "false"):
            return False
    return True


def _is_bold_row(tr: Any) -> bool:
    return _all_runs(tr, "b")


def _table_rows(tbl: Any) -> Iterator[Block]:
    """Rows of a table; the first row is a header when bold or marked as a repeating header row."""
    grid: list[list[str]] = []
    header: bool | None = None
    for tr in tbl.findall(_w("tr")):
        row: list[str] = []
        for tc in tr.findall(_w("tc")):
            tcpr = tc.find(_w("tcPr"))
            span = int(_val(tcpr, "gridSpan") or 1) if tcpr is not None else 1
            vmerge = tcpr.find(_w("vMerge")) if tcpr is not None else None
            text = " ".join(run_text(tc, into_tables=True).split())
            if vmerge is not None and vmerge.get(_w("val")) in (None, "continue") and grid:
                col = len(row)
                above = grid[-1]
                text = above[col] if col < len(above) else text
            row.append(text)
            row.extend([""] * (span - 1))
        if not any(row):
            continue
        if not grid:
            trpr = tr.find(_w("trPr"))
            if (trpr is not None and trpr.find(_w("tblHeader")) is not None) or _is_bold_row(tr):
                header = True
        grid.append(row)
    yield from table_blocks(grid, header=header)


def _single_cell(tbl: Any) -> Any | None:
    """The one cell of a table of one row and one column (a bordered box or shaded callout around some
    paragraphs: read as body text, each paragraph on its own, as the PDF reader reads a box), else None."""
    rows = tbl.findall(_w("tr"))
    if len(rows) != 1:
        return None
    cells = rows[0].findall(_w("tc"))
    return cells[0] if len(cells) == 1 else None


def _layout_cells(tbl: Any, styles: _Styles) -> list[Any] | None:
    """The cells, row by row, of a table that lays out the page rather than holding data, else None: one of its
    cells holds a paragraph in a heading style (or with an outline level) and more text beside it, or the table
    has a single row and one of its cells holds more than three blocks (paragraphs, tables). Old Word templates put a menu or a margin note in
    one column and the whole policy in the next; read as a data table, the policy became one row. (A data table's
    cell may hold several paragraphs, a control matrix's guidance a list; such a table has a header row and rows
    beneath it, and headings are not styled in its cells.)"""
    rows = tbl.findall(_w("tr"))
    cells = [tc for tr in rows for tc in tr.findall(_w("tc"))]
    for tc in cells:
        filled = [p for p in tc.iter(_w("p")) if run_text(p).strip()]
        if len(filled) < 2:
            continue  # a header cell in a heading style holds its name only: a data table's
        for p in filled:
            ppr = p.find(_w("pPr"))
            lvl = _val(ppr, "outlineLvl")
            styled = styles.info(_val(ppr, "pStyle")).heading is not None
            if styled or (lvl is not None and lvl.isdigit() and int(lvl) < 9):
                return cells
    if len(rows) == 1 and any(
        sum(
            1
            for child in tc
            if child.tag in (_w("p"), _w("tbl")) and (child.tag == _w("tbl") or run_text(child).strip())
        )
        > 3
        for tc in cells
    ):
        return cells
    return None


def _text_boxes(p: Any) -> list[Any]:
    """The text boxes anchored in a paragraph (``w:txbxContent``), once each: the fallback copy that Word writes
    beside a DrawingML shape, deleted runs and boxes inside a box (read with the box) are passed over."""
    found: list[Any] = []

    def walk(node: Any) -> None:
        for child in node:
            tag = child.tag
            if not isinstance(tag, str) or tag in (f"{{{MC}}}Fallback", _w("del"), _w("moveFrom")):
                continue
            if tag == _w("txbxContent"):
                found.append(child)
            else:
                walk(child)

    walk(p)
    return found


def _body_blocks(container: Any, styles: _Styles, numbering: _Numbering) -> Iterator[Block]:
    for child in container:
        tag = child.tag
        if tag == _w("p"):
            yield from _paragraph_blocks(child, styles, numbering)
            # a callout's or a cover page's text box: text of the page, after its anchor
            for box in _text_boxes(child):
                yield from _body_blocks(box, styles, numbering)
        elif tag == _w("tbl") and (box := _single_cell(child)) is not None:
            yield from _body_blocks(box, styles, numbering)  # a box around text (a callout), not a table
        elif tag == _w("tbl") and (cells := _layout_cells(child, styles)) is not None:
            for cell in cells:  # a table that lays out the page: its cells are parts of the page
                yield from _body_blocks(cell, styles, numbering)
        elif tag == _w("tbl"):
            yield from _table_rows(child)
        elif tag in (_w("sdt"), _w("customXml")):
            content = child.find(_w("sdtContent")) if tag == _w("sdt") else child
            if content is not None:
                yield from _body_blocks(content, styles, numbering)


#: the main part's content type of a Word document, and of the other packages with the same parts: a template
#: (.dotx), a macro-enabled document or template (.docm, .dotm)
_DOCUMENT_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
_SAME_PARTS = (
    "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml",
    "application/vnd.ms-word.document.macroEnabled.main+xml",
    "application/vnd.ms-word.template.macroEnabledTemplate.main+xml",
)


def _as_document(archive: Any, data: bytes) -> bytes:
    """``data`` as python-docx opens it: a template or macro-enabled package (checked safe already) copied with its
    main part declared a document's, which python-docx requires (the parts are the same; macros are never run,
    only the XML is read); a document as it is."""
    import zipfile

    types = archive.read("[Content_Types].xml") if "[Content_Types].xml" in archive.namelist() else b""
    found = next((t for t in _SAME_PARTS if t.encode() in types), None)
    if found is None:
        return data
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as copy:
        for info in archive.infolist():
            body = archive.read(info)
            if info.filename == "[Content_Types].xml":
                body = body.replace(found.encode(), _DOCUMENT_TYPE.encode())
            copy.writestr(info, body)
    return out.getvalue()


def parse_docx(data: bytes, source: str, config: SplitConfig) -> ParsedDocument:
    """Parse a .docx file.

    Args:
        data: The file's bytes.
        source: File name or URI (for provenance and error messages).
        config: Splitting choices and limits.

    Returns:
        The parsed document.

    Raises:
        DocumentError: Not a .docx, corrupt, or unsafe XML.
        EncryptedDocumentError: Password-protected.
        DocumentTooLargeError: Over the size limits or a zip bomb.
    """
    check_size(data, source, config)
    with open_ooxml_zip(data, source, config, "word/document.xml") as archive:
        data = _as_document(archive, data)
    import docx

    try:
        document = docx.Document(io.BytesIO(data))
        styles = _Styles(document)
        numbering = _Numbering(document)
        blocks = list(_body_blocks(document.element.body, styles, numbering))
        check_paragraph_count(len(blocks), source, config)
        props = document.core_properties
        title = props.title or ""
        meta = {"connector": "docx"}
        if props.author:
            meta["author"] = props.author
        if props.modified is not None:
            meta["modified"] = props.modified.isoformat()
    except DocumentError:
        raise
    except Exception as e:
        raise DocumentError(source, f"the Word document could not be read: {type(e).__name__}: {e}") from e
    return assemble(
        blocks, data=data, source=source, media_type=MEDIA_TYPE, config=config, title=title, metadata=meta
    )
