"""The HTML coverage report rendered by a real browser (headless Debian Chromium driven by Playwright): the gap
list and the matrix cells are read from the DOM, the page makes no network request, and prints to A4."""

from __future__ import annotations

import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from compliance.reports.coverage import build_coverage
from compliance.reports.html import render_html
from tests.fixtures.classifier.tiny import mini_gdpr
from tests.test_grc_exports import LINKS, link

CHROMIUM = Path("/usr/bin/chromium")
#: the flags known to work on the development machines and in CI (no sandbox as root, no background traffic)
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

playwright = pytest.importorskip("playwright.sync_api", reason="playwright (Python) is not installed")
pytestmark = pytest.mark.skipif(
    not CHROMIUM.is_file(),
    reason="Debian Chromium is missing (apt-get install -y chromium chromium-driver; .ci/run installs it)",
)


def render_report(tmp_path: Path) -> Path:
    report = build_coverage(
        mini_gdpr(),
        [*LINKS, link(5, "art:17", "rejected", 0.3, doc=1, para=2)],
        [(1, "policies/doc1.docx", 1), (2, "policies/doc2.docx", 1)],
        generated_at=datetime(2026, 12, 1, tzinfo=UTC),
    )
    out = tmp_path / "coverage.html"
    out.write_text(render_html(report), encoding="utf-8")
    return out


def test_the_report_in_chromium(tmp_path: Path) -> None:
    page_file = render_report(tmp_path)
    profile = Path(tempfile.mkdtemp(prefix="chromium-profile-"))
    requests: list[str] = []
    try:
        with playwright.sync_playwright() as p:
            browser = p.chromium.launch_persistent_context(
                str(profile),
                executable_path=str(CHROMIUM),
                args=CHROMIUM_ARGS,
                headless=True,
                viewport={"width": 1280, "height": 900},
            )
            try:
                page = browser.new_page()
                page.on("request", lambda r: requests.append(r.url))
                page.goto(page_file.as_uri())
                gaps = page.locator("#gaps li")
                assert gaps.evaluate_all("els => els.map(e => e.dataset.article)") == [
                    "art:5",
                    "art:17",
                    "art:33",
                ]
                assert gaps.evaluate_all("els => els.map(e => e.dataset.state)") == [
                    "gap",
                    "rejected",
                    "suggested",
                ]
                assert "suggested only" in gaps.nth(2).inner_text()
                cell = page.locator('#matrix rect[data-doc="1"][data-article="art:32"]')
                assert cell.get_attribute("data-state") == "accepted"
                assert (
                    page.locator('#matrix rect[data-doc="2"][data-article="art:33"]').get_attribute(
                        "data-state"
                    )
                    == "suggested"
                )
                assert (
                    page.locator('#matrix rect[data-doc="1"][data-article="art:17"]').get_attribute(
                        "data-state"
                    )
                    == "rejected"
                )
                assert page.locator("#matrix rect").count() == 10  # 2 documents x 5 articles
                assert page.locator("#covered-count").inner_text() == "2"
                assert page.locator("#gap-count").inner_text() == "3"
                box = page.locator("#matrix").bounding_box()
                assert box is not None and box["width"] > 100
                page.screenshot(path=str(tmp_path / "coverage.png"), full_page=True)
                pdf = page.pdf(format="A4", landscape=True, print_background=True)
                assert pdf.startswith(b"%PDF") and len(pdf) > 5000
            finally:
                browser.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    assert [u for u in requests if not u.startswith("file://")] == []
    assert (tmp_path / "coverage.png").stat().st_size > 10_000
