"""Exchange formats built from links, without a database: the review spreadsheet's formula guard, the OSCAL
mapping collection against NIST's schema, the CISO Assistant library against its loader's rules, and the
coverage model."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from compliance.reports.link_sheet import cell, read_review_sheet, uncell, write_link_sheet
from compliance.store.link_history import CurrentLink, text_digest
from tests.ciso_assistant_format import check_library
from tests.fixtures.classifier.tiny import mini_gdpr
from tests.oscal_schema import SCHEMA, SCHEMA_SHA256, validate_oscal

pytest.importorskip("jsonschema")
pytest.importorskip("regex")

NOW = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)


def link(
    link_id: int, key: str, status: str, score: float, *, doc: int = 1, para: int = 0, **kw: Any
) -> CurrentLink:
    text = kw.pop("text", f'=HYPERLINK("x") paragraph {para} of document {doc} about security')
    values: dict[str, Any] = {
        "link_id": link_id,
        "run_id": 1,
        "run_kind": "audit",
        "method": "classifier",
        "model": "gdpr-classifier@0.1.0:abc",
        "document_id": doc,
        "document_source": f"policies/doc{doc}.docx",
        "document_version": 1,
        "latest_version": 1,
        "paragraph_id": doc * 100 + para,
        "paragraph_ordinal": para,
        "paragraph_page": None,
        "heading_path": ("Security",),
        "paragraph_text": text,
        "text_sha256": text_digest(text),
        "law_id": 1,
        "law_short_name": "gdpr",
        "law_identifier": "32016R0679-mini",
        "law_version": 1,
        "provision_id": 10 + link_id,
        "provision_key": key,
        "provision_kind": "article" if "/" not in key else "paragraph",
        "provision_number": key.split(":")[-1],
        "provision_title": "Security of processing",
        "score": score,
        "rank": 1,
        "proposed_status": "needs-review",
        "status": status,
        "reviewer": None if status in ("proposed", "needs-review") else "alice",
        "review_comment": None,
        "reviewed_at": None,
        "created_at": NOW,
        "evidence": {"shared_terms": ["secur"]},
    }
    values.update(kw)
    return CurrentLink(**values)


LINKS = [
    link(1, "art:32", "accepted", 0.81),
    link(2, "art:32/par:1", "needs-review", 0.44, para=1),
    link(3, "art:33", "proposed", 0.65, doc=2),
    link(4, "art:15", "accepted", 1.0, doc=2, para=3, method="manual", model=None),
]


def test_the_vendored_schema_is_nists_file() -> None:
    assert hashlib.sha256(SCHEMA.read_bytes()).hexdigest() == SCHEMA_SHA256


def test_oscal_mapping_collection_is_valid_and_says_draft_until_accepted() -> None:
    from compliance.reports.oscal import oscal_mapping_collection

    doc = oscal_mapping_collection(LINKS, mini_gdpr(), organisation="Acme", generated_at=NOW)
    assert validate_oscal(doc) == []
    mc = doc["mapping-collection"]
    assert mc["metadata"]["last-modified"] == "2026-12-01T09:30:00Z"
    assert mc["provenance"]["status"] == "draft"
    by_doc = {m["source-resource"]["href"]: m for m in mc["mappings"]}
    assert by_doc["urn:compliance-plugin:document:1"]["status"] == "draft"  # one link not accepted yet
    maps = [m for mapping in mc["mappings"] for m in mapping["maps"]]
    assert [m["relationship"] for m in maps] == ["intersects-with"] * 4
    assert maps[0]["confidence-score"] == {"percentage": 0.81}
    assert maps[3]["confidence-score"] == {"category": "high"}  # added by a reviewer
    assert maps[1]["targets"] == [
        {
            "type": "statement",
            "id-ref": "art:32/par:1",
            "remarks": "GDPR art:32/par:1 — Security of processing",
        }
    ]
    assert maps[0]["sources"][0]["id-ref"] == "doc-1-p0"
    # the same links give the same identifiers
    again = oscal_mapping_collection(LINKS, mini_gdpr(), organisation="Acme", generated_at=NOW)
    assert again == doc
    # all accepted: complete
    done = oscal_mapping_collection([LINKS[0], LINKS[3]], mini_gdpr(), generated_at=NOW)
    assert done["mapping-collection"]["provenance"]["status"] == "complete"
    assert validate_oscal(done) == []
    # nothing to map is still a valid document
    assert validate_oscal(oscal_mapping_collection([], mini_gdpr(), generated_at=NOW)) == []


def test_the_schema_check_catches_broken_documents() -> None:
    from compliance.reports.oscal import oscal_mapping_collection

    doc = oscal_mapping_collection(LINKS, mini_gdpr(), generated_at=NOW)
    mc = doc["mapping-collection"]
    del mc["provenance"]["mapping-description"]
    mc["mappings"][0]["maps"][0]["relationship"] = "implements"
    mc["mappings"][0]["maps"][0]["confidence-score"] = {"percentage": "high"}
    mc["metadata"]["last-modified"] = "yesterday"
    errors = validate_oscal(doc)
    assert any("mapping-description" in e for e in errors)
    assert any("implements" in e for e in errors)
    assert any("last-modified" in e for e in errors)


def test_ciso_assistant_library_for_the_gdpr_targets_its_own_framework() -> None:
    from compliance.reports.ciso_assistant import ciso_assistant_library, dump_yaml, gdpr_node_urn

    assert gdpr_node_urn("art:32") == "urn:intuitem:risk:req_node:gdpr:article-32"
    assert gdpr_node_urn("art:32/par:1") == "urn:intuitem:risk:req_node:gdpr:32.1"
    assert gdpr_node_urn("art:6/par:1/pt:f") == "urn:intuitem:risk:req_node:gdpr:6.1.f"
    assert gdpr_node_urn("rec:75") is None
    lib = ciso_assistant_library(LINKS, mini_gdpr(), organisation="Acme Corp")
    assert check_library(lib) == []
    assert lib["dependencies"] == ["urn:intuitem:risk:library:gdpr"]
    forward, reverse = lib["objects"]["requirement_mapping_sets"]
    assert forward["target_framework_urn"] == "urn:intuitem:risk:framework:gdpr"
    assert [m["strength_of_relationship"] for m in forward["requirement_mappings"]] == [10, 4, 6, 10]
    assert (
        forward["requirement_mappings"][1]["target_requirement_urn"] == "urn:intuitem:risk:req_node:gdpr:32.1"
    )
    assert reverse["source_framework_urn"] == forward["target_framework_urn"]
    import yaml

    assert yaml.safe_load(dump_yaml(lib)) == lib


def test_ciso_assistant_library_for_another_law_carries_the_law() -> None:
    from dataclasses import replace

    from compliance.reports.ciso_assistant import ciso_assistant_library

    law = replace(mini_gdpr(), short_name="eprivacy", identifier="32002L0058")
    lib = ciso_assistant_library(LINKS[:2], law, organisation="Acme")
    assert check_library(lib) == []
    assert lib["dependencies"] == []
    assert [fw["urn"] for fw in lib["objects"]["frameworks"]] == [
        "urn:compliance:risk:framework:acme-controls",
        "urn:compliance:risk:framework:eprivacy",
    ]
    broken = dict(lib, objects={"requirement_mapping_sets": lib["objects"]["requirement_mapping_sets"]})
    assert any("neither in the library" in e for e in check_library(broken))


def test_spreadsheet_cells_cannot_run_formulas(tmp_path: Path) -> None:
    assert cell("=1+1") == "'=1+1" and cell("+x") == "'+x" and cell("-x") == "'-x" and cell("@x") == "'@x"
    assert cell("plain") == "plain" and cell(-0.5) == -0.5 and cell(None) is None
    assert uncell(cell("=HYPERLINK()")) == "=HYPERLINK()"
    for suffix in ("xlsx", "csv"):
        out = tmp_path / f"links.{suffix}"
        assert write_link_sheet(LINKS, out) == 4
        rows = read_review_sheet(out)
        assert [r.values["link_id"] in (1, "1") for r in rows] == [True, False, False, False]
        assert rows[0].values["paragraph_text"].startswith("=HYPERLINK")  # read back as written
    from openpyxl import load_workbook

    ws = load_workbook(tmp_path / "links.xlsx")["links"]
    texts = [c.value for c in ws["G"][1:]]
    assert all(isinstance(t, str) and t.startswith("'=") for t in texts)  # stored as text, not as a formula
    assert (tmp_path / "links.csv").read_text().count("'=HYPERLINK") == 4


def test_the_review_sheet_is_written_from_an_iterator_whole_or_not_at_all(tmp_path: Path) -> None:
    """The sheet writers take links one at a time (an export of a large audit streams them from the store) and
    write the same file as from a list; a read that fails half-way leaves neither a half file nor the part file,
    and an earlier export at that path stays as it was."""
    import json

    for suffix in ("xlsx", "csv", "json"):
        listed, streamed = tmp_path / f"listed.{suffix}", tmp_path / f"streamed.{suffix}"
        assert write_link_sheet(LINKS, listed) == write_link_sheet(iter(LINKS), streamed) == 4
        if suffix == "xlsx":
            assert [r.values for r in read_review_sheet(listed)] == [
                r.values for r in read_review_sheet(streamed)
            ]
        else:
            assert listed.read_bytes() == streamed.read_bytes()
    data = json.loads((tmp_path / "streamed.json").read_text())
    assert len(data) == 4 and data[0]["evidence_detail"] == LINKS[0].evidence
    empty = tmp_path / "empty.json"
    assert write_link_sheet([], empty) == 0 and empty.read_text() == "[]\n"  # as json.dumps([]) wrote it

    def failing() -> Any:
        yield LINKS[0]
        raise RuntimeError("the database went away")

    for suffix in ("xlsx", "csv", "json"):
        out = tmp_path / f"streamed.{suffix}"
        before = out.read_bytes()
        with pytest.raises(RuntimeError):
            write_link_sheet(failing(), out)
        assert out.read_bytes() == before
        assert not (tmp_path / f"streamed.{suffix}.part").exists()
        fresh = tmp_path / f"fresh.{suffix}"
        with pytest.raises(RuntimeError):
            write_link_sheet(failing(), fresh)
        assert not fresh.exists() and not (tmp_path / f"fresh.{suffix}.part").exists()


def test_a_text_longer_than_a_spreadsheet_cell_is_cut_to_fit_in_xlsx_only(tmp_path: Path) -> None:
    """Excel reports a workbook with a cell over 32,767 characters as damaged and drops the text: the XLSX
    exports cut it to fit and say how long it was; CSV and JSON keep it whole; the filled-in sheet still imports
    (rows are tied to their paragraph by ``text_sha256``)."""
    from openpyxl import load_workbook

    from compliance.reports.workbook import write_coverage_xlsx
    from compliance.spreadsheet import XLSX_CELL_CHARS, xlsx_cell

    long_text = "Access to production systems is reviewed every quarter. " * 1000  # 56,000 characters
    links = [link(1, "art:32", "accepted", 0.9, text=long_text)]
    write_link_sheet(links, tmp_path / "long.xlsx")
    write_link_sheet(links, tmp_path / "long.csv")
    ws = load_workbook(tmp_path / "long.xlsx")["links"]
    text = ws.cell(row=2, column=7).value
    assert isinstance(text, str) and len(text) == XLSX_CELL_CHARS
    assert text.startswith(long_text[:1000]) and text.endswith("56,000 characters in all]")
    [row] = read_review_sheet(tmp_path / "long.csv")
    assert row.values["paragraph_text"] == long_text
    [row] = read_review_sheet(tmp_path / "long.xlsx")
    assert row.values["text_sha256"] == text_digest(long_text)
    assert xlsx_cell("=" + "x" * 40_000).startswith("'=") and len(xlsx_cell("y" * 40_000)) == XLSX_CELL_CHARS
    assert xlsx_cell("short") == "short" and xlsx_cell(3) == 3
    from compliance.reports.coverage import build_coverage

    report = build_coverage(mini_gdpr(), links, [(1, "policies/doc1.docx", 1)], generated_at=NOW)
    write_coverage_xlsx(report, tmp_path / "coverage.xlsx")
    cells = [c.value for r in load_workbook(tmp_path / "coverage.xlsx")["evidence"].iter_rows() for c in r]
    assert any(isinstance(v, str) and len(v) == XLSX_CELL_CHARS for v in cells)


def test_coverage_model() -> None:
    from compliance.reports.coverage import build_coverage

    report = build_coverage(
        mini_gdpr(),
        [*LINKS, link(5, "art:17", "rejected", 0.3, doc=1, para=2)],
        [(1, "policies/doc1.docx", 1), (2, "policies/doc2.docx", 1)],
        generated_at=NOW,
    )
    states = {a.key: a.state for a in report.articles}
    assert states == {
        "art:5": "gap",
        "art:15": "covered",
        "art:17": "rejected",
        "art:32": "covered",
        "art:33": "suggested",
    }
    assert [a.key for a in report.gaps] == ["art:5", "art:17", "art:33"]
    assert [a.key for a in report.suggested_only] == ["art:33"]
    art32 = next(a for a in report.articles if a.key == "art:32")
    assert art32.cells == {1: "accepted", 2: ""}
    assert (
        art32.evidence is not None and art32.evidence.link_id == 1
    )  # accepted beats a higher-scored suggestion
    assert report.progress == {"accepted": 2, "proposed": 1, "needs-review": 1, "rejected": 1}
    d = report.to_dict()
    assert d["summary"] == {
        "articles": 5,
        "covered": 2,
        "suggested_only": 1,
        "gaps": 3,
        "coverage": 0.4,
        "reviewed_share": 0.6,
    }
    assert d["chapters"] == [
        {"key": "—", "title": "—", "articles": 5, "covered": 2, "suggested": 1, "share": 0.4}
    ]
    # read once, link by link (the store streams them): the same report from one-pass iterators
    streamed = build_coverage(
        mini_gdpr(),
        iter([*LINKS, link(5, "art:17", "rejected", 0.3, doc=1, para=2)]),
        [(1, "policies/doc1.docx", 1), (2, "policies/doc2.docx", 1)],
        other_links=iter(()),
        generated_at=NOW,
    )
    assert streamed.to_dict() == d
