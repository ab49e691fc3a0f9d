"""The OpenDocument text (.odt) connector: a package written by hand, one LibreOffice wrote from the Word policy, and
hostile packages."""

from __future__ import annotations

import io
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from compliance.connectors import SUPPORTED_EXTENSIONS, parse_bytes, parse_path
from compliance.errors import DocumentError, EncryptedDocumentError, UnsafeDocumentError
from tests.fixtures.connectors import builders as b

STYLES = (
    '<style:style style:name="P1" style:family="paragraph" style:parent-style-name="Title"/>'
    '<style:style style:name="P2" style:family="paragraph" style:parent-style-name="Standard">'
    '<style:text-properties fo:font-weight="bold"/></style:style>'
    '<style:style style:name="T1" style:family="text"><style:text-properties fo:font-weight="bold"/></style:style>'
    '<text:list-style style:name="L1"><text:list-level-style-bullet text:level="1" text:bullet-char="•"/>'
    '<text:list-level-style-number text:level="2" style:num-format="a" style:num-suffix=")"/></text:list-style>'
)

BODY = (
    '<text:table-of-content text:name="Contents"><text:index-body><text:p>1 Purpose ..... 1</text:p>'
    "</text:index-body></text:table-of-content>"
    '<text:p text:style-name="P1">Information Security Policy</text:p>'
    '<text:h text:outline-level="1">1 Purpose</text:h>'
    '<text:p>This policy sets out how Acme protects<text:s/>the information<text:s text:c="2"/>it holds'
    '<text:note text:note-class="footnote"><text:note-citation>1</text:note-citation><text:note-body><text:p>'
    "ISO/IEC 27001:2022.</text:p></text:note-body></text:note>, whatever form it takes."
    '<draw:custom-shape draw:name="Callout"><text:p>Report a lost or stolen laptop to the Service Desk within '
    "one hour.</text:p></draw:custom-shape></text:p>"
    '<text:p text:style-name="P2">2.1 Access control</text:p>'
    "<text:p>When working remotely staff must:</text:p>"
    '<text:list text:style-name="L1"><text:list-item><text:p>use the company VPN for all connections;</text:p>'
    "<text:list><text:list-item><text:p>to internal systems, and</text:p></text:list-item><text:list-item><text:p>"
    "to the cloud consoles;</text:p></text:list-item></text:list></text:list-item>"
    "<text:list-item><text:p>lock their screen whenever they leave the device.</text:p></text:list-item></text:list>"
    "<text:tracked-changes><text:changed-region><text:deletion><text:p>Passwords are written down.</text:p>"
    "</text:deletion></text:changed-region></text:tracked-changes>"
    '<text:p><text:span text:style-name="T1">Access Reviews</text:span></text:p>'
    "<table:table><table:table-header-rows><table:table-row><table:table-cell><text:p>System</text:p>"
    "</table:table-cell><table:table-cell><text:p>Reviewed</text:p></table:table-cell></table:table-row>"
    "</table:table-header-rows><table:table-row><table:table-cell><text:p>Payroll</text:p></table:table-cell>"
    "<table:table-cell><text:p>Every quarter by the Head of People</text:p></table:table-cell></table:table-row>"
    '<table:table-row><table:table-cell table:number-columns-spanned="2"><text:p>Every system is reviewed after a '
    "major incident.</text:p></table:table-cell><table:covered-table-cell/></table:table-row></table:table>"
    "<text:p>Contact:<text:line-break/>Information Security Team<text:tab/>security@acme.example</text:p>"
)


@pytest.fixture(scope="module")
def odt() -> bytes:
    return b.odt_bytes(BODY, styles=STYLES, title="ISP-001 Information Security Policy")


def test_an_odt_reads_as_its_word_document_would(odt: bytes) -> None:
    doc = parse_bytes(odt, "policy.odt")
    b.check_invariants(doc)
    assert ".odt" in SUPPORTED_EXTENSIONS
    assert doc.media_type == "application/vnd.oasis.opendocument.text"
    assert doc.metadata["connector"] == "odt"
    assert doc.title == "ISP-001 Information Security Policy"
    got = [(p.kind, p.heading_path, p.text) for p in doc.paragraphs]
    assert got == [
        (
            "paragraph",
            ("1 Purpose",),
            "This policy sets out how Acme protects the information it holds, whatever form it takes.",
        ),
        ("paragraph", ("1 Purpose",), "Report a lost or stolen laptop to the Service Desk within one hour."),
        (
            "list",
            ("1 Purpose", "2.1 Access control"),
            "When working remotely staff must:\n- use the company VPN for all connections;\n"
            "  a) to internal systems, and\n  b) to the cloud consoles;\n"
            "- lock their screen whenever they leave the device.",
        ),
        (
            "table-row",
            ("Access Reviews",),
            "System: Payroll; Reviewed: Every quarter by the Head of People",
        ),
        (
            "table-row",
            ("Access Reviews",),
            "System: Every system is reviewed after a major incident.",
        ),
        (
            "paragraph",
            ("Access Reviews",),
            "Contact: Information Security Team security@acme.example",
        ),
    ]
    # the table of contents, the footnote and the deleted text are no text of the document
    for absent in ("1 Purpose .....", "ISO/IEC 27001", "Passwords are written down"):
        assert absent not in doc.text


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice (soffice) is not installed")
def test_the_word_policy_saved_as_odt_by_libreoffice_reads_alike(tmp_path: Path) -> None:
    """The connector tests' Word policy saved as .odt by LibreOffice gives the same paragraphs, kinds and heading
    paths as the Word file. (Its text box, a shape written by hand without the position Word gives every drawing,
    is one LibreOffice does not keep; a real one it keeps as a shape with its paragraphs, which the reader reads.)"""
    docx = b.build_policy_docx(tmp_path / "policy.docx")
    subprocess.run(
        ["soffice", f"-env:UserInstallation={(tmp_path / 'profile').as_uri()}", "--headless", "--convert-to", "odt",
         "--outdir", str(tmp_path), str(docx)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    word = parse_path(docx)
    odt = parse_path(tmp_path / "policy.odt")
    assert [
        (p.kind, p.heading_path, " ".join(p.text.split())) for p in odt.paragraphs if p.text != b.TEXTBOX_TEXT
    ] == [
        (p.kind, p.heading_path, " ".join(p.text.split()))
        for p in word.paragraphs
        if p.text != b.TEXTBOX_TEXT
    ]


def test_hostile_and_wrong_packages_are_refused(odt: bytes) -> None:
    doctype = b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e "boom">]><office:document-content/>'
    with pytest.raises(UnsafeDocumentError):
        parse_bytes(b.replace_member(odt, "content.xml", doctype), "dtd.odt")
    encrypted = b.odt_bytes(BODY, manifest_extra='<manifest:encryption-data manifest:checksum-type="SHA1"/>')
    with pytest.raises(EncryptedDocumentError):
        parse_bytes(encrypted, "locked.odt")
    sheet = _content(odt).replace(b"office:text>", b"office:spreadsheet>")
    with pytest.raises(DocumentError, match="no office:text body"):
        parse_bytes(b.replace_member(odt, "content.xml", sheet), "sheet.odt")
    with pytest.raises(DocumentError, match=r"no content\.xml"):
        parse_bytes(_without_member(odt, "content.xml"), "empty.odt")


def _content(package: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(package)) as z:
        return z.read("content.xml")


def _without_member(package: bytes, name: str) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(package)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            if info.filename != name:
                dst.writestr(info, src.read(info))
    return out.getvalue()


def test_numbered_headings_are_headings_with_their_numbers() -> None:
    """LibreOffice writes each heading numbered by a list (Word's numbered "Heading 1") as a list of its own that
    continues the one before it. They were read as list items, each numbered "1."; they are headings, numbered on
    ("1. Purpose", "2. Scope"), as the Word reader reads them."""
    styles = (
        '<text:list-style style:name="WWNum5"><text:list-level-style-number text:level="1" style:num-format="1"'
        ' style:num-suffix="."/></text:list-style>'
    )
    sections = [
        ("Purpose", "This policy sets out how the company protects the personal data it holds."),
        ("Scope", "It applies to all staff, contractors and suppliers who handle personal data."),
    ]
    body = ""
    for i, (name, text) in enumerate(sections):
        continues = ' text:continue-numbering="true"' if i else ""
        body += (
            f'<text:list text:style-name="WWNum5"{continues}><text:list-item><text:h text:outline-level="1">{name}'
            f"</text:h></text:list-item></text:list><text:p>{text}</text:p>"
        )
    doc = parse_bytes(b.odt_bytes(body, styles=styles), "numbered.odt")
    assert [(p.heading_path, p.kind) for p in doc.paragraphs] == [
        (("1. Purpose",), "paragraph"),
        (("2. Scope",), "paragraph"),
    ]
    assert doc.title == "1. Purpose"
