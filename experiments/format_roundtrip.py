"""The readers checked against real converters: each labelled document of the role set is converted by the tools
that publish policies (LibreOffice prints a Word document to PDF and exports it to HTML and OpenDocument; pandoc
turns a Markdown document into Word and HTML, and LibreOffice prints that Word file to PDF), and the converted file
is read beside its original. A paragraph of the original "comes out" when the converted file has a paragraph of the same text
(whitespace collapsed, typographic quotes read as plain ones).

    python tools/roles/build_role_set.py                   # var/role-set/docs
    python -m experiments.format_roundtrip [--docs var/role-set/docs] [--work var/roundtrip] [-v]
    python -m experiments.format_roundtrip --two-columns --work var/roundtrip-2col   # Word set in two columns
    python -m experiments.format_roundtrip --no-space --work var/roundtrip-nospace   # no space between paragraphs

``--two-columns`` first sets each Word document's sections in two columns and takes its tables out (a table made
for the full width would overflow a column, which no author would print), and reads those copies. ``--no-space`` reads copies whose paragraphs (headings
apart) have no space before or after them, as Word's "No Spacing" and LibreOffice's default style set them.

Needs ``soffice`` (Debian: libreoffice-writer-nogui) and ``pandoc`` on the PATH; a route whose tool is missing is
left out, and said so. Not part of the package or the test run (the tools are large and CI does not install them);
docs/roles.md gives the figures.
"""

from __future__ import annotations

import argparse
import difflib
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def normalise(text: str) -> str:
    """``text`` with its whitespace collapsed and typographic quotes read as plain ones."""
    text = text.replace("\u201c", '"').replace("\u201d", '"').replace("\u2019", "'")
    return re.sub(r"\s+", " ", text).strip()


def _paragraphs(path: Path) -> list[str]:
    from compliance.connectors import parse_path

    return [normalise(p.text) for p in parse_path(path).paragraphs]


def soffice_convert(sources: Sequence[Path], target: str, out: Path) -> None:
    """``sources`` converted by a headless LibreOffice to ``target`` (``pdf``, ``odt`` …) into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    if not sources:  # soffice given no file waits for one
        return
    subprocess.run(
        ["soffice", "--headless", "--convert-to", target, "--outdir", str(out), *map(str, sources)],
        check=True,
        capture_output=True,
        timeout=600,
    )


def _pandoc(source: Path, target: Path, *, standalone: bool = False) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    args = ["pandoc", str(source), "-o", str(target)]
    if standalone:
        args.insert(1, "-s")
    subprocess.run(args, check=True, capture_output=True, timeout=120)


def two_column_copies(sources: Sequence[Path], out: Path) -> list[Path]:
    """Copies of the Word documents ``sources`` with every section set in two columns and no tables."""
    import docx
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    out.mkdir(parents=True, exist_ok=True)
    copies: list[Path] = []
    for source in sources:
        document = docx.Document(str(source))
        for table in list(document.element.body.iter(qn("w:tbl"))):
            table.getparent().remove(table)
        for section in document.sections:
            cols = section._sectPr.find(qn("w:cols"))
            if cols is None:
                cols = OxmlElement("w:cols")
                section._sectPr.append(cols)
            cols.set(qn("w:num"), "2")
            cols.set(qn("w:space"), "720")
        copies.append(out / source.name)
        document.save(str(copies[-1]))
    return copies


def no_space_copies(sources: Sequence[Path], out: Path) -> list[Path]:
    """Copies of the Word documents ``sources`` whose paragraphs, headings apart, have no space before or after
    them (Word's "No Spacing", LibreOffice's default style): only the lines then say where a paragraph ends."""
    import docx
    from docx.enum.style import WD_STYLE_TYPE
    from docx.shared import Pt

    out.mkdir(parents=True, exist_ok=True)
    copies: list[Path] = []
    for source in sources:
        document = docx.Document(str(source))
        formats = [
            s.paragraph_format
            for s in document.styles
            if s.type == WD_STYLE_TYPE.PARAGRAPH and not (s.name or "").startswith("Heading")
        ]
        for paragraph in document.paragraphs:
            style = paragraph.style.name if paragraph.style is not None else ""
            if not (style or "").startswith(("Heading", "Title")):
                formats.append(paragraph.paragraph_format)
        for fmt in formats:
            fmt.space_before = Pt(0)
            fmt.space_after = Pt(0)
        copies.append(out / source.name)
        document.save(str(copies[-1]))
    return copies


def compare(
    originals: Sequence[Path], converted: Path, suffix: str, *, verbose: bool = False
) -> tuple[int, int]:
    """``(paragraphs of the originals that come out of the converted files, paragraphs of the originals)``."""
    found = total = 0
    for original in originals:
        other = converted / f"{original.stem}{suffix}"
        mine = _paragraphs(original)
        total += len(mine)
        if not other.exists():
            print(f"  {original.name}: no converted file")
            continue
        theirs = _paragraphs(other)
        missing = [t for t in mine if t not in set(theirs)]
        found += len(mine) - len(missing)
        if verbose and missing:
            print(f"  {original.name}: {len(missing)} of {len(mine)} missing")
            for line in difflib.unified_diff(mine, theirs, lineterm="", n=0):
                if line[:1] in "+-" and not line.startswith(("+++", "---")):
                    print("     ", line[:160])
    return found, total


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=Path, default=ROOT / "var" / "role-set" / "docs")
    parser.add_argument("--work", type=Path, default=ROOT / "var" / "roundtrip")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("--two-columns", action="store_true", help="read Word copies set in two columns")
    parser.add_argument(
        "--no-space", action="store_true", help="read Word copies with no space between their paragraphs"
    )
    args = parser.parse_args(argv)
    docx = sorted(args.docs.glob("*.docx"))
    markdown = sorted(args.docs.glob("*.md"))
    if args.two_columns:
        docx, markdown = two_column_copies(docx, args.work / "two-columns"), []
    if args.no_space:
        docx, markdown = no_space_copies(docx, args.work / "no-space"), []
    if not docx and not markdown:
        raise SystemExit(f"no documents in {args.docs}: run python tools/roles/build_role_set.py first")
    work: Path = args.work
    routes: list[tuple[str, Sequence[Path], Path, str]] = []
    if shutil.which("soffice"):
        soffice_convert(docx, "pdf", work / "docx-pdf")
        soffice_convert(docx, "html:XHTML Writer File:UTF8", work / "docx-html")
        soffice_convert(docx, "odt", work / "docx-odt")
        routes += [
            ("Word → PDF (LibreOffice)", docx, work / "docx-pdf", ".pdf"),
            ("Word → HTML (LibreOffice)", docx, work / "docx-html", ".html"),
            ("Word → OpenDocument (LibreOffice)", docx, work / "docx-odt", ".odt"),
        ]
    else:
        print("soffice not found: the LibreOffice routes are left out")
    if shutil.which("pandoc"):
        for md in markdown:
            _pandoc(md, work / "md-docx" / f"{md.stem}.docx")
            _pandoc(md, work / "md-html" / f"{md.stem}.html", standalone=True)
        routes += [
            ("Markdown → Word (pandoc)", markdown, work / "md-docx", ".docx"),
            ("Markdown → HTML (pandoc)", markdown, work / "md-html", ".html"),
        ]
        if shutil.which("soffice"):
            soffice_convert(sorted((work / "md-docx").glob("*.docx")), "pdf", work / "md-pdf")
            routes.append(("Markdown → Word → PDF (pandoc, LibreOffice)", markdown, work / "md-pdf", ".pdf"))
    else:
        print("pandoc not found: the pandoc routes are left out")
    for name, originals, converted, suffix in routes:
        found, total = compare(originals, converted, suffix, verbose=args.verbose)
        print(f"{name}: {found} of {total} paragraphs come out word for word ({len(originals)} documents)")


if __name__ == "__main__":
    main()
