"""The coverage report as one self-contained HTML file: inline CSS, charts as inline SVG, no script, no network,
readable on screen and on paper (A4 landscape, colours kept when printed).

The matrix, the chapter bars and the review progress are drawn here as SVG (``<rect>`` elements carrying
``data-doc``, ``data-article`` and ``data-state`` so that tests and other tools can read them back); the page
itself is the Jinja2 template ``templates/coverage.html.j2`` shipped with the package.
"""

from __future__ import annotations

from html import escape
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from compliance.reports.coverage import CoverageReport

__all__ = ["STATE_COLOURS", "render_html"]

STATE_COLOURS = {
    "accepted": "#1a7f37",
    "suggested": "#d4a72c",
    "rejected": "#cf222e",
    "": "#eaeef2",
}
_PROGRESS_COLOURS = {
    "accepted": "#1a7f37",
    "proposed": "#d4a72c",
    "needs-review": "#bc4c00",
    "rejected": "#cf222e",
}


def _matrix_svg(report: CoverageReport) -> str:
    cell, gap, label_w, top = 10, 2, 230, 34
    docs = report.documents
    arts = report.articles
    width = label_w + len(arts) * (cell + gap) + 10
    height = top + max(1, len(docs)) * (cell + gap + 6) + 10
    out = [
        f'<svg id="matrix" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'style="max-width: {int(width * 1.4)}px" role="img" aria-label="documents by articles coverage matrix" '
        'preserveAspectRatio="xMinYMin meet">'
    ]
    for j, a in enumerate(arts):
        x = label_w + j * (cell + gap)
        if j % 5 == 0 or len(arts) <= 30:
            out.append(
                f'<text x="{x + cell / 2:.1f}" y="{top - 6}" class="axis" text-anchor="middle">{escape(a.number)}</text>'
            )
    for i, d in enumerate(docs):
        y = top + i * (cell + gap + 6)
        name = d.source if len(d.source) <= 38 else "…" + d.source[-37:]
        out.append(
            f'<text x="{label_w - 6}" y="{y + cell - 1}" class="doc" text-anchor="end">{escape(name)}</text>'
        )
        for j, a in enumerate(arts):
            state = a.cells.get(d.id, "")
            x = label_w + j * (cell + gap)
            tip = f"{d.source} × Art. {a.number} {a.title}: {state or 'no link'}"
            out.append(
                f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" rx="1.5" fill="{STATE_COLOURS[state]}" '
                f'data-doc="{d.id}" data-article="{escape(a.key)}" data-state="{state or "none"}">'
                f"<title>{escape(tip)}</title></rect>"
            )
    out.append("</svg>")
    return "".join(out)


def _chapters_svg(report: CoverageReport) -> str:
    bar_w, row_h, label_w = 420, 20, 330
    rows = report.chapters
    height = max(1, len(rows)) * row_h + 10
    out = [
        f'<svg id="chapters-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {label_w + bar_w + 90} {height}" '
        f'role="img" aria-label="coverage per chapter">'
    ]
    for i, c in enumerate(rows):
        y = 4 + i * row_h
        covered = bar_w * c.covered / c.articles if c.articles else 0
        suggested = bar_w * c.suggested / c.articles if c.articles else 0
        title = c.title if len(c.title) <= 52 else c.title[:51] + "…"
        out.append(
            f'<text x="{label_w - 6}" y="{y + 12}" class="doc" text-anchor="end">{escape(title)}</text>'
        )
        out.append(f'<rect x="{label_w}" y="{y}" width="{bar_w}" height="14" fill="{STATE_COLOURS[""]}"/>')
        out.append(
            f'<rect x="{label_w}" y="{y}" width="{covered:.1f}" height="14" fill="{STATE_COLOURS["accepted"]}" '
            f'data-chapter="{escape(c.key)}" data-covered="{c.covered}"/>'
        )
        out.append(
            f'<rect x="{label_w + covered:.1f}" y="{y}" width="{suggested:.1f}" height="14" '
            f'fill="{STATE_COLOURS["suggested"]}"/>'
        )
        out.append(
            f'<text x="{label_w + bar_w + 6}" y="{y + 12}" class="doc">{c.covered}/{c.articles} '
            f"({100 * c.share:.0f} %)</text>"
        )
    out.append("</svg>")
    return "".join(out)


def _progress_svg(report: CoverageReport) -> str:
    total = sum(report.progress.values())
    width, x = 700, 0.0
    out = [
        f'<svg id="progress-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} 46" role="img" '
        'aria-label="review progress">'
    ]
    for status, n in report.progress.items():
        w = width * n / total if total else 0
        if w:
            out.append(
                f'<rect x="{x:.1f}" y="0" width="{w:.1f}" height="22" fill="{_PROGRESS_COLOURS[status]}" '
                f'data-status="{status}" data-count="{n}"><title>{status}: {n}</title></rect>'
            )
        x += w
    x = 0.0
    for status, n in report.progress.items():
        out.append(
            f'<rect x="{x:.1f}" y="30" width="10" height="10" fill="{_PROGRESS_COLOURS[status]}"/>'
            f'<text x="{x + 14:.1f}" y="39" class="doc">{status} {n}</text>'
        )
        x += 150
    out.append("</svg>")
    return "".join(out)


def render_html(report: CoverageReport) -> str:
    """The report as one HTML document (UTF-8 text)."""
    from jinja2 import Environment, select_autoescape

    template_text = (resources.files("compliance.reports") / "templates" / "coverage.html.j2").read_text(
        encoding="utf-8"
    )
    env = Environment(autoescape=select_autoescape(default=True, default_for_string=True))
    from markupsafe import Markup

    return env.from_string(template_text).render(
        report=report,
        summary=report.to_dict()["summary"],
        matrix_svg=Markup(_matrix_svg(report)),
        chapters_svg=Markup(_chapters_svg(report)),
        progress_svg=Markup(_progress_svg(report)),
        colours=STATE_COLOURS,
    )
