"""The review spreadsheet: every current link with its evidence and an empty decision column, as XLSX or CSV, and
the reader for the filled-in file.

Officers and auditors work in spreadsheets: they filter, sort, fill in ``decision`` (``accept``, ``reject``,
``needs-review``) and ``comment``, and hand the file back. ``link_id`` and ``text_sha256`` (a fingerprint of the
paragraph's text) let :func:`compliance.app.links.import_reviews` check every row against the store before it
applies anything.

Every value written goes through :func:`cell`: a text starting with ``=``, ``+``, ``-`` or ``@`` would be run as
a formula by the spreadsheet program (formula injection), so it is written with a leading apostrophe, which the
reader removes again.
"""

from __future__ import annotations

import contextlib
import csv
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compliance.errors import ConfigurationError
from compliance.spreadsheet import FORMULA_PREFIXES, mark_export, safe_cell, xlsx_cell

if TYPE_CHECKING:  # pragma: no cover
    from compliance.store.link_history import CurrentLink

__all__ = [
    "DECISION_VALUES",
    "LINK_COLUMNS",
    "SheetRow",
    "cell",
    "iter_review_sheet",
    "link_sheet_row",
    "link_sheet_rows",
    "read_review_sheet",
    "uncell",
    "write_link_sheet",
]

#: columns of the review spreadsheet, in order; the officer fills in the last two
LINK_COLUMNS = (
    "link_id",
    "document",
    "document_version",
    "paragraph",
    "page",
    "heading",
    "paragraph_text",
    "law",
    "provision",
    "provision_title",
    "method",
    "model",
    "run_id",
    "score",
    "rank",
    "status",
    "reviewer",
    "reviewed_at",
    "evidence",
    "text_sha256",
    "decision",
    "comment",
)
#: what the decision column accepts (case-insensitive) and the status each means; empty = no change
DECISION_VALUES = {
    "accept": "accepted",
    "accepted": "accepted",
    "reject": "rejected",
    "rejected": "rejected",
    "needs-review": "needs-review",
    "needs review": "needs-review",
    "review": "needs-review",
    "reopen": "proposed",
    "proposed": "proposed",
}
#: the one place every spreadsheet value passes (XLSX and CSV): texts a spreadsheet program would run as a
#: formula get a leading apostrophe; numbers, dates and None pass unchanged
cell = safe_cell


def uncell(value: Any) -> Any:
    """The inverse of :func:`cell` for values read back."""
    if (
        isinstance(value, str)
        and value.startswith("'")
        and value[1:].lstrip(" ").startswith(FORMULA_PREFIXES)
    ):
        return value[1:]
    return value


def _evidence_summary(link: CurrentLink) -> str:
    ev = link.evidence
    parts = []
    chosen = ev.get("provision")
    if isinstance(chosen, dict) and chosen.get("label"):
        parts.append(
            f"provision: {chosen['label']} ({chosen.get('method', '')} {chosen.get('score', 0):.2f})"
        )
    if ev.get("shared_terms"):
        parts.append("shared terms: " + ", ".join(map(str, ev["shared_terms"][:8])))
    if isinstance(ev.get("components"), dict):
        parts.append(", ".join(f"{k} {v:.2f}" for k, v in ev["components"].items() if isinstance(v, float)))
    if ev.get("decision"):
        parts.append(f"decision: {ev['decision']}")
    if ev.get("added_by"):
        parts.append(f"added by {ev['added_by']}")
    return "; ".join(p for p in parts if p)


def link_sheet_row(link: CurrentLink) -> dict[str, Any]:
    """A link's row, keyed by :data:`LINK_COLUMNS` (decision and comment empty)."""
    return {
        "link_id": link.link_id,
        "document": link.document_source,
        "document_version": link.document_version,
        "paragraph": link.paragraph_ordinal,
        "page": link.paragraph_page,
        "heading": " › ".join(link.heading_path),
        "paragraph_text": link.paragraph_text,
        "law": link.law_short_name,
        "provision": link.provision_key,
        "provision_title": link.provision_title or "",
        "method": link.method,
        "model": link.model or "",
        "run_id": link.run_id,
        "score": round(link.score, 4),
        "rank": link.rank,
        "status": link.status,
        "reviewer": link.reviewer or "",
        "reviewed_at": link.reviewed_at.isoformat() if link.reviewed_at else "",
        "evidence": _evidence_summary(link),
        "text_sha256": link.text_sha256,
        "decision": "",
        "comment": "",
    }


def link_sheet_rows(links: Iterable[CurrentLink]) -> list[dict[str, Any]]:
    """One row per link (:func:`link_sheet_row`)."""
    return [link_sheet_row(link) for link in links]


def write_link_sheet(links: Iterable[CurrentLink], out: Path, fmt: str | None = None) -> int:
    """Write the review spreadsheet to ``out`` as ``xlsx``, ``csv`` or ``json`` (default: from the suffix), one
    link at a time: ``links`` may be an iterator (:meth:`~compliance.store.Store.iter_current_links`), and the
    memory used does not grow with the number of links (the XLSX workbook is written in openpyxl's write-only
    mode); the file appears complete or not at all. Returns the number of link rows.

    Raises:
        ConfigurationError: another format.
    """
    fmt = (fmt or out.suffix.lstrip(".")).lower()
    writers = {"json": _write_json, "csv": _write_csv, "xlsx": _write_xlsx}
    if fmt not in writers:
        raise ConfigurationError(f"export format must be xlsx, csv or json, not {fmt!r}")
    # written beside ``out`` and moved over it when complete: a read that fails half-way leaves no half file
    part = out.with_name(out.name + ".part")
    try:
        n = writers[fmt](links, part)
        part.replace(out)
    finally:
        part.unlink(missing_ok=True)
    return n


def _write_csv(links: Iterable[CurrentLink], out: Path) -> int:
    n = 0
    with out.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(LINK_COLUMNS)
        for link in links:
            r = link_sheet_row(link)
            writer.writerow([cell(r[c]) for c in LINK_COLUMNS])
            n += 1
    return n


def _write_json(links: Iterable[CurrentLink], out: Path) -> int:
    """The rows with the full evidence as one JSON array, indented as ``json.dumps(rows, indent=2)`` would
    write it, item by item."""
    n = 0
    with out.open("w", encoding="utf-8") as fh:
        for link in links:
            item = json.dumps(
                {**link_sheet_row(link), "evidence_detail": link.evidence},
                indent=2,
                ensure_ascii=False,
                default=str,
            )
            fh.write("[\n" if n == 0 else ",\n")
            fh.write("\n".join("  " + line for line in item.split("\n")))
            n += 1
        fh.write("\n]\n" if n else "[]\n")
    return n


def _write_xlsx(links: Iterable[CurrentLink], out: Path) -> int:
    from openpyxl import Workbook
    from openpyxl.cell import WriteOnlyCell
    from openpyxl.styles import Alignment, Font, PatternFill
    from openpyxl.utils import get_column_letter
    from openpyxl.worksheet.datavalidation import DataValidation

    wb = Workbook(write_only=True)
    mark_export(wb)
    ws = wb.create_sheet("links")
    widths = {"paragraph_text": 80, "document": 36, "provision_title": 36, "evidence": 40, "comment": 30}
    for i, name in enumerate(LINK_COLUMNS, start=1):
        ws.column_dimensions[get_column_letter(i)].width = widths.get(name, 14)
    ws.freeze_panes = "B2"
    bold = Font(bold=True)
    fill = PatternFill("solid", fgColor="FFF2CC")
    header = []
    for name in LINK_COLUMNS:
        head = WriteOnlyCell(ws, value=xlsx_cell(name))
        head.font = bold
        if name in ("decision", "comment"):
            head.fill = fill
        header.append(head)
    ws.append(header)
    wrap = Alignment(wrap_text=True, vertical="top")
    text_col = LINK_COLUMNS.index("paragraph_text")
    n = 0
    try:
        for link in links:
            r = link_sheet_row(link)
            values: list[Any] = [xlsx_cell(r[c]) for c in LINK_COLUMNS]
            text = WriteOnlyCell(ws, value=values[text_col])
            text.alignment = wrap
            values[text_col] = text
            ws.append(values)
            n += 1
    except BaseException:
        # the write-only sheet streams into a temporary file that only saving closes and removes; the caller
        # deletes what is saved here
        with contextlib.suppress(Exception):
            wb.save(out)
        raise
    decision_col = get_column_letter(LINK_COLUMNS.index("decision") + 1)
    dv = DataValidation(type="list", formula1='"accept,reject,needs-review,reopen"', allow_blank=True)
    dv.error = "Use accept, reject, needs-review or reopen (or leave empty: no change)."
    if n:
        dv.add(f"{decision_col}2:{decision_col}{n + 1}")
    ws.data_validations.append(dv)
    ws.auto_filter.ref = f"A1:{get_column_letter(len(LINK_COLUMNS))}{n + 1}"
    help_ws = wb.create_sheet("how to review")
    help_ws.column_dimensions["A"].width = 120
    for line in (
        "Fill in the 'decision' column: accept, reject, needs-review or reopen; leave it empty for no change.",
        "Optionally explain in 'comment'. Do not edit link_id or text_sha256: they tie each row to the database.",
        "Then: compliance links import THIS_FILE --reviewer YOUR_NAME",
        "Rows whose paragraph changed since the export, unknown link ids and invalid decisions are refused, "
        "and nothing of the file is applied until every row is valid.",
    ):
        help_ws.append([xlsx_cell(line)])
    wb.save(out)
    return n


@dataclass(frozen=True, slots=True)
class SheetRow:
    """One data row of a filled-in review file: its row number in the file (header = 1) and its values."""

    row: int
    values: dict[str, Any]


def read_review_sheet(path: Path) -> list[SheetRow]:
    """The data rows of a filled-in review file (XLSX or CSV, by suffix), values by column name.

    Raises:
        ConfigurationError: not XLSX/CSV, unreadable, or without the ``link_id`` and ``decision`` columns.
    """
    return list(iter_review_sheet(path))


def iter_review_sheet(path: Path) -> Iterator[SheetRow]:
    """:func:`read_review_sheet` one row at a time (the file is read as it goes: a sheet of every link of a large
    audit is not held whole); empty rows are passed over. The errors are raised at the first row asked for.

    Raises:
        ConfigurationError: not XLSX/CSV, unreadable, or without the ``link_id`` and ``decision`` columns.
    """
    suffix = path.suffix.lower()
    if suffix not in (".xlsx", ".csv"):
        raise ConfigurationError(f"{path}: import an .xlsx or .csv review file")
    with contextlib.ExitStack() as stack:
        raw: Iterator[Sequence[Any]]
        if suffix == ".xlsx":
            try:
                from openpyxl import load_workbook

                wb = load_workbook(path, read_only=True, data_only=True)
            except Exception as e:  # openpyxl raises many kinds for a bad file
                raise ConfigurationError(f"{path}: not a readable XLSX file: {e}") from e
            stack.callback(wb.close)
            ws = wb["links"] if "links" in wb.sheetnames else wb.worksheets[0]
            raw = ws.iter_rows(values_only=True)
        else:
            try:
                fh = stack.enter_context(path.open(newline="", encoding="utf-8-sig"))
            except OSError as e:
                raise ConfigurationError(f"{path}: not a readable CSV file: {e}") from e
            raw = csv.reader(fh)
        try:
            first = next(raw, None)
            if first is None:
                raise ConfigurationError(f"{path}: the file is empty")
            header = [str(uncell(h)).strip().lower() if h is not None else "" for h in first]
            for needed in ("link_id", "decision"):
                if needed not in header:
                    raise ConfigurationError(f"{path}: no {needed!r} column in the first row")
            for n, values in enumerate(raw, start=2):
                if all(v is None or (isinstance(v, str) and not v.strip()) for v in values):
                    continue
                yield SheetRow(n, {h: uncell(v) for h, v in zip(header, values, strict=False) if h})
        except (UnicodeDecodeError, csv.Error) as e:
            raise ConfigurationError(f"{path}: not a readable CSV file: {e}") from e
