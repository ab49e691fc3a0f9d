"""The connectors on the sample policies in ``examples/`` (written by the examples' own generator).

Each .docx/.pdf there is rendered from one Markdown source in ``tools/examples/src``; the Word and PDF connectors must
recover exactly the paragraphs, lists, table rows and heading paths that the Markdown connector reads from the
source — a cross-format oracle for re-flow, de-hyphenation, header/footer removal and table reading.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from compliance.connectors import ParsedDocument, parse_many, parse_path
from tests.conftest import EXAMPLES, REPO_ROOT
from tests.fixtures.connectors import builders as b

RENDERED = sorted(p for p in EXAMPLES.glob("*") if p.suffix in (".docx", ".pdf"))


def _source(rendered: Path) -> Path:
    return REPO_ROOT / "tools" / "examples" / "src" / f"{rendered.stem}.md"


def _body(doc: ParsedDocument) -> list[tuple[str, str, tuple[str, ...]]]:
    """Paragraphs after the leading document-control table (rows under no heading)."""
    paras = list(doc.paragraphs)
    while paras and paras[0].kind == "table-row" and paras[0].heading_path == ():
        paras.pop(0)
    return [(p.kind, p.text, p.heading_path) for p in paras]


pytestmark = pytest.mark.skipif(not RENDERED, reason="examples/ has no rendered .docx/.pdf policies")


@pytest.mark.parametrize("rendered", RENDERED, ids=[p.name for p in RENDERED])
def test_rendered_policy_matches_its_markdown_source(rendered: Path) -> None:
    source = _source(rendered)
    if not source.exists():
        pytest.skip(f"no Markdown source for {rendered.name}")
    doc = parse_path(rendered)
    b.check_invariants(doc)
    md = parse_path(source)
    assert doc.title == md.title
    assert _body(doc) == _body(md)
    control = [p.text for p in doc.paragraphs if p.kind == "table-row" and p.heading_path == ()]
    assert control and control[0] == f"Document ID: {md.metadata['front_matter.doc_id']}"
    # running header and "Page N of M" footer never reach the paragraphs
    assert not any("Page " in p.text or "Internal — v" in p.text for p in doc.paragraphs)
    if rendered.suffix == ".pdf":
        pages = [p.page or 0 for p in doc.paragraphs]
        assert all(p.page is not None for p in doc.paragraphs) and pages == sorted(pages)
        assert pages[-1] == doc.pages


def test_batch_over_examples_folder() -> None:
    outcomes = list(parse_many([EXAMPLES], recursive=False))
    names = {o.path.name for o in outcomes}
    assert {p.name for p in RENDERED} <= names
    assert all(o.ok for o in outcomes), [(o.path, o.error) for o in outcomes if not o.ok]
    units = sum(len(_body(o.document)) for o in outcomes if o.document and o.path in RENDERED)
    assert units > 150
