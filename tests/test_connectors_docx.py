"""The .docx connector on a generated ten-paragraph policy."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from compliance.connectors import ParsedDocument, SplitConfig, parse_bytes, parse_path
from tests.fixtures.connectors import builders as b

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


@pytest.fixture(scope="module")
def policy_docx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return b.build_policy_docx(tmp_path_factory.mktemp("docx") / "policy.docx")


@pytest.fixture(scope="module")
def doc(policy_docx: Path) -> ParsedDocument:
    return parse_path(policy_docx)


def test_provenance_and_offsets(doc: ParsedDocument, policy_docx: Path) -> None:
    import hashlib

    b.check_invariants(doc)
    assert doc.checksum == hashlib.sha256(policy_docx.read_bytes()).hexdigest()
    assert doc.size_bytes == policy_docx.stat().st_size
    assert doc.media_type.endswith("wordprocessingml.document")
    assert doc.title == b.TITLE
    assert doc.metadata["connector"] == "docx"
    assert doc.metadata["author"] == "Compliance Office"
    assert SplitConfig.from_dict(__import__("json").loads(doc.metadata["split_config"])) == SplitConfig()
    assert all(p.page is None for p in doc.paragraphs)


def test_body_order_headings_and_kinds(doc: ParsedDocument) -> None:
    kinds = [p.kind for p in doc.paragraphs]
    assert kinds[:7] == ["paragraph", "paragraph", "paragraph", "list", "list", "table-row", "table-row"]
    assert set(kinds[7:]) == {"paragraph"}
    first = doc.paragraphs[0]
    assert first.text.startswith(b.PURPOSE)
    assert first.heading_path == ("1. Purpose",)
    assert doc.paragraphs[2].heading_path == ("2. Scope",)
    assert doc.paragraphs[3].heading_path == ("2. Scope", "2.1 Collection")
    assert doc.paragraphs[4].heading_path == ("3. Rights of data subjects",)
    assert doc.paragraphs[-1].heading_path == ("4. Retention",)
    # headings are not paragraphs, but they are in the document text, in order
    assert all(p.text not in ("1. Purpose", "2. Scope") for p in doc.paragraphs)
    assert doc.text.index("2. Scope") < doc.text.index(b.SCOPE) < doc.text.index("2.1 Collection")


def test_numbered_list_kept_with_lead_in(doc: ParsedDocument) -> None:
    lst = doc.paragraphs[3]
    expected = "\n".join([b.LEAD_IN] + [f"{i}. {item}" for i, item in enumerate(b.NUMBERED, start=1)])
    assert lst.text == expected


def test_bulleted_list_without_lead_in(doc: ParsedDocument) -> None:
    assert doc.paragraphs[4].text == "\n".join(f"- {item}" for item in b.BULLETS)


def test_table_rows_use_header(doc: ParsedDocument) -> None:
    rows = [p.text for p in doc.paragraphs if p.kind == "table-row"]
    header = b.TABLE[0]
    assert rows == ["; ".join(f"{h}: {v}" for h, v in zip(header, row, strict=True)) for row in b.TABLE[1:]]


def test_headers_footers_deletions_do_not_leak(doc: ParsedDocument) -> None:
    for leak in (b.HEADER_TEXT, b.FOOTER_TEXT, b.DELETED_TEXT):
        assert leak not in doc.text


def test_a_text_box_is_a_paragraph_of_its_own_after_its_anchor(doc: ParsedDocument) -> None:
    """A callout in a text box is text of the page (a PDF of the document shows it): read once, though Word writes
    it twice (the shape and its fallback), as a paragraph after the one it is anchored in, not inside it."""
    assert doc.text.count(b.TEXTBOX_TEXT) == 1
    assert doc.paragraphs[0].text == b.PURPOSE
    assert doc.paragraphs[1].text == b.TEXTBOX_TEXT
    assert doc.paragraphs[1].heading_path == ("1. Purpose",)


def test_long_paragraph_split_on_sentences(doc: ParsedDocument) -> None:
    parts = [p for p in doc.paragraphs if p.heading_path == ("4. Retention",)]
    assert len(parts) >= 2
    assert all(p.text.endswith(".") and p.text[0].isupper() for p in parts)  # sentence boundaries
    joined = " ".join(p.text for p in parts)
    assert joined == b.LONG


def test_include_headings_option(policy_docx: Path) -> None:
    doc = parse_bytes(policy_docx.read_bytes(), "policy.docx", config=SplitConfig(include_headings=True))
    b.check_invariants(doc)
    headings = [p for p in doc.paragraphs if p.kind == "heading"]
    assert [h.text for h in headings] == [
        b.TITLE,
        "1. Purpose",
        "2. Scope",
        "2.1 Collection",
        "3. Rights of data subjects",
        "4. Retention",
    ]
    assert headings[3].heading_path == ("2. Scope",)  # a heading's path holds its parents


def test_smaller_budget_splits_list_between_items(policy_docx: Path) -> None:
    doc = parse_bytes(policy_docx.read_bytes(), "policy.docx", config=SplitConfig(max_tokens=20))
    b.check_invariants(doc, max_tokens=20)
    lists = [p for p in doc.paragraphs if p.kind == "list" and p.heading_path[-1] == "2.1 Collection"]
    assert len(lists) >= 2
    assert lists[0].text.startswith(b.LEAD_IN)
    assert all(line.split(" ", 1)[0] in ("1.", "2.", "3.") for p in lists[1:] for line in p.text.split("\n"))


def test_title_falls_back_to_title_style_then_filename(tmp_path: Path) -> None:
    import docx

    d = docx.Document()
    d.core_properties.title = ""
    d.add_paragraph("Retention Standard", style="Title")
    d.add_paragraph("Records are kept for six years after the end of the contract.")
    d.save(str(tmp_path / "r.docx"))
    assert parse_path(tmp_path / "r.docx").title == "Retention Standard"

    d = docx.Document()
    d.core_properties.title = ""
    d.add_paragraph("Records are kept for six years after the end of the contract.")
    d.save(str(tmp_path / "notitle.docx"))
    assert parse_path(tmp_path / "notitle.docx").title == "notitle"


def test_merged_cells_and_nested_list_levels(tmp_path: Path) -> None:
    import docx

    d = docx.Document()
    t = d.add_table(rows=3, cols=2)
    t.cell(0, 0).paragraphs[0].add_run("System").bold = True  # a bold first row is a header row
    t.cell(0, 1).paragraphs[0].add_run("Measure").bold = True
    t.cell(1, 0).text, t.cell(1, 1).text = "CRM", "Encryption at rest"
    t.cell(1, 0).merge(t.cell(2, 0))  # vertical merge: the value repeats on the second row
    t.cell(2, 1).text = "Access logging"
    d.add_paragraph("The controls are:")
    d.add_paragraph("technical measures", style="List Bullet")
    d.add_paragraph("encryption", style="List Bullet 2")
    d.save(str(tmp_path / "m.docx"))
    doc = parse_path(tmp_path / "m.docx")
    b.check_invariants(doc)
    rows = [p.text for p in doc.paragraphs if p.kind == "table-row"]
    assert rows[0].startswith("System: CRM") and "Encryption at rest" in rows[0]
    assert "Access logging" in rows[1]
    lst = next(p for p in doc.paragraphs if p.kind == "list")
    assert lst.text.startswith("The controls are:\n- technical measures\n")


def test_two_column_table_without_header_is_label_value(tmp_path: Path) -> None:
    import docx

    d = docx.Document()
    t = d.add_table(rows=3, cols=2)
    for r, (k, v) in enumerate([("Document ID", "NWL-POL-001"), ("Version", "2.1"), ("Owner", "CISO")]):
        t.cell(r, 0).text, t.cell(r, 1).text = k, v
    d.save(str(tmp_path / "control.docx"))
    doc = parse_path(tmp_path / "control.docx")
    assert [p.text for p in doc.paragraphs] == ["Document ID: NWL-POL-001", "Version: 2.1", "Owner: CISO"]


_NUMBERING = """<w:abstractNum xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" w:abstractNumId="90">
  <w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1."/></w:lvl>
  <w:lvl w:ilvl="1"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1.%2"/></w:lvl>
</w:abstractNum>"""
_LETTERS = """<w:abstractNum xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" w:abstractNumId="91">
  <w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="lowerLetter"/><w:lvlText w:val="(%1)"/></w:lvl>
  <w:lvl w:ilvl="1"><w:start w:val="1"/><w:numFmt w:val="lowerRoman"/><w:lvlText w:val="(%2)"/></w:lvl>
</w:abstractNum>"""


def _num(num_id: int, abstract_id: int) -> str:
    return (
        f'<w:num xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" w:numId="{num_id}">'
        f'<w:abstractNumId w:val="{abstract_id}"/></w:num>'
    )


def _number(paragraph: object, num_id: int, ilvl: int) -> None:
    from docx.oxml import parse_xml

    ppr = paragraph._p.get_or_add_pPr()  # type: ignore[attr-defined]
    ppr.append(
        parse_xml(
            '<w:numPr xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
            f'<w:ilvl w:val="{ilvl}"/><w:numId w:val="{num_id}"/></w:numPr>'
        )
    )


def test_auto_numbered_headings_and_list_level_text(tmp_path: Path) -> None:
    import docx
    from docx.oxml import parse_xml

    d = docx.Document()
    numbering = d.part.numbering_part.element
    abstract_anchor = numbering.find(f"{{{W}}}num")
    for xml in (_NUMBERING, _LETTERS):
        abstract_anchor.addprevious(parse_xml(xml))
    numbering.append(parse_xml(_num(90, 90)))
    numbering.append(parse_xml(_num(91, 91)))
    _number(d.add_heading("Purpose", level=1), 90, 0)
    d.add_paragraph("This standard protects the personal data of all customers.")
    _number(d.add_heading("Scope", level=1), 90, 0)
    _number(d.add_heading("Systems", level=2), 90, 1)
    d.add_paragraph("The controller shall ensure that:")
    for text, ilvl in (("access is logged", 0), ("logs are reviewed", 0), ("monthly", 1), ("by the CISO", 1)):
        _number(d.add_paragraph(text), 91, ilvl)
    d.save(str(tmp_path / "numbered.docx"))
    doc = parse_path(tmp_path / "numbered.docx")
    b.check_invariants(doc)
    assert doc.paragraphs[0].heading_path == ("1. Purpose",)
    lst = doc.paragraphs[1]
    assert lst.heading_path == ("2. Scope", "2.1 Systems")
    assert lst.text == (
        "The controller shall ensure that:\n(a) access is logged\n(b) logs are reviewed\n  (i) monthly\n  (ii) by the CISO"
    )


def test_a_box_of_one_cell_is_body_text_and_a_table_stays_a_table(tmp_path: Path) -> None:
    """A bordered box (a table of one row and one column) around some rules: each rule is a paragraph of its own,
    as in the PDF reader; they had been one "table row" holding every rule. A real table is unchanged."""
    import docx

    d = docx.Document()
    d.add_heading("Clean Desk Policy", 1)
    cell = d.add_table(rows=1, cols=1).rows[0].cells[0]
    cell.paragraphs[0].text = "Desks are cleared of papers with personal data at the end of every day."
    cell.add_paragraph("Screens are locked whenever staff leave their desk, even for a moment.")
    table = d.add_table(rows=2, cols=2)
    for (i, j), text in {
        (0, 0): "Area",
        (0, 1): "Rule",
        (1, 0): "Printers",
        (1, 1): "Collect at once",
    }.items():
        table.rows[i].cells[j].text = text
    d.save(str(tmp_path / "boxed.docx"))
    doc = parse_path(tmp_path / "boxed.docx")
    b.check_invariants(doc)
    assert [(p.kind, p.text) for p in doc.paragraphs] == [
        ("paragraph", "Desks are cleared of papers with personal data at the end of every day."),
        ("paragraph", "Screens are locked whenever staff leave their desk, even for a moment."),
        ("table-row", "Area: Rule"),  # a two-column table without a bold header: label/value pairs, as before
        ("table-row", "Printers: Collect at once"),
    ]


def test_headings_typed_as_bold_paragraphs(tmp_path: Path) -> None:
    """A policy whose headings are bold body-text paragraphs (no heading style): numbered, in capitals or in title
    case they are headings — the first gives the title —; a bold rule in sentence case stays a paragraph."""
    import docx

    d = docx.Document()
    for text, bold in [
        ("ACCEPTABLE USE POLICY", True),
        ("1. Purpose", True),
        ("This policy sets out the acceptable use of company IT systems by staff.", False),
        ("2.1 Email Rules", True),
        ("Do not forward customer data to private accounts", True),
        ("E-mails containing special category data are sent encrypted.", False),
    ]:
        d.add_paragraph().add_run(text).bold = bold
    d.save(str(tmp_path / "aup.docx"))
    doc = parse_path(tmp_path / "aup.docx")
    b.check_invariants(doc)
    assert doc.title == "ACCEPTABLE USE POLICY"
    assert [(p.heading_path, p.text) for p in doc.paragraphs] == [
        (("1. Purpose",), "This policy sets out the acceptable use of company IT systems by staff."),
        (("1. Purpose", "2.1 Email Rules"), "Do not forward customer data to private accounts"),
        (("1. Purpose", "2.1 Email Rules"), "E-mails containing special category data are sent encrypted."),
    ]


def test_section_titles_numbered_by_a_list_are_headings(tmp_path: Path) -> None:
    """Section titles typed as bold items of a numbered list ("1. Purpose", "2. Access Control") head the body
    text after them; an item of a list that is not all bold stays an item."""
    import docx

    d = docx.Document()
    for title, body in [
        ("Purpose", "This policy sets out how Example Ltd protects the information it holds."),
        ("Access Control", "Access to personal data is granted on a need-to-know basis."),
    ]:
        d.add_paragraph(style="List Number").add_run(title).bold = True
        d.add_paragraph(body)
    d.add_paragraph("Backups are encrypted and tested every month", style="List Number")
    d.save(str(tmp_path / "numbered.docx"))
    doc = parse_path(tmp_path / "numbered.docx")
    b.check_invariants(doc)
    assert [(p.kind, p.heading_path, p.text) for p in doc.paragraphs] == [
        (
            "paragraph",
            ("1. Purpose",),
            "This policy sets out how Example Ltd protects the information it holds.",
        ),
        ("paragraph", ("2. Access Control",), "Access to personal data is granted on a need-to-know basis."),
        ("list", ("2. Access Control",), "3. Backups are encrypted and tested every month"),
    ]


def test_a_table_laying_out_the_page_is_read_cell_by_cell(tmp_path: Path) -> None:
    """An old template: a one-row table with a margin menu in the left cell and the policy, with its headings, in
    the right one. Read as a data table the whole policy had become one "Label: value" row; it is now read cell by
    cell, its headings heading their paragraphs. A data table whose cells hold several paragraphs stays a table."""
    import docx

    d = docx.Document()
    layout = d.add_table(rows=1, cols=2)
    menu, content = layout.rows[0].cells
    menu.paragraphs[0].text = "Policies"
    menu.add_paragraph("Contacts")
    content.paragraphs[0].text = "Remote Working Policy"
    content.paragraphs[0].style = d.styles["Heading 1"]
    content.add_paragraph("Purpose", style="Heading 2")
    content.add_paragraph("Staff who work from home protect company information as they would in the office.")
    content.add_paragraph("Equipment", style="Heading 2")
    content.add_paragraph("Only company laptops with full-disk encryption are used for work.")
    matrix = d.add_table(rows=2, cols=2)
    matrix.rows[0].cells[0].text = "Control"
    matrix.rows[0].cells[1].text = "Guidance"
    matrix.rows[1].cells[0].text = "AC-01"
    guidance = matrix.rows[1].cells[1]
    guidance.paragraphs[0].text = "Review access every quarter."
    for text in ("Remove leavers at once.", "Record each review.", "Report exceptions to the CISO."):
        guidance.add_paragraph(text)
    d.save(str(tmp_path / "layout.docx"))
    doc = parse_path(tmp_path / "layout.docx")
    b.check_invariants(doc)
    assert [(p.kind, p.heading_path, p.text) for p in doc.paragraphs] == [
        ("paragraph", (), "Policies"),
        ("paragraph", (), "Contacts"),
        (
            "paragraph",
            ("Remote Working Policy", "Purpose"),
            "Staff who work from home protect company information as they would in the office.",
        ),
        (
            "paragraph",
            ("Remote Working Policy", "Equipment"),
            "Only company laptops with full-disk encryption are used for work.",
        ),
        ("table-row", ("Remote Working Policy", "Equipment"), "Control: Guidance"),  # no bold header: pairs
        (
            "table-row",
            ("Remote Working Policy", "Equipment"),
            "AC-01: Review access every quarter. Remove leavers at once. Record each review. Report exceptions to "
            "the CISO.",
        ),
    ]


def test_a_data_table_with_header_cells_in_a_heading_style_stays_a_table(tmp_path: Path) -> None:
    """Some templates style a table's header cells as headings: each such cell holds its name only, so the table
    holds data, not a page's layout."""
    import docx

    d = docx.Document()
    table = d.add_table(rows=3, cols=3)
    for j, name in enumerate(("Record", "Period", "Trigger")):
        table.rows[0].cells[j].paragraphs[0].text = name
        table.rows[0].cells[j].paragraphs[0].style = d.styles["Heading 4"]
    for i, row in enumerate(
        [("Invoices", "10 years", "End of year"), ("CCTV", "30 days", "Recording")], start=1
    ):
        for j, value in enumerate(row):
            table.rows[i].cells[j].text = value
    d.save(str(tmp_path / "schedule.docx"))
    doc = parse_path(tmp_path / "schedule.docx")
    assert [(p.kind, p.text) for p in doc.paragraphs] == [
        ("table-row", "Record: Invoices; Period: 10 years; Trigger: End of year"),
        ("table-row", "Record: CCTV; Period: 30 days; Trigger: Recording"),
    ]


def test_superscript_reference_marks_of_notes_are_left_out(tmp_path: Path) -> None:
    """A run set as a superscript that holds only a note's mark ("72 hours¹", "Article 33²˒³") glued to the word
    ("hours1", "Article 332,3"); it is left out, and a raised "st" of "1st" stays."""
    import docx

    d = docx.Document()
    p = d.add_paragraph("Breaches are notified within 72 hours")
    for text, raised in [
        ("1", True),
        (", as Article 33", False),
        ("2,3", True),
        (" requires; exercises take place on the 1", False),
        ("st", True),
        (" day of each quarter.", False),
    ]:
        p.add_run(text).font.superscript = raised
    d.save(str(tmp_path / "notes.docx"))
    doc = parse_path(tmp_path / "notes.docx")
    assert [x.text for x in doc.paragraphs] == [
        "Breaches are notified within 72 hours, as Article 33 requires; exercises take place on the 1st day of "
        "each quarter."
    ]


@pytest.mark.parametrize("soft_breaks", [False, True], ids=["paragraph-per-item", "lines-broken-by-hand"])
def test_a_list_typed_by_hand_is_a_list(tmp_path: Path, soft_breaks: bool) -> None:
    """A policy written without Word's list styles types its bullets ("• use the company VPN …"), one paragraph
    per item or the items on lines broken with Shift+Enter under their lead-in. Either way it reads as the same
    list a Word list (and the text reader) gives: the lead-in with its items, a line without a bullet going on with
    the item above. Before, the lines ran together into one paragraph, taken for a form and never mapped."""
    import docx

    lead_in = "When working remotely staff must:"
    items = [
        "use the company VPN for all connections to internal systems;",
        "lock their screen when leaving the device unattended;",
        "never let family members use a work device.",
    ]
    d = docx.Document()
    d.add_heading("Remote working", 1)
    if soft_breaks:
        run = d.add_paragraph().add_run(lead_in)
        for item in items:
            run.add_break()
            run.add_text(f"• {item}")
    else:
        d.add_paragraph(lead_in)
        for item in items:
            d.add_paragraph(f"• {item}")
    d.add_paragraph("All personal data breaches are reported to the DPO within 24 hours of their discovery.")
    words = docx.Document()
    words.add_heading("Remote working", 1)
    words.add_paragraph(lead_in)
    for item in items:
        words.add_paragraph(item, style="List Bullet")
    words.add_paragraph(
        "All personal data breaches are reported to the DPO within 24 hours of their discovery."
    )
    d.save(str(tmp_path / "typed.docx"))
    words.save(str(tmp_path / "styled.docx"))
    typed, styled = parse_path(tmp_path / "typed.docx"), parse_path(tmp_path / "styled.docx")
    b.check_invariants(typed)
    assert [(p.kind, p.text) for p in typed.paragraphs] == [(p.kind, p.text) for p in styled.paragraphs]
    assert typed.paragraphs[0].kind == "list"
    assert typed.paragraphs[0].text == "\n".join([lead_in, *(f"- {item}" for item in items)])
    assert typed.paragraphs[0].role == "statement"


def test_headings_typed_in_capitals_are_headings(tmp_path: Path) -> None:
    """Headings typed in capitals of the body text ("1. PURPOSE"), or set in capitals by Word's "All caps", without
    bold or a heading style: they were paragraphs, read as page furniture, and the sections had no heading; the
    title was the file name. A paragraph in capitals that reads as a heading is one now; a code ("ISO 27001") or a
    sentence in capitals is not."""
    import docx

    d = docx.Document()
    d.add_paragraph("DATA PROTECTION POLICY")
    d.add_paragraph("1. PURPOSE")
    d.add_paragraph(
        "This policy sets out how the company protects the personal data of its customers and staff."
    )
    d.add_paragraph().add_run("2. Personal data breaches").font.all_caps = True
    d.add_paragraph(
        "Every personal data breach must be reported to the DPO within 24 hours of its discovery."
    )
    d.add_paragraph("ISO 27001")
    d.add_paragraph("REPORT EVERY BREACH AT ONCE.")
    d.save(str(tmp_path / "caps.docx"))
    doc = parse_path(tmp_path / "caps.docx")
    assert doc.title == "DATA PROTECTION POLICY"
    assert [(p.heading_path, p.text) for p in doc.paragraphs] == [
        (
            ("1. PURPOSE",),
            "This policy sets out how the company protects the personal data of its customers and staff.",
        ),
        (
            ("2. Personal data breaches",),
            "Every personal data breach must be reported to the DPO within 24 hours of its discovery.",
        ),
        (("2. Personal data breaches",), "ISO 27001"),
        (("2. Personal data breaches",), "REPORT EVERY BREACH AT ONCE."),
    ]


@pytest.mark.parametrize(
    ("suffix", "content_type"),
    [
        (".dotx", "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml"),
        (".docm", "application/vnd.ms-word.document.macroEnabled.main+xml"),
        (".dotm", "application/vnd.ms-word.template.macroEnabledTemplate.main+xml"),
    ],
)
def test_word_templates_and_macro_enabled_documents_read_as_the_document(
    policy_docx: Path, suffix: str, content_type: str
) -> None:
    """A policy kept as a Word template (.dotx) or a macro-enabled document (.docm, .dotm) has the parts of a .docx;
    python-docx refused it ("not a Word file, content type is …"), and the batch skipped it. Its text reads as the
    document's (macros are never run)."""
    import zipfile

    data = policy_docx.read_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        types = z.read("[Content_Types].xml")
    document_type = b"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
    assert document_type in types
    variant = b.replace_member(
        data, "[Content_Types].xml", types.replace(document_type, content_type.encode())
    )
    doc = parse_bytes(variant, f"policy{suffix}")
    word = parse_path(policy_docx)
    assert [(p.kind, p.heading_path, p.text) for p in doc.paragraphs] == [
        (p.kind, p.heading_path, p.text) for p in word.paragraphs
    ]


def test_a_numbered_list_of_duties_reads_as_typed_lettered_paragraphs(tmp_path: Path) -> None:
    """Duties in Word's numbered list under their lead-in (what pandoc makes of Markdown's "(a) …" paragraphs) read
    as the same duties typed in as numbered paragraphs: one paragraph each, where the list and its lead-in were one
    paragraph before. A bullet list of fragments stays one list with its lead-in."""
    import docx

    duties = [
        "Users must not log in directly to systems as a privileged user.",
        "Privileged access must only be gained through the access proxy.",
        "Direct administrative access to production is kept to a minimum.",
    ]

    def document(numbered: bool) -> Path:
        d = docx.Document()
        d.add_heading("Privileged access", 1)
        d.add_paragraph("The policy requires that:")
        for n, duty in enumerate(duties, 1):
            d.add_paragraph(duty, style="List Number") if numbered else d.add_paragraph(f"{n}. {duty}")
        d.add_paragraph("Staff must:")
        for fragment in ("lock their screens", "report incidents"):
            d.add_paragraph(fragment, style="List Bullet")
        path = tmp_path / f"{'numbered' if numbered else 'typed'}.docx"
        d.save(str(path))
        return path

    numbered, typed = parse_path(document(True)), parse_path(document(False))
    texts = [p.text for p in numbered.paragraphs]
    assert texts == [p.text for p in typed.paragraphs]
    for n, duty in enumerate(duties, 1):  # each duty ends a paragraph of its own
        assert sum(t.split("\n")[-1] == f"{n}. {duty}" for t in texts) == 1
    assert texts[-1] == "Staff must:\n- lock their screens\n- report incidents"
