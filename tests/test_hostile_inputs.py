"""Issue 14: hostile files cost one error line, never the batch (defects 1, 2, 7 and 10).

Every input is generated here (tests/fixtures/hostile.py); each test failed on the code before the fix.
"""

from __future__ import annotations

import io
import logging
import os
import resource
import time
import zipfile
from pathlib import Path

import pytest

from compliance.connectors import SplitConfig, iter_paths, parse_bytes, parse_many
from compliance.connectors.sandbox import ParseBudget, ParseWorker, parse_file
from compliance.errors import (
    DocumentError,
    DocumentTooLargeError,
    ParseMemoryError,
    ParserCrashError,
    ParseTimeoutError,
    UnsafeDocumentError,
)
from tests.fixtures import hostile as h
from tests.fixtures.connectors import builders as b


@pytest.fixture(scope="module")
def worker() -> object:
    """One worker for the module, with a short time budget (the loops below are infinite)."""
    with ParseWorker(ParseBudget(timeout_s=3.0, memory_mb=768)) as w:
        parse_file(h.simple_pdf(), "warm-up.pdf", worker=w)  # the timings below leave out the start-up
        yield w


# -- defect 1: hangs ---------------------------------------------------------------------------------------------
def test_pdf_reference_loop_costs_one_timeout_and_the_worker_recovers(worker) -> None:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    with pytest.raises(ParseTimeoutError) as info:
        parse_file(h.pdf_length_loop(), "loop.pdf", worker=worker)
    assert info.value.code == "C305" and "time budget" in str(info.value)
    assert time.perf_counter() - start < 3.0 + 10  # the budget, and some slack on a busy machine
    before = worker.started
    ok = parse_file(h.simple_pdf(), "ok.pdf", worker=worker)  # the next file gets a fresh worker
    assert ok.paragraphs[0].text == "Access rights are reviewed every quarter."
    assert worker.started == before + 1


def test_a_crashing_worker_costs_one_file(worker) -> None:  # type: ignore[no-untyped-def]
    import signal
    import threading

    caught: list[BaseException] = []

    def read() -> None:
        try:
            parse_file(h.pdf_length_loop(), "crash.pdf", worker=worker)
        except DocumentError as e:
            caught.append(e)

    thread = threading.Thread(target=read)
    thread.start()
    time.sleep(1.0)  # the worker is looping on the file now
    os.kill(worker._process.pid, signal.SIGSEGV)  # what a crash in a C library looks like from outside
    thread.join(timeout=30)
    assert len(caught) == 1 and isinstance(caught[0], ParserCrashError), caught
    assert caught[0].code == "C307" and "SIGSEGV" in str(caught[0])
    assert parse_file(h.simple_pdf(), "next.pdf", worker=worker).paragraphs


def test_pdf_parent_loop_is_an_error_not_a_hang(worker) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(DocumentError):
        parse_file(h.pdf_parent_loop(), "tree.pdf", worker=worker)


@pytest.mark.parametrize("make", [h.pdf_length_loop, h.pdf_mediabox_loop], ids=["length", "mediabox"])
def test_inline_mode_keeps_the_time_budget(make) -> None:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    with pytest.raises(ParseTimeoutError):
        parse_file(make(), "loop.pdf", isolation="inline", budget=ParseBudget(timeout_s=1.0))
    assert time.perf_counter() - start < 8


def test_worker_is_reused_across_files(tmp_path: Path, worker) -> None:  # type: ignore[no-untyped-def]
    for i in range(5):
        (tmp_path / f"n{i}.txt").write_text(f"Access rights are reviewed every quarter, note {i}.\n")
    before = worker.started
    docs = [parse_file(p, worker=worker) for p in sorted(tmp_path.iterdir())]
    assert len(docs) == 5 and worker.started == before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_named_like_a_document_is_skipped_not_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.txt")
    (tmp_path / "ok.txt").write_text("Access rights are reviewed every quarter.\n")
    skipped: dict[str, str] = {}
    found = list(iter_paths([tmp_path], on_skip=lambda p, why: skipped.__setitem__(p.name, why)))
    assert [p.name for p in found] == ["ok.txt"]
    assert skipped["pipe.txt"] == "not a regular file (a FIFO)"
    # named explicitly, it is refused without being opened (opening a FIFO blocks until a writer comes)
    with pytest.raises(UnsafeDocumentError, match="FIFO"):
        parse_file(tmp_path / "pipe.txt", isolation="inline")


def test_symlink_loops_and_links_out_of_the_tree(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "p.txt").write_text("Access rights are reviewed every quarter.\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("Not part of the folder given.\n")
    (root / "a" / "b" / "up").symlink_to("../..")  # two `..` links: exponential walk before the fix
    (root / "a" / "up2").symlink_to("..")
    (root / "self.txt").symlink_to("self.txt")  # RuntimeError traceback before the fix
    (root / "out").symlink_to(outside)
    (root / "out.txt").symlink_to(outside / "secret.txt")
    (root / "alias.txt").symlink_to(root / "a" / "b" / "p.txt")
    skipped: dict[str, str] = {}
    errors: dict[str, DocumentError] = {}
    start = time.perf_counter()
    found = list(
        iter_paths(
            [root],
            on_skip=lambda p, why: skipped.__setitem__(p.name, why),
            on_error=lambda p, e: errors.__setitem__(p.name, e),
        )
    )
    assert time.perf_counter() - start < 2
    assert [p.name for p in found] == ["p.txt"]  # alias.txt is the same file: yielded once
    assert "loops" in str(errors["self.txt"])
    assert skipped["out"].startswith("symbolic link to outside") and skipped["out.txt"] == skipped["out"]
    assert skipped["up"].startswith("symbolic link to a folder inside")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every folder")
def test_unreadable_sub_folder_is_a_failure_not_a_skip(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "p.txt").write_text("Access rights are reviewed every quarter.\n")
    locked.chmod(0)
    try:
        outcomes = list(parse_many([tmp_path]))
    finally:
        locked.chmod(0o755)
    assert [o.path.name for o in outcomes] == ["locked"]
    assert outcomes[0].error is not None and "cannot list the folder" in str(outcomes[0].error)


def test_unreadable_sub_folder_via_the_walk_callback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same policy where the suite runs as root: listing the folder fails (simulated), it is an error."""
    sub = tmp_path / "sub"
    sub.mkdir()
    real_scandir = os.scandir

    def scandir(path):  # type: ignore[no-untyped-def]
        if Path(path) == sub:
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    errors: list[str] = []
    skipped: list[str] = []
    list(
        iter_paths(
            [tmp_path],
            on_skip=lambda p, w: skipped.append(p.name),
            on_error=lambda p, e: errors.append(str(e)),
        )
    )
    assert errors == [f"{sub}: cannot list the folder: Permission denied"] and skipped == []


# -- defect 2: memory blow-ups -----------------------------------------------------------------------------------
def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_flate_bomb_pdf_is_refused_while_inflating() -> None:
    bomb = h.pdf_flate_bomb(300)  # 0.3 MB that inflates to 300 MiB
    assert len(bomb) < 400_000
    with pytest.raises(DocumentTooLargeError, match="inflate to more than") as info:
        parse_bytes(bomb, "bomb.pdf", config=SplitConfig(max_unpacked_bytes=50 * 1024 * 1024))
    assert info.value.code == "C304"


def test_memory_budget_stops_a_bomb_the_limits_let_through() -> None:
    generous = SplitConfig(max_unpacked_bytes=10**10)  # the explicit limit is off: the budget is the backstop
    with ParseWorker(ParseBudget(timeout_s=120, memory_mb=256)) as w:
        with pytest.raises(ParseMemoryError) as info:
            parse_file(h.pdf_flate_bomb(600), "bomb.pdf", config=generous, worker=w)
        assert info.value.code == "C306"
        assert parse_file(h.simple_pdf(), "after.pdf", worker=w).paragraphs  # the worker goes on


def test_docx_with_understated_zip_sizes_is_refused_by_counting() -> None:
    lying = h.docx_lying_sizes(150)  # the zip directory says 1 KB; it inflates to 150 MiB
    assert len(lying) < 1_000_000
    with pytest.raises(DocumentTooLargeError, match="counted while inflating"):
        parse_bytes(lying, "lying.docx")


def test_hundred_thousand_page_pdf_is_refused_before_loading_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    import pdfplumber.pdf

    built = []
    real_page = pdfplumber.pdf.Page

    def counting_page(*args, **kwargs):  # type: ignore[no-untyped-def]
        built.append(1)
        return real_page(*args, **kwargs)

    monkeypatch.setattr(pdfplumber.pdf, "Page", counting_page)
    data = h.pdf_many_pages(100_000)
    with pytest.raises(DocumentTooLargeError, match="100,000 pages"):
        parse_bytes(data, "pages.pdf")
    assert built == []  # 100,000 page objects (21 s, 0.5 GB) were built before the fix


def test_paragraph_cap_is_checked_before_splitting() -> None:
    text = b"\n\n".join(b"Short paragraph %d." % i for i in range(3000))
    start = time.perf_counter()
    with pytest.raises(DocumentTooLargeError, match="more than 1,000 paragraphs"):
        parse_bytes(text, "many.txt", config=SplitConfig(max_paragraphs=1000))
    assert time.perf_counter() - start < 2
    assert len(parse_bytes(text[:2000], "few.txt", config=SplitConfig(max_paragraphs=1000)).paragraphs) > 0


# -- defect 7: XML gate ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def policy_docx(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return b.build_policy_docx(tmp_path_factory.mktemp("x") / "p.docx").read_bytes()


def test_every_crafted_docx_dtd_is_refused(policy_docx: bytes) -> None:
    xml = zipfile.ZipFile(io.BytesIO(policy_docx)).read("word/document.xml")
    variants = h.xml_part_variants(xml)
    refused = {}
    for name, part in variants.items():
        with pytest.raises(DocumentError) as info:
            parse_bytes(b.replace_member(policy_docx, "word/document.xml", part), f"{name}.docx")
        refused[name] = info.value
    # all but one are refused by the DTD gate itself (the lower-case DOCTYPE is not even XML)
    gated = [
        n for n, e in refused.items() if isinstance(e, UnsafeDocumentError) and "declares a DTD" in str(e)
    ]
    assert set(gated) == set(variants) - {"lowercase-spaced"}


@pytest.mark.parametrize("data", [h.BILLION_LAUGHS_HTML, h.XXE_XHTML], ids=["billion-laughs", "xxe"])
@pytest.mark.parametrize("name", ["page.html", "page.xhtml"])
def test_html_with_entity_declarations_is_refused(data: bytes, name: str) -> None:
    with pytest.raises(UnsafeDocumentError, match="declares entities"):
        parse_bytes(data, name)


def test_plain_html_doctype_is_still_read() -> None:
    doc = parse_bytes(
        b'<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "x.dtd"><html><body><p>Access rights are '
        b"reviewed every quarter.</p></body></html>",
        "ok.xhtml",
    )
    assert [p.text for p in doc.paragraphs] == ["Access rights are reviewed every quarter."]


# -- defect 10: silent skips and untagged warnings ---------------------------------------------------------------
def test_utf16_without_bom_is_read_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    text = "Access rights are reviewed every quarter by the security team."
    for encoding in ("utf-16-le", "utf-16-be"):
        with caplog.at_level(logging.WARNING):
            doc = parse_bytes(text.encode(encoding), "u.txt")
        assert doc.paragraphs[0].text == text
    assert "u.txt: no byte-order mark; read as UTF-16-LE" in caplog.text


def test_shift_jis_is_decoded_and_named(caplog: pytest.LogCaptureFixture) -> None:
    text = "アクセス権は四半期ごとに見直されます。個人データは暗号化して保管します。"
    with caplog.at_level(logging.WARNING):
        doc = parse_bytes(text.encode("shift_jis"), "jp.txt")
    assert doc.paragraphs[0].text == text
    assert "jp.txt: not UTF-8; read as Shift-JIS" in caplog.text
    with caplog.at_level(logging.WARNING):
        parse_bytes("Café policy: résumés are kept one year.".encode("cp1252"), "w.txt")
    assert "w.txt: not UTF-8; read as Windows-1252" in caplog.text


def test_library_warnings_are_tagged_with_their_file_and_capped(
    worker,
    caplog: pytest.LogCaptureFixture,  # type: ignore[no-untyped-def]
) -> None:
    # a font without a descriptor and a corrupt zlib stream: pdfminer warns once per use
    noisy = h.simple_pdf(b"BT /F1 12 Tf 72 720 Td (Access rights are reviewed every quarter.) Tj ET")
    noisy = noisy.replace(b"/BaseFont /Helvetica", b"/BaseFont /NoSuchFont /FirstChar 300 /Widths 9 0 R")
    with caplog.at_level(logging.WARNING, logger="compliance.connectors.sandbox"):
        parse_file(noisy, "noisy.pdf", worker=worker)
        parse_file(noisy, "noisy.pdf", isolation="inline")
    lines = [r.getMessage() for r in caplog.records if r.name == "compliance.connectors.sandbox"]
    assert lines and all(line.startswith("noisy.pdf: ") for line in lines)
    assert len(lines) <= 2 * 6


def test_a_worker_that_cannot_start_stops_the_batch_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A parser library that fails to import in the worker (a broken installation) is not each file's fault: the
    first file raises C309 and the batch stops, instead of every file paying a failed worker start."""
    import subprocess
    import sys

    from compliance.app import ingest_documents
    from compliance.errors import ParserUnavailableError
    from compliance.settings import reset_settings
    from compliance.store import Store

    broken = tmp_path / "broken-site" / "spacy"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise ImportError('spaCy is broken in this installation')\n")
    monkeypatch.setattr(sys, "path", [str(broken.parent), *sys.path])  # the worker starts with this path
    monkeypatch.setenv("COMPLIANCE_PARSE_ISOLATION", "process")
    monkeypatch.setenv("COMPLIANCE_PARSE_TIMEOUT", "37")  # a budget of its own: no shared worker started yet
    monkeypatch.setenv("COMPLIANCE_PARSE_WORKERS", "2")
    reset_settings()
    starts: list[object] = []
    popen = subprocess.Popen

    def counted(*args: object, **kwargs: object) -> object:
        starts.append(args)
        return popen(*args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(subprocess, "Popen", counted)
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(6):
        (folder / f"policy-{i}.txt").write_text(f"Access rights are reviewed every quarter, control {i}.\n")
    store = Store(f"sqlite:///{tmp_path / 'x.db'}")
    store.upgrade()
    started = time.perf_counter()
    with pytest.raises(ParserUnavailableError) as caught:
        ingest_documents(store, [folder])
    assert caught.value.code == "C309" and "failed to start" in str(caught.value)
    assert len(starts) <= 2  # one start per worker of the pool, not one per file
    assert time.perf_counter() - started < 60
    assert store.list_documents() == []
    store.dispose()
