"""The foundation commands through click's runner: db, ingest, documents, laws."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from compliance.cli import cli
from compliance.store import Store

POLICIES = Path(__file__).parent / "fixtures" / "store" / "policies"
MINI_REGULATION = Path(__file__).parent / "fixtures" / "rules" / "mini_regulation.fmx.xml"


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def as_json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database URL (nothing migrated: the commands create the schema themselves)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'cli.db'}"
        return
    import os

    from compliance.store.testing import postgres_unavailable_reason, temporary_postgres_schema

    if reason := postgres_unavailable_reason():
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    with temporary_postgres_schema() as url:
        yield url


@pytest.fixture
def policies(tmp_path: Path) -> Path:
    folder = tmp_path / "policies"
    shutil.copytree(POLICIES, folder)
    return folder


def test_db_upgrade_current_check(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'db.db'}"
    before = as_json(invoke("db", "current", "--database", url, "--json"))
    assert before["current"] is None and before["up_to_date"] is False
    first = invoke("db", "upgrade", "--database", url)
    head = Store.head_revision()
    assert first.exit_code == 0 and f"upgraded (empty) -> {head}" in first.stdout
    again = invoke("db", "upgrade", "--database", url)
    assert again.exit_code == 0 and f"already at revision {head}" in again.stdout
    after = as_json(invoke("db", "current", "--database", url, "--json"))
    assert after["current"] == after["head"] == head and after["up_to_date"] is True
    check = invoke("db", "check", "--database", url)
    assert check.exit_code == 0 and "matches" in check.stdout


def test_ingest_folder_with_a_broken_file(database: str, policies: Path) -> None:
    result = invoke("ingest", policies, "--database", database, "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["files"] == 4
    assert (summary["new_documents"], summary["new_versions"], summary["unchanged"], summary["failed"]) == (
        3,
        0,
        0,
        1,
    )
    assert summary["failures"][0]["path"].endswith("broken.docx")
    assert summary["failures"][0]["code"].startswith("C3")
    assert "broken.docx" in result.stderr and "error [C3" in result.stderr
    stored = sum(d["paragraphs"] for d in summary["documents"])
    assert summary["paragraphs_stored"] == stored >= 9

    listed = as_json(invoke("documents", "list", "--database", database, "--json"))
    assert sorted(Path(d["source"]).name for d in listed) == [
        "access-control.md",
        "breach-response.md",
        "retention.txt",
    ]
    assert all(d["version"] == 1 for d in listed)

    store = Store(database)
    run = store.list_runs(kind="ingest")[0]
    assert run.status == "succeeded" and run.stats["failed"] == 1 and run.stats["new_documents"] == 3
    store.dispose()

    # unchanged: nothing new is stored
    again = invoke("ingest", policies, "--database", database, "--json")
    summary2 = json.loads(again.stdout)
    assert (summary2["new_documents"], summary2["new_versions"], summary2["unchanged"]) == (0, 0, 3)
    assert summary2["paragraphs_stored"] == 0
    assert as_json(invoke("documents", "list", "--database", database, "--json")) == listed

    # a changed file becomes version 2; version 1 is kept
    changed = policies / "retention.txt"
    changed.write_text(changed.read_text() + "\nPaper records are shredded after scanning.\n")
    third = json.loads(invoke("ingest", policies, "--database", database, "--json").stdout)
    assert (third["new_documents"], third["new_versions"], third["unchanged"]) == (0, 1, 2)
    shown = as_json(invoke("documents", "show", str(changed.resolve()), "--database", database, "--json"))
    assert shown["version"] == 2 and [v["version"] for v in shown["history"]] == [1, 2]
    assert "Paper records are shredded after scanning." in shown["paragraphs"][-1]["text"]
    assert [p["ordinal"] for p in shown["paragraphs"]] == list(range(len(shown["paragraphs"])))
    by_id = as_json(
        invoke("documents", "show", str(shown["id"]), "--all-versions", "--database", database, "--json")
    )
    assert {p["version"] for p in by_id["paragraphs"]} == {1, 2}


def test_ingest_text_output_and_failures(tmp_path: Path, policies: Path) -> None:
    url = f"sqlite:///{tmp_path / 'x.db'}"
    result = invoke("ingest", policies, "--database", url)
    assert result.exit_code == 0
    assert "4 file(s): 3 new, 0 new version(s), 0 unchanged, 1 failed" in result.stdout
    only_broken = invoke("ingest", policies / "broken.docx", "--database", url)
    assert only_broken.exit_code == 1 and "error [C3" in only_broken.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = invoke("ingest", empty, "--database", url)
    assert nothing.exit_code == 1 and "no supported document" in nothing.stderr
    text = invoke("documents", "show", "1", "--database", url)
    assert text.exit_code == 0 and "access-control.md" in text.stdout and "[0]" in text.stdout
    missing = invoke("documents", "show", "nope.docx", "--database", url)
    assert missing.exit_code == 1 and "error [C402]" in missing.stderr


def test_relative_sources(tmp_path: Path, policies: Path) -> None:
    url = f"sqlite:///{tmp_path / 'rel.db'}"
    invoke("ingest", policies, "--relative-to", tmp_path, "--database", url)
    listed = as_json(invoke("documents", "list", "--database", url, "--json"))
    assert sorted(d["source"] for d in listed) == [
        "policies/access-control.md",
        "policies/breach-response.md",
        "policies/retention.txt",
    ]


def test_commands_create_an_empty_database(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'sub' / 'auto.db'}"
    assert as_json(invoke("documents", "list", "--database", url, "--json")) == []
    assert as_json(invoke("laws", "list", "--database", url, "--json")) == []
    assert (tmp_path / "sub" / "auto.db").exists()


def test_default_database_lives_in_the_home(tmp_path: Path, policies: Path) -> None:
    import os

    result = invoke("ingest", policies / "retention.txt")
    assert result.exit_code == 0, result.output
    assert (Path(os.environ["COMPLIANCE_HOME"]) / "compliance.db").exists()


# -- laws --------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def gdpr_db(tmp_path_factory: pytest.TempPathFactory, gdpr_xml: Path) -> tuple[str, Result]:
    """One GDPR install per module (the heaviest step)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('gdpr') / 'gdpr.db'}"
    return url, invoke("laws", "install", "gdpr", "--from", gdpr_xml, "--database", url, "--json")


def test_laws_install_and_show_gdpr(gdpr_db: tuple[str, Result], gdpr_xml: Path) -> None:
    url, installed = gdpr_db
    saved = as_json(installed)
    assert saved["created"] is True and saved["short_name"] == "gdpr" and saved["identifier"] == "32016R0679"

    shown = as_json(invoke("laws", "show", "gdpr", "--database", url, "--json"))
    assert len(shown["articles"]) == 99 and len(shown["recitals"]) == 173
    assert [a["number"] for a in shown["articles"]] == [str(i) for i in range(1, 100)]
    assert [r["number"] for r in shown["recitals"]] == [str(i) for i in range(1, 174)]
    art32 = shown["articles"][31]
    assert art32["title"] == "Security of processing" and art32["chapter"] == "IV"
    assert "pseudonymisation and encryption of personal data" in art32["text"]
    assert all(a["text"] and a["title"] for a in shown["articles"])
    assert shown["counts"]["article"] == 99 and shown["counts"]["recital"] == 173
    assert shown["version"] == 1 and shown["jurisdiction"] == "EU" and shown["date_adopted"] == "2016-04-27"
    assert len(shown["checksum"]) == 64

    listed = as_json(invoke("laws", "list", "--database", url, "--json"))
    assert [(r["short_name"], r["version"], r["counts"]["article"]) for r in listed] == [("gdpr", 1, 99)]
    text = invoke("laws", "show", "32016R0679", "--database", url)
    assert text.exit_code == 0 and "Security of processing" in text.stdout


def test_laws_install_is_idempotent(
    gdpr_db: tuple[str, Result], gdpr_xml: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import compliance.app.laws as laws_app

    url, _ = gdpr_db
    calls: list[Any] = []
    monkeypatch.setattr(laws_app, "alerts_after_law_stored", lambda store, name, version: calls.append(name))
    again = invoke("laws", "install", "gdpr", "--from", gdpr_xml, "--database", url)
    assert again.exit_code == 0 and "already stored" in again.stdout
    assert calls == []  # the hook runs only for new laws or versions
    store = Store(url)
    assert [law.version for law in store.list_laws(all_versions=True)] == [1]
    runs = store.list_runs(kind="law-install")
    assert len(runs) == 2 and all(r.status == "succeeded" for r in runs)
    assert runs[0].stats["created"] is False and runs[1].stats["created"] is True
    assert [e.details["short_name"] for e in store.list_audit(action="law.save")] == ["gdpr"]
    store.dispose()


def test_laws_add_file_with_a_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import compliance.app.laws as laws_app

    calls: list[Any] = []
    monkeypatch.setattr(laws_app, "alerts_after_law_stored", lambda store, name, version: calls.append(name))
    url = f"sqlite:///{tmp_path / 'add.db'}"
    added = as_json(invoke("laws", "add", MINI_REGULATION, "--name", "Mini", "--database", url, "--json"))
    assert added["created"] is True and added["short_name"] == "mini"
    assert calls == ["mini"]
    shown = as_json(invoke("laws", "show", "mini", "--database", url, "--json"))
    assert len(shown["articles"]) == 5 and shown["source_format"] == "formex4"
    again = as_json(invoke("laws", "add", MINI_REGULATION, "--name", "mini", "--database", url, "--json"))
    assert again["created"] is False and calls == ["mini"]


def test_laws_errors(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'err.db'}"
    unknown = invoke("laws", "show", "nosuchlaw", "--database", url)
    assert unknown.exit_code == 1 and "error [C202]" in unknown.stderr
    bad_pack = invoke("laws", "install", "nosuchpack", "--database", url)
    assert bad_pack.exit_code == 1 and "error [C2" in bad_pack.stderr


def test_unreachable_database_is_one_clean_error() -> None:
    result = invoke("documents", "list", "--database", "postgresql+psycopg://nobody@127.0.0.1:1/none")
    assert result.exit_code == 1
    assert result.stderr.startswith("error [C401]: cannot open")
    assert "Traceback" not in result.output


def test_db_downgrade_asks_first(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'down.db'}"
    invoke("db", "upgrade", "--database", url)
    refused = CliRunner().invoke(cli, ["db", "downgrade", "base", "--database", url], input="n\n")
    assert refused.exit_code == 1 and Store(url).current_revision() == Store.head_revision()
    done = invoke("db", "downgrade", "base", "--yes", "--database", url)
    assert done.exit_code == 0 and "(empty)" in done.stdout
    assert Store(url).is_empty()
