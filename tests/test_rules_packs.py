"""Law packs: shipped YAML validates, checksums match the reference files, the recital map is complete."""

from __future__ import annotations

import csv
import hashlib
from pathlib import Path

import pytest

from compliance.errors import LawNotFoundError, LawPackError
from compliance.rules import get_pack, list_packs, load_law_file
from compliance.rules.packs import find_pack_for, load_pack_file

EU_PACKS = ["aifmd", "eecc", "eprivacy", "led", "mifid2", "nis2", "psd2", "red"]


def test_shipped_packs() -> None:
    assert [p.name for p in list_packs()] == sorted(["gdpr", *EU_PACKS])
    for pack in list_packs():
        assert pack.jurisdiction == "EU"
        assert pack.date_adopted and pack.date_in_force and pack.date_applicable
        assert pack.date_adopted <= pack.date_in_force <= pack.date_applicable
        assert pack.eur_lex_url and pack.eur_lex_url.startswith("https://eur-lex.europa.eu/")
        assert pack.celex and pack.celex.startswith("3")


def test_gdpr_pack_fields() -> None:
    pack = get_pack("GDPR")
    assert pack.celex == "32016R0679" and pack.law_type == "regulation"
    assert str(pack.date_in_force) == "2016-05-24" and str(pack.date_applicable) == "2018-05-25"
    assert pack.mirror_file == "gdpr/gdpr-consolidated-with-corrected-preamble-en.xml"
    assert pack.format == "formex4"
    assert pack.official_url == (
        "https://publications.europa.eu/resource/oj/JOL_2016_119_R_0001.ENG.fmx4.L_2016119EN.01000101.xml"
    )
    assert pack.sources[1].file == "gdpr/L_2016119EN.01000101.xml"


def test_gdpr_recital_map_is_carried_in_the_pack(shared_data: Path) -> None:
    pack = get_pack("gdpr")
    rows = list(
        csv.DictReader((shared_data / "mappings" / "gdpr_article_recital_map.tsv").open(), delimiter="\t")
    )
    assert len(rows) == len(pack.recital_links) == 257
    expected = {
        (int(r["article"]), int(r["recital"])): {
            name
            for name, col in (("simeri", "in_simeri_hf"), ("gdprinfo", "in_gdprinfo_scrape"))
            if r[col] == "1"
        }
        for r in rows
    }
    assert {(link.article, link.recital): set(link.sources) for link in pack.recital_links} == expected
    assert sum(len(link.sources) == 2 for link in pack.recital_links) == 170
    mapping = pack.recital_map()
    assert sum(len(v) for v in mapping.values()) == 257
    assert mapping[32] == [74, 75, 76, 77, 78, 79, 83, 85]
    assert all(v == sorted(v) for v in mapping.values())
    assert 75 in pack.article_map() and 32 in pack.article_map()[83]


def test_recital_map_needs_no_shared_data(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from compliance.rules import packs

    monkeypatch.setenv("COMPLIANCE_SHARED_DATA", str(tmp_path / "absent"))
    packs._packs.cache_clear()
    try:
        assert len(get_pack("gdpr").recital_map()) > 80
    finally:
        packs._packs.cache_clear()


@pytest.mark.parametrize("name", ["gdpr", *EU_PACKS])
def test_pack_checksums_match_reference_files(shared_data: Path, name: str) -> None:
    pack = get_pack(name)
    for source in pack.sources:
        path = shared_data / "laws" / source.file
        assert hashlib.sha256(path.read_bytes()).hexdigest() == source.sha256, source.file
    law = load_law_file(shared_data / "laws" / pack.mirror_file)
    assert law.identifier == pack.celex and law.short_name == name
    assert law.title == pack.title and law.date_in_force == pack.date_in_force


def test_find_pack_for() -> None:
    assert find_pack_for("32016R0679").name == "gdpr"  # type: ignore[union-attr]
    assert find_pack_for("02002L0058-20091219").name == "eprivacy"  # type: ignore[union-attr]
    assert find_pack_for("32099R0001") is None


def test_unknown_pack() -> None:
    with pytest.raises(LawNotFoundError, match="known packs: aifmd"):
        get_pack("ccpa")


GOOD = """
name: mini
celex: 32030R0042
title: Mini Regulation
jurisdiction: EU
law_type: regulation
sources:
  - file: mini/mini.xml
    sha256: {sha}
    format: formex4
"""
SHA = "a" * 64


def test_minimal_pack_is_valid() -> None:
    pack = load_pack_file("mini.yaml", text=GOOD.format(sha=SHA))
    assert pack.official_url is None and pack.recital_map() == {}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("name: [unclosed", "invalid YAML"),
        ("- a\n- b\n", "expected a mapping"),
        (GOOD.format(sha="xyz"), "sources.0.sha256"),
        (GOOD.format(sha=SHA).replace("format: formex4", "format: pdf"), "sources.0.format"),
        (GOOD.format(sha=SHA).replace("name: mini", "name: Mini Law"), "name"),
        (GOOD.format(sha=SHA).replace("title: Mini Regulation\n", ""), "title"),
        (GOOD.format(sha=SHA).replace("jurisdiction: EU", "jurisdiction: Mars"), "jurisdiction"),
        (GOOD.format(sha=SHA) + "colour: blue\n", "colour"),
        (GOOD.format(sha=SHA).replace("mini/mini.xml", "../etc/passwd"), "sources.0.file"),
        (GOOD.format(sha=SHA) + "    url: ftp://example.org/x\n", "url"),
        (GOOD.format(sha=SHA) + "recital_links:\n  - {article: 1, recital: 2, sources: [x]}\n", "undeclared"),
        (
            GOOD.format(sha=SHA)
            + "recital_links:\n  - {article: 1, recital: 2}\n  - {article: 1, recital: 2}\n",
            "duplicate",
        ),
        (GOOD.format(sha=SHA).replace("celex: 32030R0042\n", ""), "celex or an identifier"),
    ],
)
def test_malformed_packs(text: str, problem: str) -> None:
    with pytest.raises(LawPackError, match=problem) as info:
        load_pack_file("bad.yaml", text=text)
    assert "bad.yaml" in str(info.value)


def test_unreadable_pack_file(tmp_path: Path) -> None:
    with pytest.raises(LawPackError, match="cannot read"):
        load_pack_file(tmp_path / "missing.yaml")
