"""Formex 4 importer: a small hand-written act for the details, the real GDPR against an independent parse."""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import date
from pathlib import Path

import pytest

from compliance.errors import CorpusFormatError
from compliance.rules import Law, load_law_file, parse_formex

FIXTURE = Path(__file__).parent / "fixtures" / "rules" / "mini_regulation.fmx.xml"


def ns(text: str | None) -> str:
    return re.sub(r"\s+", " ", text or "").strip()


@pytest.fixture(scope="module")
def mini() -> Law:
    return parse_formex(FIXTURE.read_bytes(), source=str(FIXTURE))


# -- the mini regulation ---------------------------------------------------------------------------------------
def test_mini_structure_counts(mini: Law) -> None:
    counts = Counter(p.kind for p in mini.provisions)
    assert counts == {"recital": 3, "chapter": 2, "section": 1, "article": 5, "paragraph": 5, "point": 8}
    assert [p.key for p in mini.articles] == [f"art:{n}" for n in range(1, 6)]
    assert [p.ordinal for p in mini.provisions] == list(range(len(mini.provisions)))


def test_mini_keys_and_parents(mini: Law) -> None:
    assert mini.get("chp:II/sec:1").parent_key == "chp:II"
    assert mini.article(3).parent_key == "chp:II/sec:1"
    assert mini.article(4).parent_key == "chp:II"
    assert mini.get("art:3/par:1/pt:b").parent_key == "art:3/par:1"
    assert mini.get("art:2/pt:2/pt:a").parent_key == "art:2/pt:2"
    assert mini.chapter_of("art:3/par:1/pt:a").key == "chp:II"  # type: ignore[union-attr]
    assert mini.get("chp:I").title == "General provisions"
    assert mini.get("chp:II/sec:1").title == "Security of records"
    assert mini.article(2).title == "Definitions"


def test_mini_texts(mini: Law) -> None:
    # quotation marks from QUOT.START/END, footnotes dropped, recital with two subparagraphs kept whole
    assert mini.get("rec:1").text == "Records of office plants should be kept securely."
    assert ns(mini.get("rec:2").text) == (
        "The ‘plant keeper’ should be accountable. A second subparagraph of the recital explains why."
    )
    # a paragraph's text includes its points, a point's text excludes its label and its sub-points
    assert ns(mini.get("art:3/par:1").text) == (
        "The plant keeper shall implement appropriate measures, including: (a) the encryption of watering "
        "logs; (b) regular backups of repotting certificates."
    )
    assert mini.get("art:3/par:1/pt:a").text == "the encryption of watering logs;"
    assert mini.get("art:2/pt:2").text == "‘record’ means either:"
    assert mini.get("art:2/pt:2/pt:b").text == "a repotting certificate."
    # articles without numbered paragraphs carry their text; with paragraphs, text_of joins them
    assert mini.article(1).text == "This Regulation lays down rules on the records of office plants."
    assert mini.article(3).text == ""
    assert "five years" in mini.text_of("art:3")
    # unnumbered (dash) items become points with no number
    dash = mini.get("art:3/par:2/pt:dash-2")
    assert dash.number is None and dash.text == "the cleaning staff."
    # a processing instruction (<?PAGE?>) between paragraphs does not disturb anything
    assert mini.get("art:3/par:2").text.startswith("Records shall be kept for no longer than five years.")


def test_mini_metadata(mini: Law) -> None:
    assert mini.identifier == "32030R0042"  # derived from NO.DOC (no NO.CELEX in an OJ act)
    assert mini.short_name == "32030r0042"
    assert mini.title.endswith("(Plant Records Regulation)") and "EEA" not in mini.title
    assert mini.law_type == "regulation" and mini.jurisdiction == "EU"
    assert mini.date_adopted == date(2030, 1, 15)
    assert mini.date_in_force == date(2030, 2, 1)
    assert mini.metadata["date_applicable"] == "2031-01-01"
    assert mini.source_format == "formex4"
    assert re.fullmatch(r"[0-9a-f]{64}", mini.checksum)


def test_mini_detected_and_loaded_from_path() -> None:
    law = load_law_file(FIXTURE)
    assert law.source == str(FIXTURE) and len(law.articles) == 5


# -- errors ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"", "empty"),
        (b"   \n", "empty"),
        (b"this is not xml", "not well-formed"),
        (b'<?xml version="1.0"?><ACT><ENACTING.TERMS><ARTICLE>', "not well-formed"),
        (b"<html><body>hello</body></html>", "root element html"),
        (b"<DOC><BIB.DOC/></DOC>", "publication description"),
        (b"<CORR><TITLE/></CORR>", "corrigendum"),
        (b"<ACT><TITLE><TI><P>Regulation</P></TI></TITLE></ACT>", "ENACTING.TERMS"),
        (b"<ACT><ENACTING.TERMS><DIVISION/></ENACTING.TERMS></ACT>", "no ARTICLE"),
        (
            b"<ACT><ENACTING.TERMS><DIVISION><TITLE><TI><P>CHAPTER " + b"X" * 70 + b"</P></TI></TITLE>"
            b"<ARTICLE><TI.ART>Article 1</TI.ART><ALINEA>x</ALINEA></ARTICLE></DIVISION></ENACTING.TERMS></ACT>",
            "too long",
        ),
        (
            b"<ACT><ENACTING.TERMS><ARTICLE><TI.ART>Article 1</TI.ART><PARAG><NO.PARAG>1.</NO.PARAG>"
            b"<ALINEA>x</ALINEA></PARAG></ARTICLE></ENACTING.TERMS></ACT>",
            "CELEX",
        ),
    ],
)
def test_bad_input_names_file_and_problem(data: bytes, problem: str) -> None:
    with pytest.raises(CorpusFormatError) as info:
        parse_formex(data, source="bad.xml")
    assert info.value.source == "bad.xml"
    assert problem in info.value.problem
    assert str(info.value).startswith("bad.xml: ")


def test_truncated_fixture_is_rejected() -> None:
    data = FIXTURE.read_bytes()
    with pytest.raises(CorpusFormatError, match="not well-formed"):
        parse_formex(data[: len(data) // 2], source="half.xml")


# -- the real GDPR ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def gdpr(gdpr_xml: Path) -> Law:
    return parse_formex(gdpr_xml.read_bytes(), source=str(gdpr_xml))


def _jsonl(path: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_gdpr_counts(gdpr: Law) -> None:
    counts = Counter(p.kind for p in gdpr.provisions)
    assert counts["article"] == 99
    assert counts["chapter"] == 11
    assert counts["paragraph"] == 372
    assert counts["point"] == 389
    assert counts["recital"] == 173
    assert counts["section"] == 15


def test_gdpr_metadata(gdpr: Law, gdpr_xml: Path) -> None:
    import hashlib

    assert gdpr.identifier == "32016R0679"
    assert gdpr.law_type == "regulation" and gdpr.jurisdiction == "EU"
    assert gdpr.title.startswith("Regulation (EU) 2016/679 of the European Parliament and of the Council")
    assert gdpr.title.endswith("(General Data Protection Regulation)")
    assert gdpr.date_adopted == date(2016, 4, 27)
    assert gdpr.date_in_force == date(2016, 5, 24)  # publication 4.5.2016 + 20 days (Article 99(1))
    assert gdpr.metadata["date_applicable"] == "2018-05-25"
    assert gdpr.version_date == date(2018, 5, 23)
    assert gdpr.checksum == hashlib.sha256(gdpr_xml.read_bytes()).hexdigest()


def test_gdpr_oracle_provisions(gdpr: Law, shared_data: Path) -> None:
    """Every paragraph / paragraph-less article, its points, article and chapter/section titles equal the
    independent reference parse (whitespace normalised)."""
    rows = _jsonl(shared_data / "laws" / "gdpr" / "gdpr_formex_provisions.jsonl")
    assert len(rows) == 389
    assert sum(r["paragraph"] is not None for r in rows) == 372
    seen_points = 0
    for row in rows:
        art_key = f"art:{row['article']}"
        key = art_key if row["paragraph"] is None else f"{art_key}/par:{row['paragraph']}"
        prov = gdpr.get(key)
        assert ns(prov.text) == ns(row["text"]), key
        assert ns(gdpr.get(art_key).title) == ns(row["article_title"]), art_key
        points = sorted((d for d in gdpr.descendants(key) if d.kind == "point"), key=lambda p: p.ordinal)
        assert len(points) == len(row["points"]), key
        for mine, ref in zip(points, row["points"], strict=True):
            assert (mine.number or "") == ref["point"].strip("()"), mine.key
            assert ns(mine.text) == ns(ref["text"]), mine.key
        seen_points += len(points)
        chapter = gdpr.chapter_of(art_key)
        assert chapter is not None
        assert f"CHAPTER {chapter.number}" == row["chapter"]
        assert chapter.title == row["chapter_title"]
        parent = gdpr.get(gdpr.get(art_key).parent_key)  # type: ignore[arg-type]
        if row["section"]:
            assert parent.kind == "section" and f"Section {parent.number} — {parent.title}" == row["section"]
        else:
            assert parent.kind == "chapter"
    assert seen_points == 389


# Recitals whose text runs over two subparagraphs (<TXT> then <P> in the XML). The reference parse keeps only
# the first subparagraph; the importer keeps the whole recital, as printed in the Official Journal.
MULTI_PARAGRAPH_RECITALS = {19, 50, 71, 143}


def test_gdpr_oracle_recitals(gdpr: Law, shared_data: Path) -> None:
    rows = _jsonl(shared_data / "laws" / "gdpr" / "gdpr_formex_recitals.jsonl")
    assert len(rows) == 173 == len(gdpr.recitals)
    assert [r.number for r in gdpr.recitals] == [str(r["recital"]) for r in rows]
    for row in rows:
        mine = ns(gdpr.get(f"rec:{row['recital']}").text)
        ref = ns(row["text"])
        if row["recital"] in MULTI_PARAGRAPH_RECITALS:
            assert mine.startswith(ref) and len(mine) > len(ref) + 200, row["recital"]
        else:
            assert mine == ref, row["recital"]
    # the second subparagraph of recital 71 (the 2018 corrigendum rewrote it) is there
    assert "Automated decision-making and profiling based on special categories" in gdpr.get("rec:71").text


def test_gdpr_original_oj_file(shared_data: Path, gdpr: Law) -> None:
    """The Official Journal file (root ACT, no NO.CELEX) imports with the same structure."""
    path = shared_data / "laws" / "gdpr" / "L_2016119EN.01000101.xml"
    law = parse_formex(path.read_bytes(), source=str(path))
    assert law.identifier == "32016R0679"
    assert Counter(p.kind for p in law.provisions) == Counter(p.kind for p in gdpr.provisions)
    assert [p.key for p in law.provisions] == [p.key for p in gdpr.provisions]
    assert law.date_adopted == date(2016, 4, 27)
    # the corrigendum changed recital 71 and some articles: the texts differ there, not in article 32
    assert law.get("rec:71").text != gdpr.get("rec:71").text
    assert law.text_of("art:32") == gdpr.text_of("art:32")


@pytest.mark.parametrize("name", ["L_2018127EN.01000201.xml", "L_2016119EN.01000101.doc.xml"])
def test_gdpr_non_act_files_rejected(shared_data: Path, name: str) -> None:
    path = shared_data / "laws" / "gdpr" / name
    with pytest.raises(CorpusFormatError, match="not an act") as info:
        load_law_file(path)
    assert info.value.source == str(path)


CONSOLIDATED_WITH_TITLES = b"""<?xml version="1.0" encoding="UTF-8"?>
<CONS.ACT>
  <INFO.CONSLEG CONSLEG.REF="2031L0007" CONSLEG.DATE="20320301" LEG.VAL="DIR"/>
  <CONS.DOC>
    <FAM.COMP LEG.VAL="DIR">
      <BIB.DATA>
        <BIB.INSTANCE.CONS><DATE ISO="20310110">20310110</DATE></BIB.INSTANCE.CONS>
        <NO.CELEX>32031L0007</NO.CELEX>
        <DATE ISO="20310105">20310105</DATE>
        <TITLE><TI><P>Directive (EU) 2031/7 on pots</P></TI></TITLE>
      </BIB.DATA>
    </FAM.COMP>
    <ENACTING.TERMS>
      <DIVISION>
        <TITLE><TI><P>TITLE I</P></TI><STI><P>Scope</P></STI></TITLE>
        <DIVISION>
          <TITLE><TI><P>CHAPTER 1</P></TI><STI><P>General</P></STI></TITLE>
          <ARTICLE IDENTIFIER="001"><TI.ART>Article 1</TI.ART><STI.ART>Subject</STI.ART>
            <ALINEA>This Directive concerns pots.</ALINEA></ARTICLE>
        </DIVISION>
      </DIVISION>
      <DIVISION>
        <TITLE><TI><P>TITLE II</P></TI><STI><P>Final provisions</P></STI></TITLE>
        <DIVISION>
          <TITLE><TI><P>CHAPTER 1</P></TI><STI><P>Dates</P></STI></TITLE>
          <ARTICLE IDENTIFIER="002"><TI.ART>Article 2</TI.ART><STI.ART>Entry into force</STI.ART>
            <ALINEA>This Directive shall enter into force on the third day following that of its publication in the
            <HT TYPE="ITALIC">Official Journal of the European Union</HT>.</ALINEA></ARTICLE>
        </DIVISION>
      </DIVISION>
    </ENACTING.TERMS>
  </CONS.DOC>
  <CONS.ANNEX>
    <ANNEX><TITLE><TI><P>ANNEX I</P></TI><STI><P>List of pots</P></STI></TITLE>
      <CONTENTS><P>Clay pots.</P><P>Plastic pots.</P></CONTENTS></ANNEX>
  </CONS.ANNEX>
</CONS.ACT>
"""


def test_consolidated_directive_with_titles_and_annex() -> None:
    law = parse_formex(CONSOLIDATED_WITH_TITLES, source="dir.xml")
    assert law.identifier == "32031L0007" and law.law_type == "directive"
    assert law.get("tit:I").kind == "part" and law.get("tit:I").title == "Scope"
    # chapter numbers restart per title: the key path keeps them apart
    assert law.get("tit:I/chp:1").title == "General" and law.get("tit:II/chp:1").title == "Dates"
    assert law.article(2).parent_key == "tit:II/chp:1"
    assert law.chapter_of("art:2").key == "tit:II/chp:1"  # type: ignore[union-attr]
    annex = law.get("anx:I")
    assert annex.kind == "annex" and annex.title == "List of pots"
    assert annex.text.splitlines() == ["Clay pots.", "Plastic pots."]
    assert law.date_adopted == date(2031, 1, 5)
    assert law.date_in_force == date(2031, 1, 13)  # published 10.1.2031 + 3 days
    assert law.version_date == date(2032, 3, 1)
