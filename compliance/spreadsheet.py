"""Cells for spreadsheet exports (CSV, XLSX) that a spreadsheet program opens as data, never as formulas.

A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is a formula to Excel, LibreOffice
and Google Sheets ("CSV injection": a policy paragraph or a file name such as ``=HYPERLINK(...)`` would run when a
compliance officer opens the export). :func:`safe_cell` prefixes such text with an apostrophe, the spreadsheet
convention for "this is text" (OWASP's recommendation), and every spreadsheet export writes its cells through it.
JSON exports keep the text unchanged: they are data, not a spreadsheet.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "EXPORT_KEYWORD",
    "FORMULA_PREFIXES",
    "XLSX_CELL_CHARS",
    "mark_export",
    "safe_cell",
    "safe_row",
    "xlsx_cell",
]

#: the keyword every workbook this tool exports carries in its document properties: a folder audit recognises its
#: own output by it and passes over it (:func:`compliance.connectors.sheet_reader.own_export`)
EXPORT_KEYWORD = "compliance-export"


def mark_export(workbook: Any) -> None:
    """Mark an openpyxl workbook as this tool's export (:data:`EXPORT_KEYWORD` in its keywords)."""
    workbook.properties.keywords = EXPORT_KEYWORD


#: control characters that XML 1.0 — and so an XLSX file — cannot hold (a file name uploaded with one would make
#: the workbook unwritable); they become U+FFFD
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")

#: first characters that make a spreadsheet program read a cell as a formula
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r", "\n", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def safe_cell(value: Any) -> Any:
    """``value`` as a cell that cannot run as a formula.

    Strings starting with one of :data:`FORMULA_PREFIXES` (also after leading spaces, and their full-width forms)
    get a leading apostrophe; numbers, booleans, dates and ``None`` are returned unchanged (they are typed cells,
    not text). Other values are returned unchanged too; convert them to text first (and pass the text). Control
    characters a workbook cannot hold (all but tab, line feed and carriage return) become U+FFFD.

    >>> safe_cell("=1+1"), safe_cell("-2"), safe_cell("Access is reviewed."), safe_cell(-2)
    ("'=1+1", "'-2", 'Access is reviewed.', -2)
    """
    if not isinstance(value, str):
        return value
    value = _CONTROL.sub("\ufffd", value)
    if value.lstrip(" ").startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


#: the most characters a cell of an XLSX workbook holds (Excel's specification and LibreOffice's limit): a longer
#: text makes Excel report the file as damaged and drop the cell's content
XLSX_CELL_CHARS = 32_767


def xlsx_cell(value: Any) -> Any:
    """:func:`safe_cell`, and a text longer than an XLSX cell holds cut to fit with a note that says so and how
    long it was (the review import ties a row to its paragraph by ``text_sha256``, never by this text; the JSON
    export keeps it whole)."""
    value = safe_cell(value)
    if not isinstance(value, str) or len(value) <= XLSX_CELL_CHARS:
        return value
    note = f" … [cut to fit a spreadsheet cell: {len(value):,} characters in all]"
    return value[: XLSX_CELL_CHARS - len(note)] + note


def safe_row(row: dict[str, Any]) -> dict[str, Any]:
    """Every value of a row through :func:`safe_cell`."""
    return {key: safe_cell(value) for key, value in row.items()}
