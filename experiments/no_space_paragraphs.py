"""Paragraphs set with no space between them, read back from PDF: only the lines say where a paragraph ends.

The statements, descriptions, definitions and references of the role set's sources (``tools/roles/src``, one
paragraph each) are drawn at random, ten to a Word document with no space before or after any paragraph (Word's
"No Spacing", LibreOffice's default style), each document once ragged right and once justified; LibreOffice saves
them as PDF, and the reader reads them back. A paragraph "comes out" when the PDF gives a paragraph of the same
text (whitespace collapsed).

    python -m experiments.no_space_paragraphs [--seed 1] [--documents 12] [--work var/no-space] [-v]

Needs ``soffice`` (Debian: libreoffice-writer-nogui). Not part of the package or the test run; docs/roles.md
gives the figures.
"""

from __future__ import annotations

import argparse
import random
import re
from pathlib import Path

from experiments.format_roundtrip import normalise, soffice_convert

ROOT = Path(__file__).resolve().parent.parent
_LINE_RE = re.compile(r"^(?:st|desc|def|ref):\s+(.*)$")


def candidates(src: Path = ROOT / "tools" / "roles" / "src") -> list[str]:
    """The sources' one-paragraph blocks of prose: longer than 60 characters, ending a sentence, with no
    clause number, placeholder or fill-in blank (which a Word list or field would set otherwise)."""
    texts: list[str] = []
    for path in sorted(src.glob("*.md")):
        for line in path.read_text(encoding="utf-8").splitlines():
            m = _LINE_RE.match(line.strip())
            if m is None:
                continue
            text = m.group(1)
            if (
                len(text) > 60
                and text.endswith(".")
                and not re.match(r"^\d", text)
                and not {"[", "_"} & set(text)
            ):
                texts.append(text)
    return texts


def write_documents(texts: list[str], work: Path, documents: int, seed: int) -> list[tuple[Path, list[str]]]:
    """``documents`` draws of ten paragraphs, each written ragged and justified; the Word files and their texts."""
    import docx
    from docx.enum.text import WD_ALIGN_PARAGRAPH
    from docx.shared import Pt

    rng = random.Random(seed)
    work.mkdir(parents=True, exist_ok=True)
    written: list[tuple[Path, list[str]]] = []
    for k in range(documents):
        chosen = rng.sample(texts, 10)
        for justified in (False, True):
            document = docx.Document()
            normal = document.styles["Normal"].paragraph_format
            normal.space_before = Pt(0)
            normal.space_after = Pt(0)
            document.add_heading(f"Policy {k + 1}", 1)
            for text in chosen:
                paragraph = document.add_paragraph(text)
                if justified:
                    paragraph.alignment = WD_ALIGN_PARAGRAPH.JUSTIFY
            path = work / f"policy-{k + 1:02d}-{'justified' if justified else 'ragged'}.docx"
            document.save(str(path))
            written.append((path, chosen))
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--documents", type=int, default=12)
    parser.add_argument("--work", type=Path, default=ROOT / "var" / "no-space")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    from compliance.connectors import parse_path

    written = write_documents(candidates(), args.work, args.documents, args.seed)
    soffice_convert([path for path, _ in written], "pdf", args.work)
    found = total = 0
    for path, chosen in written:
        got = {normalise(p.text) for p in parse_path(path.with_suffix(".pdf")).paragraphs}
        for text in chosen:
            total += 1
            found += normalise(text) in got
            if args.verbose and normalise(text) not in got:
                print(f"  {path.stem}: {text[:120]}")
    print(
        f"{found} of {total} paragraphs come out word for word ({len(written)} documents, seed {args.seed})"
    )


if __name__ == "__main__":
    main()
