"""CLML (legislation.gov.uk) importer on two hand-written fixtures: an SI extract and a tiny Act."""

from __future__ import annotations

from collections import Counter
from datetime import date
from pathlib import Path

import pytest

from compliance.errors import CorpusFormatError
from compliance.rules import Law, detect_format, load_law_file, parse_clml

FIXTURES = Path(__file__).parent / "fixtures" / "rules"
PECR = FIXTURES / "pecr_extract.clml.xml"
ACT = FIXTURES / "mini_act.clml.xml"


@pytest.fixture(scope="module")
def pecr() -> Law:
    return parse_clml(PECR.read_bytes(), source=str(PECR))


@pytest.fixture(scope="module")
def act() -> Law:
    return parse_clml(ACT.read_bytes(), source=str(ACT))


def test_si_metadata(pecr: Law) -> None:
    assert pecr.identifier == "uksi/2003/2426"
    assert pecr.short_name == "uksi-2003-2426"
    assert pecr.title == "The Privacy and Electronic Communications (EC Directive) Regulations 2003"
    assert pecr.jurisdiction == "UK" and pecr.law_type == "statutory-instrument"
    assert pecr.date_adopted == date(2003, 9, 18)
    assert pecr.date_in_force == date(2003, 12, 11)
    assert pecr.source_format == "clml"
    assert pecr.metadata["document_main_type"] == "UnitedKingdomStatutoryInstrument"


def test_si_structure(pecr: Law) -> None:
    assert [a.number for a in pecr.articles] == ["1", "2", "5", "6", "22"]
    assert pecr.article(6).title == "Confidentiality of communications"
    assert Counter(p.kind for p in pecr.provisions) == {"article": 5, "paragraph": 7, "point": 6}
    assert [p.key for p in pecr.children("art:5")] == ["art:5/par:1", "art:5/par:2", "art:5/par:3"]
    assert pecr.get("art:5/par:2/pt:b/pt:ii").parent_key == "art:5/par:2/pt:b"


def test_si_texts(pecr: Law) -> None:
    # regulation without paragraphs: text on the article; footnote and commentary references dropped
    reg22 = pecr.article(22).text
    assert reg22.startswith("A person shall neither transmit") and reg22.endswith("the sender.")
    # Character EmDash, paragraph text includes its points with labels, point text excludes sub-points
    assert pecr.get("art:5/par:2").text.splitlines() == [
        "If necessary, the measures required by paragraph (1) may be taken by the service provider in "
        "conjunction with—",
        "(a) the provider of the electronic communications network by means of which the service is provided; and",
        "(b) any other person who—",
        "(i) supplies the network; or",
        "(ii) maintains it.",
    ]
    assert pecr.get("art:5/par:2/pt:b").text == "any other person who—"
    assert pecr.get("art:2/par:2").text.endswith("Data Protection Act 1998.")
    assert "“subscriber” means" in pecr.get("art:2/par:1").text
    assert "1998 c. 29" not in " ".join(p.text for p in pecr.provisions)  # footnote text not in any provision
    assert "illustrative commentary" not in " ".join(p.text for p in pecr.provisions)


def test_act_structure(act: Law) -> None:
    assert act.identifier == "ukpga/2030/7" and act.law_type == "act"
    assert act.date_adopted == date(2030, 3, 1) and act.date_in_force is None
    assert Counter(p.kind for p in act.provisions) == {
        "part": 3, "chapter": 1, "section": 1, "article": 4, "paragraph": 2, "point": 2, "annex": 1,
    }  # fmt: skip
    assert act.get("part:2").title == "Records"
    assert act.get("part:2/chp:1").parent_key == "part:2"
    assert act.get("part:2/chp:1/hd:1").title == "Duties of plant keepers"
    assert act.article(2).parent_key == "part:2/chp:1/hd:1"
    assert act.article(3).title == "Retention"
    assert act.article(3).text == "Records must not be kept for longer than five years (see Schedule 1)."
    schedule = act.get("sch:1")
    assert schedule.kind == "annex" and schedule.title == "Retention periods"
    assert schedule.text.splitlines() == [
        "1 Watering logs: five years.",
        "2 Repotting certificates: ten years.",
    ]


def test_detection_and_loading() -> None:
    assert detect_format(PECR.read_bytes()) == "clml"
    assert load_law_file(ACT).identifier == "ukpga/2030/7"


NS = 'xmlns="http://www.legislation.gov.uk/namespaces/legislation"'


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"<Legislation/>", "not in the CLML namespace"),
        (
            f"<Legislation {NS}><ukm:Metadata xmlns:ukm='x'/></Legislation>".encode(),
            "no Primary or Secondary",
        ),
        (f"<Legislation {NS}><Secondary/></Legislation>".encode(), "no Body"),
        (f"<Legislation {NS}><Primary><Body/></Primary></Legislation>".encode(), "no sections"),
        (
            f"<Legislation {NS}><Primary><Body><P1><Pnumber>1</Pnumber></P1></Body></Primary></Legislation>".encode(),
            "identifier",
        ),
        (b"<Act/>", "not CLML"),
        (PECR.read_bytes()[:3000], "not well-formed"),
    ],
)
def test_bad_clml(data: bytes, problem: str) -> None:
    with pytest.raises(CorpusFormatError, match=problem) as info:
        parse_clml(data, source="uk.xml")
    assert info.value.source == "uk.xml"
