"""The web review page in a real browser (headless Debian Chromium driven by Playwright for Python): sign in with
a token, open a document, accept a suggested link, see the review progress and the coverage change. A screenshot
is kept as a test artifact under var/screenshots/. Nothing is loaded from another host."""

from __future__ import annotations

import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.fixtures.api import POLICY, tiny_classifier

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
ARTIFACTS = Path(__file__).resolve().parent.parent / "var" / "screenshots"

playwright = pytest.importorskip("playwright.sync_api", reason="playwright (Python) is not installed")
pytestmark = pytest.mark.skipif(
    not CHROMIUM.is_file(),
    reason="Debian Chromium is missing (apt-get install -y chromium chromium-driver; .ci/run installs it)",
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def server(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """`compliance serve`'s application on a real socket, over a store holding one audited policy."""
    pytest.importorskip("torch")
    uvicorn = pytest.importorskip("uvicorn")
    from compliance.api import create_app
    from compliance.app import audit_documents
    from compliance.app.tokens import create_token
    from compliance.linking.classifier_links import ClassifierLinkConfig
    from compliance.store.testing import migrated_store
    from compliance.workers.inprocess import ThreadDispatcher
    from tests.fixtures.classifier.tiny import mini_gdpr

    with migrated_store("sqlite", tmp_path) as store:
        store.save_law(mini_gdpr())
        doc = tmp_path / "security-policy.txt"
        doc.write_text(POLICY, encoding="utf-8")
        clf = tiny_classifier()
        audit_documents(store, [doc], clf, config=ClassifierLinkConfig(top_k=2, review_band=(0.0, 0.5)))
        token = create_token(store, "ann", "reviewer").secret
        pool = ThreadDispatcher(store, classifier=lambda p: clf)
        app = create_app(store, dispatcher=pool, classifier=lambda: clf)
        port = _free_port()
        srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        thread = threading.Thread(target=srv.run, daemon=True)
        thread.start()
        deadline = time.time() + 30
        while not srv.started and time.time() < deadline:
            time.sleep(0.05)
        assert srv.started
        try:
            yield {"url": f"http://127.0.0.1:{port}", "token": token, "store": store}
        finally:
            srv.should_exit = True
            thread.join(10)
            pool.shutdown()


def test_sign_in_open_a_document_accept_a_link(server: dict[str, Any]) -> None:
    base, store = server["url"], server["store"]
    profile = Path(tempfile.mkdtemp(prefix="chromium-profile-"))
    hosts: set[str] = set()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
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
                page.on("request", lambda r: hosts.add(urlsplit(r.url).netloc))
                page.goto(f"{base}/ui/")
                assert page.url.endswith("/ui/login")  # not signed in: sent to the sign-in form
                page.fill("#token", "cpl_wrong")
                page.click("button[type=submit]")
                assert "unknown or revoked" in page.locator(".error").inner_text()
                page.fill("#token", server["token"])
                page.click("button[type=submit]")
                page.wait_for_url(f"{base}/ui/")
                row = page.locator("#documents tbody tr")
                assert row.count() == 1 and "0/6 decided" in row.inner_text()
                page.click("#documents a")
                page.wait_for_selector("#paragraphs")
                assert page.locator(".accepted-count").inner_text() == "0"
                first = page.locator("li.link").first
                link_id = first.get_attribute("id")
                assert link_id is not None
                first.locator("button[value=accept]").click()
                page.wait_for_selector(f"#{link_id}.s-accepted")
                assert page.locator(".accepted-count").inner_text() == "1"
                assert page.locator(f"#{link_id} .status").inner_text() == "accepted"
                page.screenshot(path=str(ARTIFACTS / "review-page.png"), full_page=True)
                # a comment keeps the decision and is recorded with it
                second = page.locator("li.link").nth(1)
                second_id = second.get_attribute("id")
                second.locator("input[name=comment]").fill("checked with the DPO")
                second.locator("button[value=comment]").click()
                page.wait_for_function(
                    "id => document.querySelector('#' + id + ' input[name=comment]').value === ''",
                    arg=second_id,
                )
                # back on the list, the progress has moved
                page.goto(f"{base}/ui/")
                assert "1/6 decided" in page.locator("#documents tbody tr").inner_text()
                page.goto(f"{base}/ui/alerts")
                assert "No alert" in page.locator("main").inner_text()
            finally:
                browser.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    assert hosts == {urlsplit(base).netloc}  # htmx and the styles come from this server, not a CDN
    reviews = [r for link in store.list_links() for r in store.list_reviews(link.id)]
    assert sorted((r.decision, r.reviewer, r.comment) for r in reviews)[0][1] == "ann"
    assert any(r.comment == "checked with the DPO" for r in reviews)
    assert (ARTIFACTS / "review-page.png").stat().st_size > 10_000


def test_an_officer_accepts_a_link_and_sees_the_coverage_change(server: dict[str, Any]) -> None:
    """Sign in, open the coverage heatmap from the documents page, go to the document, accept a link, and see its
    article's cell turn from suggested to accepted on the heatmap (and the covered count move)."""
    base, store = server["url"], server["store"]
    profile = Path(tempfile.mkdtemp(prefix="chromium-profile-"))
    hosts: set[str] = set()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
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
                page.on("request", lambda r: hosts.add(urlsplit(r.url).netloc))
                page.goto(f"{base}/ui/login")
                page.fill("#token", server["token"])
                page.click("button[type=submit]")
                page.wait_for_url(f"{base}/ui/")
                page.click("#coverage-link")
                page.wait_for_url(f"{base}/ui/coverage")
                assert page.locator("#covered-count").inner_text() == "0"
                suggested = page.locator("#heatmap td[data-state=suggested]").count()
                assert suggested > 0 and page.locator("#heatmap td[data-state=accepted]").count() == 0
                # htmx: refreshing the filter swaps the table in place (no page load: the marker survives)
                page.evaluate("window.__marker = 42")
                with page.expect_response(lambda r: "/ui/coverage/heatmap" in r.url):
                    page.click("#coverage-filter button[type=submit]")
                page.wait_for_selector("#heatmap table.heatmap")
                assert page.evaluate("window.__marker") == 42

                page.click("#heatmap th.doc a")
                page.wait_for_selector("#paragraphs")
                first = page.locator("li.link").first
                dom_id = first.get_attribute("id")
                assert dom_id is not None
                link = store.current_links(link_ids=[int(dom_id.removeprefix("link-"))])[0]
                article = link.provision_key.split("/")[0]
                cell = f'#heatmap td[data-doc="{link.document_id}"][data-article="{article}"]'
                first.locator("button[value=accept]").click()
                page.wait_for_selector(f"#{dom_id}.s-accepted")

                page.click("header nav a[href='/ui/coverage']")
                page.wait_for_url(f"{base}/ui/coverage")
                assert page.locator(cell).get_attribute("data-state") == "accepted"
                colour = page.locator(cell).evaluate("td => getComputedStyle(td).backgroundColor")
                assert colour == "rgb(26, 127, 55)"  # the accepted green
                assert page.locator("#covered-count").inner_text() == "1"
                assert page.locator("#heatmap td[data-state=accepted]").count() == 1
                assert page.locator("#heatmap td[data-state=suggested]").count() < suggested
                page.screenshot(path=str(ARTIFACTS / "coverage-heatmap.png"), full_page=True)
            finally:
                browser.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    assert hosts == {urlsplit(base).netloc}
    assert [r.reviewer for r in store.list_reviews(link.link_id)] == ["ann"]
    assert (ARTIFACTS / "coverage-heatmap.png").stat().st_size > 10_000
