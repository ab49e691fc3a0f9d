"""OpenDocument text (.odt) connector: the body's paragraphs, headings, lists and tables in reading order.

An .odt file is what LibreOffice and OpenOffice save, and what many public administrations keep their policies in.
It is read the way a Word document is (:mod:`compliance.connectors.docx_reader`):

* ``text:h`` is a heading at its outline level; a paragraph in the ``Title`` style (or one derived from it) is the
  document's title; a paragraph in bold or in capitals that reads as a heading is one (headings typed by hand);
* ``text:list`` items are list items, nested lists one level deeper, with the bullet or the number their list style
  gives (``1.``, ``a)``, ``iv.``);
* tables are read row by row (``Header: value; …``), the rows in ``table:table-header-rows`` being the header;
  merged cells are read once;
* a text box (``draw:text-box``, a callout) is read as paragraphs of its own after the paragraph it is anchored in;
* notes (footnotes, endnotes), comments, deleted text (tracked changes), the tables of contents and other indexes
  LibreOffice generates, and the page headers and footers (which live in ``styles.xml``) are left out.

Every part is unpacked and parsed under the same limits and XML protections as a Word document
(:func:`compliance.connectors.safety.open_ooxml_zip`: zip-bomb counts, no DTD); an encrypted .odt (its manifest
names the encryption) is refused with :class:`~compliance.errors.EncryptedDocumentError`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from compliance.connectors.assemble import (
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
from compliance.errors import DocumentError, EncryptedDocumentError

MEDIA_TYPE = "application/vnd.oasis.opendocument.text"
_NS = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "draw": "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0",
    "style": "urn:oasis:names:tc:opendocument:xmlns:style:1.0",
    "fo": "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0",
    "dc": "http://purl.org/dc/elements/1.1/",
}


def _q(name: str) -> str:
    """``"text:p"`` → ``"{urn:…:text:1.0}p"``."""
    prefix, _, local = name.partition(":")
    return f"{{{_NS[prefix]}}}{local}"


#: elements whose content is no text of the body: notes, comments, deleted text, generated indexes, forms
_SKIPPED = {
    _q(n)
    for n in (
        "text:note",
        "office:annotation",
        "office:annotation-end",
        "text:tracked-changes",
        "text:table-of-content",
        "text:alphabetical-index",
        "text:illustration-index",
        "text:table-index",
        "text:object-index",
        "text:user-index",
        "text:bibliography",
        "office:forms",
        "text:sequence-decls",
        "text:variable-decls",
        "text:user-field-decls",
    )
}


#: drawing objects (frames, text boxes, shapes, images): their text is read apart from the paragraph they sit in
_DRAW = "{" + _NS["draw"] + "}"
_BLOCK_TAGS = {_q("text:p"), _q("text:h"), _q("text:list"), _q("table:table")}


class _Styles:
    """What the document's paragraph and text styles say: which are bold, which derive from ``Title``, and what
    each list style's levels number with."""

    def __init__(self, roots: list[Any]) -> None:
        self._parent: dict[str, str | None] = {}
        self._bold: dict[str, bool] = {}
        self._display: dict[str, str] = {}
        self.lists: dict[
            str, dict[int, tuple[str, str, str]]
        ] = {}  # style → level → (format, prefix, suffix)
        for root in roots:
            for style in root.iter(_q("style:style")):
                name = style.get(_q("style:name"))
                if name is None:
                    continue
                self._parent[name] = style.get(_q("style:parent-style-name"))
                self._display[name] = style.get(_q("style:display-name")) or name
                props = style.find(_q("style:text-properties"))
                weight = props.get(_q("fo:font-weight")) if props is not None else None
                if weight is not None:
                    self._bold[name] = weight == "bold" or (weight.isdigit() and int(weight) >= 600)
            for list_style in root.iter(_q("text:list-style")):
                name = list_style.get(_q("style:name"))
                if name is None:
                    continue
                levels: dict[int, tuple[str, str, str]] = {}
                for level in list_style:
                    number = level.get(_q("text:level"))
                    if number is None or not number.isdigit():
                        continue
                    if level.tag == _q("text:list-level-style-number"):
                        levels[int(number)] = (
                            level.get(_q("style:num-format")) or "1",
                            level.get(_q("style:num-prefix")) or "",
                            level.get(_q("style:num-suffix")) or ".",
                        )
                    else:
                        levels[int(number)] = ("-", "", "")
                self.lists[name] = levels

    def _chain(self, name: str | None) -> Iterator[str]:
        seen: set[str] = set()
        while name is not None and name not in seen:
            seen.add(name)
            yield name
            name = self._parent.get(name)

    def bold(self, name: str | None) -> bool | None:
        """Whether the style (or the one it derives from) sets bold; None when none of them says."""
        return next((self._bold[n] for n in self._chain(name) if n in self._bold), None)

    def is_title(self, name: str | None) -> bool:
        return any(self._display.get(n, n).lower() in ("title", "titel") for n in self._chain(name))


def _inline(el: Any, out: list[str]) -> None:
    """The visible text of a paragraph's content into ``out``: spaces (``text:s``), tabs and line breaks as they
    show, notes, comments and text boxes (read on their own) left out."""
    if el.text:
        out.append(el.text)
    for child in el:
        tag = child.tag
        if isinstance(tag, str) and tag not in _SKIPPED and not tag.startswith(_DRAW):
            if tag == _q("text:s"):
                count = child.get(_q("text:c"))
                out.append(" " * (int(count) if count and count.isdigit() else 1))
            elif tag == _q("text:tab"):
                out.append(" ")
            elif tag == _q("text:line-break"):
                out.append("\n")
            else:
                _inline(child, out)
        if child.tail:
            out.append(child.tail)


def _text(el: Any) -> str:
    """The visible text of a paragraph or heading (:func:`_inline`)."""
    out: list[str] = []
    _inline(el, out)
    return "".join(out)


def _text_boxes(p: Any) -> list[Any]:
    """The drawing objects anchored in a paragraph that hold text of their own, outermost only (a box inside a box
    is read with it): a text frame's ``draw:text-box``, or a shape (``draw:custom-shape``, ``draw:rect`` …) with
    paragraphs in it, as LibreOffice keeps a Word text box."""
    found: list[Any] = []

    def walk(node: Any) -> None:
        for child in node:
            tag = child.tag
            if not isinstance(tag, str) or tag in _SKIPPED:
                continue
            if tag.startswith(_DRAW) and any(c.tag in _BLOCK_TAGS for c in child):
                found.append(child)
            else:
                walk(child)

    walk(p)
    return found


def _all_bold(p: Any, styles: _Styles) -> bool:
    """Whether every piece of a paragraph's text is bold, by its own style or that of its span."""
    own = styles.bold(p.get(_q("text:style-name"))) is True
    pieces: list[bool] = []
    if p.text and p.text.strip():
        pieces.append(own)
    for child in p:
        if child.tag == _q("text:span"):
            text = "".join(child.itertext()).strip()
            if text:
                said = styles.bold(child.get(_q("text:style-name")))
                pieces.append(own if said is None else said)
        elif isinstance(child.tag, str) and "".join(child.itertext()).strip():
            pieces.append(own)
        if child.tail and child.tail.strip():
            pieces.append(own)
    return bool(pieces) and all(pieces)


class _Reader:
    def __init__(self, styles: _Styles) -> None:
        self.styles = styles
        # the last number given at each level of each list style, for a list that continues the one before it
        # (LibreOffice writes each numbered heading as a list of its own, "continue-numbering")
        self.counts: dict[tuple[str, int], int] = {}

    def body(self, container: Any) -> Iterator[Block]:
        for child in container:
            tag = child.tag
            if not isinstance(tag, str) or tag in _SKIPPED:
                continue
            if tag in (_q("text:p"), _q("text:h")):
                yield from self.paragraph(child)
            elif tag == _q("text:list"):
                yield from self.list(child, 0, child.get(_q("text:style-name")))
            elif tag == _q("table:table"):
                yield from self.table(child)
            elif tag == _q("text:section") or tag.startswith(_DRAW):
                yield from self.body(child)  # a section, or a frame or shape anchored to the page

    def paragraph(self, p: Any) -> Iterator[Block]:
        text = _text(p)
        if text.strip():
            yield from self._block(p, text)
        for box in _text_boxes(p):  # a callout anchored here: its paragraphs after this one
            yield from self.body(box)

    def _block(self, p: Any, text: str) -> Iterator[Block]:
        style = p.get(_q("text:style-name"))
        if p.tag == _q("text:h"):
            level = p.get(_q("text:outline-level"))
            yield Block("heading", text.strip(), level=int(level) if level and level.isdigit() else 1)
            return
        if self.styles.is_title(style):
            yield Block("heading", text.strip(), level=0)
            return
        one_line = "\n" not in text.strip()
        if one_line and _all_bold(p, self.styles) and (depth := typed_heading_depth(text)) is not None:
            yield Block("heading", text.strip(), level=depth)
            return
        if one_line and capitals_heading(text.strip()):
            yield Block("heading", text.strip(), level=typed_heading_depth(text) or 1)
            return
        typed = typed_list_blocks(text)
        yield from typed if typed is not None else [Block("paragraph", text)]

    def list(self, node: Any, depth: int, style: str | None) -> Iterator[Block]:
        style = node.get(_q("text:style-name")) or style
        fmt, prefix, suffix = self.styles.lists.get(style or "", {}).get(depth + 1, ("-", "", ""))
        start = node.get(_q("text:start-value"))
        continues = node.get(_q("text:continue-numbering")) == "true" or node.get(_q("text:continue-list"))
        key = (style or "", depth)
        n = int(start) - 1 if start and start.isdigit() else self.counts.get(key, 0) if continues else 0
        for item in node:
            if item.tag not in (_q("text:list-item"), _q("text:list-header")):
                continue
            numbered = item.tag == _q("text:list-item")
            if numbered:
                value = item.get(_q("text:start-value"))
                n = int(value) if value and value.isdigit() else n + 1
                self.counts[key] = n
            marker = "-" if fmt == "-" or not numbered else f"{prefix}{format_number(n, fmt)}{suffix}"
            for child in item:
                if child.tag == _q("text:list"):
                    yield from self.list(child, depth + 1, style)
                elif child.tag == _q("text:h"):  # a numbered heading: its number is part of its name
                    name = " ".join(_text(child).split())
                    level = child.get(_q("text:outline-level"))
                    if name:
                        numbered_name = name if marker == "-" else f"{marker} {name}"
                        yield Block(
                            "heading", numbered_name, level=int(level) if level and level.isdigit() else 1
                        )
                elif child.tag == _q("text:p"):
                    text = _text(child)
                    if text.strip():
                        yield Block("list-item", text, level=depth, marker=marker)
                    for box in _text_boxes(child):
                        yield from self.body(box)
                elif child.tag == _q("table:table"):
                    yield from self.table(child)

    def table(self, tbl: Any) -> Iterator[Block]:
        rows: list[list[str]] = []
        header_rows = 0
        bold_first = False
        for row, is_header in self._rows(tbl):
            cells: list[str] = []
            for cell in row:
                if cell.tag == _q("table:covered-table-cell"):
                    continue  # the hidden part of a merged cell
                if cell.tag != _q("table:table-cell"):
                    continue
                texts = []
                for p in cell.iter(_q("text:p"), _q("text:h")):
                    texts.append(" ".join(_text(p).split()))
                value = " ".join(t for t in texts if t)
                repeat = cell.get(_q("table:number-columns-repeated"))
                cells.extend([value] * (min(int(repeat), 64) if repeat and repeat.isdigit() and value else 1))
            while cells and not cells[-1]:
                cells.pop()
            if cells:
                rows.append(cells)
                header_rows += is_header
                bold_first = bold_first if len(rows) > 1 else self._bold_row(row)
        if rows:
            # a header row is marked as one (repeated on every page) or set in bold, as the Word reader reads it
            yield from table_blocks(rows, header=True if header_rows or bold_first else None)

    def _bold_row(self, row: Any) -> bool:
        paragraphs = [p for p in row.iter(_q("text:p"), _q("text:h")) if "".join(p.itertext()).strip()]
        return bool(paragraphs) and all(_all_bold(p, self.styles) for p in paragraphs)

    def _rows(self, tbl: Any) -> Iterator[tuple[Any, bool]]:
        for child in tbl:
            if child.tag == _q("table:table-row"):
                yield child, False
            elif child.tag == _q("table:table-header-rows"):
                for row in child.iter(_q("table:table-row")):
                    yield row, True
            elif child.tag == _q("table:table-rows"):
                for row in child.iter(_q("table:table-row")):
                    yield row, False


def _parse(data: bytes, part: str, source: str) -> Any:
    from compliance.errors import CorpusFormatError
    from compliance.xml_safety import parse_xml

    try:
        return parse_xml(data, source=f"{source}:{part}")
    except CorpusFormatError as e:
        raise DocumentError(source, f"{part} cannot be read: {e}") from e


def parse_odt(data: bytes, source: str, config: SplitConfig) -> ParsedDocument:
    """Parse an OpenDocument text (.odt) file.

    Args:
        data: The file's bytes.
        source: File name or URI (for provenance and error messages).
        config: Splitting choices and limits.

    Returns:
        The parsed document.

    Raises:
        DocumentError: Not an .odt, or corrupt.
        EncryptedDocumentError: Password-protected.
        UnsafeDocumentError: An XML part declares a DTD.
        DocumentTooLargeError: Over the size limits or a zip bomb.
    """
    check_size(data, source, config)
    with open_ooxml_zip(data, source, config, "content.xml") as archive:
        names = set(archive.namelist())
        manifest = archive.read("META-INF/manifest.xml") if "META-INF/manifest.xml" in names else b""
        if b"encryption-data" in manifest:
            raise EncryptedDocumentError(
                source, "the OpenDocument file is password-protected; remove the password"
            )
        content = _parse(archive.read("content.xml"), "content.xml", source)
        style_roots = [content]
        if "styles.xml" in names:
            style_roots.append(_parse(archive.read("styles.xml"), "styles.xml", source))
        meta = _parse(archive.read("meta.xml"), "meta.xml", source) if "meta.xml" in names else None
    text = content.find(f"{_q('office:body')}/{_q('office:text')}")
    if text is None:
        raise DocumentError(source, "not an OpenDocument text: content.xml has no office:text body")
    blocks = list(_Reader(_Styles(style_roots)).body(text))
    check_paragraph_count(len(blocks), source, config)
    title_el = meta.find(f".//{_q('dc:title')}") if meta is not None else None
    title = (title_el.text or "").strip() if title_el is not None else ""
    return assemble(
        blocks, data=data, source=source, media_type=MEDIA_TYPE, config=config, title=title,
        metadata={"connector": "odt"},
    )  # fmt: skip
