"""Folders and batches: iter_paths filtering and parse_many going past broken files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import compliance.connectors as connectors
from compliance.connectors import SUPPORTED_EXTENSIONS, ParseOutcome, iter_paths, parse_many
from compliance.errors import DocumentError, EncryptedDocumentError, UnsupportedFormatError
from tests.fixtures.connectors import builders as b


def _tree(root: Path) -> Path:
    (root / "sub").mkdir(parents=True)
    (root / ".hidden").mkdir()
    b.build_policy_docx(root / "a_policy.docx")
    b.build_policy_pdf(root / "sub" / "b_policy.pdf")
    (root / "c_notes.md").write_text("# Notes\n\nAll laptops use full-disk encryption at all times.\n")
    (root / "d_broken.pdf").write_bytes(b"this is not a pdf at all")
    b.build_policy_pdf(root / "e_locked.pdf", encrypt="pw")
    (root / "f_notes.txt").write_text("Backups are tested every month by the operations team.\n")
    (root / "image.png").write_bytes(b"\x89PNG")
    (root / ".secret.txt").write_text("hidden")
    (root / "~$a_policy.docx").write_bytes(b"lock")
    (root / ".hidden" / "x.txt").write_text("hidden folder")
    return root


def test_supported_extensions() -> None:
    assert {".docx", ".pdf", ".txt", ".md", ".html", ".htm"} <= SUPPORTED_EXTENSIONS
    assert ".doc" not in SUPPORTED_EXTENSIONS


def test_iter_paths_filters_with_reasons(tmp_path: Path) -> None:
    root = _tree(tmp_path / "docs")
    skipped: dict[str, str] = {}
    found = list(iter_paths([root], on_skip=lambda p, why: skipped.__setitem__(p.name, why)))
    assert [p.name for p in found] == [
        "a_policy.docx",
        "c_notes.md",
        "d_broken.pdf",
        "e_locked.pdf",
        "f_notes.txt",
        "b_policy.pdf",
    ]
    assert skipped["image.png"].startswith("unsupported extension")
    assert skipped[".secret.txt"] == skipped[".hidden"] == skipped["~$a_policy.docx"] == "hidden"
    flat = [p.name for p in iter_paths([root], recursive=False)]
    assert "b_policy.pdf" not in flat
    # explicit files are yielded even when unsupported (parsing reports them); duplicates are dropped
    explicit = list(iter_paths([root / "image.png", root / "c_notes.md", root / "c_notes.md"]))
    assert [p.name for p in explicit] == ["image.png", "c_notes.md"]


def test_parse_many_goes_past_broken_files(tmp_path: Path) -> None:
    root = _tree(tmp_path / "docs")
    outcomes = list(parse_many([root, root / "image.png", tmp_path / "missing.docx"]))
    assert all(isinstance(o, ParseOutcome) for o in outcomes)
    by_name = {o.path.name: o for o in outcomes}
    assert {n for n, o in by_name.items() if o.ok} == {
        "a_policy.docx",
        "b_policy.pdf",
        "c_notes.md",
        "f_notes.txt",
    }
    assert isinstance(by_name["e_locked.pdf"].error, EncryptedDocumentError)
    assert isinstance(by_name["d_broken.pdf"].error, DocumentError)
    assert isinstance(by_name["image.png"].error, UnsupportedFormatError)
    assert isinstance(by_name["missing.docx"].error, DocumentError)
    for o in outcomes:
        assert (o.document is None) != (o.error is None)
        if o.document is not None:
            b.check_invariants(o.document)
            assert o.document.source == str(o.path)


def test_import_is_light() -> None:
    code = (
        "import sys, compliance.connectors\n"
        "heavy = [m for m in ('docx', 'pdfplumber', 'spacy', 'bs4', 'markdown_it', 'langchain_core', 'torch')"
        " if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert set(connectors.__all__) >= {"parse_bytes", "parse_path", "parse_many", "iter_paths", "SplitConfig"}
