"""HTML connector via BeautifulSoup (lxml backend when installed, else the standard library parser).

``script``, ``style``, ``nav``, ``header``, ``footer``, ``aside``, ``form`` and similar page furniture are dropped,
as are the elements whose ARIA role marks them so (a site's banner, navigation, footer, search, a cookie-consent
dialog: :data:`_FURNITURE_ROLES`) and those the page hides (the ``hidden`` attribute, an inline ``display: none``
or ``visibility: hidden``) — unless what is left holds less than a third of the page's text (a page saved while a
dialog covered it, or one a script reveals: its hidden parts are read then). A page that marks its main content
(``<main>`` or ``role="main"``) is read from there only: what stands beside it (a cookie banner, a "skip to
content" link, a newsletter box) is the site's, not the document's — unless it holds less than a third of the
page's readable text (a mis-marked page: the whole page is read). The page's own navigation — its table of
contents, a skip link, "Back to top" — is no text of the document (:func:`_without_page_navigation`).

``h1``–``h6`` build the heading path; ``li`` items become list items (nested lists indented) and join their lead-in
paragraph; tables are read row by row against their header row, except a table that lays out the page (a cell
holding a heading or more than three blocks: :func:`_layout_table`), whose cells are read as parts of the page;
text directly inside ``div``-like containers becomes a paragraph. The ``<title>`` (else the first ``h1``) is the
document title.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import replace
from typing import Any

from compliance.connectors.assemble import (
    NOTE_MARK_RE,
    Block,
    assemble,
    format_number,
    table_blocks,
    typed_heading_depth,
    typed_list_blocks,
    without_page_navigation,
)
from compliance.connectors.config import SplitConfig
from compliance.connectors.document import ParsedDocument
from compliance.connectors.safety import check_paragraph_count, check_size
from compliance.connectors.text_reader import decode_text
from compliance.errors import DocumentError, UnsafeDocumentError

MEDIA_TYPE = "text/html"
_DROP = {
    "script", "style", "noscript", "template", "nav", "header", "footer", "aside", "form", "button", "select",
    "svg", "canvas", "iframe", "object", "embed", "head", "menu", "dialog",
}  # fmt: skip
#: ARIA roles of page furniture (WAI-ARIA 1.2 landmarks and windows): an element with one of them is dropped
#: whatever its tag ("<div role="dialog">" is the usual cookie-consent banner, "<div role="navigation">" a menu)
_FURNITURE_ROLES = frozenset({
    "banner", "navigation", "contentinfo", "complementary", "search", "dialog", "alertdialog", "menu", "menubar",
    "toolbar", "tooltip",
})  # fmt: skip
#: whether hidden elements are read (set by :func:`parse_html` when the page's visible part is too small)
_READ_HIDDEN: ContextVar[bool] = ContextVar("_READ_HIDDEN", default=False)
#: the classes the page's style sheets make bold (Google Docs and LibreOffice exports mark bold text so, not
#: with <strong>), set by :func:`parse_html`
_BOLD_CLASSES: ContextVar[frozenset[str]] = ContextVar("_BOLD_CLASSES", default=frozenset())
_CSS_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
_CSS_BOLD = re.compile(r"font-weight\s*:\s*(?:bold(?:er)?|[6-9]00)\b", re.IGNORECASE)
_CSS_CLASS = re.compile(r"^[a-z0-9_-]*\.([a-z0-9_-]+)$", re.IGNORECASE)
_HIDDEN_STYLE = re.compile(r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\b", re.IGNORECASE)
_HEADINGS = {f"h{i}": i for i in range(1, 7)}
_BLOCK = {
    "p", "div", "section", "article", "main", "body", "blockquote", "ul", "ol", "li", "table", "dl", "dt", "dd",
    "pre", "figure", "figcaption", "address", "details", "summary", "fieldset", "center", "html", "hr", "br",
    "thead", "tbody", "tfoot", "tr", "td", "th", "caption",
} | set(_HEADINGS)  # fmt: skip


def _dropped(tag: Any) -> bool:
    """Whether ``tag`` (a bs4 ``Tag``) is furniture or hidden: its tag, its ARIA role, or the page hides it
    (``aria-hidden`` is not read as hidden: it speaks to screen readers, and a consent dialog's script sets it on
    the whole page; ``hidden="until-found"`` is an accordion's content, found by search)."""
    if tag.name in _DROP:
        return True
    attrs = tag.attrs
    if not attrs:
        return False
    role = attrs.get("role")
    if isinstance(role, str) and any(r in _FURNITURE_ROLES for r in role.lower().split()):
        return True
    if _READ_HIDDEN.get():
        return False
    hidden = attrs.get("hidden")
    if hidden is not None and str(hidden).strip().lower() != "until-found":
        return True
    style = attrs.get("style")
    return isinstance(style, str) and bool(_HIDDEN_STYLE.search(style))


def _text_size(node: Any) -> int:
    """Characters of ``node``'s readable text (whitespace left out)."""
    return len("".join(_inline(node).split()))


def _main_content(root: Any, page_chars: int) -> list[Any]:
    """The elements that hold the page's main content (``<main>``, ``role="main"``; the outermost ones, not
    hidden and not inside dropped furniture) when they hold at least a third of the page's readable text; else
    ``[root]``."""
    from bs4 import Tag

    found: list[Any] = []
    for tag in root.find_all(lambda t: t.name == "main" or str(t.get("role", "")).lower() == "main"):
        if not isinstance(tag, Tag) or any(a is f for a in tag.parents for f in found):
            continue  # inside a main already found (bs4 compares tags by content: by identity here)
        if _dropped(tag) or any(isinstance(a, Tag) and _dropped(a) for a in tag.parents):
            continue
        found.append(tag)
    if not found:
        return [root]
    # a <main> that holds less than a third of the page's readable text is mis-marked (the policy itself stands
    # beside it): the whole page is read then, rather than losing the document
    return found if sum(map(_text_size, found)) * 3 >= page_chars else [root]


def _inline(node: Any) -> str:
    """Text of a node, with ``<br>`` as a line break and dropped elements left out."""
    from bs4 import NavigableString, Tag
    from bs4.element import Comment, Declaration, Doctype, ProcessingInstruction

    out: list[str] = []
    for child in node.children if isinstance(node, Tag) else [node]:
        if isinstance(child, (Comment, Declaration, Doctype, ProcessingInstruction)):
            continue
        if isinstance(child, NavigableString):
            out.append(str(child))
        elif isinstance(child, Tag):
            if _dropped(child) or (child.name == "sup" and NOTE_MARK_RE.fullmatch(child.get_text().strip())):
                continue  # (a superscript that is only a note's mark: "… within 72 hours<sup>1</sup>")
            if child.name == "br":
                out.append("\n")
            else:
                out.append(_inline(child))
                if child.name in _BLOCK:
                    out.append(" ")
    return "".join(out)


def _in_page_link(tag: Any) -> bool:
    """An ``<a href="#…">``: a link to a place on the same page (a skip link, a table of contents, "Back to top")."""
    href = tag.get("href") if tag.name == "a" else None
    return isinstance(href, str) and href.startswith("#")


def _squash(text: str) -> str:
    return "".join(text.split())


def _typed_list(raw: str, text: str) -> list[Block] | None:
    """A paragraph typed as a list (:func:`~compliance.connectors.assemble.typed_list_blocks`: bullets typed at the
    start of the paragraph or of its lines after a ``<br>``; ``raw``, its :func:`_inline` text), unless the page's
    own navigation was taken out of it (``text``, its text without that navigation, then differs from ``raw``)."""
    if " ".join(raw.split()) != text:
        return None
    return typed_list_blocks(raw)


def _without_page_navigation(node: Any, raw: str | None = None) -> str:
    """``node``'s text (``raw``, its :func:`_inline` text when the caller has it) without the page's own navigation
    (:func:`without_page_navigation`)."""
    links = [a for a in node.find_all("a") if _in_page_link(a) and not any(map(_dropped, [a, *a.parents]))]
    return without_page_navigation(_inline(node) if raw is None else raw, [_inline(a) for a in links])


_CONTAINER_BLOCKS = ("p", "ul", "ol", "table", "div", "blockquote", "section", "article")


def _own_cells(table: Any) -> list[Any]:
    """The cells of ``table`` itself (not those of tables nested in it), row by row."""
    rows = [tr for tr in table.find_all("tr") if tr.find_parent("table") is table]
    return [cell for tr in rows for cell in tr.find_all(["td", "th"], recursive=False)]


def _layout_table(table: Any) -> bool:
    """Whether ``table`` lays out the page rather than holding data: one of its cells holds a heading, or more
    than three blocks (paragraphs, lists, tables). Old intranet pages put the menu in one cell and the whole
    policy in the next; read as a data table, the policy became one row. (A data table's cell may hold a
    paragraph or two: HTML saved from Word wraps every cell's text in a ``<p>``.)"""
    for cell in _own_cells(table):
        if cell.find(list(_HEADINGS)) is not None:
            return True
        if len(cell.find_all(_CONTAINER_BLOCKS, recursive=False)) > 3:
            return True
    return False


#: the level a typed heading (a bold ``<p>``) is given while the page is walked, less its depth; the blocks are
#: then placed under the page's last real heading (:func:`_place_typed_headings`)
_TYPED_HEADING = 1000


def _title_class(tag: Any) -> bool:
    """Whether a paragraph is marked as the document's title by its class: LibreOffice writes ``<p
    class="Title">``, Google Docs ``<p class="title">``; it was read as a paragraph (page furniture)."""
    classes = (tag.attrs.get("class") if tag.attrs else None) or ()
    return any(str(c).lower() == "title" for c in classes)


def _bold_classes(soup: Any) -> frozenset[str]:
    """The classes the page's ``<style>`` sheets set in bold (``.c5{font-weight:700}``, ``span.T1 {
    font-weight:bold }``): simple class selectors only."""
    found: set[str] = set()
    for style in soup.find_all("style"):
        for selectors, body in _CSS_RULE.findall(style.get_text()):
            if _CSS_BOLD.search(body):
                for selector in selectors.split(","):
                    if m := _CSS_CLASS.match(selector.strip()):
                        found.add(m.group(1))
    return frozenset(found)


def _bold_tag(tag: Any) -> bool:
    """Whether ``tag`` sets its text in bold: ``<strong>``, ``<b>``, an inline ``font-weight: bold`` or a class the
    page's style sheet makes bold."""
    if tag.name in ("strong", "b"):
        return True
    style = tag.attrs.get("style") if tag.attrs else None
    if isinstance(style, str) and _CSS_BOLD.search(style):
        return True
    classes = tag.attrs.get("class") if tag.attrs else None
    bold = _BOLD_CLASSES.get()
    return bool(bold and classes and any(c in bold for c in classes))


def _all_bold(node: Any) -> bool:
    """Whether every piece of ``node``'s text is set in bold (:func:`_bold_tag`): a heading typed as a bold
    paragraph (``<p><strong>1. Purpose</strong></p>``, or a Google Docs export's ``<p><span class="c5">``)."""
    from bs4 import NavigableString

    pieces = [t for t in node.find_all(string=True) if isinstance(t, NavigableString) and t.strip()]
    if not pieces:
        return False
    if _bold_tag(node):
        return True
    for piece in pieces:
        parent = piece.parent
        while parent is not None and parent is not node and not _bold_tag(parent):
            parent = parent.parent
        if parent is None or parent is node:
            return False
    return True


def _place_typed_headings(blocks: list[Block]) -> list[Block]:
    """Typed headings one level under the last ``h1``–``h6`` before them (numbered ones as deep as their number:
    "2.1 Email" two levels under it)."""
    out: list[Block] = []
    base = 0
    for block in blocks:
        if block.kind == "heading" and block.level >= _TYPED_HEADING - 10:
            out.append(replace(block, level=base + (_TYPED_HEADING - block.level)))
            continue
        if block.kind == "heading":
            base = block.level
        out.append(block)
    return out


def _table(table: Any) -> Iterator[Block]:
    rows = [tr for tr in table.find_all("tr") if tr.find_parent("table") is table]
    grid: list[list[str]] = []
    header: bool | None = None
    for tr in rows:
        cells = tr.find_all(["td", "th"], recursive=False)
        values: list[str] = []
        for cell in cells:
            values.append(" ".join(_inline(cell).split()))
            span = cell.get("colspan")
            if isinstance(span, str) and span.isdigit():
                values.extend([""] * (min(int(span), 50) - 1))
        if not any(values):
            continue
        if not grid:
            is_head = (
                all(c.name == "th" for c in cells)
                or tr.find_parent("thead") is not None
                or (
                    bool(filled := [c for c in cells if c.get_text(strip=True)])
                    and all(map(_all_bold, filled))
                )
            )
            header = True if is_head else None
        grid.append(values)
    yield from table_blocks(grid, header=header)


_LIST_STYLE_RE = re.compile(r"list-style(?:-type)?\s*:\s*([a-z-]+)", re.IGNORECASE)


def _number_format(tag: Any) -> str:
    """How an ``<ol>`` or ``<li>`` numbers: its ``type`` (``a``, ``A``, ``i``, ``I``, ``1``) or the
    ``list-style-type`` of its inline style (``lower-alpha`` …); empty when it says neither."""
    style = tag.get("style")
    if isinstance(style, str) and (m := _LIST_STYLE_RE.search(style)):
        return m.group(1).lower()
    kind = tag.get("type")
    return kind if isinstance(kind, str) else ""


def _list(node: Any, depth: int) -> Iterator[Block]:
    ordered = node.name == "ol"
    start = node.get("start")
    n = int(start) if isinstance(start, str) and start.lstrip("-").isdigit() else 1
    fmt = _number_format(node) or "1"
    for li in node.find_all("li", recursive=False):
        nested = [c for c in li.find_all(["ul", "ol"], recursive=False)]
        for sub in nested:
            sub.extract()
        value = li.get("value")
        if ordered and isinstance(value, str) and value.lstrip("-").isdigit():
            n = int(value)  # <li value="4"> numbers this item and the ones after it on from there
        text = _without_page_navigation(li)  # a table of contents' entry is no item of the document
        if text:
            marker = f"{format_number(n, _number_format(li) or fmt)}." if ordered else "-"
            yield Block("list-item", text, level=depth, marker=marker)
        n += 1
        for sub in nested:
            yield from _list(sub, depth + 1)


def _walk(node: Any) -> Iterator[Block]:
    from bs4 import NavigableString, Tag
    from bs4.element import Comment, Declaration, Doctype, ProcessingInstruction

    loose: list[str] = []
    navigation: list[str] = []  # the loose text's in-page links ("Skip to main content" under <body>)

    def flush() -> Iterator[Block]:
        raw = "".join(loose)
        text = " ".join(raw.split())
        only_navigation = _squash("".join(navigation)) == _squash(text)
        linked = bool(navigation)
        loose.clear()
        navigation.clear()
        if text and not only_navigation:
            # text loose in a container, its lines broken with <br>: a list typed by hand, or a paragraph
            typed = None if linked else typed_list_blocks(raw)
            yield from typed if typed is not None else [Block("paragraph", text)]

    for child in node.children:
        if isinstance(child, (Comment, Declaration, Doctype, ProcessingInstruction)):
            continue
        if isinstance(child, NavigableString):
            loose.append(str(child))
            continue
        if not isinstance(child, Tag) or _dropped(child):
            continue
        name = child.name
        if name not in _BLOCK:
            loose.append(_inline(child))
            if _in_page_link(child):
                navigation.append(loose[-1])
            continue
        if name == "br":
            loose.append("\n")
            continue
        yield from flush()
        if name in _HEADINGS:
            yield Block("heading", " ".join(_inline(child).split()), level=_HEADINGS[name])
        elif name in ("p", "dt", "dd", "figcaption", "caption", "summary", "address", "pre"):
            raw = _inline(child)
            text = _without_page_navigation(child, raw)
            if text and name == "p" and _title_class(child):
                yield Block(
                    "heading", text, level=0
                )  # the document's title paragraph (an office-suite export)
            elif (
                text and name == "p" and _all_bold(child) and (depth := typed_heading_depth(text)) is not None
            ):
                yield Block("heading", text, level=_TYPED_HEADING - depth)  # placed by _place_typed_headings
            elif text and (typed := _typed_list(raw, text)) is not None:
                yield from typed  # "When working remotely staff must:<br>• use the VPN …<br>• lock …"
            elif text:
                yield Block("paragraph", text)
        elif name in ("ul", "ol"):
            yield from _list(child, 0)
        elif name == "table" and _layout_table(child):
            for cell in _own_cells(child):  # a layout grid: its cells are read as parts of the page
                yield from _walk(cell)
        elif name == "table":
            yield from _table(child)
        elif name != "hr":
            yield from _walk(child)
    yield from flush()


def parse_html(data: bytes, source: str, config: SplitConfig) -> ParsedDocument:
    """Parse an HTML page (see the module docstring for the rules)."""
    check_size(data, source, config)
    from compliance.xml_safety import declared_entities

    if entities := declared_entities(data):
        raise UnsafeDocumentError(
            source,
            f"the page's DOCTYPE declares entities ({', '.join(entities[:5])}), which HTML never needs; refusing "
            "it (possible XML entity-expansion or external entity attack)",
        )
    text = decode_text(data, source)
    from bs4 import BeautifulSoup

    try:
        with warnings.catch_warnings():
            # an XHTML export (LibreOffice's) is read as HTML on purpose: its markup is HTML's
            warnings.filterwarnings(
                "ignore", message=".*looks like you're using an HTML parser to parse an XML"
            )
            try:
                soup = BeautifulSoup(text, "lxml")
            except Exception:  # lxml backend not available
                soup = BeautifulSoup(text, "html.parser")
    except Exception as e:
        raise DocumentError(source, f"the HTML could not be parsed: {e}") from e
    title_tag = soup.find("title")
    title = " ".join(title_tag.get_text().split()) if title_tag is not None else ""
    if not title and (h1 := soup.find("h1")) is not None:
        title = " ".join(h1.get_text().split())
    root = soup.body or soup
    visible = _text_size(root)
    token = _READ_HIDDEN.set(True)
    try:
        everything = _text_size(root)
    finally:
        _READ_HIDDEN.reset(token)
    read_hidden = visible * 3 < everything  # most of the page hidden: read what it hides too
    token = _READ_HIDDEN.set(read_hidden)
    bold_token = _BOLD_CLASSES.set(_bold_classes(soup))
    try:
        parts = _main_content(root, everything if read_hidden else visible)
        blocks = _place_typed_headings([block for part in parts for block in _walk(part)])
    finally:
        _BOLD_CLASSES.reset(bold_token)
        _READ_HIDDEN.reset(token)
    check_paragraph_count(len(blocks), source, config)
    return assemble(
        blocks,
        data=data,
        source=source,
        media_type=MEDIA_TYPE,
        config=config,
        title=title,
        metadata={"connector": "html"},
    )
