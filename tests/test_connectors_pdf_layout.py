"""PDF layout: two columns, bullets in a symbol font, list ends, lettered statements, single-page furniture,
watermarks, pages drawn sideways, tables without rules, side headings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compliance.connectors import ParsedDocument, parse_path
from compliance.connectors.roles import layout_roles
from tests.fixtures.connectors import builders as b
from tests.fixtures.connectors import layout


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("layout")


def _paragraphs(doc: ParsedDocument) -> list[tuple[tuple[str, ...], str]]:
    b.check_invariants(doc)
    return [(p.heading_path, p.text) for p in doc.paragraphs]


def test_two_columns_are_read_column_by_column(folder: Path) -> None:
    doc = parse_path(layout.two_column_pdf(folder / "two-column.pdf"))
    assert _paragraphs(doc) == layout.TWO_COLUMN_EXPECTED
    assert layout_roles(doc) == {0: "furniture"}  # the header line in the top margin, from the layout alone
    assert doc.paragraphs[0].role == "furniture"
    assert doc.title == layout.TWO_COLUMN_TITLE


def test_single_column_pages_are_not_split_into_columns(folder: Path) -> None:
    # label/value lines set with a wide tab stop have a white band in the middle, but short lines on its left
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    path = folder / "labels.pdf"
    c = canvas.Canvas(str(path), pagesize=A4)
    y = 760
    for label, value in [
        ("Owner", "CISO"),
        ("Version", "2.1"),
        ("Approved", "Board"),
        ("Review", "Annual"),
    ] * 2:
        c.setFont("Helvetica", 10)
        c.drawString(72, y, f"{label}:")
        c.drawString(330, y, f"{value} of the information security management system")
        y -= 14
    c.save()
    doc = parse_path(path)
    assert doc.paragraphs[0].text.startswith("Owner: CISO of the information security management system")


def test_symbol_font_bullets_are_list_markers_not_headings(folder: Path) -> None:
    doc = parse_path(layout.symbol_bullets_pdf(folder / "symbol.pdf"))
    assert "(cid:" not in doc.text
    assert _paragraphs(doc) == layout.SYMBOL_EXPECTED


def test_lettered_statements_split_and_lists_end(folder: Path) -> None:
    doc = parse_path(layout.symbol_bullets_pdf(folder / "symbol2.pdf"))
    kinds = [p.kind for p in doc.paragraphs]
    assert kinds == ["list", "paragraph", "paragraph", "paragraph", "paragraph", "list", "paragraph"]
    # the paragraph after a list whose last item has no final stop is not swallowed by that item
    assert doc.paragraphs[5].text.endswith("- change tickets")
    assert doc.paragraphs[6].text == "Records are handed over on request."


@pytest.mark.parametrize("topic", ["Encryption", "Logging"])
def test_single_page_header_and_footer_are_furniture(folder: Path, topic: str) -> None:
    doc = parse_path(layout.single_page_pdf(folder / f"{topic}.pdf", topic))
    b.check_invariants(doc)
    layout_set = layout_roles(doc)
    assert [(layout_set.get(p.ordinal), p.text) for p in doc.paragraphs] == layout.single_page_expected(topic)
    assert doc.paragraphs[0].role == doc.paragraphs[-1].role == "furniture"
    assert doc.paragraphs[1].heading_path == (f"{topic} Standard",)


def test_a_diagonal_watermark_and_a_margin_label_are_left_out(folder: Path) -> None:
    """A watermark's letters, set at 60 pt, were read as headings ("T", "O") and broke the paragraph they crossed
    in two; turned text is now left out before the lines are read."""
    doc = parse_path(layout.watermarked_pdf(folder / "watermark.pdf"))
    assert _paragraphs(doc) == layout.WATERMARK_EXPECTED
    assert "CONFIDENTIAL" not in doc.text and "ISMS-STD-04" not in doc.text


def test_a_page_drawn_sideways_keeps_its_text(folder: Path) -> None:
    """Turned text is left out only where it is the lesser part of a page: a page drawn sideways keeps its text,
    in reading order."""
    doc = parse_path(layout.sideways_pdf(folder / "sideways.pdf"))
    assert [p.text for p in doc.paragraphs] == [layout.SIDEWAYS_TEXT]


def test_a_table_without_rules_is_read_row_by_row(folder: Path) -> None:
    """Its rows ran into one paragraph ("Customer contracts 6 years Payroll records 7 years …") and its third column
    was taken for the page's second column."""
    doc = parse_path(layout.unruled_table_pdf(folder / "unruled.pdf"))
    assert _paragraphs(doc) == layout.UNRULED_EXPECTED
    assert [p.kind for p in doc.paragraphs] == ["paragraph", *["table-row"] * 4, "paragraph"]


def test_a_table_without_rules_or_bold_header_joins_its_cells(tmp_path: Path) -> None:
    """Without a bold first row there is no header to read the cells against: each row's cells are joined."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    rows = [
        ("AC-01", "Access rights reviewed", "Quarterly"),
        ("BK-01", "Backups restore-tested", "Monthly"),
        ("LG-01", "Security logs retained", "One year"),
    ]
    c = canvas.Canvas(str(tmp_path / "controls.pdf"), pagesize=A4, invariant=1)
    c.setFont("Helvetica", 10)
    for i, cells in enumerate(rows):
        for x, text in zip((72, 200, 400), cells, strict=True):
            c.drawString(x, 700 - 16 * i, text)
    c.showPage()
    c.save()
    doc = parse_path(tmp_path / "controls.pdf")
    assert [(p.kind, p.text) for p in doc.paragraphs] == [("table-row", "; ".join(r)) for r in rows]


@pytest.mark.parametrize("bold", [True, False])
def test_side_headings_head_their_sections(folder: Path, bold: bool) -> None:
    """A heading set in the left margin was read with its section's first line ("Scope It applies to …"), and a
    heading wrapped onto two lines ran into the section's second line. Bold or not, it now heads its section."""
    doc = parse_path(layout.side_headings_pdf(folder / f"side-{bold}.pdf", bold=bold))
    assert _paragraphs(doc) == layout.SIDE_HEADING_EXPECTED


@pytest.mark.parametrize("turn", [90, 270])
def test_a_landscape_page_drawn_sideways_is_read_turned_upright(folder: Path, turn: int) -> None:
    """Text turned by a right angle came out word by word in the turned order (a sentence letter-reversed); the page
    is now read as a viewer shows it once turned: its heading, paragraphs and unruled table as on any page."""
    doc = parse_path(layout.landscape_schedule_pdf(folder / f"landscape-{turn}.pdf", turn=turn))
    assert _paragraphs(doc) == layout.LANDSCAPE_EXPECTED
    assert [p.page for p in doc.paragraphs] == [1] * len(layout.LANDSCAPE_EXPECTED)


def _draw_rows(path: Path, rows: list[tuple[float, float, str, bool]], prose: list[str]) -> Path:
    """A page of ``(x, y, text, bold)`` strings, then ``prose`` lines at x = 72 below them."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    for x, y, text, bold in rows:
        c.setFont("Helvetica-Bold" if bold else "Helvetica", 10)
        c.drawString(x, y, text)
    c.setFont("Helvetica", 10)
    y = min(r[1] for r in rows) - 30
    for line in prose:
        c.drawString(72, y, line)
        y -= 14
    c.showPage()
    c.save()
    return path


def _draw_lines(path: Path, lines: list[str]) -> Path:
    """A page of ``lines`` at x = 72, one under the other (14 pt apart), as one paragraph wrapped by hand."""
    return _draw_rows(path, [(72.0, 740.0 - 14 * i, text, False) for i, text in enumerate(lines)], [])


def _typeset(
    path: Path, heading: str | None, paragraphs: list[list[str]], *, space_after: float
) -> ParsedDocument:
    """A page with ``heading`` (Helvetica-Bold 14, none when None) and the ``paragraphs`` below it, each given as its
    lines (Helvetica 11, 14 pt apart), ``space_after`` points more after each paragraph; the page read back (its
    invariants checked)."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    c.setTitle("")
    y = 770.0
    if heading is not None:
        c.setFont("Helvetica-Bold", 14)
        c.drawString(72, y, heading)
        y -= 25
    c.setFont("Helvetica", 11)
    for lines in paragraphs:
        for line in lines:
            c.drawString(72, y, line)
            y -= 14
        y -= space_after
    c.showPage()
    c.save()
    doc = parse_path(path)
    b.check_invariants(doc)
    return doc


def test_a_label_value_block_is_read_as_labelled_rows(tmp_path: Path) -> None:
    """A document-control block set with a tab stop ran into one paragraph ("Document owner Chief Information
    Security Officer Version 2.1 …"); it is now one "label: value" row per line, a value wrapped onto a second
    line kept with its label. Prose below it stays a paragraph."""
    pairs = [
        ("Document owner", ["Chief Information Security Officer"]),
        ("Version:", ["2.1"]),
        (
            "Approved by",
            ["Board of Directors on 1 May 2024, after review by the", "Audit and Risk Committee"],
        ),
        ("Next review", ["May 2025"]),
    ]
    rows: list[tuple[float, float, str, bool]] = []
    y = 740.0
    for label, lines in pairs:
        rows.append((72, y, label, False))
        for line in lines:
            rows.append((200, y, line, False))
            y -= 14
    prose = ["Staff use company devices for work; personal use is allowed when it is occasional and lawful."]
    doc = parse_path(_draw_rows(tmp_path / "control.pdf", rows, prose))
    assert [(p.kind, p.text) for p in doc.paragraphs] == [
        ("table-row", "Document owner: Chief Information Security Officer"),
        ("table-row", "Version: 2.1"),
        (
            "table-row",
            "Approved by: Board of Directors on 1 May 2024, after review by the Audit and Risk Committee",
        ),
        ("table-row", "Next review: May 2025"),
        ("paragraph", prose[0]),
    ]


def test_a_wrapped_cell_of_a_table_without_rules_stays_in_its_row(tmp_path: Path) -> None:
    """A cell wrapped onto a second line ended the table, and the rest was read as lines; its words now go on the
    row above, and the table goes on."""
    rows: list[tuple[float, float, str, bool]] = []
    for x, text in zip((72, 200, 330), ("Record", "Retention period", "Trigger"), strict=True):
        rows.append((x, 740, text, True))
    body = [
        (
            "Customer contracts",
            "6 years",
            ["End of the contract or of the", "last payment, whichever is later"],
        ),
        ("Payroll records", "7 years", ["End of the tax year"]),
        ("CCTV footage", "30 days", ["Recording"]),
    ]
    y = 724.0
    for record, period, trigger in body:
        rows += [(72, y, record, False), (200, y, period, False)]
        for line in trigger:
            rows.append((330, y, line, False))
            y -= 14
    doc = parse_path(_draw_rows(tmp_path / "wrapped.pdf", rows, []))
    assert [(p.kind, p.text) for p in doc.paragraphs] == [
        ("table-row", f"Record: {a}; Retention period: {b}; Trigger: {' '.join(c)}") for a, b, c in body
    ]


def _grid(c: Any, x: list[float], top: float, rows: list[list[str]], height: float = 18) -> None:
    """A ruled table: ``rows`` of cells between the column edges ``x``, from ``top`` down (reportlab's y)."""
    c.setFont("Helvetica", 10)
    bottom = top - height * len(rows)
    for edge in x:
        c.line(edge, top, edge, bottom)
    for i in range(len(rows) + 1):
        c.line(x[0], top - height * i, x[-1], top - height * i)
    for i, row in enumerate(rows):
        for j, cell in enumerate(row):
            c.drawString(x[j] + 4, top - height * (i + 1) + 5, cell)


def test_a_table_row_broken_across_a_page_is_one_row(tmp_path: Path) -> None:
    """Word and LibreOffice let a table row break across a page: the rest of its cells opens the next page as a
    table of its own. pdfplumber read it as a row ("Criteria: impact"); it now completes the row it came from."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    _, height = A4
    c = canvas.Canvas(str(tmp_path / "broken.pdf"), pagesize=A4, invariant=1)
    c.setFont("Helvetica", 10)
    c.drawString(
        72, height - 72, "Incidents are classified by the Incident Manager using the severity matrix below."
    )
    x = [72.0, 160.0, 380.0, 520.0]
    rows = [
        ["Severity", "Criteria", "Response target"],
        ["High", "Loss of availability of a clinical system", "Within 4 hours"],
        ["Low", "Policy violation without", "Within 5 business days"],
    ]
    _grid(c, x, 120, rows)
    c.showPage()
    _grid(c, x, height - 60, [["", "impact", ""]])
    c.setFont("Helvetica", 10)
    c.drawString(
        72, height - 120, "Every incident is recorded in the incident log and closed by the Incident Manager."
    )
    c.showPage()
    c.save()
    doc = parse_path(tmp_path / "broken.pdf")
    assert [(p.kind, p.text) for p in doc.paragraphs] == [
        ("paragraph", "Incidents are classified by the Incident Manager using the severity matrix below."),
        (
            "table-row",
            "Severity: High; Criteria: Loss of availability of a clinical system; Response target: Within 4 hours",
        ),
        (
            "table-row",
            "Severity: Low; Criteria: Policy violation without impact; Response target: Within 5 business days",
        ),
        ("paragraph", "Every incident is recorded in the incident log and closed by the Incident Manager."),
    ]


def test_a_hyphen_at_a_line_end_is_kept_unless_the_document_joins_the_word(tmp_path: Path) -> None:
    """Word and LibreOffice do not hyphenate: a hyphen ending one of their lines is the word's own, and dropping it
    gave "multifactor", "Subprocessors", "backout". It is dropped only where the document writes the word whole
    elsewhere ("pro-" / "cessing", beside "processing"). A range broken after its dash, or a code after a hyphen
    ("NWL-PRO-" / "002"), is joined without a space."""
    lines = [
        "Remote access to the processing systems requires multi-",
        "factor authentication and a managed device. Every pro-",
        "cessing activity is recorded, and the controls of Annex A 5.24–",
        "5.28 apply, as the Breach Response Procedure (NWL-PRO-",
        "002) sets out.",
    ]
    doc = parse_path(_draw_lines(tmp_path / "hyphens.pdf", lines))
    assert [p.text for p in doc.paragraphs] == [
        "Remote access to the processing systems requires multi-factor authentication and a managed device. Every "
        "processing activity is recorded, and the controls of Annex A 5.24–5.28 apply, as the Breach Response "
        "Procedure (NWL-PRO-002) sets out."
    ]


def test_a_fill_in_blank_on_the_line_after_its_label_stays_with_it(tmp_path: Path) -> None:
    """A label ending in a colon, its blank wrapped onto the next line: one form paragraph, as in the Word
    original, not the label and a line of underscores apart."""
    intro = "Complete one copy of this record for each processing activity and keep it with the register."
    lines = ["Name and contact details of the controller:", "________________________________________"]
    rows = [(72.0, 740.0, intro, False)] + [
        (72.0, 710.0 - 14 * i, text, False) for i, text in enumerate(lines)
    ]
    doc = parse_path(_draw_rows(tmp_path / "blank.pdf", rows, []))
    assert [p.text for p in doc.paragraphs] == [intro, " ".join(lines)]


def test_a_table_with_horizontal_rules_only_as_pandoc_draws_it(tmp_path: Path) -> None:
    """A Markdown policy turned into Word by pandoc and printed to PDF: its tables have a rule above and below and
    one under the header row, no others. pdfplumber finds no cells; read by tab stops, the header (not bold) was
    taken for data, a cell wrapped onto lines of its own or running close to the next column was cut, and a
    header cell of two lines, set at the bottom of its row, gave a row of its own. A two-column table whose values
    run over several lines, under a header of two labels, is a table, not side headings."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(tmp_path / "pandoc.pdf"), pagesize=A4, invariant=1)
    c.setFont("Helvetica", 10)
    c.drawString(72, 770, "The cookies we set are listed below with their purpose and how long they last.")
    # the third column starts 6 pt after the longest line of the second (closer than a gap between cells)
    third = 189 + c.stringWidth("Keeps you signed in to your", "Helvetica", 10) + 6
    x = (72, 189, third, third + 90)
    c.line(67, 752, 535, 752)
    c.drawString(x[3], 740, "Storage")
    for xi, text in zip(x, ("Cookie", "Purpose", "Type", "duration"), strict=True):
        c.drawString(xi, 728, text)
    c.line(67, 722, 535, 722)
    rows = [
        (["fj_session"], ["Keeps you signed in to your", "account"], ["Strictly", "necessary"], ["Session"]),
        (["fj_csrf"], ["Protects against cross-", "site request forgery"], ["Strictly"], ["Session"]),
        (["_plausible"], ["Counts page views"], ["Analytics"], ["24 hours"]),
    ]
    y = 708.0
    for cells in rows:
        for xi, lines in zip(x, cells, strict=True):
            for k, line in enumerate(lines):
                c.drawString(xi, y - 14 * k, line)
        y -= 14 * max(len(lines) for lines in cells) + 4
    c.line(67, y + 8, 535, y + 8)
    c.drawString(72, y - 20, "Role and responsibilities are assigned as follows.")
    c.line(67, y - 32, 535, y - 32)
    c.drawString(72, y - 44, "Role")
    c.drawString(306, y - 44, "Responsibilities")
    c.line(67, y - 50, 535, y - 50)
    y -= 64
    for role, lines in [
        ("Board", ["Approves the policy and receives", "an annual report from the DPO."]),
        (
            "Line managers",
            ["Make sure their staff complete", "data protection training and", "follow the policy."],
        ),
        ("All staff", ["Report suspected breaches at once."]),
    ]:
        c.drawString(72, y, role)
        for k, line in enumerate(lines):
            c.drawString(306, y - 14 * k, line)
        y -= 14 * len(lines) + 4
    c.showPage()
    c.save()
    doc = parse_path(tmp_path / "pandoc.pdf")
    assert [(p.kind, p.text) for p in doc.paragraphs] == [
        ("paragraph", "The cookies we set are listed below with their purpose and how long they last."),
        (
            "table-row",
            "Cookie: fj_session; Purpose: Keeps you signed in to your account; Type: Strictly necessary; "
            "Storage duration: Session",
        ),
        (
            "table-row",
            "Cookie: fj_csrf; Purpose: Protects against cross-site request forgery; Type: Strictly; "
            "Storage duration: Session",
        ),
        (
            "table-row",
            "Cookie: _plausible; Purpose: Counts page views; Type: Analytics; Storage duration: 24 hours",
        ),
        ("paragraph", "Role and responsibilities are assigned as follows."),
        (
            "table-row",
            "Role: Board; Responsibilities: Approves the policy and receives an annual report from the DPO.",
        ),
        (
            "table-row",
            "Role: Line managers; Responsibilities: Make sure their staff complete data protection training and "
            "follow the policy.",
        ),
        ("table-row", "Role: All staff; Responsibilities: Report suspected breaches at once."),
    ]


def test_bold_numbered_headings_and_bold_labels_of_blanks(tmp_path: Path) -> None:
    """A form printed from Word: "1. Your details" in bold is a heading (it was a list item, and the labels of its
    blanks headed the rest); "Name: ____" with a bold label is a fill-in line, not a heading."""
    rows = [
        (72.0, 760.0, "Complete this form as soon as you notice something that might be an incident.", False),
        (72.0, 730.0, "1. Your details", True),
        (72.0, 710.0, "Name:", True),
        (72.0, 690.0, "Department:", True),
        (72.0, 660.0, "2. What happened", True),
        (72.0, 640.0, "Describe what happened:", True),
    ]
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(tmp_path / "form.pdf"), pagesize=A4, invariant=1)
    for x, y, text, bold in rows:
        c.setFont("Helvetica-Bold" if bold else "Helvetica", 10)
        c.drawString(x, y, text)
        if text.endswith(":"):
            c.setFont("Helvetica", 10)
            c.drawString(x + c.stringWidth(text, "Helvetica-Bold", 10) + 6, y, "____________________")
    c.showPage()
    c.save()
    doc = parse_path(tmp_path / "form.pdf")
    assert [(p.heading_path, p.text) for p in doc.paragraphs] == [
        ((), rows[0][2]),
        (("1. Your details",), "Name: ____________________"),
        (("1. Your details",), "Department: ____________________"),
        (("2. What happened",), "Describe what happened: ____________________"),
    ]


def test_two_columns_set_by_a_word_processor(tmp_path: Path) -> None:
    """Two columns as a word processor sets them (LibreOffice's, read back in session 44): lines wrapped by width,
    a line of the left column reaching into the white band between the columns, a paragraph running on from the
    bottom of the left column to the top of the right one with a capitalised word, and a lettered statement typed
    in the text, its second line back at the margin. The band was taken for a full-width row and the columns
    interleaved; the paragraph was cut at the column break, and the statement at its second line."""
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.utils import simpleSplit
    from reportlab.pdfgen import canvas

    _, height = A4
    left_x, right_x, width = 72.0, 324.0, 216.0
    first = (
        "Suppliers that process personal data on our behalf sign a data processing agreement before any data is "
        "shared with them."
    )
    edge = "Staff report a lost laptop or phone at once, by telephone"  # set to end at x = 290, in the band
    runs_on = "This Data Processing Addendum forms part of the Master Services Agreement between"
    right_first = "Evergreen Bank plc and Helix Cloud Services Ltd dated 2 May 2024."
    lettered = (
        "(a) The Provider shall at all times encrypt Customer Personal Data in transit over public networks."
    )
    filler = "Access to the backups is logged, and the log is reviewed by the system owner every month."
    c = canvas.Canvas(str(tmp_path / "columns.pdf"), pagesize=A4, invariant=1)
    c.setFont("Helvetica", 10)

    def column(x: float, blocks: list[list[tuple[float, str]]]) -> None:
        y = height - 100
        for lines in blocks:
            for indent, line in lines:
                c.drawString(x + indent, y, line)
                y -= 14
            y -= 8

    def wrap(text: str) -> list[tuple[float, str]]:
        return [(0.0, line) for line in simpleSplit(text, "Helvetica", 10, width)]

    column(
        left_x,
        [
            wrap(first),
            [(290 - left_x - c.stringWidth(edge, "Helvetica", 10), edge), (0.0, "to the Service Desk.")],
            wrap(filler),
            wrap(runs_on),
        ],
    )
    column(right_x, [wrap(right_first), wrap(lettered), wrap(filler), wrap(filler)])
    c.showPage()
    c.save()
    doc = parse_path(tmp_path / "columns.pdf")
    assert [p.text for p in doc.paragraphs] == [
        first,
        edge + " to the Service Desk.",
        filler,
        runs_on + " " + right_first,  # run on to the right column: the sentence had not ended
        lettered,
        filler,
        filler,
    ]


def test_bullets_drawn_as_shapes_mark_list_items(tmp_path: Path) -> None:
    """A web page printed to PDF by a browser draws its list's bullets as small filled discs, not characters: the
    items ran into one paragraph with their lead-in. Each disc now marks its line as an item."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    items = [
        "your e-mail address;",
        "your name and company, if you give them;",
        "which newsletters you open and which links you click.",
    ]
    c = canvas.Canvas(str(tmp_path / "printed.pdf"), pagesize=A4, invariant=1)
    c.setFont("Helvetica", 10)
    c.drawString(72, 760, "When you subscribe, we collect the following information:")
    for i, item in enumerate(items):
        y = 742 - 18 * i
        c.circle(82, y + 3.5, 1.8, stroke=0, fill=1)
        c.drawString(92, y, item)
    c.drawString(72, 680, "We use this information only to send you the newsletter.")
    c.showPage()
    c.save()
    doc = parse_path(tmp_path / "printed.pdf")
    assert [(p.kind, p.text) for p in doc.paragraphs] == [
        (
            "list",
            "When you subscribe, we collect the following information:\n"
            + "\n".join(f"- {i}" for i in items),
        ),
        ("paragraph", "We use this information only to send you the newsletter."),
    ]


def test_a_short_line_just_below_a_table_without_rules_is_text(tmp_path: Path) -> None:
    """A line with a word in the first column only, just below a table set with tab stops, is no row of it (and
    read so it broke the reader: "the PDF could not be read: IndexError")."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    rows = [
        ("Record", "Retention period", "Trigger"),
        ("Customer contracts", "6 years", "End of contract"),
        ("Payroll records", "7 years", "End of tax year"),
        ("CCTV footage", "30 days", "Recording"),
    ]
    c = canvas.Canvas(str(tmp_path / "notes.pdf"), pagesize=A4, invariant=1)
    for i, cells in enumerate(rows):
        c.setFont("Helvetica-Bold" if i == 0 else "Helvetica", 10)
        for x, text in zip((72, 250, 400), cells, strict=True):
            c.drawString(x, 700 - 16 * i, text)
    c.setFont("Helvetica", 10)
    c.drawString(72, 700 - 16 * len(rows), "Notes")
    c.showPage()
    c.save()
    doc = parse_path(tmp_path / "notes.pdf")
    assert [(p.kind, p.text) for p in doc.paragraphs] == [
        *[("table-row", f"Record: {a}; Retention period: {b}; Trigger: {t}") for a, b, t in rows[1:]],
        ("paragraph", "Notes"),
    ]


def test_a_typeset_document_has_its_hyphenation_undone(tmp_path: Path) -> None:
    """A PDF hyphenated by its typesetter (LaTeX, or Word with hyphenation on) breaks words at syllables. Where two
    or more broken words stand whole elsewhere in it and none hyphenated, a broken word it never writes whole
    ("docu-" / "mentation") is joined as well; a Word export (the test above) keeps "multi-factor"."""
    lines = [
        "The processing of personal data under a contract is recorded. Each pro-",
        "cessing activity has an owner, and each con-",
        "tract names the data it covers, with its docu-",
        "mentation kept by the owner of the contract.",
    ]
    doc = parse_path(_draw_lines(tmp_path / "typeset.pdf", lines))
    assert [p.text for p in doc.paragraphs] == [
        "The processing of personal data under a contract is recorded. Each processing activity has an owner, and "
        "each contract names the data it covers, with its documentation kept by the owner of the contract."
    ]


def test_a_table_printed_by_a_web_browser_is_read_row_by_row(tmp_path: Path) -> None:
    """A browser prints an HTML table without rules, centres each cell vertically in its row (a cell of two lines
    stands half a line above and below the one-line cells beside it) and its header cells horizontally over their
    columns, and leaves little room between cells. Its rows were read as lines that mixed the rows, the header as a
    heading, and two close columns ("2025-02-04 2026-02") as one. A row whose cells all have two lines sets them on
    the same lines, the second closer to the first than the rows are to one another."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfbase.pdfmetrics import stringWidth
    from reportlab.pdfgen import canvas

    edges = [72.0, 200.0, 262.0, 372.0, 440.0, 530.0]  # the columns' left edges, then the table's right edge
    header = [["Record category"], ["Retention", "period"], ["Starts from"], ["Approved on"], ["Next review"]]
    body = [
        [["Personnel files"], ["2 years"], ["End of", "employment"], ["2025-02-04"], ["2026-02"]],
        [["Job applications of", "unsuccessful candidates"], ["6 months"], ["End of the", "recruitment"],
         ["2025-03-01"], ["2026-03"]],
        [["CCTV footage"], ["28 days"], ["Recording"], ["2025-02-04"], ["2026-02"]],
        [["Visitor log", "entries"], ["12", "months"], ["Date of", "visit"], ["2025-01-10", "(renewed)"],
         ["2026-01", "(draft)"]],
    ]  # fmt: skip
    pitch = 11.5  # one line of a cell; rows are 5 pt apart
    c = canvas.Canvas(str(tmp_path / "printed.pdf"), pagesize=A4, invariant=1)
    c.setFont("Helvetica", 10)
    c.drawString(
        72, 760, "This schedule states how long we keep each category of records and who approved it."
    )
    top = 740.0
    for i, row in enumerate([header, *body]):
        font = "Helvetica-Bold" if i == 0 else "Helvetica"
        c.setFont(font, 10)
        lines = max(len(cell) for cell in row)
        for j, cell in enumerate(row):
            for k, text in enumerate(cell):
                y = top - (lines - len(cell)) * pitch / 2 - 8 - k * pitch
                width = edges[j + 1] - 4 - edges[j]
                x = edges[j] + (width - stringWidth(text, font, 10)) / 2 if i == 0 else edges[j]
                c.drawString(x, y, text)
        top -= lines * pitch + 5
    c.setFont("Helvetica", 10)
    c.drawString(72, top - 20, "Records Owners apply this schedule to every system they own.")
    c.showPage()
    c.save()
    doc = parse_path(tmp_path / "printed.pdf")
    names = [" ".join(cell) for cell in header]
    assert [(p.kind, p.text) for p in doc.paragraphs] == [
        ("paragraph", "This schedule states how long we keep each category of records and who approved it."),
        *[
            ("table-row", "; ".join(f"{n}: {' '.join(cell)}" for n, cell in zip(names, row, strict=True)))
            for row in body
        ],
        ("paragraph", "Records Owners apply this schedule to every system they own."),
    ]


def test_words_in_cells_a_few_points_apart_stay_apart(tmp_path: Path) -> None:
    """A browser leaves 2-3 pt between a label cell and its value; at pdfplumber's default tolerance they read as
    one word ("Policy ownerData Protection Officer"). A page that writes its spaces as characters ends a word at a
    smaller gap; a page without space characters (TeX) keeps the default."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfbase.pdfmetrics import stringWidth
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(tmp_path / "cells.pdf"), pagesize=A4, invariant=1)
    c.setFont("Helvetica", 10)
    c.drawString(72, 760, "This standard sets how we classify information and who owns the classification.")
    for i, (label, value) in enumerate([("Policy owner", "Data Protection Officer"), ("Version", "3.0")]):
        c.drawString(72, 730 - 14 * i, label)
        c.drawString(72 + stringWidth("Policy owner", "Helvetica", 10) + 2.5, 730 - 14 * i, value)
    c.showPage()
    c.save()
    text = parse_path(tmp_path / "cells.pdf").text
    assert "Policy owner Data Protection Officer" in text
    assert "ownerData" not in text


def test_a_web_address_broken_across_lines_is_joined(tmp_path: Path) -> None:
    """A browser breaks a long address after ``/``, ``?`` or ``-``; read with a space at the break, the address in
    the paragraph was broken ("…/form? lang=en"). A word after an address that ends its line stays a word."""
    doc = parse_path(
        _draw_lines(
            tmp_path / "address.pdf",
            [
                "Requests go to https://privacy.northwind-",
                "logistics.example/data-subject-requests/form?",
                "lang=en&source=policy where the DPO team answers",
                "within a month. The old form at https://intranet.example/",
                "and its copies are withdrawn.",
            ],
        )
    )
    assert [p.text for p in doc.paragraphs] == [
        "Requests go to https://privacy.northwind-logistics.example/data-subject-requests/form?lang=en&source=policy "
        "where the DPO team answers within a month. The old form at https://intranet.example/ and its copies are "
        "withdrawn."
    ]


def test_a_label_value_block_printed_by_a_web_browser_is_read_as_labelled_rows(tmp_path: Path) -> None:
    """A browser sets a document-control block as a table of two columns: the values start at the column's edge,
    a few points after the longest label. Only the short labels stood apart by a gap, so the block ran into one
    paragraph ("Standard number STD-004 Owner Chief Information Security Officer Approval date …")."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfbase.pdfmetrics import stringWidth
    from reportlab.pdfgen import canvas

    rows = [
        ("Standard number", "STD-004"),
        ("Owner", "Chief Information Security Officer"),
        ("Approval date", "20 January 2025"),
        ("Next review date", "January 2026"),
    ]
    edge = 72 + max(stringWidth(label, "Helvetica", 10) for label, _ in rows) + 3
    c = canvas.Canvas(str(tmp_path / "control.pdf"), pagesize=A4, invariant=1)
    c.setFont("Helvetica", 10)
    for i, (label, value) in enumerate(rows):
        c.drawString(72, 740 - 16.5 * i, label)
        c.drawString(edge, 740 - 16.5 * i, value)
    c.drawString(72, 650, "This standard defines four classification levels and the handling rules for each.")
    c.showPage()
    c.save()
    doc = parse_path(tmp_path / "control.pdf")
    assert [(p.kind, p.text) for p in doc.paragraphs] == [
        *[("table-row", f"{label}: {value}") for label, value in rows],
        ("paragraph", "This standard defines four classification levels and the handling rules for each."),
    ]


def test_one_line_paragraphs_set_apart_by_space_stay_apart(tmp_path: Path) -> None:
    """A short note of one-line paragraphs, 10 pt of space after each, as a word processor prints it: most gaps
    between its lines are gaps between paragraphs, and the reader took them for its line spacing, so the note ran
    together two paragraphs at a time. The gap where a sentence wraps (its next word did not fit) says what a
    line's gap is."""
    paragraphs = [
        ["Recordings of customer service calls are deleted automatically after 30 days."],
        ["Chat transcripts are kept for 12 months to handle complaints and are then", "anonymised."],
        ["Complaint files are kept for three years after the complaint is closed."],
        ["These periods were agreed with the Data Protection Officer in 2024."],
    ]
    doc = _typeset(tmp_path / "note.pdf", "Retention rules for customer service", paragraphs, space_after=10)
    assert [p.text for p in doc.paragraphs] == [" ".join(lines) for lines in paragraphs]


def test_the_reference_marks_of_footnotes_are_left_out_and_the_notes_kept(tmp_path: Path) -> None:
    """A raised, smaller digit after a word is a footnote's reference mark: read as text it glued to the word
    ("persons.1", "Article 332."). It is left out, with the space the reader put where it stood; a raised letter
    ("1st") and the footnote's own number at the foot of the page, on its baseline, stay."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    path = tmp_path / "notes.pdf"
    c = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    c.setFont("Helvetica-Bold", 13)
    c.drawString(72, 770, "1. Data breaches")
    c.setFont("Helvetica", 11)
    c.drawString(
        72, 745, "The Data Protection Officer notifies the supervisory authority of a personal data breach"
    )
    for y, runs in [
        (
            731,
            [
                ("within 72 hours, as Article 33", False),
                ("1", True),
                (" requires, unless it is unlikely", False),
            ],
        ),
        (
            717,
            [
                ("to result in a risk to natural persons.", False),
                ("2,3", True),
                (" Exercises take place on the 1", False),
                ("st", True),
                (" day of each quarter.", False),
            ],
        ),
    ]:
        t = c.beginText(72, y)
        for text, raised in runs:
            t.setFont("Helvetica", 7 if raised else 11)
            t.setRise(4 if raised else 0)
            t.textOut(text)
        c.drawText(t)
    c.setFont("Helvetica", 8)
    c.drawString(72, 90, "1 Regulation (EU) 2016/679 (General Data Protection Regulation).")
    c.drawString(72, 78, "2 See the EDPB Guidelines 9/2022 on personal data breach notification.")
    c.showPage()
    c.save()
    doc = parse_path(path)
    b.check_invariants(doc)
    assert doc.paragraphs[0].text == (
        "The Data Protection Officer notifies the supervisory authority of a personal data breach within 72 hours, "
        "as Article 33 requires, unless it is unlikely to result in a risk to natural persons. Exercises take place "
        "on the 1st day of each quarter."
    )
    notes = [p.text for p in doc.paragraphs[1:]]
    assert "1 Regulation (EU) 2016/679 (General Data Protection Regulation)." in " ".join(notes)
    assert "2 See the EDPB Guidelines 9/2022" in " ".join(notes)


@pytest.mark.parametrize("wrap", [198.0, 180.0], ids=["lines-fill-the-column", "lines-pair-up-as-a-table"])
def test_a_glossary_set_in_two_columns_under_text_across_the_page(tmp_path: Path, wrap: float) -> None:
    """A Word document whose glossary is a section in two columns after a continuous section break: the text above
    runs across the page, so no gutter runs the page's height, and the columns' lines share their baselines, so
    the reader of tables without rules paired them row by row ("Personal data: any information: Encryption: the
    transformation of"). Two columns of equal width, whose rows leave a gutter, are read column by column."""
    from reportlab.lib.pagesizes import letter
    from reportlab.lib.utils import simpleSplit
    from reportlab.pdfgen import canvas

    _, height = letter
    above = [
        "Suppliers that process personal data on our behalf sign a data processing agreement before they receive",
        "any data, and the agreement names the security measures that the supplier keeps in place throughout.",
        "Supplier security is assessed before contracting and every two years thereafter, and the result of each",
        "assessment is recorded in the supplier register together with the actions that the supplier agreed to.",
        "Suppliers report a personal data breach affecting our data to the security team without undue delay and",
        "in any case within twenty-four hours of becoming aware of it, using the contact given in the agreement.",
    ]
    entries = [
        ("Personal data", "any information relating to an identified or identifiable natural person."),
        (
            "Processing",
            "any operation performed on personal data, such as collection, storage, use or erasure.",
        ),
        (
            "Data processing agreement",
            "the contract that binds a supplier processing personal data on our behalf.",
        ),
        ("Encryption", "the transformation of data into a form that cannot be read without the key."),
        ("Security event", "an occurrence on a system that may be relevant to its security."),
        ("Need to know", "the principle that access is granted only where a person's duties require it."),
    ]
    c = canvas.Canvas(str(tmp_path / "glossary.pdf"), pagesize=letter, invariant=1)
    c.setFont("Helvetica", 11)
    y = height - 90
    for line in above:
        c.drawString(90, y, line)
        y -= 14
    c.setFont("Helvetica-Bold", 14)
    c.drawString(90, y - 24, "7. Glossary")
    top = y - 54
    for x, column in [(90.0, entries[:3]), (324.0, entries[3:])]:
        y = top
        for term, meaning in column:
            for line in simpleSplit(f"{term}: {meaning}", "Helvetica", 11, wrap):
                c.setFont("Helvetica", 11)
                c.drawString(x, y, line)
                y -= 14
            y -= 10
    c.setFont("Helvetica", 9)
    c.drawString(90, 50, "Internal — Version 3.2 — Page 1 of 1")
    c.showPage()
    c.save()
    doc = parse_path(tmp_path / "glossary.pdf")
    b.check_invariants(doc)
    texts = [p.text for p in doc.paragraphs if p.role != "furniture"]
    assert texts[0] == " ".join(above)
    assert texts[1:] == [f"{term}: {meaning}" for term, meaning in entries]
    assert [p.heading_path for p in doc.paragraphs if p.text.startswith("Need to know")] == [("7. Glossary",)]


def test_paragraphs_set_without_space_after_them_end_where_the_next_word_would_have_fit(
    tmp_path: Path,
) -> None:
    """Paragraphs set with no space between them (Word's "No Spacing", LibreOffice's default style), every line
    14 pt below the last: only the lines say where a paragraph ends. A last line nearly as long as the others,
    that ends a sentence although the next line's first word would have fit on it, was ended by its author; it
    ran into the next paragraph ("… in the access register. No privileged account …")."""
    from reportlab.lib.utils import simpleSplit
    from reportlab.pdfbase.pdfmetrics import stringWidth

    paragraphs = [
        "Access rights to systems that hold personal data are granted by the system owner on a request approved by "
        "the employee's line manager, and only for what the role needs, for as long as the role needs them.",
        "All rights are reviewed every quarter by the system owner, who removes at once any right that is no longer "
        "needed by its user, and records each review in the access register.",
        "No privileged account is used for e-mail or for browsing the internet, and every privileged account uses "
        "multi-factor authentication.",
        "Leavers' accounts are disabled on their last working day.",
    ]
    width = 451.0
    wrapped = [simpleSplit(text, "Helvetica", 11, width) for text in paragraphs]
    widths = [stringWidth(line, "Helvetica", 11) for lines in wrapped for line in lines]
    last = stringWidth(wrapped[1][-1], "Helvetica", 11)
    # what the test is about: the second paragraph's last line is long, and "No" would have fit after it
    assert last > 0.8 * max(widths)
    assert last + stringWidth(" No", "Helvetica", 11) < max(widths)
    doc = _typeset(tmp_path / "access.pdf", "Access control", wrapped, space_after=0)
    assert [p.text for p in doc.paragraphs] == paragraphs


def test_numbered_clauses_set_without_space_after_them_start_at_their_number(tmp_path: Path) -> None:
    """Clauses numbered "3.1", "3.2" (no list marker: the number is the clause's text), set with no space between
    them: where a clause's last line is full, nothing but the next clause's number says where it starts. A line
    that opens with a clause number of the paragraph's own depth, after a sentence ended, is the next clause; a
    number of another depth, or one within a sentence, goes on."""

    clauses = [
        [
            "3.1 Production data is backed up at least once every 24 hours, and every backup is encrypted",
            "with a key that is held apart from the data, in the key management service of the platform team.",
        ],
        [
            "3.2 At least one copy of every backup is kept offline or in immutable storage, so that no attacker",
            "who gains administrator access can change or delete it; the copies are kept for 35 days, or for",
            "2.5 times the longest retention period of the data they hold, whichever is the longer.",
        ],
        ["3.3 Restores are tested every quarter, from the offline copy, by the platform team on call."],
    ]
    doc = _typeset(tmp_path / "backup.pdf", "3 Backups", clauses, space_after=0)
    assert [p.text for p in doc.paragraphs] == [" ".join(lines) for lines in clauses]


def test_bullets_written_as_letters_are_bullets(tmp_path: Path) -> None:
    """Word draws its second-level bullet as an "o" in Courier New, and its symbol-font bullets come out of many
    PDFs as letters (Wingdings' "§" or "Ø", where no Unicode is mapped): "o lock the screen …" ran into the item
    above it. A letter of a symbol font, or an "o" in Courier, set apart from the text by a tab, is a bullet; an "o"
    of the text ("o cliente", set in the body's font and spaced as a word) is not."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    path = tmp_path / "bullets.pdf"
    c = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    c.setFont("Helvetica-Bold", 14)
    c.drawString(72, 770, "Remote working")
    c.setFont("Helvetica", 11)
    c.drawString(72, 745, "When working remotely staff must:")
    items = [
        (72, "ZapfDingbats", "l", "protect their devices:"),
        (90, "Courier", "o", "lock the screen whenever they leave the device, even at home;"),
        (90, "Courier", "o", "keep the device out of sight in cars and public places;"),
        (72, "ZapfDingbats", "l", "use the company VPN for every connection to internal systems;"),
    ]
    y = 729.0
    for x, font, glyph, text in items:
        c.setFont(font, 11)
        c.drawString(x, y, glyph)
        c.setFont("Helvetica", 11)
        c.drawString(x + 18, y, text)
        y -= 16
    c.drawString(72, y - 10, "o cliente recebe uma cópia do contrato assinado por correio eletrónico.")
    c.showPage()
    c.save()
    doc = parse_path(path)
    b.check_invariants(doc)
    assert [(p.kind, p.text) for p in doc.paragraphs] == [
        ("list", "\n".join(["When working remotely staff must:", *(f"- {text}" for *_, text in items)])),
        ("paragraph", "o cliente recebe uma cópia do contrato assinado por correio eletrónico."),
    ]


def test_headings_in_capitals_of_the_body_font_are_headings(tmp_path: Path) -> None:
    """A policy typed without heading styles sets its headings in capitals of the body's font and size ("1.
    PURPOSE"): they were read as list items (document metadata, page furniture) and the sections had no heading. A
    short line of capitals that starts where a section may start is a heading now; the wrapped lines of a clause set
    in capitals (a limitation of liability) stay the clause's, and so does a code ("ISO 27001")."""
    from reportlab.pdfbase.pdfmetrics import stringWidth

    clause = [
        "THE PROVIDER SHALL NOT BE LIABLE TO THE CUSTOMER FOR ANY",
        "CONSEQUENTIAL LOSS ARISING FROM THE PROCESSING",
        "OF PERSONAL DATA UNDER THIS AGREEMENT, SAVE AS REQUIRED BY LAW.",
    ]
    rule = "All information security controls are certified to the standard below, every year, by an external auditor."
    # what the test is about: the clause's middle line is a short line of six words in capitals
    assert stringWidth(clause[1], "Helvetica", 11) < 0.7 * stringWidth(rule, "Helvetica", 11)
    blocks: list[list[str]] = [
        ["DATA PROTECTION POLICY"],
        ["1. PURPOSE"],
        ["This policy sets out how the company protects the personal data of its customers and staff."],
        ["2. LIABILITY"],
        clause,
        ["3. SECURITY"],
        [rule],
        ["ISO 27001"],
    ]
    doc = _typeset(tmp_path / "caps.pdf", None, blocks, space_after=10)
    assert doc.title == "DATA PROTECTION POLICY"
    assert [(p.heading_path[-1:], p.text) for p in doc.paragraphs] == [
        (("1. PURPOSE",), blocks[2][0]),
        (("2. LIABILITY",), " ".join(clause)),
        (("3. SECURITY",), rule),
        (("3. SECURITY",), "ISO 27001"),
    ]


@pytest.mark.parametrize(
    "written",
    ["Microsoft Word - DPP_v3_final.docx", "untitled", "Document1", r"C:\Users\jsmith\Desktop\dpp.doc"],
)
def test_a_title_a_program_wrote_gives_way_to_the_first_heading(tmp_path: Path, written: str) -> None:
    """A PDF printed from Word by a printer driver carries "Microsoft Word - DPP_v3_final.docx" as its title, and
    other programs "untitled", "Document1" or a file's path: that is no title a reviewer should see in a report.
    The document's first heading is its title then; an author's title is kept."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    titles = []
    for name, title in [("driver.pdf", written), ("author.pdf", "Data Protection Policy (2025)")]:
        path = tmp_path / name
        c = canvas.Canvas(str(path), pagesize=A4, invariant=1)
        c.setTitle(title)
        c.setFont("Helvetica-Bold", 16)
        c.drawString(72, 770, "Data Protection Policy")
        c.setFont("Helvetica", 11)
        c.drawString(72, 740, "Personal data breaches are reported to the Data Protection Officer at once.")
        c.showPage()
        c.save()
        titles.append(parse_path(path).title)
    assert titles == ["Data Protection Policy", "Data Protection Policy (2025)"]


def _pdf_with_unmapped_font(lines: list[tuple[str, bool]]) -> bytes:
    """A one-page PDF written by hand: each line in Helvetica, or (``True``) in a CID font with no Unicode map and
    no embedded glyphs, whose text pdfminer can only give as "(cid:68)(cid:97)…" codes."""
    ops = []
    for i, (text, unmapped) in enumerate(lines):
        shown = f"<{''.join(f'{ord(ch):04X}' for ch in text)}>" if unmapped else f"({text})"
        ops.append(f"BT /{'F1' if unmapped else 'F2'} 11 Tf 72 {770 - 20 * i} Td {shown} Tj ET")
    stream = "\n".join(ops).encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R /F2 8 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type0 /BaseFont /ABCDEF+Custom /Encoding /Identity-H /DescendantFonts [6 0 R] >>",
        b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /ABCDEF+Custom /DW 500 /FontDescriptor 7 0 R"
        b" /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> >>",
        b"<< /Type /FontDescriptor /FontName /ABCDEF+Custom /Flags 32 /FontBBox [0 0 1000 1000] /ItalicAngle 0"
        b" /Ascent 800 /Descent -200 /CapHeight 700 /StemV 80 >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    return out + b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)


def test_text_that_decodes_to_no_characters_is_not_read_as_text(tmp_path: Path) -> None:
    """A font embedded without its Unicode map gives its text as "(cid:68)(cid:97)…": such paragraphs were read,
    given roles ("statement") and linked. A PDF whose text is mostly such codes is refused with a clear error (as a
    scanned one is); in a PDF that sets only some lines so, those lines are left out and the rest is read."""
    from compliance.errors import DocumentError

    rule = "Personal data breaches are reported to the Data Protection Officer within 24 hours."
    garbled = tmp_path / "garbled.pdf"
    garbled.write_bytes(_pdf_with_unmapped_font([("Data Protection Policy", True), (rule, True)]))
    with pytest.raises(DocumentError, match="cannot be decoded"):
        parse_path(garbled)
    mixed = tmp_path / "mixed.pdf"
    mixed.write_bytes(_pdf_with_unmapped_font([("Data Protection Policy", True), (rule, False)]))
    doc = parse_path(mixed)
    assert [p.text for p in doc.paragraphs] == [rule]
    assert "cid:" not in doc.text
