"""Screenshot of an HTML file in headless Debian Chromium (Playwright for Python, the system browser; no browser
download): ``python -m tools.screenshot [--optional] PAGE.html OUT.png``. Used by ``make demo`` for the coverage
report, with ``--optional``: on a machine without the browser the demo says the screenshot was skipped and how to
get it, and goes on."""

from __future__ import annotations

import argparse
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
    """0 when the screenshot was written, or skipped for want of the browser with ``--optional``; 1 when the browser
    is missing otherwise."""
    parser = argparse.ArgumentParser(prog="python -m tools.screenshot", description=__doc__.split("\n\n")[0])
    parser.add_argument("page", type=Path, help="the HTML file")
    parser.add_argument("out", type=Path, help="the PNG to write")
    parser.add_argument("--optional", action="store_true", help="without the browser, say so and exit 0")
    args = parser.parse_args(argv)
    if not Path(CHROMIUM).is_file():
        if args.optional:
            print(f"Screenshot:      skipped, no {CHROMIUM} (apt-get install -y chromium chromium-driver)")
            return 0
        print(f"no {CHROMIUM}: apt-get install -y chromium chromium-driver", file=sys.stderr)
        return 1
    print(f"Screenshot:      {screenshot(args.page, args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
