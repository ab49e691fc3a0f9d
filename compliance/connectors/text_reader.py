"""Plain-text and Markdown connectors.

Plain text: paragraphs are separated by blank lines and their lines re-flowed; lines starting with a bullet or
an enumerator are list items; a short single-line block without final punctuation that is numbered
(``"2.1 Scope"``), written in capitals, or underlined with ``===``/``---`` is a heading.

Markdown (markdown-it-py, CommonMark + tables): ``#`` headings build the heading path, lists (with their
lead-in sentence) and table rows are kept as in the other connectors; code blocks and raw HTML are skipped; the
body of an MkDocs admonition (``!!! note``) is read as text. A leading YAML front-matter block is not body text: its
``title`` becomes the document title.
"""

from __future__ import annotations

import itertools
import logging
import re
from collections.abc import Iterator
from typing import Any

from compliance.connectors.assemble import (
    Block,
    assemble,
    table_blocks,
    typed_heading_depth,
    without_page_navigation,
)
from compliance.connectors.config import SplitConfig
from compliance.connectors.document import ParsedDocument
from compliance.connectors.safety import check_paragraph_count, check_size
from compliance.errors import DocumentError

logger = logging.getLogger(__name__)

_LIST_RE = re.compile(r"^(\s*)([-*•▪◦●–]|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)]|\(?[ivxIVX]{1,5}[.)])\s+(\S.*)$")
_NUMBERED_HEADING_RE = re.compile(r"^(\d+(?:\.\d+)*)\.?\s+\S")
_UNDERLINE_RE = re.compile(r"^(=+|-+)\s*$")
_FRONT_MATTER_RE = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL)


def split_front_matter(text: str) -> tuple[dict[str, str], str]:
    """Separate a leading YAML front-matter block (``---`` … ``---``) from Markdown text.

    Only flat ``key: value`` lines are read (no YAML parser is needed for titles); other lines are ignored.

    Returns:
        The front-matter keys and values, and the Markdown after the block (unchanged when there is none).
    """
    m = _FRONT_MATTER_RE.match(text)
    if not m:
        return {}, text
    meta: dict[str, str] = {}
    for line in m.group(1).splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith((" ", "\t", "-", "#")):
            meta[key.strip()] = value.strip().strip("\"'")
    return meta, text[m.end() :]


def _utf16_without_bom(data: bytes) -> str | None:
    """``utf-16-le`` or ``utf-16-be`` when NUL bytes sit at every other position (text mostly in Latin script)."""
    sample = data[:8192]
    if len(sample) < 4:
        return None
    even, odd = sample[0::2], sample[1::2]
    even_nul, odd_nul = even.count(0) / len(even), odd.count(0) / len(odd)
    if odd_nul > 0.6 and even_nul < 0.05:
        return "utf-16-le"
    if even_nul > 0.6 and odd_nul < 0.05:
        return "utf-16-be"
    return None


_CJK = re.compile(r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")


def _looks_japanese(data: bytes) -> str | None:
    """The Shift-JIS (cp932) decoding of bytes that are not UTF-8, when it reads as Japanese text."""
    try:
        text = data.decode("cp932")
    except UnicodeDecodeError:
        return None
    non_ascii = [c for c in text if ord(c) > 127]
    if len(non_ascii) < 4:
        return None
    cjk = sum(1 for c in non_ascii if _CJK.match(c))
    return text if cjk / len(non_ascii) > 0.9 else None


def decode_text(data: bytes, source: str) -> str:
    """Decode text bytes: BOM-aware UTF-8/UTF-16, UTF-16 without BOM, UTF-8, Shift-JIS, else Windows-1252.

    A guess (UTF-16 without BOM, Shift-JIS, Windows-1252) is logged as a warning naming the file, so that text
    read in a guessed encoding is never stored silently.

    Raises:
        DocumentError: The bytes look binary (NUL bytes that are not UTF-16 text).
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16")
    if b"\x00" in data[:8192]:
        encoding = _utf16_without_bom(data)
        if encoding is not None:
            try:
                text = data.decode(encoding)
            except UnicodeDecodeError:
                pass
            else:
                logger.warning("%s: no byte-order mark; read as %s", source, encoding.upper())
                return text
        raise DocumentError(source, "the file looks binary (contains NUL bytes), not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    japanese = _looks_japanese(data)
    if japanese is not None:
        logger.warning("%s: not UTF-8; read as Shift-JIS (cp932)", source)
        return japanese
    text = data.decode("cp1252", errors="replace")
    replaced = text.count("\ufffd")
    logger.warning(
        "%s: not UTF-8; read as Windows-1252%s; save it as UTF-8 if the text looks wrong",
        source,
        f" ({replaced} undecodable byte(s) replaced)" if replaced else "",
    )
    return text


_MINOR_WORDS = {"a", "an", "and", "as", "at", "by", "for", "in", "of", "on", "or", "the", "to", "with"}


def _title_case(text: str) -> bool:
    words = [w for w in re.findall(r"[^\W\d_][\w'’-]*", text)]
    return bool(words) and all(w[0].isupper() or w.lower() in _MINOR_WORDS for w in words)


def _is_heading_line(line: str) -> int | None:
    """Heading level of a lone short line (numbered like "2.1 Scope" or in capitals), or None."""
    stripped = line.strip()
    words = stripped.split()
    if not words or len(words) > 12 or stripped[-1] in ".,;:!?":
        return None
    m = _NUMBERED_HEADING_RE.match(stripped)
    if m:
        # "1. Keep records" is more likely a list item than a heading: "N." headings must be in Title Case
        single_dotted = "." not in m.group(1) and stripped[len(m.group(1)) : len(m.group(1)) + 1] == "."
        if single_dotted and not _title_case(stripped[m.end() - 1 :]):
            return None
        return m.group(1).count(".") + 1
    letters = [c for c in stripped if c.isalpha()]
    if len(letters) > 2 and all(c.isupper() for c in letters):
        return 1
    return None


def plain_blocks(text: str) -> Iterator[Block]:
    """Blocks of a plain-text document."""
    chunks = re.split(r"\n[ \t]*\n", text.replace("\r\n", "\n").replace("\r", "\n"))
    for chunk in chunks:
        lines = [line.rstrip() for line in chunk.split("\n") if line.strip()]
        if not lines:
            continue
        if len(lines) == 2 and _UNDERLINE_RE.match(lines[1].strip()):
            yield Block("heading", lines[0], level=1 if lines[1].strip()[0] == "=" else 2)
            continue
        if len(lines) == 1 and (level := _is_heading_line(lines[0])) is not None:
            yield Block("heading", lines[0], level=level)
            continue
        para: list[str] = []
        item: list[str] | None = None
        item_meta: tuple[int, str] = (0, "-")
        for line in lines:
            m = _LIST_RE.match(line)
            if m:
                if para:
                    yield Block("paragraph", " ".join(para))
                    para = []
                if item is not None:
                    yield Block("list-item", " ".join(item), level=item_meta[0], marker=item_meta[1])
                indent = len(m.group(1).expandtabs(4))
                marker = "-" if m.group(2) in ("*", "•", "▪", "◦", "●", "–") else m.group(2)
                item = [m.group(3)]
                item_meta = (indent // 2, marker)
            elif item is not None:
                item.append(line.strip())
            else:
                para.append(line.strip())
        if item is not None:
            yield Block("list-item", " ".join(item), level=item_meta[0], marker=item_meta[1])
        if para:
            yield Block("paragraph", " ".join(para))


def parse_text(data: bytes, source: str, config: SplitConfig) -> ParsedDocument:
    """Parse a plain-text file (see the module docstring for the rules)."""
    check_size(data, source, config)
    text = decode_text(data, source)
    blocks = list(itertools.islice(plain_blocks(text), config.max_paragraphs + 1))
    check_paragraph_count(len(blocks), source, config)
    return assemble(
        blocks,
        data=data,
        source=source,
        media_type="text/plain",
        config=config,
        metadata={"connector": "text"},
    )


def _inline_text(token: Any, *, page_navigation: bool = True) -> str:
    """An inline token's text; with ``page_navigation`` False, without the page's own navigation (links to
    places on the page: a table of contents' entry, "Back to top"; :func:`without_page_navigation`)."""
    out: list[str] = []
    links: list[str] = []
    link_start: int | None = None  # where the text of an open in-page link starts in ``out``
    for child in token.children or []:
        if child.type in ("text", "code_inline"):
            out.append(child.content)
        elif child.type == "softbreak":
            out.append(" ")
        elif child.type == "hardbreak":
            out.append("\n")
        elif child.type == "image":
            out.append(child.content or "")
        elif child.type == "link_open" and str(child.attrGet("href") or "").startswith("#"):
            link_start = len(out)
        elif child.type == "link_close" and link_start is not None:
            links.append("".join(out[link_start:]))
            link_start = None
    text = _FOOTNOTE_LABEL_RE.sub("", _FOOTNOTE_REF_RE.sub("", "".join(out)))
    return text if page_navigation else without_page_navigation(text, links)


#: a footnote's reference in Markdown's footnote syntax ("… within 72 hours[^1]"), and the label that opens the
#: note itself ("[^1]: Regulation (EU) 2016/679"): the note's text stays, the labels are no text
_FOOTNOTE_REF_RE = re.compile(r"\[\^[^\]\s]+\](?!:)")
_FOOTNOTE_LABEL_RE = re.compile(r"(?:^|(?<=\s))\[\^[^\]\s]+\]:\s*")


def _all_strong(token: Any) -> bool:
    """Whether every piece of an inline token's text stands in bold (``**…**``)."""
    depth = 0
    seen = False
    for child in token.children or []:
        if child.type == "strong_open":
            depth += 1
        elif child.type == "strong_close":
            depth -= 1
        elif child.type in ("text", "code_inline") and child.content.strip():
            if depth <= 0:
                return False
            seen = True
    return seen


#: a run of three or more underscores that touches no letter or digit: a form's fill-in blank
_BLANK_RUN = re.compile(r"(?<![\w\\])_{3,}(?!\w)")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


def _blanks_as_text(text: str) -> str:
    """The Markdown with its fill-in blanks escaped, outside fenced code. CommonMark reads "____/____/________" or
    "at ____:____" as strong emphasis around "/" and ":", and the blanks of a form's date and time were lost
    ("Date and time you noticed the incident: //________ at :"). A run of underscores next to a word
    (``___bold italic___``) is emphasis and is left alone."""
    out: list[str] = []
    fenced = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and "___" in line and line.replace("_", "").strip():  # not a thematic break
            line = _BLANK_RUN.sub(lambda m: "\\_" * len(m.group(0)), line)
        out.append(line)
    return "\n".join(out)


#: an admonition of MkDocs / Python-Markdown (``!!! note``, ``!!! warning "Title"``) or a collapsible one of
#: pymdown-extensions (``??? note``, ``???+ note``)
_ADMONITION = re.compile(
    r'^(?P<indent>[ \t]*)(?:!!!|\?\?\?\+?)[ \t]+[\w-]+(?:[ \t]+"(?P<title>[^"]*)")?[ \t]*$'
)


def _indent_width(line: str) -> int:
    expanded = line.expandtabs(4)
    return len(expanded) - len(expanded.lstrip())


#: admonitions inside admonitions read as text, at most (deeper ones stay as CommonMark reads them: a hostile file
#: nesting thousands cannot exhaust the stack)
_ADMONITION_DEPTH = 8


def _admonitions_as_text(text: str, depth: int = 0) -> str:
    """The Markdown with its admonitions' bodies as text, outside fenced code. MkDocs policy sites put statements
    in them ("!!! Attention" over "Incidents of a severity higher than MINOR shall trigger the following response
    process"): CommonMark reads the marker line as a paragraph and the body, indented four spaces, as a code
    block, which is skipped, so the statement was lost and "!!! Attention" stored instead. The marker line gives
    way to its quoted title, if any (a paragraph of its own), and the body is taken out of its indentation (an
    admonition inside one is read the same way)."""
    lines = text.split("\n")
    out: list[str] = []
    fenced = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if _FENCE.match(line):
            fenced = not fenced
        m = None if fenced or depth >= _ADMONITION_DEPTH else _ADMONITION.match(line)
        if m is None:
            out.append(line)
            i += 1
            continue
        base = _indent_width(line)
        body: list[str] = []
        i += 1
        while i < len(lines) and (not lines[i].strip() or _indent_width(lines[i]) >= base + 4):
            body.append(lines[i])
            i += 1
        while body and not body[-1].strip():  # the blank lines after the body belong to the text after it
            body.pop()
            i -= 1
        out.append("")
        if m.group("title"):
            out.extend([" " * base + m.group("title").strip(), ""])
        dedented = [b.expandtabs(4)[4:] if b.strip() else "" for b in body]
        out.extend(_admonitions_as_text("\n".join(dedented), depth + 1).split("\n") if dedented else [])
        out.append("")
    return "\n".join(out)


def markdown_blocks(text: str) -> tuple[list[Block], str]:
    """Blocks of a Markdown document, and the text of its first level-1 heading ("" if none)."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark").enable("table")
    tokens = md.parse(_blanks_as_text(_admonitions_as_text(text)))
    blocks: list[Block] = []
    title = ""
    list_stack: list[list[Any]] = []  # per open list: [ordered, next number]
    item_markers: list[tuple[int, str]] = []
    item_open = 0
    item_has_text: list[bool] = []
    row: list[str] = []
    grid: list[list[str]] = []
    last_level = 0  # the level of the last "#" heading: a bold paragraph typed as a heading goes under it
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        t = tok.type
        if t == "heading_open":
            content = _inline_text(tokens[i + 1])
            level = int(tok.tag[1])
            last_level = level
            if level == 1 and not title:
                title = content
            blocks.append(Block("heading", content, level=level))
            i += 3
            continue
        if t in ("bullet_list_open", "ordered_list_open"):
            start = int(tok.attrGet("start") or 1) if t == "ordered_list_open" else 0
            list_stack.append([t == "ordered_list_open", start])
        elif t in ("bullet_list_close", "ordered_list_close"):
            list_stack.pop()
        elif t == "list_item_open":
            ordered, n = list_stack[-1]
            marker = f"{n}." if ordered else "-"
            if ordered:
                list_stack[-1][1] = n + 1
            item_markers.append((len(list_stack) - 1, marker))
            item_has_text.append(False)
            item_open += 1
        elif t == "list_item_close":
            item_markers.pop()
            item_has_text.pop()
            item_open -= 1
        elif t == "inline" and item_open:
            level, marker = item_markers[-1]
            content = _inline_text(tok, page_navigation=False)  # a table of contents' entry is no item
            if not content:
                i += 1
                continue
            if item_has_text[-1] and blocks and blocks[-1].kind == "list-item":
                prev = blocks[-1]
                blocks[-1] = Block(
                    "list-item", prev.text + " " + content, level=prev.level, marker=prev.marker
                )
            else:
                blocks.append(Block("list-item", content, level=level, marker=marker))
                item_has_text[-1] = True
        elif t == "table_open":
            grid = []
        elif t == "tr_open":
            row = []
        elif t in ("th_open", "td_open"):
            row.append(_inline_text(tokens[i + 1]) if tokens[i + 1].type == "inline" else "")
        elif t == "tr_close":
            grid.append(row)
        elif t == "table_close":
            blocks.extend(table_blocks(grid, header=True))  # a Markdown table always has a header row
        elif (
            t == "inline"
            and tokens[i - 1].type == "paragraph_open"
            and (content := _inline_text(tok, page_navigation=False))
        ):
            depth = typed_heading_depth(content) if _all_strong(tok) else None
            if depth is not None:  # "**2.1 Email**" on a line of its own: a heading typed by hand
                blocks.append(Block("heading", content, level=last_level + depth))
            else:
                blocks.append(Block("paragraph", content))
        i += 1
    return blocks, title


def parse_markdown(data: bytes, source: str, config: SplitConfig) -> ParsedDocument:
    """Parse a Markdown file (see the module docstring for the rules)."""
    check_size(data, source, config)
    front, text = split_front_matter(decode_text(data, source))
    blocks, title = markdown_blocks(text)
    check_paragraph_count(len(blocks), source, config)
    return assemble(
        blocks,
        data=data,
        source=source,
        media_type="text/markdown",
        config=config,
        title=front.get("title") or title,
        metadata={"connector": "markdown", **{f"front_matter.{k}": v for k, v in front.items() if v}},
    )
