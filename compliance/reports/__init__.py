"""Reports and exchange formats built from the store's links: the review spreadsheet (XLSX/CSV, written and read
back), the coverage and gap report (HTML, XLSX, JSON), and the GRC exports (an OSCAL mapping collection, a CISO
Assistant mapping library).

Pure functions from records to files or data: no database access here (the use cases in
:mod:`compliance.app.links` and :mod:`compliance.app.reports` read the store and call these). Imported lazily.
"""

from __future__ import annotations

from compliance._lazy import lazy_exports

_EXPORTS = {
    "LINK_COLUMNS": "compliance.reports.link_sheet",
    "SheetRow": "compliance.reports.link_sheet",
    "read_review_sheet": "compliance.reports.link_sheet",
    "write_link_sheet": "compliance.reports.link_sheet",
    "cell": "compliance.reports.link_sheet",
    "CoverageReport": "compliance.reports.coverage",
    "build_coverage": "compliance.reports.coverage",
    "render_html": "compliance.reports.html",
    "write_coverage_xlsx": "compliance.reports.workbook",
    "oscal_mapping_collection": "compliance.reports.oscal",
    "ciso_assistant_library": "compliance.reports.ciso_assistant",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
