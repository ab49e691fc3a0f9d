"""Screenshot of an HTML file in headless Debian Chromium (Playwright for Python, the system browser; no browser
download): ``python -m tools.screenshot PAGE.html OUT.png``. Used by ``make demo`` for the coverage report."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def screenshot(page_file: Path, out: Path, width: int = 1280) -> Path:
    """Render ``page_file`` and save a full-page PNG to ``out``."""
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch_persistent_context(
                profile,
                executable_path=CHROMIUM,
                args=ARGS,
                headless=True,
                viewport={"width": width, "height": 900},
            )
            try:
                page = browser.new_page()
                page.goto(page_file.resolve().as_uri())
                page.screenshot(path=str(out), full_page=True)
            finally:
                browser.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m tools.screenshot PAGE.html OUT.png", file=sys.stderr)
        return 2
    if not Path(CHROMIUM).is_file():
        print(f"no {CHROMIUM}: apt-get install -y chromium chromium-driver", file=sys.stderr)
        return 1
    print(f"Screenshot:      {screenshot(Path(argv[0]), Path(argv[1]))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
