"""Broken, hostile and oversized inputs fail with the right DocumentError subclass."""

from __future__ import annotations

import io
import time
import zipfile
from pathlib import Path

import pytest

from compliance.connectors import SplitConfig, parse_bytes, parse_path
from compliance.errors import (
    ComplianceError,
    DocumentError,
    DocumentTooLargeError,
    EncryptedDocumentError,
    UnsupportedFormatError,
)
from tests.fixtures.connectors import builders as b


@pytest.fixture(scope="module")
def docx_bytes(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return b.build_policy_docx(tmp_path_factory.mktemp("safety") / "p.docx").read_bytes()


@pytest.mark.parametrize("name", ["empty.docx", "empty.pdf", "empty.txt", "empty.md", "empty.html"])
def test_empty_file(name: str) -> None:
    with pytest.raises(DocumentError, match="empty") as info:
        parse_bytes(b"", name)
    assert info.value.code == "C301"


def test_truncated_docx(docx_bytes: bytes) -> None:
    with pytest.raises(DocumentError) as info:
        parse_bytes(docx_bytes[: len(docx_bytes) // 2], "cut.docx")
    assert type(info.value) is DocumentError
    assert "cut.docx" in str(info.value)


def test_not_a_zip_and_zip_without_document() -> None:
    with pytest.raises(DocumentError, match=r"not a valid \.docx"):
        parse_bytes(b"hello, I am not a zip file", "fake.docx")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("xl/workbook.xml", "<workbook/>")
    with pytest.raises(DocumentError, match=r"no word/document\.xml"):
        parse_bytes(buf.getvalue(), "sheet.docx")


def test_encrypted_ooxml_is_an_ole_file() -> None:
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 504
    with pytest.raises(EncryptedDocumentError, match="password-protected"):
        parse_bytes(ole, "locked.docx")


def test_zip_bomb_refused_before_unpacking(tmp_path: Path) -> None:
    bomb = b.zip_bomb_docx(tmp_path / "bomb.docx", member_mb=120)
    assert bomb.stat().st_size < 1024 * 1024  # 120 MiB of zeros in well under 1 MiB
    start = time.perf_counter()
    with pytest.raises(DocumentTooLargeError, match="zip bomb") as info:
        parse_path(bomb)
    assert time.perf_counter() - start < 2.0  # refused from the zip directory, nothing inflated
    assert info.value.code == "C304"


def test_compression_ratio_and_member_count_limits(tmp_path: Path, docx_bytes: bytes) -> None:
    small_bomb = b.zip_bomb_docx(tmp_path / "small.docx", member_mb=5)  # under the size limit, ratio ~1000:1
    with pytest.raises(DocumentTooLargeError, match="compression ratio"):
        parse_path(small_bomb)
    with pytest.raises(DocumentTooLargeError, match="members"):
        parse_bytes(docx_bytes, "p.docx", config=SplitConfig(max_zip_members=5))
    with pytest.raises(DocumentTooLargeError, match="unpack"):
        parse_bytes(docx_bytes, "p.docx", config=SplitConfig(max_unpacked_bytes=10_000))


def test_byte_limit_from_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from compliance.settings import reset_settings

    monkeypatch.setenv("COMPLIANCE_MAX_DOCUMENT_BYTES", "100")
    reset_settings()
    (tmp_path / "big.txt").write_text("word " * 100)
    with pytest.raises(DocumentTooLargeError, match="limit of 100"):
        parse_path(tmp_path / "big.txt")
    with pytest.raises(DocumentTooLargeError):
        parse_bytes(b"word " * 100, "big.txt")
    assert parse_bytes(b"word " * 100, "big.txt", config=SplitConfig(max_bytes=1000)).paragraphs


_XXE_DOCTYPE = b'<!DOCTYPE w:document [<!ENTITY xxe SYSTEM "file://{secret}">]>'


def _xxe_docx(docx_bytes: bytes, secret: Path) -> bytes:
    with zipfile.ZipFile(io.BytesIO(docx_bytes)) as z:
        xml = z.read("word/document.xml")
    head, sep, rest = xml.partition(b"?>")
    doctype = _XXE_DOCTYPE.replace(b"{secret}", str(secret).encode())
    xml = (
        head + sep + doctype + rest.replace(b"<w:t>" + b.SCOPE.encode(), b"<w:t>&xxe;" + b.SCOPE.encode(), 1)
    )
    assert b"&xxe;" in xml
    return b.replace_member(docx_bytes, "word/document.xml", xml)


def test_external_entity_rejected(tmp_path: Path, docx_bytes: bytes) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-VALUE")
    with pytest.raises(DocumentError, match="DTD") as info:
        parse_bytes(_xxe_docx(docx_bytes, secret), "xxe.docx")
    assert "TOP-SECRET-VALUE" not in str(info.value)


def test_python_docx_parser_does_not_resolve_entities(tmp_path: Path, docx_bytes: bytes) -> None:
    """Defence in depth: even without our DTD check, python-docx's lxml parser leaves entities unresolved."""
    import docx

    from compliance.connectors.docx_reader import run_text

    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-VALUE")
    document = docx.Document(io.BytesIO(_xxe_docx(docx_bytes, secret)))
    text = run_text(document.element.body)
    assert b.SCOPE in text
    assert "TOP-SECRET-VALUE" not in text


def test_unsupported_extension(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedFormatError, match="supported extensions") as info:
        parse_bytes(b"data", "slides.pptx")
    assert info.value.code == "C302"
    with pytest.raises(UnsupportedFormatError, match=r"save the document as \.docx"):
        parse_bytes(b"data", "old.doc")
    (tmp_path / "x.pptx").write_bytes(b"data")
    with pytest.raises(UnsupportedFormatError):
        parse_path(tmp_path / "x.pptx")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DocumentError, match="cannot read"):
        parse_path(tmp_path / "nope.docx")


def test_binary_named_txt() -> None:
    with pytest.raises(DocumentError, match="binary"):
        parse_bytes(b"\x00\x01\x02garbage", "x.txt")


@pytest.mark.parametrize("name", ["r.docx", "r.pdf", "r.txt", "r.md", "r.html"])
def test_random_bytes_never_escape_as_other_errors(name: str) -> None:
    import random

    rng = random.Random(name)
    for _ in range(5):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 3000)))
        try:
            doc = parse_bytes(data, name)
        except ComplianceError as e:
            assert isinstance(e, DocumentError)
        else:
            b.check_invariants(doc)
