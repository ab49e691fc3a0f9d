"""Spreadsheet connectors: a control matrix as XLSX or CSV; this tool's own exports passed over in a folder walk."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path

import pytest

from compliance.connectors import iter_paths, parse_bytes, parse_path
from compliance.connectors.sheet_reader import own_export
from compliance.errors import DocumentError, DocumentTooLargeError, UnsafeDocumentError
from tests.fixtures.connectors import builders as b

AC01 = "Access to personal data is granted on a need-to-know basis and approved by the data owner."
AC02 = "User access rights are reviewed every quarter and excess rights removed."
BK01 = "Backups of customer databases are encrypted and restore-tested every month."


def _matrix_xlsx(path: Path, *, title: str | None = None) -> Path:
    """A control matrix the way officers keep one: a title row, a blank row, the header, section label rows; a
    hidden lookup sheet and a change-log sheet with a date."""
    import openpyxl

    wb = openpyxl.Workbook()
    if title:
        wb.properties.title = title
    ws = wb.active
    assert ws is not None
    ws.title = "Controls"
    ws.append(["Information Security Control Matrix"])
    ws.append([])
    ws.append(["ID", "Control", "Owner", "Frequency", None])
    ws.append(["Access control"])
    ws.append(["AC-01", AC01, "IT Security", "On request"])
    ws.append(["AC-02", AC02, "System owners", 4])
    ws.append(["Backup"])
    ws.append(["BK-01", BK01, '=CONCATENATE("Infra","structure")', 12.0])
    lookups = wb.create_sheet("Lookups")
    lookups.append(["Quarterly", "Monthly"])
    lookups.sheet_state = "hidden"
    changes = wb.create_sheet("Changes")
    changes.append(["Date", "Change"])
    changes.append([dt.datetime(2025, 3, 1), "BK-01 added"])
    wb.save(path)
    return path


def test_xlsx_control_matrix(tmp_path: Path) -> None:
    doc = parse_path(_matrix_xlsx(tmp_path / "control-matrix.xlsx"))
    b.check_invariants(doc)
    assert doc.media_type == "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    assert doc.title == "control-matrix"  # no workbook title: the file's name, not a sheet's
    assert [(p.kind, p.heading_path, p.text) for p in doc.paragraphs] == [
        (
            "table-row",
            ("Controls", "Information Security Control Matrix", "Access control"),
            f"ID: AC-01; Control: {AC01}; Owner: IT Security; Frequency: On request",
        ),
        (
            "table-row",
            ("Controls", "Information Security Control Matrix", "Access control"),
            f"ID: AC-02; Control: {AC02}; Owner: System owners; Frequency: 4",
        ),
        (
            # a formula is not evaluated here: openpyxl keeps no computed value for a workbook it wrote itself, so
            # the cell is empty (a spreadsheet program's saved file carries the value)
            "table-row",
            ("Controls", "Information Security Control Matrix", "Backup"),
            f"ID: BK-01; Control: {BK01}; Frequency: 12",
        ),
        ("table-row", ("Changes",), "Date: 2025-03-01; Change: BK-01 added"),
    ]
    assert "Quarterly" not in doc.text  # the hidden sheet
    assert parse_path(_matrix_xlsx(tmp_path / "m.xlsx", title="ISMS Controls")).title == "ISMS Controls"


def test_xlsx_rows_get_roles_and_the_change_log_is_metadata(tmp_path: Path) -> None:
    from compliance.connectors.roles import assign_roles

    (doc,) = assign_roles([parse_path(_matrix_xlsx(tmp_path / "m.xlsx"))])
    assert [p.role for p in doc.paragraphs] == ["statement", "statement", "statement", "metadata"]


def test_csv_with_semicolons_and_a_bom() -> None:
    data = (f'\ufeffID;Control;Owner\nAC-01;{AC01};IT Security\n;;\nBK-01;"{BK01}";Infrastructure\n').encode()
    doc = parse_bytes(data, "controls.csv")
    b.check_invariants(doc)
    assert doc.media_type == "text/csv"
    assert [p.text for p in doc.paragraphs] == [
        f"ID: AC-01; Control: {AC01}; Owner: IT Security",
        f"ID: BK-01; Control: {BK01}; Owner: Infrastructure",
    ]


def test_empty_and_unsafe_workbooks_are_refused(tmp_path: Path) -> None:
    import openpyxl

    wb = openpyxl.Workbook()
    out = io.BytesIO()
    wb.save(out)
    with pytest.raises(DocumentError, match="no visible sheet with text"):
        parse_bytes(out.getvalue(), "empty.xlsx")
    good = _matrix_xlsx(tmp_path / "m.xlsx").read_bytes()
    doctype = b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><x>&a;</x>'
    with pytest.raises(UnsafeDocumentError):
        parse_bytes(b.replace_member(good, "xl/worksheets/sheet1.xml", doctype), "bad.xlsx")
    bomb = b.replace_member(good, "xl/worksheets/sheet1.xml", b"<x>" + b" " * (3 * 1024 * 1024) + b"</x>")
    from compliance.connectors import SplitConfig

    with pytest.raises(DocumentTooLargeError):
        parse_bytes(bomb, "bomb.xlsx", config=SplitConfig(max_compression_ratio=10.0))


def test_own_exports_are_passed_over_in_a_folder(tmp_path: Path) -> None:
    """A review spreadsheet or coverage workbook saved beside the policies is this tool's output: a folder audit
    skips it (with its reason) instead of mapping the links' own rows; a control matrix is read."""
    import openpyxl

    from compliance.reports.link_sheet import write_link_sheet

    write_link_sheet([], tmp_path / "links.xlsx")  # the header row and the help sheet, marked as an export
    write_link_sheet([], tmp_path / "links.csv")
    old = openpyxl.Workbook()  # a coverage workbook written before exports were marked: known by its sheets
    for i, name in enumerate(("summary", "matrix", "chapters", "gaps", "suggested only")):
        sheet = old.active if i == 0 else old.create_sheet(name)
        assert sheet is not None
        sheet.title = name
        sheet.append(["figure", "value"])
    old.save(tmp_path / "coverage-gdpr.xlsx")
    _matrix_xlsx(tmp_path / "matrix.xlsx")
    (tmp_path / "controls.csv").write_text(f"ID,Control\nAC-01,{AC01}\n", encoding="utf-8")
    assert own_export(tmp_path / "links.xlsx") and own_export(tmp_path / "links.csv")
    assert own_export(tmp_path / "coverage-gdpr.xlsx")
    assert not own_export(tmp_path / "matrix.xlsx") and not own_export(tmp_path / "controls.csv")
    skipped: list[tuple[str, str]] = []
    found = list(iter_paths([tmp_path], on_skip=lambda p, why: skipped.append((p.name, why))))
    assert sorted(p.name for p in found) == ["controls.csv", "matrix.xlsx"]
    assert sorted(name for name, _ in skipped) == ["coverage-gdpr.xlsx", "links.csv", "links.xlsx"]
    assert all("export of this tool" in why for _, why in skipped)


def test_a_sheet_formatted_to_its_last_row_ends_after_ten_thousand_empty_rows(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import openpyxl
    from openpyxl.styles import Font

    wb = openpyxl.Workbook()
    ws = wb.active
    assert ws is not None
    ws.append(["ID", "Control"])
    ws.append(["AC-01", AC02])
    for r in range(3, 10_010):
        ws.cell(row=r, column=1).font = Font(bold=True)  # formatted, empty
    ws.cell(row=10_020, column=1, value="ZZ-99")
    ws.cell(row=10_020, column=2, value="A row far below the table.")
    out = io.BytesIO()
    wb.save(out)
    with caplog.at_level("WARNING"):
        doc = parse_bytes(out.getvalue(), "formatted.xlsx")
    assert [p.text for p in doc.paragraphs] == [f"ID: AC-01; Control: {AC02}"]
    assert "10,000 empty rows in a row" in caplog.text


def test_a_password_protected_workbook_says_so_in_its_own_terms() -> None:
    from compliance.connectors.safety import OLE_MAGIC
    from compliance.errors import EncryptedDocumentError

    with pytest.raises(
        EncryptedDocumentError, match=r"legacy \.xls; remove the password or save it as \.xlsx"
    ):
        parse_bytes(OLE_MAGIC + b"\x00" * 512, "locked.xlsx")
