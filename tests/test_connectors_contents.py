"""A document's own table of contents is left out: in a PDF (dot leaders, page numbers at the margin, bold
entries, a wrapped title), in a Word document typed by hand, in text converted from a PDF — and nothing else is."""

from __future__ import annotations

from pathlib import Path

import pytest

from compliance.connectors import parse_path
from compliance.connectors.contents import contents_items
from tests.fixtures.connectors import builders as b

_ENTRIES = [
    (0, "1. Purpose", 2),
    (0, "2. Scope", 2),
    (1, "2.1 Systems in scope", 2),
    (0, "3. Roles and responsibilities", 3),
    (
        0,
        "4. Incident management and notification of personal data breaches to the",
        5,
        "supervisory authority",
    ),
    (0, "5. Records", 6),
]
_PURPOSE = "This policy sets out how the company protects the personal data it processes."
_SCOPE = "The policy applies to all employees and contractors who handle personal data."
_BODY = [(("1. Purpose",), _PURPOSE), (("2. Scope",), _SCOPE)]


def _contents_pdf(path: Path, *, leader: bool, bold: bool, heading: str) -> Path:
    """A Word document saved as PDF: its title, the table of contents on page 1, two sections on page 2."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    width, height = A4
    c = canvas.Canvas(str(path), pagesize=A4)
    c.setFont("Helvetica-Bold", 16)
    c.drawString(72, height - 72, "Data Protection Policy")
    c.setFont("Helvetica-Bold", 12)
    c.drawString(72, height - 110, heading)
    y = height - 135
    for level, title, page, *wrapped in _ENTRIES:
        font = "Helvetica-Bold" if bold and level == 0 else "Helvetica"
        c.setFont(font, 11)
        x = 72 + 18 * level
        lines = [title, *wrapped]
        for k, text in enumerate(lines):
            c.drawString(x, y, text)
            if k == len(lines) - 1:
                if leader:  # the tab leader, printed as dots
                    end = x + c.stringWidth(text, font, 11)
                    dots = int((width - 72 - end - 30) / c.stringWidth(".", font, 11))
                    c.drawString(end + 4, y, "." * dots)
                c.drawRightString(width - 72, y, str(page))
            y -= 16
    c.showPage()
    for top, head, text in [(72, "1. Purpose", _PURPOSE), (130, "2. Scope", _SCOPE)]:
        c.setFont("Helvetica-Bold", 13)
        c.drawString(72, height - top, head)
        c.setFont("Helvetica", 11)
        c.drawString(72, height - top - 23, text)
    c.showPage()
    c.save()
    return path


@pytest.mark.parametrize(
    ("leader", "bold", "heading"),
    [(True, False, "Table of Contents"), (False, False, "Contents"), (True, True, "CONTENTS")],
    ids=["dot-leaders", "page-numbers-at-the-margin", "bold-entries"],
)
def test_a_pdf_table_of_contents_is_left_out(tmp_path: Path, leader: bool, bold: bool, heading: str) -> None:
    doc = parse_path(_contents_pdf(tmp_path / "policy.pdf", leader=leader, bold=bold, heading=heading))
    b.check_invariants(doc)
    assert [(p.heading_path, p.text) for p in doc.paragraphs] == _BODY
    assert heading not in doc.text and "Records" not in doc.text and "supervisory authority" not in doc.text


@pytest.mark.parametrize("style", ["Heading 1", "TOC Heading"])
def test_a_table_of_contents_typed_in_a_word_document_is_left_out(tmp_path: Path, style: str) -> None:
    """Typed by hand under a heading, or under Word's own "TOC Heading" (which the reader dropped with the TOC
    styles' entries, so that nothing said the typed entries were any)."""
    import docx

    d = docx.Document()
    d.add_paragraph("Data Protection Policy", style="Title")
    d.add_paragraph("Contents", style=style)
    for _level, title, page, *wrapped in _ENTRIES:
        d.add_paragraph(" ".join([title, *wrapped]) + f"\t{page}")  # typed by hand, a tab before the page
    d.add_heading("1. Purpose", level=1)
    d.add_paragraph(_PURPOSE)
    d.add_heading("2. Scope", level=1)
    d.add_paragraph(_SCOPE)
    d.save(str(tmp_path / "policy.docx"))
    doc = parse_path(tmp_path / "policy.docx")
    b.check_invariants(doc)
    assert [(p.heading_path, p.text) for p in doc.paragraphs] == _BODY


def test_the_entries_of_words_own_table_of_contents_are_left_out_and_its_heading_is_a_heading(
    tmp_path: Path,
) -> None:
    import docx
    from docx.enum.style import WD_STYLE_TYPE

    d = docx.Document()
    for name in ("toc 1", "toc 2"):
        d.styles.add_style(name, WD_STYLE_TYPE.PARAGRAPH)
    d.add_paragraph("Contents", style="TOC Heading")
    for level, title, page, *_ in _ENTRIES:
        d.add_paragraph(f"{title}\t{page}", style=f"toc {level + 1}")
    d.add_heading("1. Purpose", level=1)
    d.add_paragraph(_PURPOSE)
    d.save(str(tmp_path / "policy.docx"))
    doc = parse_path(tmp_path / "policy.docx")
    assert [(p.heading_path, p.text) for p in doc.paragraphs] == _BODY[:1]
    assert doc.text.startswith("Contents\n\n1. Purpose")  # the heading heads nothing, and is no paragraph


def test_a_table_of_contents_in_text_converted_from_a_pdf_is_left_out(tmp_path: Path) -> None:
    entries = "\n".join(f"{title} {'.' * 40} {page}" for _level, title, page, *_ in _ENTRIES)
    path = tmp_path / "policy.txt"
    path.write_text(
        f"DATA PROTECTION POLICY\n\n{entries}\n\n1. PURPOSE\n\n{_PURPOSE}\n\n2. SCOPE\n\n{_SCOPE}\n"
    )
    doc = parse_path(path)
    assert [p.text for p in doc.paragraphs if p.kind != "heading"] == [_PURPOSE, _SCOPE]


@pytest.mark.parametrize(
    "texts",
    [
        # dots that are no leader: a version number, a section reference, an ellipsis, form blanks
        ["Version 2.1.0.4", "See section 4.2.1.1 for details 3", "Wait... 2", "Date: .......... 20__"],
        # one or two lines with a leader: a price or a form, not a table of contents
        ["Annual fee ................ 120", "Setup ........ 40", "Staff must lock their screens."],
        # a list set with leaders whose numbers go back: a retention schedule, not a table of contents
        [
            "Payroll records ......... 7",
            "Invoices ......... 10",
            "Job applications ......... 1",
            "CVs ....... 2",
        ],
        # page numbers at the line end without a contents heading
        ["Retention period: 12", "Backups are kept for 30", "Logs are kept for 90"],
        # a contents heading followed by prose, or by a single paged line
        ["Contents", "The register lists every processing activity we carry out.", "Backups 3"],
        ["Contents", "Backups 3", "Personal data must be encrypted at rest."],
    ],
)
def test_lines_that_only_look_like_entries_are_kept(texts: list[str]) -> None:
    assert contents_items(texts) == set()


def test_entries_are_found_in_lines_and_blocks() -> None:
    lines = [
        "Contents",
        "1. Purpose ............ 2",
        "2. Notification of personal data breaches to the",  # a wrapped title
        "supervisory authority ......... 3",
        "Appendix A · · · · · iv",
        "Staff must report a breach within 24 hours.",
    ]
    assert contents_items(lines) == {0, 1, 2, 3, 4}
    # the same as one block, and a block that holds an entry and a sentence
    assert contents_items(["\n".join(lines[:5]), lines[5]]) == {0}
    assert contents_items(["\n".join(lines[1:5]), "Intro ...... 1\nStaff must lock screens."]) == {0}
    # without a leader, under the heading: the pages never go back
    plain = ["Table of contents", "Purpose 2", "Scope 3", "Annex 1", "Staff must lock their screens. 4"]
    assert contents_items(plain) == {0, 1, 2}
