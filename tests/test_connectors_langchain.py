"""ComplianceBlobParser: the BaseBlobParser contract and paragraph metadata."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.document_loaders import BaseBlobParser, Blob
from langchain_core.documents import Document

from compliance.connectors import SplitConfig, parse_path
from compliance.connectors.langchain import ComplianceBlobParser
from compliance.errors import DocumentError, UnsupportedFormatError
from tests.fixtures.connectors import builders as b


@pytest.fixture(scope="module")
def policy_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return b.build_policy_pdf(tmp_path_factory.mktemp("lc") / "policy.pdf")


def test_blob_parser_contract(policy_pdf: Path) -> None:
    parser = ComplianceBlobParser()
    assert isinstance(parser, BaseBlobParser)
    blob = Blob.from_path(policy_pdf)
    lazy = parser.lazy_parse(blob)
    assert isinstance(lazy, Iterator)
    lazy_docs = list(lazy)
    eager = parser.parse(blob)
    assert [d.page_content for d in eager] == [d.page_content for d in lazy_docs]
    assert all(isinstance(d, Document) for d in eager)


def test_metadata_matches_parsed_document(policy_pdf: Path) -> None:
    parsed = parse_path(policy_pdf)
    docs = ComplianceBlobParser().parse(Blob.from_path(policy_pdf))
    assert len(docs) == len(parsed.paragraphs)
    for doc, p in zip(docs, parsed.paragraphs, strict=True):
        m = doc.metadata
        assert doc.page_content == p.text
        assert m["source"] == str(policy_pdf)
        assert m["checksum"] == parsed.checksum
        assert (m["ordinal"], m["page"], m["kind"]) == (p.ordinal, p.page, p.kind)
        assert m["heading_path"] == list(p.heading_path)
        assert m["heading"] == " > ".join(p.heading_path)
        assert parsed.text[m["char_start"] : m["char_end"]] == doc.page_content


def test_blob_from_data_uses_mimetype_and_config() -> None:
    blob = Blob.from_data(
        b"<h1>Rules</h1><p>" + b"Staff lock screens when away. " * 30 + b"</p>", mime_type="text/html"
    )
    docs = ComplianceBlobParser(SplitConfig(max_tokens=20)).parse(blob)
    assert len(docs) > 5
    assert all("page" not in d.metadata for d in docs)
    assert docs[0].metadata["heading_path"] == ["Rules"]
    with pytest.raises(UnsupportedFormatError):
        ComplianceBlobParser().parse(Blob.from_data(b"x", path="slides.pptx"))
    with pytest.raises(DocumentError):
        ComplianceBlobParser().parse(Blob.from_data(b"", path="empty.txt"))


def test_missing_langchain_gives_helpful_error() -> None:
    code = (
        "import sys\n"
        "sys.modules['langchain_core'] = None\n"
        "from compliance.errors import MissingDependencyError\n"
        "try:\n"
        "    import compliance.connectors.langchain\n"
        "except MissingDependencyError as e:\n"
        "    assert 'langchain' in str(e) and 'pip install' in str(e), str(e)\n"
        "else:\n"
        "    raise SystemExit('no error')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
