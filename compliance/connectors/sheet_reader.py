"""Spreadsheet connectors: control catalogues, registers and matrices kept as XLSX workbooks or CSV files.

Every visible worksheet is read as one table. Its header row is the first row with at least two filled cells;
the single-cell rows above it (a title such as "Information Security Control Matrix") are headings, and each row
below it becomes one ``table-row`` paragraph that reads ``"Header: value; Header: value"``, as a table row of a
Word document does (:func:`compliance.connectors.assemble.table_blocks`). A row inside the table whose only
filled cell is its first, in a table of three or more columns, is a section label ("Access control") and becomes
a heading. A workbook of several visible sheets gives each sheet's name as a level-1 heading. Formulas are read
as the values the spreadsheet program last computed (never evaluated here); dates as ISO dates.

An XLSX workbook is opened only after :func:`compliance.connectors.safety.open_ooxml_zip` has checked the package
(zip-bomb limits, no DTD in any XML part); a CSV file's delimiter (comma, semicolon, tab, bar) is sniffed.

This tool's own exports (the review spreadsheet of ``compliance links export``, the coverage workbook of
``compliance report``) are recognised by :func:`own_export` so that a folder audit passes over them instead of
auditing its own output.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import logging
import zipfile
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePath
from typing import Any

from compliance.connectors.assemble import Block, assemble, table_blocks
from compliance.connectors.config import SplitConfig
from compliance.connectors.document import ParsedDocument
from compliance.connectors.safety import check_paragraph_count, check_size, open_ooxml_zip
from compliance.connectors.text_reader import decode_text
from compliance.errors import DocumentError
from compliance.spreadsheet import EXPORT_KEYWORD

logger = logging.getLogger(__name__)

XLSX_MEDIA_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
CSV_MEDIA_TYPE = "text/csv"
#: columns whose presence in a CSV header marks the review spreadsheet of ``compliance links export``
_REVIEW_SHEET_COLUMNS = frozenset({"link_id", "text_sha256", "decision"})
#: what marks this tool's workbooks: the export keyword (since it was written), else the sheet names of the review
#: spreadsheet or of the coverage workbook (exports written before the keyword)
_EXPORT_MARKS = (EXPORT_KEYWORD.encode(),)
_REVIEW_SHEET_NAMES = (b'name="links"', b'name="how to review"')
_COVERAGE_SHEET_NAMES = (b'name="summary"', b'name="matrix"', b'name="gaps"', b'name="suggested only"')
#: this many empty rows in a row end a sheet's reading, with a warning (a sheet formatted down to its last row lists
#: a million)
_EMPTY_ROWS_ENDING_A_SHEET = 10_000


def _cell(value: Any) -> str:
    """A cell's value as text: whole numbers without ``.0``, dates as ISO dates, nothing for an empty cell."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    return " ".join(str(value).split())


def sheet_blocks(rows: Iterable[Sequence[str]], title: str | None = None) -> list[Block]:
    """The blocks of one sheet (see the module docstring): its name as a heading when given, the title rows above
    the header row as headings, then one table of rows with section labels as headings."""
    grid = [list(r) for r in rows if any(c.strip() for c in r)]
    blocks: list[Block] = [Block("heading", title, level=1)] if title else []
    if not grid:
        return blocks
    width = max(len(r) for r in grid)
    used = [j for j in range(width) if any(j < len(r) and r[j].strip() for r in grid)]
    grid = [[r[j] if j < len(r) else "" for j in used] for r in grid]  # empty columns left out
    start = next((i for i, r in enumerate(grid) if sum(1 for c in r if c.strip()) >= 2), None)
    level = 2 if title else 1
    if start is None:  # a list of single values: each one a paragraph
        return blocks + [Block("paragraph", " ".join(c for c in r if c)) for r in grid]
    blocks.extend(Block("heading", " ".join(c for c in r if c), level=level) for r in grid[:start])
    header: list[str] = grid[start]
    table: list[list[str]] = []
    for row in grid[start + 1 :]:
        filled = [c for c in row if c.strip()]
        if len(used) >= 3 and len(filled) == 1 and row[0].strip():  # a section label inside the table
            if table:
                blocks.extend(table_blocks([header, *table], header=True))
                table = []
            blocks.append(Block("heading", row[0], level=level + 1))
            continue
        table.append(row)
    if table:
        blocks.extend(table_blocks([header, *table], header=True))
    return blocks


def parse_xlsx(data: bytes, source: str, config: SplitConfig) -> ParsedDocument:
    """Parse an XLSX (or macro-enabled XLSM) workbook; see the module docstring."""
    check_size(data, source, config)
    open_ooxml_zip(data, source, config, "xl/workbook.xml").close()
    import openpyxl

    try:
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True, keep_links=False)
    except Exception as e:
        raise DocumentError(source, f"the workbook could not be read: {type(e).__name__}: {e}") from e
    try:
        sheets: list[tuple[str, list[list[str]]]] = []
        rows_read = 0
        for sheet in workbook.worksheets:
            if getattr(sheet, "sheet_state", "visible") != "visible":
                continue  # a hidden sheet (lookup lists, calculations) is not the catalogue
            grid: list[list[str]] = []
            empty_run = 0
            for values in sheet.iter_rows(values_only=True):
                row = [_cell(v) for v in values]
                if not any(row):
                    empty_run += 1
                    if empty_run >= _EMPTY_ROWS_ENDING_A_SHEET:  # formatting down to row 1,048,576
                        logger.warning(
                            "%s: sheet %r read up to its %s empty rows in a row; the rest is not read",
                            source,
                            sheet.title,
                            f"{empty_run:,}",
                        )
                        break
                    continue
                empty_run = 0
                rows_read += 1
                check_paragraph_count(rows_read, source, config)
                grid.append(row)
            if grid:
                sheets.append((str(sheet.title), grid))
        # the workbook's own title, else its file name: a sheet's name ("Sheet1", "Controls") names no document
        title = str(workbook.properties.title or "").strip() or PurePath(source).stem
    finally:
        workbook.close()
    if not sheets:
        raise DocumentError(source, "the workbook has no visible sheet with text")
    named = len(sheets) > 1
    blocks = [b for name, grid in sheets for b in sheet_blocks(grid, name if named else None)]
    return assemble(
        blocks,
        data=data,
        source=source,
        media_type=XLSX_MEDIA_TYPE,
        config=config,
        title=title,
        metadata={"connector": "xlsx", "sheets": str(len(sheets))},
    )


def _csv_rows(text: str) -> list[list[str]]:
    sample = text[:20_000]
    try:
        dialect: Any = csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    return [[" ".join(c.split()) for c in row] for row in csv.reader(io.StringIO(text), dialect)]


def parse_csv(data: bytes, source: str, config: SplitConfig) -> ParsedDocument:
    """Parse a CSV file as one table (see the module docstring)."""
    check_size(data, source, config)
    try:
        rows = _csv_rows(decode_text(data, source))
    except csv.Error as e:
        raise DocumentError(source, f"the CSV file could not be read: {e}") from e
    check_paragraph_count(sum(1 for r in rows if any(r)), source, config)
    blocks = sheet_blocks(rows)
    if not blocks:
        raise DocumentError(source, "the CSV file has no text")
    return assemble(
        blocks,
        data=data,
        source=source,
        media_type=CSV_MEDIA_TYPE,
        config=config,
        metadata={"connector": "csv"},
    )


def own_export(path: Path) -> bool:
    """Whether ``path`` is an export of this tool: a workbook whose properties carry :data:`EXPORT_KEYWORD`, or a
    CSV file whose header is the review spreadsheet's. Reads a few kilobytes; any problem reading means no (the
    reader then judges the file)."""
    suffix = path.suffix.lower()
    try:
        if suffix == ".csv":
            with path.open("rb") as fh:
                head = fh.read(4096).decode("utf-8-sig", errors="replace").splitlines()
            if not head:
                return False
            columns = {c.strip() for c in next(csv.reader([head[0]]))}
            return columns >= _REVIEW_SHEET_COLUMNS
        if suffix in (".xlsx", ".xlsm"):
            with zipfile.ZipFile(path) as archive:
                names = set(archive.namelist())
                for member, marks in (
                    ("docProps/core.xml", _EXPORT_MARKS),
                    ("xl/workbook.xml", _REVIEW_SHEET_NAMES),
                    ("xl/workbook.xml", _COVERAGE_SHEET_NAMES),
                ):
                    if member not in names:
                        continue
                    info = archive.getinfo(member)
                    if info.file_size > 64 * 1024:
                        continue
                    # byte patterns, not an XML parse: this runs in the walking process, not the parse worker
                    content = archive.read(info)
                    if all(mark in content for mark in marks):
                        return True
                return False
    except (OSError, KeyError, ValueError, zipfile.BadZipFile, csv.Error):
        return False
    return False
