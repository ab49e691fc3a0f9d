"""The coverage and gap report use case: which articles of a law the stored documents cover, where the gaps
are, and how far the review has come — as data, an HTML page, an XLSX workbook or JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compliance.errors import ConfigurationError

if TYPE_CHECKING:  # pragma: no cover
    from compliance.reports.coverage import CoverageReport
    from compliance.store import Store

__all__ = ["REPORT_FORMATS", "REPORT_MEDIA_TYPES", "ReportWritten", "coverage_report", "write_report"]

REPORT_FORMATS = ("html", "xlsx", "json")
#: what each report format is sent as over HTTP
REPORT_MEDIA_TYPES = {
    "html": "text/html",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "json": "application/json",
}


def coverage_report(
    store: Store, law: str = "gdpr", documents: Sequence[int | str] | None = None
) -> CoverageReport:
    """The coverage of ``law`` (its latest stored version) by the current links of ``documents`` (ids or
    sources; default every stored document).

    Raises:
        LawNotFoundError: the law is not stored.
        NotFoundError: an unknown document.
    """
    from compliance.reports.coverage import build_coverage

    record = store.law_record(law)
    law_obj = store.get_law(record.id)
    if documents:
        from compliance.app.documents import find_document

        docs = [find_document(store, d) for d in documents]
    else:
        docs = store.list_documents()
    ids = [d.id for d in docs]
    # read link by link: a large audit's links are never held at once
    links = store.iter_current_links(document_ids=ids, law=record.identifier) if ids else iter(())
    others = (
        (x for x in store.iter_current_links(document_ids=ids) if x.law_identifier != record.identifier)
        if ids
        else iter(())
    )
    return build_coverage(
        law_obj,
        links,
        [(d.id, d.source, d.latest_version) for d in docs],
        other_links=others,
        law_version=record.version,
    )


@dataclass(frozen=True)
class ReportWritten:
    """Where a report went and its headline figures."""

    path: str
    format: str
    articles: int
    covered: int
    suggested_only: int
    gaps: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def write_report(report: CoverageReport, out: Path, fmt: str | None = None) -> ReportWritten:
    """Write ``report`` as ``html``, ``xlsx`` or ``json`` (default: from the suffix of ``out``).

    Raises:
        ConfigurationError: another format.
    """
    fmt = (fmt or out.suffix.lstrip(".")).lower()
    if fmt == "html":
        from compliance.reports.html import render_html

        out.write_text(render_html(report), encoding="utf-8")
    elif fmt == "xlsx":
        from compliance.reports.workbook import write_coverage_xlsx

        write_coverage_xlsx(report, out)
    elif fmt == "json":
        out.write_text(json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    else:
        raise ConfigurationError(f"report format must be one of {', '.join(REPORT_FORMATS)}, not {fmt!r}")
    return ReportWritten(
        str(out), fmt, len(report.articles), len(report.covered), len(report.suggested_only), len(report.gaps)
    )
