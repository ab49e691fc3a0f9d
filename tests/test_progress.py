"""Progress: bars on a terminal only; elsewhere one summary line per stage."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from compliance import progress


@pytest.fixture(autouse=True)
def _restore() -> Iterator[None]:
    before = progress.progress_enabled()
    yield
    progress.enable_progress(before)


def test_without_a_terminal_each_stage_is_one_summary_line() -> None:
    lines: list[str] = []
    progress.enable_progress(False, summary=lines.append)
    with progress.bar(40, desc="fine-tuning (r)", unit="step") as b:
        for _ in range(40):
            b.update(1)
        b.set_postfix(loss="0.512")
    assert list(progress.track(range(3), desc="parsing", unit="file")) == [0, 1, 2]
    assert len(lines) == 2
    assert lines[0].startswith("fine-tuning (r): 40 steps in ") and lines[0].endswith(", loss 0.512")
    assert lines[1].startswith("parsing: 3 file in ")
    assert not any("\r" in line for line in lines)


def test_library_default_is_silent() -> None:
    progress.enable_progress(False)
    with progress.bar(3, desc="x") as b:
        b.update(3)
    assert list(progress.track([1], desc="y")) == [1]


def test_a_redirected_command_writes_summary_lines_not_carriage_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from compliance.cli import cli
    from compliance.settings import reset_settings

    monkeypatch.setenv("COMPLIANCE_PROGRESS", "auto")
    reset_settings()
    doc = tmp_path / "policy.md"
    doc.write_text("# Policy\n\nWe encrypt laptops.\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["ingest", str(doc), "--database", f"sqlite:///{tmp_path / 'x.db'}"])
    assert result.exit_code == 0, result.output
    assert not progress.progress_enabled()  # CliRunner's stderr is no terminal
    assert "\r" not in result.stderr
    assert any(line.startswith("reading documents: 1 files in ") for line in result.stderr.splitlines())
