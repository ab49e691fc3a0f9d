"""Build the labelled paragraph-role set: documents in varied styles and formats, and their role labels.

Every source in ``tools/roles/src/`` is one document written for this project in a small annotated dialect (see
``tools/roles/README.md``): each line is one block — a heading, a paragraph, a list item or a table row — and
carries its role. The builder renders each source as the format its front matter names (``docx``; ``pdf``, one
column; ``pdf2``, two columns under a full-width title; ``md``; ``txt``; ``html``, a web page with the site's menu and cookie
banner around it) and writes, beside the documents, ``labels.jsonl``:
one line per document with its file name, its split (``train`` or ``test``: whole documents are held out) and
its labelled pieces of text (``{"role", "text"}``: every block, every table cell with its row's role, and the
page header and footer as ``furniture``). The training command aligns the paragraphs a connector produces to
these pieces (:func:`compliance.models.roles.align_roles`), so the labels survive changes to the parser.

Sources under ``src/examples/`` label the sample policies in ``examples/`` (front matter ``file:``): they are not
rendered; their label lines point at the committed files and are in the ``demo`` split.

The output is deterministic (fixed document dates, fixed zip timestamps, reportlab ``invariant=1``).

``--printed-by-browser`` renders every source instead as the web page ``html`` gives and prints it to PDF with
the system Chromium (``chromium --headless --print-to-pdf``), as an intranet page saved as PDF comes: tables
without rules, their cells centred, bullets drawn as shapes (docs/roles.md). That set is not deterministic
(Chromium's version decides the layout) and is not what the role model trains on.

``--printed-by-word-processor`` renders every source as its Word document and saves it as PDF with LibreOffice
(``soffice --headless --convert-to pdf``), as a policy written in Word and published as PDF comes: the page header
and footer on every page, paragraphs set apart by space after them rather than by blank lines (docs/roles.md).
Like the browser's, that set depends on the office's version and is not trained on.

Usage::

    python tools/roles/build_role_set.py                 # writes var/role-set/
    python tools/roles/build_role_set.py --out DIR
    python tools/roles/build_role_set.py --printed-by-browser --out var/role-set-browser
    python tools/roles/build_role_set.py --printed-by-word-processor --out var/role-set-office
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import re
import shutil
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SRC = HERE / "src"
ROOT = HERE.parent.parent
OUT = ROOT / "var" / "role-set"
FIXED_DATE = dt.datetime(2025, 6, 1, 9, 0, 0)
ZIP_DATE = (2025, 6, 1, 9, 0, 0)

#: the role tags of the dialect
TAGS = {
    "st": "statement",
    "def": "definition",
    "desc": "description",
    "head": "heading",
    "meta": "metadata",
    "form": "form",
    "furn": "furniture",
    "ref": "reference",
}
_LINE_RE = re.compile(r"^(?P<tag>[a-z]+)(?P<kind>:|-|#|\|)\s?(?P<text>.*)$")


@dataclass
class Block:
    """One block of a source: a heading, a paragraph, a list item or a table row."""

    kind: str  # h0 (title), h1, h2, h3, para, bullet, number, row, header-row
    role: str | None
    text: str = ""
    cells: list[str] = field(default_factory=list)


@dataclass
class Source:
    """A parsed source: front matter and blocks."""

    name: str
    meta: dict[str, str]
    blocks: list[Block]

    @property
    def fmt(self) -> str:
        return self.meta.get("format", "docx")

    @property
    def split(self) -> str:
        return self.meta.get("split", "train")

    def pieces(self) -> list[dict[str, str]]:
        """The labelled pieces of text (what the alignment matches paragraphs against)."""
        out: list[dict[str, str]] = []
        for block in self.blocks:
            if block.kind.startswith("h"):
                out.append({"role": "heading", "text": block.text})
            elif block.kind == "row":
                out.extend({"role": block.role or "statement", "text": c} for c in block.cells if c.strip())
            elif block.kind != "header-row":
                out.append({"role": block.role or "statement", "text": plain(block.text)})
        for key in ("header", "footer"):
            for part in re.split(r"\{page\}|\{pages\}", self.meta.get(key, "")):
                if part.strip():
                    out.append({"role": "furniture", "text": part.strip()})
        if self.fmt == "html":  # the site's menu, skip link and cookie banner, wherever a reader leaves them
            out.extend({"role": "furniture", "text": text} for text in site_chrome(self))
        return out


def parse_source(path: Path) -> Source:
    """Parse one annotated source file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or lines[0].strip() != "---":
        raise ValueError(f"{path}: missing front matter")
    end = lines.index("---", 1)
    meta: dict[str, str] = {}
    for line in lines[1:end]:
        key, _, value = line.partition(":")
        meta[key.strip()] = value.strip()
    blocks: list[Block] = []
    if meta.get("title"):
        blocks.append(Block("h0", "heading", meta["title"]))
    for number, raw in enumerate(lines[end + 1 :], start=end + 2):
        line = raw.rstrip()
        if not line.strip() or line.startswith("%"):
            continue
        heading = re.match(r"^(#{1,3}) (.+)$", line)
        if heading:
            blocks.append(Block(f"h{len(heading.group(1))}", "heading", heading.group(2).strip()))
            continue
        m = _LINE_RE.match(line)
        if not m or (m.group("tag") not in TAGS and m.group("tag") != "hdr"):
            raise ValueError(f"{path}:{number}: cannot read {line[:60]!r}")
        tag, kind, text = m.group("tag"), m.group("kind"), m.group("text").strip()
        if kind == "|":
            cells = [c.strip() for c in text.strip().strip("|").split("|")]
            if tag == "hdr":
                blocks.append(Block("header-row", None, cells=cells))
            else:
                blocks.append(Block("row", TAGS[tag], cells=cells))
            continue
        if tag == "hdr":
            raise ValueError(f"{path}:{number}: hdr only starts a table header row")
        block_kind = {":": "para", "-": "bullet", "#": "number"}[kind]
        blocks.append(Block(block_kind, TAGS[tag], text))
    return Source(path.stem, meta, blocks)


def plain(text: str) -> str:
    """Text without ``**bold**`` markup."""
    return text.replace("**", "")


def bold_spans(text: str) -> list[tuple[str, bool]]:
    """``**bold**`` markup as (text, bold) runs."""
    parts = re.split(r"\*\*(.+?)\*\*", text)
    return [(part, i % 2 == 1) for i, part in enumerate(parts) if part]


def units(blocks: list[Block]) -> list[tuple[str, list[Block]]]:
    """The blocks in reading order as the renderers take them: ``("table", rows)`` for a run of table rows,
    ``("list", items)`` for a run of list items of one kind (bulleted or numbered), ``("block", [block])`` for
    anything else."""
    out: list[tuple[str, list[Block]]] = []
    for block in blocks:
        if block.kind in ("row", "header-row"):
            kind = "table"
        elif block.kind in ("bullet", "number"):
            kind = "list"
        else:
            out.append(("block", [block]))
            continue
        last = out[-1] if out else None
        if last is not None and last[0] == kind and (kind == "table" or last[1][0].kind == block.kind):
            last[1].append(block)
        else:
            out.append((kind, [block]))
    return out


# --------------------------------------------------------------------------------------------- docx
def _field(paragraph: Any, instr: str) -> None:
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    run = paragraph.add_run()
    for kind, text in (("begin", None), (None, instr), ("separate", None), (None, None), ("end", None)):
        if kind is not None:
            el = OxmlElement("w:fldChar")
            el.set(qn("w:fldCharType"), kind)
        elif text is not None:
            el = OxmlElement("w:instrText")
            el.set(qn("xml:space"), "preserve")
            el.text = f" {text} "
        else:
            el = OxmlElement("w:t")
            el.text = "1"
        run._r.append(el)


def _runs(paragraph: Any, text: str, *, bold: bool = False) -> None:
    for chunk, is_bold in bold_spans(text):
        paragraph.add_run(chunk).bold = (is_bold or bold) or None


def _page_text(paragraph: Any, template: str) -> None:
    for i, part in enumerate(re.split(r"(\{page\}|\{pages\})", template)):
        if part == "{page}":
            _field(paragraph, "PAGE")
        elif part == "{pages}":
            _field(paragraph, "NUMPAGES")
        elif part:
            paragraph.add_run(part)
        del i


def build_docx(source: Source) -> bytes:
    """Render a source as .docx bytes."""
    from docx import Document
    from docx.shared import Pt

    document = Document()
    document.styles["Normal"].font.name = source.meta.get("font", "Calibri")
    document.styles["Normal"].font.size = Pt(float(source.meta.get("size", "10.5")))
    section = document.sections[0]
    if source.meta.get("header"):
        _page_text(section.header.paragraphs[0], source.meta["header"])
    if source.meta.get("footer"):
        _page_text(section.footer.paragraphs[0], source.meta["footer"])
    for kind, group in units(source.blocks):
        if kind == "table":
            width = max(len(r.cells) for r in group)
            table = document.add_table(rows=0, cols=width)
            table.style = "Table Grid"
            for row in group:
                cells = table.add_row().cells
                for cell, value in zip(cells, [*row.cells, *[""] * (width - len(row.cells))], strict=True):
                    _runs(cell.paragraphs[0], value, bold=row.kind == "header-row")
            continue
        for block in group:
            if block.kind == "h0":
                document.add_paragraph(block.text, style="Title")
            elif block.kind in ("h1", "h2", "h3"):
                document.add_heading(block.text, level=int(block.kind[1]))
            elif block.kind == "bullet":
                _runs(document.add_paragraph(style="List Bullet"), block.text)
            elif block.kind == "number":
                _runs(document.add_paragraph(style="List Number"), block.text)
            elif block.role == "heading":  # a heading typed as a bold paragraph
                _runs(document.add_paragraph(), block.text, bold=True)
            else:
                _runs(document.add_paragraph(), block.text)
    props = document.core_properties
    props.title = source.meta.get("title", "")
    props.author = source.meta.get("author", "Policy Office")
    props.created = props.modified = props.last_printed = FIXED_DATE
    props.revision = 1
    buffer = io.BytesIO()
    document.save(buffer)
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=ZIP_DATE)
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = 0o644 << 16
            dst.writestr(fixed, src.read(info.filename))
    return out.getvalue()


# ---------------------------------------------------------------------------------------------- pdf
def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _markup(text: str) -> str:
    return "".join(f"<b>{_escape(t)}</b>" if bold else _escape(t) for t, bold in bold_spans(text))


def _fill(template: str, page: str, pages: str) -> str:
    return template.replace("{page}", page).replace("{pages}", pages)


def build_pdf(source: Source, *, columns: int = 1) -> bytes:
    """Render a source as PDF bytes: one column, or two under a full-width title; header and footer drawn on
    every page (``{page}``/``{pages}`` filled in)."""
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4, LETTER
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.lib.units import mm
    from reportlab.pdfgen import canvas as rl_canvas
    from reportlab.platypus import (
        BaseDocTemplate,
        Frame,
        FrameBreak,
        ListFlowable,
        ListItem,
        NextPageTemplate,
        PageTemplate,
        Paragraph,
        Spacer,
        Table,
        TableStyle,
    )

    pagesize = LETTER if source.meta.get("paper") == "letter" else A4
    width, height = pagesize
    header, footer = source.meta.get("header", ""), source.meta.get("footer", "")
    font = source.meta.get("pdf_font", "Helvetica")
    bold_font = {"Helvetica": "Helvetica-Bold", "Times-Roman": "Times-Bold"}.get(font, "Helvetica-Bold")

    class Numbered(rl_canvas.Canvas):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._states: list[dict[str, Any]] = []

        def showPage(self) -> None:
            self._states.append(dict(self.__dict__))
            self._startPage()

        def save(self) -> None:
            total = len(self._states)
            for state in self._states:
                self.__dict__.update(state)
                self.saveState()
                self.setFont(font, 8)
                self.setFillColor(colors.HexColor("#555555"))
                page, pages = str(self._pageNumber), str(total)
                if header:
                    self.drawString(18 * mm, height - 11 * mm, _fill(header, page, pages))
                if footer:
                    self.drawRightString(width - 18 * mm, 9 * mm, _fill(footer, page, pages))
                self.restoreState()
                super().showPage()
            super().save()

    size = float(source.meta.get("size", "10"))
    body = ParagraphStyle("Body", fontName=font, fontSize=size, leading=size * 1.35, spaceAfter=5)
    bold_body = ParagraphStyle("BodyBold", parent=body, fontName=bold_font)
    title = ParagraphStyle("Title", fontName=bold_font, fontSize=18, leading=22, spaceAfter=10)
    h1 = ParagraphStyle("H1", fontName=bold_font, fontSize=13.5, leading=17, spaceBefore=10, spaceAfter=5)
    h2 = ParagraphStyle("H2", fontName=bold_font, fontSize=11.5, leading=14, spaceBefore=7, spaceAfter=4)
    h3 = ParagraphStyle(
        "H3", fontName=bold_font, fontSize=size, leading=size * 1.3, spaceBefore=5, spaceAfter=3
    )
    cell = ParagraphStyle("Cell", parent=body, fontSize=size - 1, leading=(size - 1) * 1.3, spaceAfter=0)
    cell_bold = ParagraphStyle("CellBold", parent=cell, fontName=bold_font)
    margin = 18 * mm
    column_gap = 8 * mm
    usable = width - 2 * margin
    col_width = usable if columns == 1 else (usable - column_gap) / 2

    def table(rows: list[Block]) -> Table:
        ncols = max(len(r.cells) for r in rows)
        data = [
            [
                Paragraph(_markup(v), cell_bold if r.kind == "header-row" else cell)
                for v in [*r.cells, *[""] * (ncols - len(r.cells))]
            ]
            for r in rows
        ]
        widths = [col_width * 0.32, col_width * 0.68] if ncols == 2 else [col_width / ncols] * ncols
        tbl = Table(
            data, colWidths=widths, repeatRows=1 if rows[0].kind == "header-row" else 0, hAlign="LEFT"
        )
        tbl.setStyle(
            TableStyle(
                [
                    ("GRID", (0, 0), (-1, -1), 0.5, colors.HexColor("#888888")),
                    ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ]
            )
        )
        return tbl

    story: list[Any] = []
    for kind, group in units(source.blocks):
        if kind == "list":
            items = [ListItem(Paragraph(_markup(b.text), body), leftIndent=14) for b in group]
            if group[0].kind == "bullet":
                story.append(
                    ListFlowable(
                        items, bulletType="bullet", start="•", leftIndent=14, bulletFontSize=size - 1
                    )
                )
            else:
                story.append(
                    ListFlowable(
                        items, bulletType="1", leftIndent=16, bulletFontName=font, bulletFontSize=size
                    )
                )
            continue
        if kind == "table":
            story.extend([table(group), Spacer(1, 6)])
            continue
        (block,) = group
        if block.kind == "h0":
            story.append(Paragraph(_escape(block.text), title))
            if columns == 2:
                story.extend([NextPageTemplate("columns"), FrameBreak()])
        elif block.kind in ("h1", "h2", "h3"):
            story.append(Paragraph(_escape(block.text), {"h1": h1, "h2": h2, "h3": h3}[block.kind]))
        elif block.role == "heading":
            story.append(Paragraph(_markup(block.text), bold_body))
        else:
            story.append(Paragraph(_markup(block.text), body))

    buffer = io.BytesIO()
    doc = BaseDocTemplate(
        buffer,
        pagesize=pagesize,
        leftMargin=margin,
        rightMargin=margin,
        topMargin=22 * mm,
        bottomMargin=20 * mm,
        title=source.meta.get("title", ""),
        author=source.meta.get("author", "Policy Office"),
        invariant=1,
    )
    top, bottom = height - 22 * mm, 20 * mm
    if columns == 1:
        doc.addPageTemplates(
            [PageTemplate("single", [Frame(margin, bottom, usable, top - bottom, id="body")])]
        )
    else:
        title_h = 34 * mm
        first = [
            Frame(margin, top - title_h, usable, title_h, id="title"),
            Frame(margin, bottom, col_width, top - title_h - bottom, id="left1"),
            Frame(margin + col_width + column_gap, bottom, col_width, top - title_h - bottom, id="right1"),
        ]
        later = [
            Frame(margin, bottom, col_width, top - bottom, id="left"),
            Frame(margin + col_width + column_gap, bottom, col_width, top - bottom, id="right"),
        ]
        doc.addPageTemplates([PageTemplate("first", first), PageTemplate("columns", later)])
    doc.build(story, canvasmaker=Numbered)
    return buffer.getvalue()


# ----------------------------------------------------------------------------------------------- md
def build_md(source: Source) -> bytes:
    """Render a source as Markdown with a front-matter title."""
    out: list[str] = []
    if source.meta.get("title"):
        out += ["---", f"title: {source.meta['title']}", "---", ""]
    for kind, group in units(source.blocks):
        if kind == "table":
            rows = group
            width = max(len(r.cells) for r in rows)
            if rows[0].kind != "header-row":  # a Markdown table needs a header row
                rows = [
                    Block("header-row", None, cells=["Field", "Value"][:width] + [""] * max(0, width - 2)),
                    *rows,
                ]
            for n, row in enumerate(rows):
                out.append("| " + " | ".join([*row.cells, *[""] * (width - len(row.cells))]) + " |")
                if n == 0:
                    out.append("|" + "---|" * width)
            out.append("")
            continue
        if kind == "list":
            if out and out[-1] != "":
                out.append("")
            marker = "-" if group[0].kind == "bullet" else "1."
            out += [f"{marker} {item.text}" for item in group] + [""]
            continue
        (block,) = group
        if block.kind == "h0":
            out += [f"# {block.text}", ""]
        elif block.kind in ("h1", "h2", "h3"):
            out += ["#" * (int(block.kind[1]) + 1) + " " + block.text, ""]
        elif block.role == "heading":
            out += [f"**{plain(block.text)}**", ""]
        else:
            out += [block.text, ""]
    for key in ("header", "footer"):
        if source.meta.get(key) and source.meta.get("md_furniture") == "yes":
            text = re.sub(r"\{page\}|\{pages\}", "1", source.meta[key])
            at = 4 if key == "header" and source.meta.get("title") else 0  # after the front matter
            out = [*out[:at], text, "", *out[at:]] if key == "header" else [*out, text, ""]
    return ("\n".join(out).rstrip() + "\n").encode("utf-8")


# --------------------------------------------------------------------------------------------- html
#: the site menu of a rendered web page
MENU = ("Home", "Products", "Pricing", "Blog", "Contact", "Log in")


def site_chrome(source: Source) -> list[str]:
    """The texts a website puts around every page (a skip link, the site's menu, its cookie banner)."""
    site = source.meta.get("header", "Our website")
    return [
        "Skip to main content",
        " ".join(MENU),
        f"{site} uses cookies to remember your choices and to measure how the site is used. Accept all cookies or "
        "choose which ones we may set.",
    ]


def build_html(source: Source) -> bytes:
    """Render a source as a web page: the site's skip link, menu (links in a plain ``div``) and cookie banner
    (``role="dialog"``) around the content, in ``<main>`` unless ``html_main: no`` (then a ``div``); the header
    in ``<header>`` and the footer in ``<footer>``."""
    skip, _, cookies = site_chrome(source)
    links = " ".join(f'<a href="/{w.lower().replace(" ", "-")}">{w}</a>' for w in MENU)
    main = "main" if source.meta.get("html_main", "yes") != "no" else "div"
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_escape(source.meta.get('title', source.name))}</title>",
        "<style>.menu a{margin:0 1em}</style></head><body>",
        f'<a class="skip" href="#content">{skip}</a>',
    ]
    if source.meta.get("header"):
        out.append(f"<header><p>{_escape(_fill(source.meta['header'], '1', '1'))}</p></header>")
    out += [
        f'<div class="menu">{links}</div>',
        f'<div class="consent" role="dialog" aria-label="Cookies"><p>{_escape(cookies)}</p>'
        "<button>Accept all</button><button>Choose</button></div>",
        f'<{main} id="content">',
    ]
    for kind, group in units(source.blocks):
        if kind == "table":
            out.append("<table>")
            for row in group:
                cell = "th" if row.kind == "header-row" else "td"
                out.append("<tr>" + "".join(f"<{cell}>{_markup(c)}</{cell}>" for c in row.cells) + "</tr>")
            out.append("</table>")
        elif kind == "list":
            tag = "ul" if group[0].kind == "bullet" else "ol"
            out.append(f"<{tag}>{''.join(f'<li>{_markup(item.text)}</li>' for item in group)}</{tag}>")
        elif group[0].kind == "h0":
            out.append(f"<h1>{_escape(group[0].text)}</h1>")
        elif group[0].kind in ("h1", "h2", "h3"):
            level = int(group[0].kind[1]) + 1
            out.append(f"<h{level}>{_escape(group[0].text)}</h{level}>")
        else:
            out.append(f"<p>{_markup(group[0].text)}</p>")
    out.append(f"</{main}>")
    if source.meta.get("footer"):
        out.append(f"<footer><p>{_escape(_fill(source.meta['footer'], '1', '1'))}</p></footer>")
    out.append("</body></html>")
    return ("\n".join(out) + "\n").encode("utf-8")


# ---------------------------------------------------------------------------------------------- txt
def build_txt(source: Source) -> bytes:
    """Render a source as plain text: blocks separated by blank lines, headings underlined, lists with ``-``."""
    out: list[str] = []
    for block in source.blocks:
        if block.kind == "h0" and source.meta.get("txt_title") != "no":
            out += [block.text, "=" * len(block.text), ""]
        elif block.kind in ("h1", "h2", "h3"):
            out += [block.text, "-" * len(block.text), ""]
        elif block.kind in ("row", "header-row"):
            out += ["  ".join(block.cells), ""]
        elif block.kind == "bullet":
            out += [f"- {plain(block.text)}", ""]
        elif block.kind == "number":
            out += [f"* {plain(block.text)}", ""]
        elif block.kind != "h0":
            out += [plain(block.text), ""]
    return ("\n".join(out).rstrip() + "\n").encode("utf-8")


# --------------------------------------------------------------------------------------------- main
def build(source: Source) -> tuple[str, bytes]:
    """The file name and bytes of one rendered source."""
    fmt = source.fmt
    if fmt == "docx":
        return f"{source.name}.docx", build_docx(source)
    if fmt == "pdf":
        return f"{source.name}.pdf", build_pdf(source)
    if fmt == "pdf2":
        return f"{source.name}.pdf", build_pdf(source, columns=2)
    if fmt == "md":
        return f"{source.name}.md", build_md(source)
    if fmt == "txt":
        return f"{source.name}.txt", build_txt(source)
    if fmt == "html":
        return f"{source.name}.html", build_html(source)
    raise ValueError(f"{source.name}: unknown format {fmt!r}")


def print_with_browser(html: Path, pdf: Path, browser: str = "chromium") -> None:
    """``html`` printed to ``pdf`` by a headless Chromium, without its page header and footer."""
    import subprocess

    subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", f"--print-to-pdf={pdf}",
         "--no-pdf-header-footer", html.resolve().as_uri()],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip


def _fresh_docs(out: Path) -> Path:
    """``out/docs``, emptied."""
    docs = out / "docs"
    if docs.exists():
        shutil.rmtree(docs)
    docs.mkdir(parents=True)
    return docs


def _label_line(
    file: str, source: Source, split: str | None = None, style: str | None = None
) -> dict[str, Any]:
    """The ``labels.jsonl`` line of one document: its file, split, style and labelled pieces (split and style:
    the source's own unless given)."""
    return {
        "file": file,
        "split": split or source.split,
        "style": source.meta.get("style", "") if style is None else style,
        "pieces": source.pieces(),
    }


def _write_labels(out: Path, labels: list[dict[str, Any]]) -> None:
    with (out / "labels.jsonl").open("w", encoding="utf-8") as fh:
        for line in labels:
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")


def build_printed(out: Path, src: Path = SRC, browser: str = "chromium") -> list[dict[str, Any]]:
    """Every source as its web page (:func:`build_html`) printed to PDF by ``browser`` into ``out/docs``, and
    ``out/labels.jsonl`` (the site's menu and banner labelled as furniture, as for ``html`` sources)."""
    docs = _fresh_docs(out)
    labels: list[dict[str, Any]] = []
    for path in sorted(src.glob("*.md")):
        source = parse_source(path)
        source.meta["format"] = "html"
        page = docs / f"{source.name}.html"
        page.write_bytes(build_html(source))
        pdf = docs / f"{source.name}.pdf"
        print_with_browser(page, pdf, browser)
        page.unlink()
        labels.append(_label_line(f"docs/{pdf.name}", source))
    _write_labels(out, labels)
    return labels


def print_with_word_processor(docs: list[Path], out_dir: Path, office: str = "soffice") -> None:
    """Each of ``docs`` (.docx) converted to PDF into ``out_dir`` by a headless LibreOffice, as a word processor's
    "Save as PDF" prints it (a private profile, so that a running office is left alone)."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [office, f"-env:UserInstallation={Path(profile).as_uri()}", "--headless", "--convert-to", "pdf",
             "--outdir", str(out_dir), *(str(d) for d in docs)],
            check=True, capture_output=True, timeout=600,
        )  # fmt: skip


def build_word_printed(out: Path, src: Path = SRC, office: str = "soffice") -> list[dict[str, Any]]:
    """Every source as a Word document (:func:`build_docx`) saved as PDF by ``office`` into ``out/docs``, and
    ``out/labels.jsonl`` (the labels of the source, whatever its own format)."""
    docs = _fresh_docs(out)
    labels: list[dict[str, Any]] = []
    written: list[Path] = []
    for path in sorted(src.glob("*.md")):
        source = parse_source(path)
        source.meta["format"] = "docx"
        docx = docs / f"{source.name}.docx"
        docx.write_bytes(build_docx(source))
        written.append(docx)
        labels.append(_label_line(f"docs/{source.name}.pdf", source))
    if written:
        print_with_word_processor(written, docs, office)
    for docx in written:
        docx.unlink()
    _write_labels(out, labels)
    return labels


def build_all(out: Path = OUT, src: Path = SRC) -> list[dict[str, Any]]:
    """Render every source into ``out/docs`` and write ``out/labels.jsonl``; return the label lines."""
    docs = _fresh_docs(out)
    labels: list[dict[str, Any]] = []
    for path in sorted(src.glob("*.md")):
        source = parse_source(path)
        name, data = build(source)
        (docs / name).write_bytes(data)
        labels.append(_label_line(f"docs/{name}", source))
    for path in sorted((src / "examples").glob("*.md")):
        source = parse_source(path)
        file = str((ROOT / source.meta["file"]).resolve())
        labels.append(_label_line(file, source, split="demo", style="sample policy"))
    _write_labels(out, labels)
    return labels


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, default=OUT, help="output folder (default: var/role-set/)")
    parser.add_argument(
        "--printed-by-browser",
        action="store_true",
        help="every source as a web page printed to PDF by the system Chromium (needs chromium)",
    )
    parser.add_argument("--browser", default="chromium", help="the Chromium executable (default: chromium)")
    parser.add_argument(
        "--printed-by-word-processor",
        action="store_true",
        help="every source as a Word document saved as PDF by LibreOffice (needs soffice)",
    )
    parser.add_argument("--office", default="soffice", help="the LibreOffice executable (default: soffice)")
    args = parser.parse_args(argv)
    if args.printed_by_browser:
        labels = build_printed(args.out, browser=args.browser)
    elif args.printed_by_word_processor:
        labels = build_word_printed(args.out, office=args.office)
    else:
        labels = build_all(args.out)
    splits: dict[str, int] = {}
    for line in labels:
        splits[line["split"]] = splits.get(line["split"], 0) + 1
    print(f"wrote {len(labels)} labelled documents to {args.out} ({splits})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
