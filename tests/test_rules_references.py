"""Cross-references between articles of one act."""

from __future__ import annotations

from pathlib import Path

import pytest

from compliance.rules.references import article_references, citation_counts


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the rights referred to in Articles 15 to 22 and 34", {15, 16, 17, 18, 19, 20, 21, 22, 34}),
        ("pursuant to point (f) of Article 6(1) or Article 9(2)(a)", {6, 9}),
        ("as laid down in Articles 13, 14 and 22", {13, 14, 22}),
        ("the powers in points (a) to (h) of Article 58(2)(a) to (h)", {58}),
        ("Article 8(1) of this Regulation applies", {8}),
        ("Article 16 of Directive 95/46/EC and Article 8 of the Charter", set()),
        ("in accordance with Article 290 TFEU", set()),
        ("no reference at all", set()),
    ],
)
def test_article_references(text: str, expected: set[int]) -> None:
    assert article_references(text) == expected


def test_valid_restricts_numbers() -> None:
    assert article_references("Articles 98 to 101", valid=range(1, 100)) == {98, 99}


def test_gdpr_citation_graph(gdpr_xml: Path) -> None:
    from compliance.rules import parse_formex

    law = parse_formex(gdpr_xml.read_bytes(), source=str(gdpr_xml))
    counts = citation_counts(law)
    # lawfulness (Art. 6) and special categories (Art. 9) are referred to throughout the Regulation
    assert counts[6] >= 8 and counts[9] >= 8
    # the data-subject rights are referred to as a block ("Articles 15 to 22")
    assert all(counts[a] >= 3 for a in range(15, 23))
    # the final provisions are referred to by no other article
    assert counts[99] == 0 and counts[97] == 0
    assert set(counts) <= set(range(1, 100))


def test_gdpr_citations_from_what_controllers_do(gdpr_xml: Path) -> None:
    """Counted only where they stand in a provision that does not oblige public bodies alone (each point read with
    its list's lead-in), the references to the consistency mechanism and to processors are mostly the authorities'
    and the Board's business; lawfulness and the rights stay referred to throughout."""
    from compliance.rules import parse_formex

    law = parse_formex(gdpr_xml.read_bytes(), source=str(gdpr_xml))
    every, regulated = citation_counts(law), citation_counts(law, regulated_only=True)
    # Art. 63 (consistency mechanism): from the authorities' adoption of clauses, codes, BCRs, mutual assistance …
    assert every[63] >= 10 and regulated[63] <= 4
    # Art. 28 (processor): 57(1)(j), 58(3)(g) and 64(1)(d) are the authorities' and the Board's; 83(4)(a) is not
    assert every[28] == 4 and regulated[28] == 1
    assert regulated[6] >= 8 and all(regulated[a] >= 3 for a in range(15, 23))
    assert all(regulated[a] <= every[a] for a in every)


GDPR_NAMES = ("General Data Protection Regulation", "GDPR", "2016/679")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("We keep a record of processing activities as required by Art. 30 GDPR.", [(30, "art:30")]),
        (
            "The legal basis is Article 6(1)(f) of the General Data Protection Regulation.",
            [(6, "art:6/par:1/pt:f")],
        ),
        ("The legal basis is Art. 6 para. 1 lit. b GDPR.", [(6, "art:6/par:1/pt:b")]),
        ("fined under Art. 5 (1) f) GDPR, Art. 32 GDPR", [(5, "art:5/par:1/pt:f"), (32, "art:32")]),
        ("based on Art. 6 (1) (a) and (b) GDPR", [(6, "art:6/par:1/pt:a"), (6, "art:6/par:1/pt:b")]),
        ("in breach of Art. 5(1)(f) and Art. 32 GDPR", [(5, "art:5/par:1/pt:f"), (32, "art:32")]),
        # a numbered sibling is another paragraph of the same article (a real DPA's wording); the Directive's
        # articles in the same sentence are not the GDPR's
        (
            "standards for contracts with processors according to Art. 28(7) or (8) GDPR or a decision on the "
            "basis of Art.\n45(3) or Art. 46(2) GDPR or on the basis of Article 25(6) or 26(4) of EU\n"
            "Directive 95/46/EC",
            [(28, "art:28/par:7"), (28, "art:28/par:8"), (45, "art:45/par:3"), (46, "art:46/par:2")],
        ),
        ("Article 28(3) and (4) GDPR", [(28, "art:28/par:3"), (28, "art:28/par:4")]),
        ("Arts. 13, 14 GDPR", [(13, "art:13"), (14, "art:14")]),
        ("under Articles 15 to 17 of the GDPR", [(15, "art:15"), (16, "art:16"), (17, "art:17")]),
        ("rights under Art. 15\u201317 GDPR", [(15, "art:15"), (16, "art:16"), (17, "art:17")]),
        ("GDPR Article 17 gives the right to erasure", [(17, "art:17")]),
        ("a contract under Article 28 of Regulation (EU) 2016/679", [(28, "art:28")]),
        ("Article 28(3) of the UK GDPR", [(28, "art:28/par:3")]),
        ("Article 9 of the EU General Data Protection Regulation", [(9, "art:9")]),
        # references without the act's name are not citations of it
        ("Article 5 of this Agreement applies.", []),
        ("Article 21 NIS2 requires measures; see Article 2 of the ePrivacy Directive.", []),
        ("The GDPR applies. Article 5 of the contract says otherwise.", []),
        ("Articles 13 and 14 GDPR, and Article 21 of the NIS2 Directive", [(13, "art:13"), (14, "art:14")]),
        ("Article 120 GDPR", []),  # not an article of the act (valid = 1 … 99)
    ],
)
def test_cited_provisions(text: str, expected: list[tuple[int, str]]) -> None:
    from compliance.rules.references import cited_provisions

    found = cited_provisions(text, GDPR_NAMES, valid=range(1, 100))
    assert [(c.article, c.key) for c in found] == expected
    for c in found:
        assert c.text in " ".join(text.split())  # the citation as written, the act's name included


def test_cited_provisions_needs_names() -> None:
    from compliance.rules.references import cited_provisions

    assert cited_provisions("Art. 30 GDPR", ()) == []


def test_act_names_come_from_the_act(gdpr_xml: Path) -> None:
    from compliance.rules import parse_formex
    from compliance.rules.references import act_names

    law = parse_formex(gdpr_xml.read_bytes(), source=str(gdpr_xml))
    # the short title closes the Formex title; its initials and the act's number are how policies cite it
    assert act_names(law) == GDPR_NAMES
