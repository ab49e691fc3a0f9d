"""Build the sample policy documents in ``examples/`` from their Markdown sources in ``tools/examples/src/``.

Each source file is a small Markdown dialect with a front-matter block::

    ---
    title: Information Security Policy
    doc_id: NWL-POL-001
    format: docx            # or pdf
    ---
    ## 1. Purpose           -> Heading 1
    ### 1.1 Subsection      -> Heading 2
    A paragraph, possibly wrapped over several source lines.
    - bullet item           -> bulleted list ("List Bullet" / "•")
    1. numbered item        -> numbered list ("List Number" / "1.")
    | a | b |               -> table (first row is the header, the |---| row is skipped)

``**bold**`` marks inline bold runs. Every document gets a document-control table, the header line
``Northwind Logistics — Internal — v2.1`` and a footer with the document id and "Page N of M".

The output is deterministic: fixed dates in the core properties and fixed zip timestamps for .docx,
``invariant=1`` for reportlab, so rebuilding from unchanged sources gives identical bytes (with the same
python-docx / reportlab versions).

Usage::

    python tools/examples/build_examples.py            # writes examples/*.docx and examples/*.pdf
    python tools/examples/build_examples.py --out DIR  # writes somewhere else
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

HERE = Path(__file__).resolve().parent
SRC = HERE / "src"
OUT = HERE.parent.parent / "examples"
COMPANY = "Northwind Logistics B.V."
HEADER_LINE = "Northwind Logistics — Internal — v2.1"
FIXED_DATE = dt.datetime(2025, 3, 1, 9, 0, 0)
ZIP_DATE = (2025, 3, 1, 9, 0, 0)

BlockKind = Literal["h1", "h2", "para", "bullets", "numbers", "table"]


@dataclass
class Block:
    """One block of a source document."""

    kind: BlockKind
    text: str = ""
    items: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)


@dataclass
class Source:
    """A parsed source document: front matter and blocks."""

    name: str
    meta: dict[str, str]
    blocks: list[Block]

    @property
    def title(self) -> str:
        return self.meta["title"]

    @property
    def fmt(self) -> str:
        return self.meta["format"]

    def control_rows(self) -> list[list[str]]:
        """Rows of the document-control table shown under the title."""
        return [
            ["Document ID", self.meta["doc_id"]],
            ["Version", self.meta.get("version", "2.1")],
            ["Owner", self.meta["owner"]],
            ["Approved by", self.meta["approved"]],
            ["Effective date", self.meta["effective"]],
            ["Review cycle", self.meta.get("review", "Annual")],
            ["Classification", "Internal"],
        ]


def parse_source(path: Path) -> Source:
    """Parse one Markdown source file into front matter and blocks."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or lines[0].strip() != "---":
        raise ValueError(f"{path}: missing front matter")
    end = lines.index("---", 1)
    meta: dict[str, str] = {}
    for line in lines[1:end]:
        key, _, value = line.partition(":")
        meta[key.strip()] = value.split("#", 1)[0].strip()
    blocks: list[Block] = []
    para: list[str] = []

    def flush() -> None:
        if para:
            blocks.append(Block("para", text=" ".join(para)))
            para.clear()

    for raw in lines[end + 1 :]:
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped:
            flush()
            continue
        if stripped.startswith("### "):
            flush()
            blocks.append(Block("h2", text=stripped[4:]))
        elif stripped.startswith("## "):
            flush()
            blocks.append(Block("h1", text=stripped[3:]))
        elif stripped.startswith("- "):
            flush()
            if not blocks or blocks[-1].kind != "bullets":
                blocks.append(Block("bullets"))
            blocks[-1].items.append(stripped[2:])
        elif re.match(r"^\d+\. ", stripped):
            flush()
            if not blocks or blocks[-1].kind != "numbers":
                blocks.append(Block("numbers"))
            blocks[-1].items.append(stripped.split(" ", 1)[1])
        elif stripped.startswith("|"):
            flush()
            cells = [c.strip() for c in stripped.strip("|").split("|")]
            if all(re.fullmatch(r":?-{3,}:?", c) for c in cells):
                continue
            if not blocks or blocks[-1].kind != "table":
                blocks.append(Block("table"))
            blocks[-1].rows.append(cells)
        elif line.startswith("  ") and blocks and blocks[-1].kind in ("bullets", "numbers") and not para:
            blocks[-1].items[-1] += " " + stripped  # continuation of a list item
        else:
            para.append(stripped)
    flush()
    return Source(name=path.stem, meta=meta, blocks=blocks)


def bold_spans(text: str) -> list[tuple[str, bool]]:
    """Split ``**bold**`` markup into (text, is_bold) runs."""
    parts = re.split(r"\*\*(.+?)\*\*", text)
    return [(part, i % 2 == 1) for i, part in enumerate(parts) if part]


def plain(text: str) -> str:
    """Text without inline markup."""
    return text.replace("**", "")


# --------------------------------------------------------------------------------------------- docx


def _add_field(paragraph: Any, instr: str) -> None:
    """Append a Word field (PAGE, NUMPAGES) to a paragraph."""
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    run = paragraph.add_run()
    begin = OxmlElement("w:fldChar")
    begin.set(qn("w:fldCharType"), "begin")
    code = OxmlElement("w:instrText")
    code.set(qn("xml:space"), "preserve")
    code.text = f" {instr} "
    sep = OxmlElement("w:fldChar")
    sep.set(qn("w:fldCharType"), "separate")
    shown = OxmlElement("w:t")
    shown.text = "1"
    end = OxmlElement("w:fldChar")
    end.set(qn("w:fldCharType"), "end")
    for element in (begin, code, sep, shown, end):
        run._r.append(element)


def _add_runs(paragraph: Any, text: str) -> None:
    for chunk, bold in bold_spans(text):
        run = paragraph.add_run(chunk)
        run.bold = bold or None


def _docx_table(document: Any, rows: list[list[str]], header: bool = True) -> None:
    table = document.add_table(rows=0, cols=len(rows[0]))
    table.style = "Table Grid"
    for r, row in enumerate(rows):
        cells = table.add_row().cells
        for cell, value in zip(cells, row, strict=True):
            cell.text = ""
            paragraph = cell.paragraphs[0]
            if header and r == 0:
                paragraph.add_run(plain(value)).bold = True
            else:
                _add_runs(paragraph, value)
    document.add_paragraph()


def build_docx(source: Source) -> bytes:
    """Render a source as .docx bytes (deterministic)."""
    from docx import Document
    from docx.enum.text import WD_ALIGN_PARAGRAPH
    from docx.shared import Pt

    document = Document()
    normal = document.styles["Normal"]
    normal.font.name = "Calibri"
    normal.font.size = Pt(10.5)

    section = document.sections[0]
    header = section.header.paragraphs[0]
    header.text = HEADER_LINE
    header.alignment = WD_ALIGN_PARAGRAPH.RIGHT
    footer = section.footer.paragraphs[0]
    footer.alignment = WD_ALIGN_PARAGRAPH.CENTER
    footer.add_run(f"{source.meta['doc_id']} — Page ")
    _add_field(footer, "PAGE")
    footer.add_run(" of ")
    _add_field(footer, "NUMPAGES")

    document.add_paragraph(source.title, style="Title")
    _docx_table(document, source.control_rows(), header=False)
    for block in source.blocks:
        if block.kind == "h1":
            document.add_heading(block.text, level=1)
        elif block.kind == "h2":
            document.add_heading(block.text, level=2)
        elif block.kind == "para":
            _add_runs(document.add_paragraph(), block.text)
        elif block.kind in ("bullets", "numbers"):
            style = "List Bullet" if block.kind == "bullets" else "List Number"
            for item in block.items:
                _add_runs(document.add_paragraph(style=style), item)
        elif block.kind == "table":
            _docx_table(document, block.rows)

    props = document.core_properties
    props.title = source.title
    props.author = COMPANY
    props.last_modified_by = source.meta["owner"]
    props.subject = source.meta.get("subject", "Internal policy")
    props.keywords = source.meta.get("keywords", "")
    props.category = "Policy"
    props.identifier = source.meta["doc_id"]
    props.version = source.meta.get("version", "2.1")
    props.revision = 21
    props.created = FIXED_DATE
    props.modified = FIXED_DATE
    props.last_printed = FIXED_DATE

    buffer = io.BytesIO()
    document.save(buffer)
    return _normalise_zip(buffer.getvalue())


def _normalise_zip(data: bytes) -> bytes:
    """Rewrite a zip with fixed timestamps and member order so identical content gives identical bytes."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
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


def build_pdf(source: Source) -> bytes:
    """Render a source as PDF bytes with header and "Page N of M" footer on every page."""
    from reportlab.lib import colors
    from reportlab.lib.enums import TA_LEFT
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
    from reportlab.lib.units import mm
    from reportlab.pdfgen import canvas as rl_canvas
    from reportlab.platypus import (
        ListFlowable,
        ListItem,
        Paragraph,
        SimpleDocTemplate,
        Spacer,
        Table,
        TableStyle,
    )

    doc_id = source.meta["doc_id"]

    class NumberedCanvas(rl_canvas.Canvas):
        """Canvas that defers page output so the footer can say "Page N of M"."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._saved_states: list[dict[str, Any]] = []

        def showPage(self) -> None:
            self._saved_states.append(dict(self.__dict__))
            self._startPage()

        def save(self) -> None:
            total = len(self._saved_states)
            for state in self._saved_states:
                self.__dict__.update(state)
                self._decorate(total)
                super().showPage()
            super().save()

        def _decorate(self, total: int) -> None:
            width, height = A4
            self.saveState()
            self.setFont("Helvetica", 8)
            self.setFillColor(colors.HexColor("#555555"))
            self.drawRightString(width - 20 * mm, height - 12 * mm, HEADER_LINE)
            self.setStrokeColor(colors.HexColor("#999999"))
            self.line(20 * mm, height - 14 * mm, width - 20 * mm, height - 14 * mm)
            self.drawCentredString(width / 2, 10 * mm, f"{doc_id} — Page {self._pageNumber} of {total}")
            self.restoreState()

    styles = getSampleStyleSheet()
    body = ParagraphStyle(
        "Body",
        parent=styles["BodyText"],
        fontName="Helvetica",
        fontSize=10,
        leading=13.5,
        spaceAfter=6,
        alignment=TA_LEFT,
    )
    title = ParagraphStyle(
        "DocTitle",
        parent=styles["Title"],
        fontName="Helvetica-Bold",
        fontSize=18,
        leading=22,
        spaceAfter=10,
        alignment=TA_LEFT,
    )
    h1 = ParagraphStyle(
        "H1",
        parent=styles["Heading1"],
        fontName="Helvetica-Bold",
        fontSize=14,
        leading=17,
        spaceBefore=12,
        spaceAfter=6,
        keepWithNext=1,
    )
    h2 = ParagraphStyle(
        "H2",
        parent=styles["Heading2"],
        fontName="Helvetica-Bold",
        fontSize=11.5,
        leading=14,
        spaceBefore=8,
        spaceAfter=4,
        keepWithNext=1,
    )
    cell = ParagraphStyle("Cell", parent=body, fontSize=9, leading=11.5, spaceAfter=0)
    cell_bold = ParagraphStyle("CellBold", parent=cell, fontName="Helvetica-Bold")

    def table(rows: list[list[str]], header: bool = True) -> Table:
        data = [
            [
                Paragraph(
                    _markup(plain(v)) if header and r == 0 else _markup(v),
                    cell_bold if header and r == 0 else cell,
                )
                for v in row
            ]
            for r, row in enumerate(rows)
        ]
        usable = A4[0] - 40 * mm
        ncols = len(rows[0])
        widths = [usable * 0.3, usable * 0.7] if ncols == 2 else [usable / ncols] * ncols
        tbl = Table(data, colWidths=widths, repeatRows=1 if header else 0, hAlign="LEFT")
        style = [
            ("GRID", (0, 0), (-1, -1), 0.5, colors.HexColor("#888888")),
            ("VALIGN", (0, 0), (-1, -1), "TOP"),
            ("TOPPADDING", (0, 0), (-1, -1), 3),
            ("BOTTOMPADDING", (0, 0), (-1, -1), 3),
        ]
        if header:
            style.append(("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#E4E9F0")))
        tbl.setStyle(TableStyle(style))
        return tbl

    story: list[Any] = [
        Paragraph(_escape(source.title), title),
        table(source.control_rows(), header=False),
        Spacer(1, 8),
    ]
    for block in source.blocks:
        if block.kind == "h1":
            story.append(Paragraph(_escape(block.text), h1))
        elif block.kind == "h2":
            story.append(Paragraph(_escape(block.text), h2))
        elif block.kind == "para":
            story.append(Paragraph(_markup(block.text), body))
        elif block.kind in ("bullets", "numbers"):
            items = [ListItem(Paragraph(_markup(item), body), leftIndent=14) for item in block.items]
            if block.kind == "bullets":
                story.append(
                    ListFlowable(items, bulletType="bullet", start="•", leftIndent=14, bulletFontSize=9)
                )
            else:
                story.append(ListFlowable(items, bulletType="1", leftIndent=16, bulletFontName="Helvetica"))
        elif block.kind == "table":
            story.extend([table(block.rows), Spacer(1, 8)])

    buffer = io.BytesIO()
    template = SimpleDocTemplate(
        buffer,
        pagesize=A4,
        leftMargin=20 * mm,
        rightMargin=20 * mm,
        topMargin=22 * mm,
        bottomMargin=20 * mm,
        title=source.title,
        author=COMPANY,
        subject=source.meta.get("subject", "Internal policy"),
        keywords=source.meta.get("keywords", ""),
        creator="examples/build_examples.py",
        invariant=1,
    )
    template.build(story, canvasmaker=NumberedCanvas)
    return buffer.getvalue()


# --------------------------------------------------------------------------------------------- main


def load_sources(src: Path = SRC) -> list[Source]:
    """All sources in ``src``, sorted by file name."""
    return [parse_source(path) for path in sorted(src.glob("*.md"))]


def build_all(out: Path = OUT, src: Path = SRC) -> list[Path]:
    """Build every source into ``out``; return the written paths."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for source in load_sources(src):
        if source.fmt == "docx":
            data = build_docx(source)
        elif source.fmt == "pdf":
            data = build_pdf(source)
        else:
            raise ValueError(f"{source.name}: unknown format {source.fmt!r}")
        path = out / f"{source.name}.{source.fmt}"
        path.write_bytes(data)
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, default=OUT, help="output folder (default: examples/)")
    args = parser.parse_args(argv)
    for path in build_all(args.out):
        print(f"wrote {path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
