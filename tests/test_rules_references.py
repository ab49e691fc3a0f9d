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
