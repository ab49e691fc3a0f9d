"""EU JSON importer: consolidation markers stripped, paragraphs and points recognised, bad input refused."""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import date
from pathlib import Path

import pytest

from compliance.errors import CorpusFormatError
from compliance.rules import Law, detect_format, load_law_file, parse_eu_json
from compliance.rules.eu_json import strip_consolidation_markers

MARKER = re.compile(r"[▼►◄▲]|—————")

SAMPLE = {
    "id": "MINI",
    "full_name": "Mini Directive",
    "celex_id": "02030L0001-20320101",
    "effective_date": "2030-06-01",
    "eur_lex_url": "https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:02030L0001-20320101",
    "articles": [
        {
            "number": "1",
            "title": "Scope",
            "text": "▼M1\n\n1.\n\nThis Directive applies to plants.\n\n▼B\n\n2.\n\nIt does not apply to:\n\n(a)\n\n"
            "cacti;\n\n(b)\n\nplastic plants, namely:\n\n(i)\n\nferns;\n\n(ii)\n\npalms;\n\n(c)\n\nweeds.\n\n"
            "▼M1 —————\n\n▼B\n\n3.\n\nMember States shall report (\n\n4\n\n) yearly.",
        },
        {
            "number": "2",
            "title": "►M1 ◄",
            "text": "Definitions of plants ◄\n\nFor the purposes of this Directive:\n\n"
            "(1)\n\n‘plant’ means a living organism;\n\n(2)\n\n‘pot’ means a container.",
        },
        {
            "number": "3",
            "title": "Entry into force",
            "text": "This Directive shall enter into force on 1 June 2030.",
        },
        {"number": "4", "text": "1.   Inline numbered paragraph one.\n\n2.   Inline numbered paragraph two."},
        {
            "number": "5",
            "text": "Heading of five\n\nMember States shall ensure:\n\n1.\n\non plants;\n\n2.\n\non pots.",
        },
    ],
    "recitals": [
        {"recital_number": 1, "text": "Plants matter ▲."},
        {"recital_number": 2, "text": "Pots matter too."},
        {"recital_number": 2, "text": "Pots matter too."},
    ],
}


@pytest.fixture(scope="module")
def mini() -> Law:
    return parse_eu_json(json.dumps(SAMPLE).encode(), source="mini.json")


def test_markers_stripped() -> None:
    assert strip_consolidation_markers("▼M2\n\ntext ►M1 new ◄ ▲ ▼B\u00a0x").split() == ["text", "new", "x"]


def test_sample_structure(mini: Law) -> None:
    assert mini.identifier == "32030L0001"  # the act's CELEX, not the consolidated version's
    assert mini.metadata["consolidated_celex"] == "02030L0001-20320101"
    assert mini.version_date == date(2032, 1, 1)
    assert mini.date_in_force == date(2030, 6, 1)
    assert mini.law_type == "directive" and mini.short_name == "mini" and mini.title == "Mini Directive"
    assert [r.key for r in mini.recitals] == ["rec:1", "rec:2"]  # exact duplicate dropped
    assert [p.key for p in mini.children("art:1")] == ["art:1/par:1", "art:1/par:2", "art:1/par:3"]
    assert [p.key for p in mini.children("art:1/par:2")] == [
        "art:1/par:2/pt:a",
        "art:1/par:2/pt:b",
        "art:1/par:2/pt:c",
    ]
    assert [p.key for p in mini.children("art:1/par:2/pt:b")] == [
        "art:1/par:2/pt:b/pt:i",
        "art:1/par:2/pt:b/pt:ii",
    ]
    assert mini.get("art:1/par:2/pt:b").text == "plastic plants, namely:"
    assert mini.get("art:1/par:2").text.splitlines() == [
        "It does not apply to:",
        "(a) cacti;",
        "(b) plastic plants, namely:",
        "(i) ferns;",
        "(ii) palms;",
        "(c) weeds.",
    ]
    assert mini.get("art:1/par:3").text == "Member States shall report yearly."  # footnote call removed
    assert [p.key for p in mini.children("art:4")] == ["art:4/par:1", "art:4/par:2"]
    assert mini.get("art:4/par:2").text == "Inline numbered paragraph two."


def test_sample_title_recovered_and_whole_text(mini: Law) -> None:
    art2 = mini.article(2)
    assert art2.title == "Definitions of plants"
    assert art2.text.startswith("For the purposes of this Directive:\n(1) ‘plant’ means")
    assert [p.key for p in mini.children("art:2")] == ["art:2/pt:1", "art:2/pt:2"]
    assert mini.article(3).text == "This Directive shall enter into force on 1 June 2030."
    assert mini.article(4).title is None
    # a missing title is taken from a heading line; "1." items after a lead sentence are a list, not paragraphs
    art5 = mini.article(5)
    assert art5.title == "Heading of five"
    assert art5.text.splitlines() == ["Member States shall ensure:", "1. on plants;", "2. on pots."]
    assert mini.children("art:5") == []


def test_no_marker_anywhere(mini: Law) -> None:
    for prov in mini.provisions:
        assert not MARKER.search(prov.text + (prov.title or "")), prov.key


EU_FILES = ["eprivacy", "led", "psd2", "aifmd", "mifid2", "red", "eecc", "nis2", "gdpr"]


@pytest.mark.parametrize("name", EU_FILES)
def test_shared_eu_files(shared_data: Path, name: str) -> None:
    path = shared_data / "laws" / "eu" / f"{name}.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    law = load_law_file(path, apply_pack=False)
    counts = Counter(p.kind for p in law.provisions)
    assert counts["article"] == len(raw["articles"])
    assert len({r["recital_number"] for r in raw["recitals"]}) == counts["recital"]
    assert counts["paragraph"] >= counts["article"]  # most articles have numbered paragraphs
    for prov in law.provisions:
        assert not MARKER.search(prov.text + (prov.title or "")), (name, prov.key)
        if prov.kind in ("paragraph", "point", "recital"):
            assert prov.text, (name, prov.key)
    for article in law.articles:
        assert law.text_of(article.key), (name, article.key)  # nothing is lost
        assert article.title, (name, article.key)
        if any(c.kind == "paragraph" for c in law.children(article.key)):
            assert article.text == "", (name, article.key)  # else text_of would hide the paragraphs
    assert law.identifier.startswith("3") and law.source_format == "eu-json"


def test_eprivacy_articles(shared_data: Path) -> None:
    law = load_law_file(shared_data / "laws" / "eu" / "eprivacy.json")
    assert law.short_name == "eprivacy"  # from the pack
    assert law.identifier == "32002L0058"
    assert len(law.articles) == 21
    assert law.article(4).title == "Security of processing"  # recovered from "►M2 … ◄"
    assert "appropriate technical and organisational measures" in law.get("art:4/par:1").text
    assert law.get("art:4/par:1a").number == "1a"
    assert law.article(5).title == "Confidentiality of the communications"
    assert "‘consent’ by a user or subscriber" in law.get("art:2/pt:f").text
    assert law.date_in_force == date(2002, 7, 31)


TAIL = {
    "id": "TAIL",
    "celex_id": "32031L0002",
    "articles": [
        {"number": "1", "title": "Duty", "text": "Operators shall keep logs."},
        {
            "number": "2",
            "title": "Addressees",
            "text": "This Directive is addressed to the Member States.\n\nDone at Strasbourg, 1\u00a0June 2031.\n\n"
            "For the European Parliament\n\nThe President\n\nA. NAME\n\n(1)\n\nOJ\u00a0C\u00a01, 1.1.2031, p.\u00a01.\n\n"
            "(2)\u00a0\u00a0Regulation (EU) 2016/679 of the European Parliament and of the Council (GDPR).\n\n"
            "ANNEX I\n\nSECTORS OF HIGH CRITICALITY\n\n1.\n\nEnergy\n\n—\n\nElectricity undertakings\n\n"
            "ANNEX\u00a0II\n\nCORRELATION TABLE\n\nArticle 1\n\nArticle 2\n\n"
            "//////////$(document).ready(function(){generateTOC(true);});//",
        },
    ],
}


def test_final_formula_footnotes_and_annexes_leave_the_last_article() -> None:
    """The collection gives the last article the signatures, footnotes and annexes: they are cut off, annexes
    become provisions of their own (a footnote citing the GDPR must not be a provision of the act)."""
    law = parse_eu_json(json.dumps(TAIL).encode(), source="tail.json")
    assert law.text_of("art:2") == "This Directive is addressed to the Member States."
    assert law.children("art:2") == []
    annexes = [p for p in law.provisions if p.kind == "annex"]
    assert [(a.key, a.title) for a in annexes] == [
        ("annex:I", "SECTORS OF HIGH CRITICALITY"),
        ("annex:II", "CORRELATION TABLE"),
    ]
    assert annexes[0].text.splitlines() == ["1.", "Energy", "—", "Electricity undertakings"]
    assert annexes[1].text.splitlines() == ["Article 1", "Article 2"]  # the scraped page script is gone
    assert not any("2016/679" in p.text or "President" in p.text for p in law.provisions)
    # an article without a final formula is left as it is
    assert law.text_of("art:1") == "Operators shall keep logs."


@pytest.mark.parametrize("name", ["nis2", "eprivacy", "aifmd", "mifid2", "psd2", "red", "led", "eecc"])
def test_shared_last_articles_end_at_the_enacting_terms(shared_data: Path, name: str) -> None:
    law = load_law_file(shared_data / "laws" / "eu" / f"{name}.json", apply_pack=False)
    addressees = next(a for a in law.articles if (a.title or "").startswith("Address"))
    assert law.text_of(addressees.key) == "This Directive is addressed to the Member States.", name
    for prov in law.provisions:
        assert "generateTOC" not in prov.text, (name, prov.key)
    if name == "nis2":
        assert [(a.key, a.title) for a in law.provisions if a.kind == "annex"] == [
            ("annex:I", "SECTORS OF HIGH CRITICALITY"),
            ("annex:II", "OTHER CRITICAL SECTORS"),
            ("annex:III", "CORRELATION TABLE"),
        ]


def test_gdpr_json_matches_formex_structure(shared_data: Path) -> None:
    law = load_law_file(shared_data / "laws" / "eu" / "gdpr.json", apply_pack=False)
    assert len(law.articles) == 99 and len(law.recitals) == 173
    assert Counter(p.kind for p in law.provisions)["paragraph"] == 372
    assert "appropriate technical and organisational measures" in law.text_of("art:32")


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"", "empty"),
        (b"{", "not valid JSON"),
        (b"[1, 2]", "JSON object"),
        (b'{"celex_id": "32030L0001"}', "missing key(s) articles"),
        (b'{"articles": [{"number": "1", "text": "x"}]}', "missing key(s) celex_id"),
        (b'{"celex_id": "x", "articles": []}', "non-empty list"),
        (b'{"celex_id": "x", "articles": [{"number": "1"}]}', "article #1"),
        (b'{"celex_id": "x", "articles": [{"text": "t"}], "recitals": ["r"]}', "recital #1"),
        (b"\xff\xfe\x00garbage", "UTF-8"),
    ],
)
def test_bad_json(data: bytes, problem: str) -> None:
    with pytest.raises(CorpusFormatError, match=re.escape(problem)) as info:
        parse_eu_json(data, source="bad.json")
    assert info.value.source == "bad.json"


def test_detect_format_variants() -> None:
    assert detect_format(b"\xef\xbb\xbf {") == "eu-json"
    assert detect_format(b'<?xml version="1.0"?>\n<!-- c --><CONS.ACT/>') == "formex4"
    with pytest.raises(CorpusFormatError, match="root element html"):
        detect_format(b"<html/>", source="page.html")
    with pytest.raises(CorpusFormatError, match="neither XML"):
        detect_format(b"%PDF-1.7", source="x.pdf")
    with pytest.raises(CorpusFormatError, match="empty"):
        detect_format(b"  ")
