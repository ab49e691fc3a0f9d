"""The demo's screenshot step (``tools/screenshot.py``): without the system browser, ``--optional`` says the
screenshot was skipped and lets ``make demo`` go on; without the flag, a missing browser is an error."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "tools" / "screenshot.py"


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("screenshot_tool", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_missing_browser_is_skipped_with_optional_and_an_error_without(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tool = _tool()
    monkeypatch.setattr(tool, "CHROMIUM", str(tmp_path / "no-chromium"))
    page, out = tmp_path / "report.html", tmp_path / "report.png"
    page.write_text("<html><body>coverage</body></html>", encoding="utf-8")
    assert tool.main(["--optional", str(page), str(out)]) == 0
    said = capsys.readouterr()
    assert "skipped" in said.out and "apt-get install -y chromium" in said.out and not out.exists()
    assert tool.main([str(page), str(out)]) == 1
    assert "apt-get install -y chromium" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        tool.main([str(page)])
