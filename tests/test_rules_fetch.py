"""Fetching law texts: --from files, mirrors, and downloads against a local HTTP server on 127.0.0.1."""

from __future__ import annotations

import hashlib
import shutil
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from compliance.errors import ChecksumMismatchError, CorpusFormatError, DownloadError
from compliance.rules import LawPack, fetch_pack_source, get_pack, install_pack, load_pack_law
from compliance.rules.fetch import clear_law_cache, download

FIXTURE = Path(__file__).parent / "fixtures" / "rules" / "mini_regulation.fmx.xml"
BODY = FIXTURE.read_bytes()
SHA = hashlib.sha256(BODY).hexdigest()


class _Handler(BaseHTTPRequestHandler):
    hits: ClassVar[Counter[str]] = Counter()

    def log_message(self, format: str, *args: object) -> None:  # keep pytest output clean
        pass

    def _send(self, status: int, body: bytes, length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body) if length is None else length))
        self.end_headers()
        try:
            self.wfile.write(body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_GET(self) -> None:
        path = self.path
        _Handler.hits[path] += 1
        if path == "/ok.xml":
            self._send(200, BODY)
        elif path == "/slow.xml":
            time.sleep(1.0)
            self._send(200, BODY)
        elif path == "/flaky.xml":
            if _Handler.hits[path] == 1:
                self._send(503, b"busy")
            else:
                self._send(200, BODY)
        elif path == "/down.xml":
            self._send(503, b"down")
        elif path == "/wrong.xml":
            self._send(200, BODY.replace(b"office plants", b"garden plants"))
        elif path == "/truncated.xml":
            self._send(200, BODY[:100], length=len(BODY))
            self.close_connection = True
        elif path == "/redirect.xml":
            self.send_response(302)
            self.send_header("Location", "/ok.xml")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self._send(404, b"not found")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(autouse=True)
def _reset_hits() -> None:
    _Handler.hits.clear()


def make_pack(url: str | None, sha: str = SHA) -> LawPack:
    source = {"file": "mini/mini_regulation.fmx.xml", "sha256": sha, "format": "formex4"}
    if url:
        source["url"] = url
    return LawPack.model_validate(
        {
            "name": "mini",
            "celex": "32030R0042",
            "title": "Mini Regulation",
            "jurisdiction": "EU",
            "law_type": "regulation",
            "sources": [source],
        }
    )


def fetch(pack: LawPack, **kwargs: object) -> tuple[bytes, str]:
    options: dict[str, object] = {
        "timeout": 0.5,
        "retries": 0,
        "backoff": 0.01,
        "mirror": Path("/nonexistent"),
    }
    options.update(kwargs)
    return fetch_pack_source(pack, **options)  # type: ignore[arg-type]


# -- downloads -------------------------------------------------------------------------------------------------
def test_download_success(server: str) -> None:
    data, source = fetch(make_pack(f"{server}/ok.xml"))
    assert data == BODY and source == f"{server}/ok.xml"


def test_download_follows_redirects(server: str) -> None:
    data, _ = fetch(make_pack(f"{server}/redirect.xml"))
    assert data == BODY


def test_download_timeout(server: str) -> None:
    started = time.monotonic()
    with pytest.raises(DownloadError, match="timed out"):
        fetch(make_pack(f"{server}/slow.xml"), timeout=0.2)
    assert time.monotonic() - started < 1.0


def test_retry_after_503_then_success(server: str) -> None:
    data, _ = fetch(make_pack(f"{server}/flaky.xml"), retries=2)
    assert data == BODY
    assert _Handler.hits["/flaky.xml"] == 2


def test_persistent_503_gives_up_after_retries(server: str) -> None:
    with pytest.raises(DownloadError, match=r"after 3 attempt\(s\): HTTP 503"):
        fetch(make_pack(f"{server}/down.xml"), retries=2)
    assert _Handler.hits["/down.xml"] == 3


def test_checksum_mismatch(server: str) -> None:
    with pytest.raises(ChecksumMismatchError, match="does not match"):
        fetch(make_pack(f"{server}/wrong.xml"))
    data, _ = fetch(make_pack(f"{server}/wrong.xml"), verify=False)
    assert b"garden plants" in data


def test_truncated_body(server: str) -> None:
    with pytest.raises(DownloadError, match="attempt"):
        fetch(make_pack(f"{server}/truncated.xml"), retries=1)
    assert _Handler.hits["/truncated.xml"] == 2  # a partial body is retried like a broken connection


def test_404_fails_at_once(server: str) -> None:
    with pytest.raises(DownloadError, match="HTTP 404"):
        fetch(make_pack(f"{server}/missing.xml"), retries=3)
    assert _Handler.hits["/missing.xml"] == 1


def test_connection_refused() -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(DownloadError, match="ConnectError"):
        fetch(make_pack(f"http://127.0.0.1:{port}/x.xml"), retries=1)


def test_size_limit(server: str) -> None:
    with pytest.raises(DownloadError, match="limit"):
        download(f"{server}/ok.xml", timeout=0.5, retries=0, max_bytes=100)


# -- local sources ------------------------------------------------------------------------------------------------
def test_from_path_is_verified(tmp_path: Path) -> None:
    pack = make_pack(None)
    data, source = fetch(pack, from_path=FIXTURE)
    assert data == BODY and source == str(FIXTURE)
    other = tmp_path / "other.xml"
    other.write_bytes(BODY + b"\n")
    with pytest.raises(ChecksumMismatchError, match="no-verify"):
        fetch(pack, from_path=other)
    assert fetch(pack, from_path=other, verify=False)[0] == BODY + b"\n"
    with pytest.raises(CorpusFormatError, match="cannot read"):
        fetch(pack, from_path=tmp_path / "absent.xml")


def test_mirror_is_preferred_to_download(tmp_path: Path, server: str) -> None:
    (tmp_path / "mini").mkdir()
    shutil.copy(FIXTURE, tmp_path / "mini" / "mini_regulation.fmx.xml")
    data, source = fetch(make_pack(f"{server}/ok.xml"), mirror=tmp_path)
    assert data == BODY and source == str(tmp_path / "mini" / "mini_regulation.fmx.xml")
    assert _Handler.hits["/ok.xml"] == 0


def test_corrupt_mirror_copy_is_refused(tmp_path: Path) -> None:
    (tmp_path / "mini").mkdir()
    (tmp_path / "mini" / "mini_regulation.fmx.xml").write_bytes(BODY[:-10])
    with pytest.raises(ChecksumMismatchError):
        fetch(make_pack(None), mirror=tmp_path)


def test_no_url_and_no_mirror() -> None:
    with pytest.raises(DownloadError, match="--from PATH"):
        fetch(make_pack(None))


# -- installing real packs ---------------------------------------------------------------------------------------
def test_install_gdpr_from_path(gdpr_xml: Path) -> None:
    law = install_pack("gdpr", from_path=gdpr_xml, mirror=Path("/nonexistent"))
    pack = get_pack("gdpr")
    assert law.short_name == "gdpr" and law.identifier == "32016R0679"
    assert law.title == pack.title and law.date_in_force == pack.date_in_force
    assert law.metadata["date_applicable"] == "2018-05-25"
    assert law.metadata["pack_source_file"] == pack.mirror_file
    assert "recital_map" not in law.metadata
    assert len(law.articles) == 99 and len(law.recitals) == 173


def test_install_gdpr_original_oj_file(shared_data: Path) -> None:
    """The file behind the pack's official URL is accepted (second source) and parsed."""
    law = install_pack("gdpr", from_path=shared_data / "laws" / "gdpr" / "L_2016119EN.01000101.xml")
    assert law.metadata["pack_source_file"] == "gdpr/L_2016119EN.01000101.xml"
    assert len(law.articles) == 99


def test_install_from_wrong_file_is_refused(shared_data: Path) -> None:
    with pytest.raises(ChecksumMismatchError):
        install_pack("gdpr", from_path=shared_data / "laws" / "eu" / "gdpr.json")
    law = install_pack("gdpr", from_path=shared_data / "laws" / "eu" / "gdpr.json", verify=False)
    assert law.short_name == "gdpr" and law.source_format == "eu-json"


def test_install_eu_pack_from_mirror(shared_data: Path) -> None:
    law = install_pack("nis2", mirror=shared_data / "laws")
    assert law.short_name == "nis2" and law.identifier == "32022L2555" and law.source_format == "eu-json"
    assert law.source == str(shared_data / "laws" / "eu" / "nis2.json")


def test_load_pack_law_uses_the_mirror_setting_and_caches(
    shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compliance.settings import reset_settings

    monkeypatch.setenv("COMPLIANCE_LAW_MIRROR", str(shared_data / "laws"))
    reset_settings()
    clear_law_cache()
    try:
        first = load_pack_law("gdpr")
        assert first.source == str(
            shared_data / "laws" / "gdpr" / "gdpr-consolidated-with-corrected-preamble-en.xml"
        )
        assert load_pack_law("GDPR") is first
    finally:
        clear_law_cache()


def test_load_pack_law_without_any_source(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from compliance.settings import reset_settings

    monkeypatch.setenv("COMPLIANCE_LAW_MIRROR", str(tmp_path))
    reset_settings()
    clear_law_cache()
    with pytest.raises(DownloadError, match="COMPLIANCE_LAW_MIRROR"):
        load_pack_law("eprivacy")


def test_dates_official_file_first_pack_fills_gaps(shared_data: Path) -> None:
    from datetime import date

    from compliance.rules import apply_pack_metadata, parse_formex

    pack = make_pack(None).model_copy(
        update={"date_in_force": date(2099, 1, 1), "date_adopted": date(2099, 1, 1), "date_applicable": None}
    )
    law = apply_pack_metadata(parse_formex(BODY, source="mini"), pack)
    assert law.date_in_force == date(2030, 2, 1) and law.date_adopted == date(2030, 1, 15)  # from the XML
    assert law.metadata["date_applicable"] == "2031-01-01"
    # the OJ original has no publication date, so its in-force date comes from the pack
    oj = install_pack("gdpr", from_path=shared_data / "laws" / "gdpr" / "L_2016119EN.01000101.xml")
    assert oj.date_in_force == date(2016, 5, 24)
    # EU JSON's effective_date (here the application date) yields to the pack's entry-into-force date
    nis2 = install_pack("nis2", mirror=shared_data / "laws")
    assert nis2.date_in_force == date(2023, 1, 16) and nis2.metadata["effective_date"] == "2024-10-17"


def test_download_with_progress_bar(server: str, capsys: pytest.CaptureFixture[str]) -> None:
    from compliance.progress import enable_progress

    enable_progress(True)
    try:
        assert download(f"{server}/ok.xml", timeout=0.5, retries=0) == BODY
    finally:
        enable_progress(False)
    assert "ok.xml" in capsys.readouterr().err
