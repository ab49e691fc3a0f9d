"""The officer's loop from the command line only, on SQLite and PostgreSQL: list a document's links, accept two,
reject one, add one, export to XLSX, change decisions in the file, import it back, produce the HTML and XLSX
coverage reports, export OSCAL and CISO Assistant files — and a malformed or stale spreadsheet changes nothing."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from compliance.cli import cli
from compliance.store import Store
from tests.conftest import EXAMPLES
from tests.fixtures.classifier.tiny import mini_gdpr, shared_tiny_classifier

pytest.importorskip("torch")
pytest.importorskip("openpyxl")

SAMPLES = ("incident-and-breach-response-procedure.docx", "access-control-standard.pdf")


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database holding the mini GDPR (the tiny classifier's five articles)."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'officer.db'}"
        _prepare(url)
        yield url
        return
    from compliance.store.testing import postgres_unavailable_reason, temporary_postgres_schema

    if reason := postgres_unavailable_reason():
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    with temporary_postgres_schema() as url:
        _prepare(url)
        yield url


def _prepare(url: str) -> None:
    store = Store(url)
    store.upgrade()
    store.save_law(mini_gdpr())
    store.dispose()


@pytest.fixture
def policies(tmp_path: Path) -> Path:
    folder = tmp_path / "policies"
    folder.mkdir()
    for name in SAMPLES:
        shutil.copy(EXAMPLES / name, folder / name)
    return folder


def run(db: str, *args: str | Path) -> Result:
    return CliRunner().invoke(cli, [*map(str, args), "--database", db], catch_exceptions=False)


def ok_json(db: str, *args: str | Path) -> Any:
    res = run(db, *args, "--json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def audit(db: str, policies: Path, *extra: str | Path) -> Any:
    model = shared_tiny_classifier()
    return ok_json(
        db, "audit", policies, "--model", model, "--relative-to", policies.parent, "--top-k", "3", *extra
    )


def _fill(
    path: Path, decisions: dict[int, tuple[str, str]], *, edit: dict[int, dict[str, Any]] | None = None
) -> None:
    """Fill in the decision (and comment) of some link rows of an exported XLSX, like an officer would."""
    from openpyxl import load_workbook

    wb = load_workbook(path)
    ws = wb["links"]
    header = [c.value for c in ws[1]]
    col = {name: header.index(name) + 1 for name in header}
    for row in range(2, ws.max_row + 1):
        link_id = ws.cell(row=row, column=col["link_id"]).value
        if link_id in decisions:
            decision, comment = decisions[link_id]
            ws.cell(row=row, column=col["decision"]).value = decision
            ws.cell(row=row, column=col["comment"]).value = comment
        for name, value in (edit or {}).get(link_id, {}).items():
            ws.cell(row=row, column=col[name]).value = value
    wb.save(path)


def test_the_officers_loop(database: str, policies: Path, tmp_path: Path) -> None:
    from openpyxl import load_workbook

    from compliance.reports.workbook import SHEETS

    db = database
    audited = audit(db, policies)
    assert [d["source"] for d in audited["documents"]] == [f"policies/{n}" for n in sorted(SAMPLES)]
    doc = next(d for d in audited["documents"] if d["source"].endswith(SAMPLES[0]))
    total = audited["links"]
    assert total > 0

    # 1. list a document's links
    listed = ok_json(db, "links", "list", "--document", doc["source"])
    assert len(listed) == doc["links"] >= 4
    assert {x["document_id"] for x in listed} == {doc["document_id"]}
    assert all(x["status"] in ("proposed", "needs-review") and x["method"] == "classifier" for x in listed)
    first, second, third = listed[0]["link_id"], listed[1]["link_id"], listed[2]["link_id"]

    # 2. accept two, reject one
    accepted = run(
        db, "links", "review", first, second, "--accept", "--reviewer", "alice", "--comment", "fits"
    )
    assert accepted.exit_code == 0
    assert accepted.stdout.splitlines() == [
        f"link {first}: accepted by alice (review 1)",
        f"link {second}: accepted by alice (review 2)",
    ]
    rejected = run(db, "links", "review", third, "--reject", "--reviewer", "bob")
    assert rejected.stdout.splitlines() == [f"link {third}: rejected by bob (review 3)"]

    # 3. add one the model missed (a paragraph of the document that has no link to Art. 17)
    linked_17 = {x["paragraph_ordinal"] for x in listed if x["provision_key"] == "art:17"}
    paragraph = next(x["paragraph_ordinal"] for x in listed if x["paragraph_ordinal"] not in linked_17)
    added = ok_json(
        db, "links", "add", "--document", doc["source"], "--paragraph", str(paragraph), "--law", "gdpr",
        "--provision", "17", "--reviewer", "alice", "--comment", "erasure on request",
    )  # fmt: skip
    assert (added["provision_key"], added["status"], added["method"], added["reviewer"]) == (
        "art:17",
        "accepted",
        "manual",
        "alice",
    )
    shown = ok_json(db, "links", "show", first)
    assert [(r["decision"], r["reviewer"], r["source"]) for r in shown["reviews"]] == [
        ("accepted", "alice", "cli")
    ]
    assert shown["reviews"][0]["suggested_by"] == {
        "run_id": audited["run_id"],
        "model": audited["model"]["identity"],
    }
    entries = [e for e in shown["audit"] if e["action"] == "link.review"]
    assert [(e["actor"], e["details"]["decision"]) for e in entries] == [("alice", "accepted")]
    statuses = {x["link_id"]: x["status"] for x in ok_json(db, "links", "list")}
    assert len(statuses) == total + 1
    assert (statuses[first], statuses[second], statuses[third], statuses[added["link_id"]]) == (
        "accepted", "accepted", "rejected", "accepted",
    )  # fmt: skip

    # 4. export every current link to XLSX
    sheet = tmp_path / "review.xlsx"
    exported = run(db, "links", "export", sheet)
    assert exported.stdout.strip() == f"{total + 1} link(s) exported to {sheet} (xlsx)"
    ws = load_workbook(sheet)["links"]
    assert ws.max_row == total + 2  # header + one row per link
    # 5. change decisions in the file: reopen an accepted one as rejected, accept one, flag one
    fourth, fifth = listed[3]["link_id"], listed[4]["link_id"] if len(listed) > 4 else None
    changes = {first: ("reject", "wrong article after all"), fourth: ("accept", "")}
    if fifth is not None:
        changes[fifth] = ("needs-review", "ask the DPO")
    _fill(sheet, changes)
    # 6. import it back
    imported = ok_json(db, "links", "import", sheet, "--reviewer", "carol")
    expected = {"rejected": 1, "accepted": 1, **({"needs-review": 1} if fifth else {})}
    assert imported["decisions"] == expected
    assert (imported["applied"], imported["rows"], imported["empty"]) == (
        len(changes),
        total + 1,
        total + 1 - len(changes),
    )
    after = {x["link_id"]: x for x in ok_json(db, "links", "list")}
    assert after[first]["status"] == "rejected" and after[first]["reviewer"] == "carol"
    assert after[fourth]["status"] == "accepted"
    # importing the same file again records nothing new: the decisions are now the stored status
    again = run(db, "links", "import", sheet, "--reviewer", "carol")
    assert again.exit_code == 1 and "was decided since the export" in again.stderr
    assert len(ok_json(db, "links", "show", first)["reviews"]) == 2

    # 7. the coverage reports
    accepted_articles = {x["provision_key"] for x in after.values() if x["status"] == "accepted"}
    html = tmp_path / "coverage.html"
    written = ok_json(db, "report", "--format", "html", "--out", html)
    assert written["covered"] == len(accepted_articles)
    assert written["articles"] == 5 and written["gaps"] == 5 - len(accepted_articles)
    page = html.read_text(encoding="utf-8")
    assert "<script" not in page and "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    for key in {"art:5", "art:15", "art:17", "art:32", "art:33"} - accepted_articles:
        assert f'data-article="{key}" data-state=' in page
    xlsx = tmp_path / "coverage.xlsx"
    assert ok_json(db, "report", "--format", "xlsx", "--out", xlsx)["covered"] == len(accepted_articles)
    book = load_workbook(xlsx)
    assert tuple(book.sheetnames) == SHEETS
    assert book["gaps"].max_row == 1 + 5 - len(accepted_articles)

    # 8. GRC exports
    oscal = tmp_path / "mapping.json"
    grc = ok_json(db, "links", "export", oscal, "--format", "oscal", "--organisation", "Acme")
    not_rejected = [x for x in after.values() if x["status"] != "rejected"]
    assert grc["links"] == len(not_rejected)
    from tests.oscal_schema import validate_oscal

    collection = json.loads(oscal.read_text())
    assert validate_oscal(collection) == []
    maps = [m for mapping in collection["mapping-collection"]["mappings"] for m in mapping["maps"]]
    assert len(maps) == len(not_rejected)
    yaml_out = tmp_path / "mapping.yaml"
    assert ok_json(db, "links", "export", yaml_out, "--organisation", "Acme")["links"] == len(not_rejected)
    import yaml

    from tests.ciso_assistant_format import check_library

    library = yaml.safe_load(yaml_out.read_text())
    assert check_library(library) == []
    forward = library["objects"]["requirement_mapping_sets"][0]["requirement_mappings"]
    assert len(forward) == len(not_rejected)

    # 9. a re-audit of unchanged files still exports every current link
    relinks = tmp_path / "again.csv"
    again_audit = audit(db, policies, "--export", relinks)
    assert again_audit["links"] == 0 and again_audit["exported"]["rows"] == total + 1


def test_bad_or_stale_spreadsheet_changes_nothing(database: str, policies: Path, tmp_path: Path) -> None:
    db = database
    audit(db, policies)
    links = ok_json(db, "links", "list")
    a, b, c, d, e = (x["link_id"] for x in links[:5])
    sheet = tmp_path / "review.xlsx"
    assert run(db, "links", "export", sheet).exit_code == 0
    run(
        db, "links", "review", e, "--accept", "--reviewer", "dave"
    )  # decided by someone else after the export
    _fill(
        sheet,
        {a: ("accept", ""), b: ("maybe", ""), c: ("reject", ""), e: ("reject", "")},
        edit={c: {"text_sha256": "0" * 16}, d: {"link_id": 999999}},
    )
    before = Store(db).counts()
    res = run(db, "links", "import", sheet, "--reviewer", "carol")
    assert res.exit_code == 1
    assert "error [C410]" in res.stderr and "4 bad row(s), nothing was applied" in res.stderr
    assert f"(link {b}): invalid decision 'maybe'" in res.stderr
    assert f"(link {c}): the paragraph text fingerprint (text_sha256) does not match" in res.stderr
    assert "(link 999999): unknown link id 999999" in res.stderr
    assert f"(link {e}): the link was decided since the export (now accepted by dave" in res.stderr
    assert f"(link {a})" not in res.stderr  # the good row is not named, and not applied
    after = Store(db).counts()
    assert after["reviews"] == before["reviews"] and after["audit_log"] == before["audit_log"]
    assert ok_json(db, "links", "show", a)["status"] != "accepted"

    # a document changed since the export: its rows are stale
    sheet2 = tmp_path / "review2.csv"
    assert (
        run(db, "links", "export", sheet2, "--status", "needs-review", "--status", "proposed").exit_code == 0
    )
    rows = sheet2.read_text(encoding="utf-8").splitlines()
    header = rows[0].split(",")
    import csv

    data = list(csv.DictReader(sheet2.open(encoding="utf-8")))
    row = next(r for r in data if r["document"].endswith(".docx"))
    row["decision"] = "accept"
    changed_doc = row["document"]
    with sheet2.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=header)
        w.writeheader()
        w.writerows(data)
    target = policies.parent / changed_doc
    from docx import Document

    document = Document(str(target))
    document.add_paragraph("Breach records are kept for five years after the incident is closed.")
    document.save(str(target))
    audit(db, policies)
    stale = run(db, "links", "import", sheet2, "--reviewer", "carol")
    assert stale.exit_code == 1
    assert f"the document {changed_doc} changed since the export (now version 2" in stale.stderr
    bad_file = tmp_path / "notes.txt"
    bad_file.write_text("hello")
    wrong = run(db, "links", "import", bad_file, "--reviewer", "carol")
    assert wrong.exit_code == 1 and "error [C101]" in wrong.stderr
