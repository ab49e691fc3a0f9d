"""The coverage report as an XLSX workbook, one sheet per view: summary, matrix, chapters, gaps, suggested only,
evidence, progress. Every value passes :func:`compliance.spreadsheet.xlsx_cell` (no formula; a text cut to what a
cell holds)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from compliance.spreadsheet import mark_export
from compliance.spreadsheet import xlsx_cell as cell

if TYPE_CHECKING:  # pragma: no cover
    from compliance.reports.coverage import CoverageReport

__all__ = ["SHEETS", "write_coverage_xlsx"]

SHEETS = ("summary", "matrix", "chapters", "gaps", "suggested only", "evidence", "progress")
_FILLS = {"accepted": "1A7F37", "suggested": "D4A72C", "rejected": "CF222E"}


def write_coverage_xlsx(report: CoverageReport, out: Path) -> Path:
    """Write the workbook to ``out``; returns ``out``."""
    from openpyxl import Workbook
    from openpyxl.styles import Font, PatternFill

    wb = Workbook()
    mark_export(wb)
    bold = Font(bold=True)

    def sheet(name: str, header: list[str], rows: list[list[Any]], first: bool = False) -> Any:
        ws = wb.active if first else wb.create_sheet(name)
        assert ws is not None
        ws.title = name
        ws.append([cell(h) for h in header])
        for c in ws[1]:
            c.font = bold
        for r in rows:
            ws.append([cell(v) for v in r])
        ws.freeze_panes = "B2"
        return ws

    s = report.to_dict()["summary"]
    sheet(
        "summary",
        ["figure", "value"],
        [
            ["law", f"{report.law} ({report.law_identifier}, version {report.law_version})"],
            ["generated", report.generated_at],
            ["documents", len(report.documents)],
            ["articles", s["articles"]],
            ["covered (accepted)", s["covered"]],
            ["covered only by unreviewed suggestions", s["suggested_only"]],
            ["gaps (no accepted control)", s["gaps"]],
            ["coverage", s["coverage"]],
            ["links reviewed", s["reviewed_share"]],
        ],
        first=True,
    )
    matrix = sheet(
        "matrix",
        ["article", "title", "chapter", *[d.source for d in report.documents]],
        [
            [a.number, a.title, a.chapter, *[a.cells.get(d.id, "") for d in report.documents]]
            for a in report.articles
        ],
    )
    for row in matrix.iter_rows(min_row=2, min_col=4):
        for c in row:
            if c.value in _FILLS:
                c.fill = PatternFill("solid", fgColor=_FILLS[str(c.value)])
    sheet(
        "chapters",
        ["chapter", "articles", "covered", "suggested only", "coverage"],
        [[c.title, c.articles, c.covered, c.suggested, round(c.share, 4)] for c in report.chapters],
    )
    sheet(
        "gaps",
        ["article", "title", "chapter", "state"],
        [[a.number, a.title, a.chapter, a.state] for a in report.gaps],
    )
    sheet(
        "suggested only",
        ["article", "title", "best suggestion", "score", "document", "paragraph"],
        [
            [a.number, a.title, a.evidence.text, a.evidence.score, a.evidence.document, a.evidence.paragraph]
            if a.evidence
            else [a.number, a.title, "", None, "", None]
            for a in report.suggested_only
        ],
    )
    sheet(
        "evidence",
        ["article", "title", "status", "paragraph text", "document", "paragraph", "score", "link id"],
        [
            [a.number, a.title, e.status, e.text, e.document, e.paragraph, e.score, e.link_id]
            for a in report.articles
            if (e := a.evidence) is not None
        ],
    )
    sheet(
        "progress",
        ["status", "links"],
        [[k, v] for k, v in report.progress.items()]
        + [[], ["document", "links", "accepted"]]
        + [[d.source, d.links, d.accepted] for d in report.documents],
    )
    wb.save(out)
    return out
