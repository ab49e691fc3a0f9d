"""The sample documents in examples/ and the hand-written evaluation data in compliance/evaluation/data/.

The documents are opened with python-docx and pdfplumber directly (not the project's connectors), so these tests
check the files themselves: that they open, carry the header/footer a real policy has, still match their Markdown
sources, rebuild deterministically, and contain the phrases the ePrivacy alert expectations refer to.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import sys
from collections import Counter
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = REPO_ROOT / "examples"
TOOLS = REPO_ROOT / "tools" / "examples"
DATA = REPO_ROOT / "compliance" / "evaluation" / "data"
HEADER_LINE = "Northwind Logistics — Internal — v2.1"

EXPECTED = {
    "information-security-policy.docx",
    "data-retention-schedule.pdf",
    "incident-and-breach-response-procedure.docx",
    "privacy-notice.pdf",
    "vendor-dpa-checklist.docx",
    "access-control-standard.pdf",
    "electronic-communications-marketing-policy.docx",
}
FOOTER_RE = re.compile(r"^NWL-[A-Z]+-\d{3} — Page (\d+) of (\d+)$")


def _norm(text: str) -> str:
    return " ".join(text.replace("**", "").split())


@cache
def builder() -> ModuleType:
    """tools/examples/build_examples.py imported by path (examples/ is not a package)."""
    spec = importlib.util.spec_from_file_location("build_examples", TOOLS / "build_examples.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["build_examples"] = module
    spec.loader.exec_module(module)
    return module


@cache
def docx_units(name: str) -> tuple[tuple[str, str], ...]:
    """(style or "table-row", text) for every non-empty body paragraph and table row, in document order."""
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    document = docx.Document(str(EXAMPLES / name))
    units: list[tuple[str, str]] = []
    for item in document.iter_inner_content():
        if isinstance(item, Paragraph):
            if item.text.strip():
                units.append((item.style.name if item.style is not None else "", _norm(item.text)))
        elif isinstance(item, Table):
            for row in item.rows:
                units.append(("table-row", " | ".join(_norm(c.text) for c in row.cells)))
    return tuple(units)


@cache
def pdf_pages(name: str) -> tuple[str, ...]:
    """Raw text of every page of a PDF."""
    import pdfplumber

    with pdfplumber.open(EXAMPLES / name) as pdf:
        return tuple(page.extract_text() or "" for page in pdf.pages)


@cache
def pdf_units(name: str) -> tuple[str, ...]:
    """The text outside tables (header and footer lines removed, pages joined), then one unit per table row."""
    import pdfplumber

    body: list[str] = []
    units: list[str] = []
    with pdfplumber.open(EXAMPLES / name) as pdf:
        for page in pdf.pages:
            tables = page.find_tables()
            boxes = [t.bbox for t in tables]

            def outside(
                obj: dict[str, object], boxes: list[tuple[float, float, float, float]] = boxes
            ) -> bool:
                x = (float(obj["x0"]) + float(obj["x1"])) / 2  # type: ignore[arg-type]
                y = (float(obj["top"]) + float(obj["bottom"])) / 2  # type: ignore[arg-type]
                return not any(x0 <= x <= x1 and top <= y <= bottom for x0, top, x1, bottom in boxes)

            lines = (page.filter(outside).extract_text() or "").splitlines()
            assert lines[0].strip() == HEADER_LINE
            assert FOOTER_RE.match(lines[-1].strip())
            body.append(_norm(" ".join(lines[1:-1])))
            for table in tables:
                for row in table.extract():
                    units.append(" | ".join(_norm(cell or "") for cell in row))
    return (" ".join(body), *units)


def document_text(name: str) -> str:
    if name.endswith(".docx"):
        return " \n ".join(text for _, text in docx_units(name))
    return " \n ".join(pdf_units(name))


def test_all_examples_exist_with_sources() -> None:
    present = {p.name for p in EXAMPLES.iterdir() if p.suffix in {".docx", ".pdf"}}
    assert present == EXPECTED
    sources = {p.stem for p in (TOOLS / "src").glob("*.md")}
    assert sources == {Path(n).stem for n in EXPECTED}
    kinds = Counter(Path(n).suffix for n in EXPECTED)
    assert kinds == {".docx": 4, ".pdf": 3}
    assert (TOOLS / "README.md").is_file()


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if n.endswith(".docx")))
def test_docx_opens_with_structure_header_and_footer(name: str) -> None:
    import docx

    document = docx.Document(str(EXAMPLES / name))
    styles = Counter(style for style, _ in docx_units(name))
    assert styles["Title"] == 1
    assert styles["Heading 1"] >= 5
    assert styles["Normal"] >= 10
    assert styles["List Bullet"] + styles["List Number"] >= 3
    assert styles["table-row"] >= 10  # document-control table + at least one content table
    assert document.sections[0].header.paragraphs[0].text == HEADER_LINE
    footer_xml = document.sections[0].footer._element.xml
    assert " PAGE " in footer_xml and " NUMPAGES " in footer_xml
    props = document.core_properties
    assert props.title == docx_units(name)[0][1]
    assert props.author == "Northwind Logistics B.V."
    assert props.created is not None and props.created.year == 2025


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if n.endswith(".pdf")))
def test_pdf_opens_with_header_and_page_n_of_m_on_every_page(name: str) -> None:
    import pdfplumber

    pages = pdf_pages(name)
    assert len(pages) >= 2
    for number, text in enumerate(pages, start=1):
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        assert lines[0] == HEADER_LINE
        match = FOOTER_RE.match(lines[-1])
        assert match is not None, lines[-1]
        assert (int(match.group(1)), int(match.group(2))) == (number, len(pages))
    with pdfplumber.open(EXAMPLES / name) as pdf:
        assert pdf.metadata["Author"] == "Northwind Logistics B.V."
        title = pdf.metadata["Title"]
    assert pages[0].splitlines()[1].startswith(title[:30])


def test_committed_files_match_their_sources() -> None:
    """Every paragraph, list item and table cell of each source appears in the committed file, in order."""
    build = builder()
    for source in build.load_sources():
        name = f"{source.name}.{source.fmt}"
        text = document_text(name)
        position = 0
        for block in source.blocks:
            pieces = (
                [block.text]
                if block.kind in ("h1", "h2", "para")
                else block.items
                if block.kind in ("bullets", "numbers")
                else [cell for row in block.rows for cell in row]
            )
            for piece in pieces:
                found = text.find(_norm(piece), position if block.kind != "table" else 0)
                assert found >= 0, f"{name}: {piece[:60]!r} missing or out of order; run build_examples.py"
                if block.kind != "table":
                    position = found


def test_paragraph_budget() -> None:
    """150–300 retrieval units (body paragraphs, list groups, table rows) across all documents."""
    units = 0
    for source in builder().load_sources():
        for block in source.blocks:
            if block.kind in ("para", "bullets", "numbers"):
                units += 1
            elif block.kind == "table":
                units += len(block.rows) - 1
    assert 150 <= units <= 300


def test_rebuild_is_deterministic(tmp_path: Path) -> None:
    build = builder()
    first = build.build_all(tmp_path / "a")
    second = build.build_all(tmp_path / "b")
    digests = [hashlib.sha256(p.read_bytes()).hexdigest() for p in first]
    assert digests == [hashlib.sha256(p.read_bytes()).hexdigest() for p in second]
    assert {p.name for p in first} == EXPECTED


# ------------------------------------------------------------------------------------ ePrivacy expectations


def test_eprivacy_expectation_phrases_identify_one_paragraph_each() -> None:
    expectations = json.loads((DATA / "eprivacy_expectations.json").read_text(encoding="utf-8"))
    assert expectations["law"] == "eprivacy"
    must, must_not = expectations["must_alert"], expectations["must_not_alert"]
    assert len(must) >= 20 and len(must_not) >= 10
    topics = {entry["topic"] for entry in must}
    assert {
        "cookies",
        "marketing e-mail/SMS",
        "traffic data",
        "location data",
        "breach notification",
    } <= topics
    assert "unsolicited calls" in topics
    assert {"clean desk", "identity badges", "expense approvals", "business continuity"} <= {
        entry["topic"] for entry in must_not
    }
    texts = {name: document_text(name) for name in EXPECTED}
    for entry in must + must_not:
        assert entry["document"] in EXPECTED
        phrase = entry["phrase"]
        hits = {name: text.count(phrase) for name, text in texts.items() if phrase in text}
        assert hits == {entry["document"]: 1}, (phrase, hits)
    for entry in must:
        assert entry["eprivacy_articles"] and all(1 <= a <= 21 for a in entry["eprivacy_articles"])
    for entry in must_not:
        assert entry["eprivacy_articles"] == []


# ------------------------------------------------------------------------------------------- control set


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    words = _words(text)
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


@cache
def controls(name: str = "controls.jsonl") -> tuple[dict[str, object], ...]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return tuple(json.loads(line) for line in lines if line.strip())


def _every_control() -> tuple[dict[str, object], ...]:
    """The control set and the security control set together (neither may copy the examples or the GDPR)."""
    return controls() + controls("security_controls.jsonl")


def _every_text() -> tuple[dict[str, object], ...]:
    """Every hand-written control, the abbreviation controls (which name no provisions) included."""
    return (
        _every_control()
        + controls("abbreviation_controls.jsonl")
        + controls("word_sense_controls.jsonl")
        + controls("list_controls.jsonl")
    )


def test_control_set_is_valid() -> None:
    items = controls()
    assert len(items) >= 120
    ids = [item["id"] for item in items]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"ctl-\d{3}", str(i)) for i in ids)
    texts = [str(item["text"]) for item in items]
    assert len({_norm(t).lower() for t in texts}) == len(texts)
    for item in items:
        assert set(item) == {"id", "text", "articles", "provisions", "note"}, item
        articles = item["articles"]
        assert isinstance(articles, list) and 1 <= len(articles) <= 5, item["id"]
        assert all(isinstance(a, int) and 1 <= a <= 99 for a in articles), item["id"]
        assert len(set(articles)) == len(articles), item["id"]
        assert 5 <= len(_words(str(item["text"]))) <= 60, item["id"]
        assert str(item["note"]).strip(), item["id"]
    counts = Counter(a for item in items for a in item["articles"])  # type: ignore[attr-defined]
    assert len(counts) >= 50
    # realistic frequency: the workhorse articles lead, and every chapter-IV staple is present
    top = {a for a, _ in counts.most_common(10)}
    assert {5, 6, 32} <= top
    assert all(counts[a] >= 2 for a in (7, 13, 15, 17, 21, 28, 30, 33, 35, 44, 46))


def test_security_control_set_is_valid() -> None:
    """Technical and organisational security measures: Art. 32 in every one (first, or beside the duty the measure
    also serves), no id or text shared with the control set."""
    items = controls("security_controls.jsonl")
    assert len(items) >= 30
    ids = [str(item["id"]) for item in items]
    assert len(set(ids)) == len(ids) and all(re.fullmatch(r"sec-\d{3}", i) for i in ids)
    known = {_norm(str(item["text"])).lower() for item in controls()}
    for item in items:
        assert set(item) == {"id", "text", "articles", "provisions", "note"}, item
        articles = item["articles"]
        assert isinstance(articles, list) and 32 in articles and len(set(articles)) == len(articles), item[
            "id"
        ]
        assert all(isinstance(a, int) and 1 <= a <= 99 for a in articles), item["id"]
        assert 5 <= len(_words(str(item["text"]))) <= 60 and str(item["note"]).strip(), item["id"]
        assert _norm(str(item["text"])).lower() not in known, item["id"]


def test_abbreviation_control_set_is_valid() -> None:
    """Controls as practitioners abbreviate them: each uses an abbreviation in capitals, none repeats another
    set's text."""
    items = controls("abbreviation_controls.jsonl")
    assert len(items) >= 40
    ids = [str(item["id"]) for item in items]
    assert len(set(ids)) == len(ids) and all(re.fullmatch(r"abbr-\d{3}", i) for i in ids)
    known = {_norm(str(item["text"])).lower() for item in _every_control()}
    for item in items:
        assert set(item) == {"id", "text", "articles", "note"}, item
        articles = item["articles"]
        assert isinstance(articles, list) and 1 <= len(articles) <= 5 and len(set(articles)) == len(articles)
        assert all(isinstance(a, int) and 1 <= a <= 99 for a in articles), item["id"]
        assert re.search(r"\b[A-Z2][A-Za-z]*[A-Z][A-Za-z]*s?\b", str(item["text"])), item["id"]
        assert 5 <= len(_words(str(item["text"]))) <= 60 and str(item["note"]).strip(), item["id"]
        assert _norm(str(item["text"])).lower() not in known, item["id"]


def test_word_sense_control_set_is_valid() -> None:
    """Controls that use a word of the GDPR in another sense: each names the word, which it uses, and the article the
    word points to in the GDPR's sense, which is not among its own articles; none repeats another set's text."""
    items = controls("word_sense_controls.jsonl")
    assert len(items) >= 40
    ids = [str(item["id"]) for item in items]
    assert len(set(ids)) == len(ids) and all(re.fullmatch(r"sense-\d{3}", i) for i in ids)
    known = {
        _norm(str(item["text"])).lower()
        for item in _every_control() + controls("abbreviation_controls.jsonl")
    }
    for item in items:
        assert set(item) == {"id", "text", "articles", "false_friend", "note"}, item
        articles = item["articles"]
        assert isinstance(articles, list) and 1 <= len(articles) <= 5 and len(set(articles)) == len(articles)
        assert all(isinstance(a, int) and 1 <= a <= 99 for a in articles), item["id"]
        friend = item["false_friend"]
        assert isinstance(friend, dict) and set(friend) == {"word", "article"}, item["id"]
        assert isinstance(friend["article"], int) and friend["article"] not in articles, item["id"]
        assert str(friend["word"]).lower() in str(item["text"]).lower(), item["id"]
        assert 5 <= len(_words(str(item["text"]))) <= 60 and str(item["note"]).strip(), item["id"]
        assert _norm(str(item["text"])).lower() not in known, item["id"]


def test_list_control_set_is_valid() -> None:
    """Policy lists as a Word or PDF list is stored: a lead-in that introduces the list (a colon at its end, six
    words or more, as the audit reads one), then two items or more, one a line, each after its marker."""
    from compliance.connectors.lists import lead_in_sentence

    items = controls("list_controls.jsonl")
    assert len(items) >= 40
    ids = [str(item["id"]) for item in items]
    assert len(set(ids)) == len(ids) and all(re.fullmatch(r"list-\d{3}", i) for i in ids)
    known = {
        _norm(str(item["text"])).lower() for item in _every_text() if not str(item["id"]).startswith("list-")
    }
    for item in items:
        assert set(item) == {"id", "text", "articles", "note"}, item
        articles = item["articles"]
        assert isinstance(articles, list) and 1 <= len(articles) <= 5 and len(set(articles)) == len(articles)
        assert all(isinstance(a, int) and 1 <= a <= 99 for a in articles), item["id"]
        lead, *lines = str(item["text"]).split("\n")
        assert lead_in_sentence(lead) is not None and len(lines) >= 2, item["id"]
        assert all(re.match(r"(?:- |\d{1,2}\. )\S", line) for line in lines), item["id"]
        assert 20 <= len(_words(str(item["text"]))) <= 160 and str(item["note"]).strip(), item["id"]
        assert _norm(str(item["text"])).lower() not in known, item["id"]


def test_control_provisions_are_paragraphs_or_points_of_the_first_article(gdpr_xml: Path) -> None:
    """The provision labels (for the provision picker's figures, docs/officer.md) name existing paragraphs or points
    of the control's first article, each once; an article with a single provision has none to choose."""
    from compliance.rules import load_law_file

    law = load_law_file(gdpr_xml)
    keys = {p.key for p in law.provisions}
    labelled = 0
    for item in _every_control():
        provisions = item["provisions"]
        assert isinstance(provisions, list) and len(set(provisions)) == len(provisions) <= 3, item["id"]
        article = f"art:{item['articles'][0]}"  # type: ignore[index]
        for key in provisions:
            assert key in keys and str(key).startswith(article + "/"), (item["id"], key)
        if not law.children(article):
            assert not provisions, item["id"]
        labelled += bool(provisions)
    assert labelled >= 160


def test_control_set_is_not_copied_from_the_examples() -> None:
    example_grams: set[tuple[str, ...]] = set()
    for path in (TOOLS / "src").glob("*.md"):
        example_grams |= _ngrams(path.read_text(encoding="utf-8"), 8)
    copied = {item["id"] for item in _every_text() if _ngrams(str(item["text"]), 8) & example_grams}
    assert not copied


def test_control_set_is_not_copied_from_the_gdpr(shared_data: Path) -> None:
    provisions = shared_data / "laws" / "gdpr" / "gdpr_formex_provisions.jsonl"
    law_grams: set[tuple[str, ...]] = set()
    for line in provisions.read_text(encoding="utf-8").splitlines():
        if line.strip():
            law_grams |= _ngrams(json.dumps(json.loads(line), ensure_ascii=False), 8)
    assert len(law_grams) > 10_000
    copied = {item["id"] for item in _every_text() if _ngrams(str(item["text"]), 8) & law_grams}
    assert not copied


# ------------------------------------------------------------------------------------ NIS2 expectations


def test_nis2_expectation_phrases_identify_one_paragraph_each(shared_data: Path) -> None:
    from compliance.rules import load_law_file

    expectations = json.loads((DATA / "nis2_expectations.json").read_text(encoding="utf-8"))
    assert expectations["law"] == "nis2"
    must, may, must_not = (expectations[k] for k in ("must_alert", "may_alert", "must_not_alert"))
    assert len(must) >= 30 and len(must_not) >= 50 and may
    assert {"incident reporting", "business continuity", "encryption", "supply chain", "HR security"} <= {
        entry["topic"] for entry in must
    }
    texts = {name: document_text(name) for name in EXPECTED}
    for entry in must + may + must_not:
        phrase = entry["phrase"]
        hits = {name: text.count(phrase) for name, text in texts.items() if phrase in text}
        assert hits == {entry["document"]: 1}, (phrase, hits)
    nis2 = load_law_file(shared_data / "laws" / "eu" / "nis2.json")
    keys = {p.key for p in nis2.provisions}
    for entry in must:
        assert entry["nis2_provisions"] and set(entry["nis2_provisions"]) <= keys, entry
    assert all(entry["nis2_provisions"] == [] for entry in may + must_not)
