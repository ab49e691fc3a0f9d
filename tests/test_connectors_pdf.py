"""The PDF connector on a generated three-page policy."""

from __future__ import annotations

from pathlib import Path

import pytest

from compliance.connectors import ParsedDocument, SplitConfig, parse_bytes, parse_path
from compliance.errors import DocumentError, DocumentTooLargeError, EncryptedDocumentError
from tests.fixtures.connectors import builders as b


@pytest.fixture(scope="module")
def policy_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return b.build_policy_pdf(tmp_path_factory.mktemp("pdf") / "policy.pdf")


@pytest.fixture(scope="module")
def doc(policy_pdf: Path) -> ParsedDocument:
    return parse_path(policy_pdf)


def test_provenance_and_offsets(doc: ParsedDocument) -> None:
    b.check_invariants(doc)
    assert doc.media_type == "application/pdf"
    assert doc.pages == 3
    assert doc.title == b.TITLE  # from the PDF metadata
    assert [p.page for p in doc.paragraphs] == [1, 1, 2, 2, 3]


def test_running_header_footer_and_page_numbers_removed(doc: ParsedDocument) -> None:
    assert "Acme Ltd - Data Protection Policy v2" not in doc.text
    assert "Page" not in doc.text


def test_dehyphenation_and_reflow(doc: ParsedDocument) -> None:
    first = doc.paragraphs[0]
    assert first.text == (
        "This policy sets out how Acme Ltd handles the processing of personal data of customers and employees."
    )
    assert doc.paragraphs[2].text == (
        "The policy applies to all staff, contractors and processors acting on behalf of Acme Ltd in every "
        "country where it operates."
    )
    assert doc.paragraphs[3].text.startswith("Managers make sure")  # the vertical gap starts a paragraph


def test_headings_from_font_size(doc: ParsedDocument) -> None:
    assert doc.paragraphs[0].heading_path == ("1. Purpose",)
    assert doc.paragraphs[2].heading_path == ("2. Scope", "2.1 Staff")  # 13 pt is nested under 16 pt
    assert doc.paragraphs[4].heading_path == ("3. Retention",)


def test_bullets_join_lead_in(doc: ParsedDocument) -> None:
    lst = doc.paragraphs[1]
    assert lst.kind == "list"
    lines = lst.text.split("\n")
    assert lines[0] == b.LEAD_IN
    assert lines[1:] == [
        "- identify the lawful basis for the processing;",
        "- inform the data subject of the purposes;",
        "- record the activity in the register.",
    ]


def test_encrypted_pdf(tmp_path: Path) -> None:
    path = b.build_policy_pdf(tmp_path / "secret.pdf", encrypt="pw")
    with pytest.raises(EncryptedDocumentError) as info:
        parse_path(path)
    assert info.value.code == "C303"


def test_page_limit(policy_pdf: Path) -> None:
    with pytest.raises(DocumentTooLargeError, match="3 pages"):
        parse_bytes(policy_pdf.read_bytes(), "p.pdf", config=SplitConfig(max_pages=2))


def test_random_bytes_and_truncated_pdf(policy_pdf: Path) -> None:
    import random

    rng = random.Random(7)
    with pytest.raises(DocumentError, match="not a PDF"):
        parse_bytes(bytes(rng.randrange(256) for _ in range(4096)), "random.pdf")
    data = policy_pdf.read_bytes()
    with pytest.raises(DocumentError):
        parse_bytes(b"%PDF-1.4\n" + bytes(rng.randrange(256) for _ in range(4096)), "garbage.pdf")
    # a PDF cut in half either fails cleanly or yields a subset of the text — never another exception type
    try:
        half = parse_bytes(data[: len(data) // 2], "half.pdf")
    except DocumentError:
        pass
    else:
        b.check_invariants(half)


def test_pdf_without_text(tmp_path: Path) -> None:
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(tmp_path / "blank.pdf"))
    c.rect(100, 100, 50, 50)
    c.showPage()
    c.save()
    with pytest.raises(DocumentError, match="no extractable text"):
        parse_path(tmp_path / "blank.pdf")


def _canvas_pdf(path: Path, pages: list[list[str]], footer: str | None) -> Path:
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path))
    for number, lines in enumerate(pages, start=1):
        y = 760.0
        for line in lines:
            c.setFont("Helvetica", 11)
            c.drawString(72, y, line)
            y -= 15
        if footer is not None:
            c.setFont("Helvetica", 9)
            c.drawString(290, 40, footer.format(n=number))
        c.showPage()
    c.save()
    return path


def test_paragraph_continues_across_pages(tmp_path: Path) -> None:
    pages = [
        ["Personal data of former customers is kept in the archive system until the", "retention period of"],
        ["seven years has ended, after which it is deleted.", "", "A new paragraph starts here on page two."],
    ]
    doc = parse_path(_canvas_pdf(tmp_path / "flow.pdf", pages, footer="{n}"))
    b.check_invariants(doc)
    assert [p.text for p in doc.paragraphs] == [
        "Personal data of former customers is kept in the archive system until the retention period of seven "
        "years has ended, after which it is deleted.",
        "A new paragraph starts here on page two.",
    ]
    assert [p.page for p in doc.paragraphs] == [1, 2]


def test_bare_page_number_removed_on_a_single_page(tmp_path: Path) -> None:
    doc = parse_path(
        _canvas_pdf(tmp_path / "one.pdf", [["Visitors sign in at reception."]], footer="- {n} -")
    )
    assert [p.text for p in doc.paragraphs] == ["Visitors sign in at reception."]
    assert "1" not in doc.text


def test_owner_password_only_pdf_is_readable(tmp_path: Path) -> None:
    """Permissions-only encryption (empty user password) is not a reason to refuse a document."""
    from reportlab.lib.pdfencrypt import StandardEncryption
    from reportlab.pdfgen import canvas

    enc = StandardEncryption("", ownerPassword="owner", canPrint=0)
    c = canvas.Canvas(str(tmp_path / "owner.pdf"), encrypt=enc)
    c.setFont("Helvetica", 11)
    c.drawString(72, 700, "Owner-locked documents can still be read.")
    c.showPage()
    c.save()
    assert [p.text for p in parse_path(tmp_path / "owner.pdf").paragraphs] == [
        "Owner-locked documents can still be read."
    ]


def test_bold_body_size_line_is_a_heading(tmp_path: Path) -> None:
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(tmp_path / "bold.pdf"))
    y = 760.0
    for font, text in [
        ("Helvetica-Bold", "Access Reviews"),
        ("Helvetica", "System owners review all user access every quarter and remove"),
        ("Helvetica", "access that is no longer needed."),
        ("Helvetica-Bold", "Exceptions"),
        ("Helvetica", "Exceptions are approved by the CISO and recorded in the register."),
    ]:
        c.setFont(font, 11)
        c.drawString(72, y, text)
        y -= 15
    c.showPage()
    c.save()
    doc = parse_path(tmp_path / "bold.pdf")
    assert [(p.heading_path, p.text) for p in doc.paragraphs] == [
        (
            ("Access Reviews",),
            "System owners review all user access every quarter and remove access that is no longer needed.",
        ),
        (("Exceptions",), "Exceptions are approved by the CISO and recorded in the register."),
    ]
