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

import csv
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compliance.errors import ConfigurationError
from compliance.spreadsheet import FORMULA_PREFIXES, mark_export, safe_cell

if TYPE_CHECKING:  # pragma: no cover
    from compliance.store.link_history import CurrentLink

__all__ = [
    "DECISION_VALUES",
    "LINK_COLUMNS",
    "SheetRow",
    "cell",
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


def link_sheet_rows(links: Sequence[CurrentLink]) -> list[dict[str, Any]]:
    """One row per link, keyed by :data:`LINK_COLUMNS` (decision and comment empty)."""
    return [
        {
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
        for link in links
    ]


def write_link_sheet(links: Sequence[CurrentLink], out: Path, fmt: str | None = None) -> int:
    """Write the review spreadsheet to ``out`` as ``xlsx``, ``csv`` or ``json`` (default: from the suffix).
    Returns the number of link rows.

    Raises:
        ConfigurationError: another format.
    """
    fmt = (fmt or out.suffix.lstrip(".")).lower()
    rows = link_sheet_rows(links)
    if fmt == "json":
        data = [{**r, "evidence_detail": link.evidence} for r, link in zip(rows, links, strict=True)]
        out.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    elif fmt == "csv":
        with out.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(LINK_COLUMNS)
            for r in rows:
                writer.writerow([cell(r[c]) for c in LINK_COLUMNS])
    elif fmt == "xlsx":
        _write_xlsx(rows, out)
    else:
        raise ConfigurationError(f"export format must be xlsx, csv or json, not {fmt!r}")
    return len(rows)


def _write_xlsx(rows: list[dict[str, Any]], out: Path) -> None:
    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Font, PatternFill
    from openpyxl.worksheet.datavalidation import DataValidation

    wb = Workbook()
    mark_export(wb)
    ws = wb.active
    assert ws is not None
    ws.title = "links"
    ws.append([cell(c) for c in LINK_COLUMNS])
    for r in rows:
        ws.append([cell(r[c]) for c in LINK_COLUMNS])
    bold = Font(bold=True)
    fill = PatternFill("solid", fgColor="FFF2CC")
    for i, name in enumerate(LINK_COLUMNS, start=1):
        head = ws.cell(row=1, column=i)
        head.font = bold
        if name in ("decision", "comment"):
            head.fill = fill
    widths = {"paragraph_text": 80, "document": 36, "provision_title": 36, "evidence": 40, "comment": 30}
    from openpyxl.utils import get_column_letter

    for i, name in enumerate(LINK_COLUMNS, start=1):
        ws.column_dimensions[get_column_letter(i)].width = widths.get(name, 14)
    wrap = Alignment(wrap_text=True, vertical="top")
    text_col = LINK_COLUMNS.index("paragraph_text") + 1
    for row in ws.iter_rows(min_row=2, min_col=text_col, max_col=text_col):
        for c in row:
            c.alignment = wrap
    decision_col = get_column_letter(LINK_COLUMNS.index("decision") + 1)
    dv = DataValidation(type="list", formula1='"accept,reject,needs-review,reopen"', allow_blank=True)
    dv.error = "Use accept, reject, needs-review or reopen (or leave empty: no change)."
    ws.add_data_validation(dv)
    if rows:
        dv.add(f"{decision_col}2:{decision_col}{len(rows) + 1}")
    ws.freeze_panes = "B2"
    ws.auto_filter.ref = ws.dimensions
    help_ws = wb.create_sheet("how to review")
    for line in (
        "Fill in the 'decision' column: accept, reject, needs-review or reopen; leave it empty for no change.",
        "Optionally explain in 'comment'. Do not edit link_id or text_sha256: they tie each row to the database.",
        "Then: compliance links import THIS_FILE --reviewer YOUR_NAME",
        "Rows whose paragraph changed since the export, unknown link ids and invalid decisions are refused, "
        "and nothing of the file is applied until every row is valid.",
    ):
        help_ws.append([cell(line)])
    help_ws.column_dimensions["A"].width = 120
    wb.save(out)


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
    suffix = path.suffix.lower()
    raw: list[list[Any]]
    if suffix == ".xlsx":
        try:
            from openpyxl import load_workbook

            wb = load_workbook(path, read_only=True, data_only=True)
        except Exception as e:  # openpyxl raises many kinds for a bad file
            raise ConfigurationError(f"{path}: not a readable XLSX file: {e}") from e
        ws = wb["links"] if "links" in wb.sheetnames else wb.worksheets[0]
        raw = [list(r) for r in ws.iter_rows(values_only=True)]
        wb.close()
    elif suffix == ".csv":
        try:
            with path.open(newline="", encoding="utf-8-sig") as fh:
                raw = [list(r) for r in csv.reader(fh)]
        except (OSError, UnicodeDecodeError, csv.Error) as e:
            raise ConfigurationError(f"{path}: not a readable CSV file: {e}") from e
    else:
        raise ConfigurationError(f"{path}: import an .xlsx or .csv review file")
    if not raw:
        raise ConfigurationError(f"{path}: the file is empty")
    header = [str(uncell(h)).strip().lower() if h is not None else "" for h in raw[0]]
    for needed in ("link_id", "decision"):
        if needed not in header:
            raise ConfigurationError(f"{path}: no {needed!r} column in the first row")
    rows: list[SheetRow] = []
    for n, values in enumerate(raw[1:], start=2):
        if all(v is None or (isinstance(v, str) and not v.strip()) for v in values):
            continue
        rows.append(SheetRow(n, {h: uncell(v) for h, v in zip(header, values, strict=False) if h}))
    return rows
