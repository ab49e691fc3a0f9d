"""The coverage report, the link exports and imports, the link filters and reviews over HTTP (SQLite and
PostgreSQL): the same use cases and files as `compliance report` / `compliance links …`, streamed with their media
type and Content-Disposition; and the officer's flow through the HTTP API only."""

from __future__ import annotations

import csv
import io
import json
import time
from typing import Any

import pytest

from tests.fixtures import api as api_fixtures
from tests.fixtures.api import POLICY, Api, policy_text

api = api_fixtures.api  # the fixture

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def _upload(api: Api, name: str, text: str, top_k: int = 2) -> int:
    """Audit one document through the API; its document id once the job is done."""
    up = api.client.post(
        "/api/v1/audits",
        params={"name": name, "top_k": top_k},
        content=text.encode(),
        headers={**api.headers("reviewer"), "Content-Type": "text/plain"},
    )
    assert up.status_code == 202, up.text
    job_id = up.json()["id"]
    deadline = time.time() + 120
    while time.time() < deadline:
        job = api.client.get(f"/api/v1/jobs/{job_id}", headers=api.headers("viewer")).json()
        if job["finished_at"]:
            assert job["status"] == "succeeded", job
            return int(job["items"][0]["document_id"])
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish")


def _links(api: Api, **params: Any) -> list[dict[str, Any]]:
    response = api.client.get("/api/v1/links", params=params, headers=api.headers("viewer"))
    assert response.status_code == 200, response.text
    return list(response.json())


def _coverage(api: Api, **params: Any) -> dict[str, Any]:
    response = api.client.get(
        "/api/v1/reports/coverage", params={"format": "json", **params}, headers=api.headers("viewer")
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_the_officers_flow_through_the_http_api_only(api: Api) -> None:
    """upload → job → wait done → list links → review one → the coverage report reflects the accepted link."""
    r = api.headers("reviewer")
    up = api.client.post(
        "/api/v1/audits",
        params={"name": "security-policy.txt", "top_k": 2},
        content=POLICY.encode(),
        headers={**r, "Content-Type": "text/plain"},
    )
    assert up.status_code == 202, up.text
    job_id = up.json()["id"]
    deadline = time.time() + 120
    while (job := api.client.get(f"/api/v1/jobs/{job_id}", headers=r).json())["finished_at"] is None:
        assert time.time() < deadline, job
        time.sleep(0.05)
    assert job["status"] == "succeeded" and job["progress"] == 1.0
    doc_id = job["items"][0]["document_id"]

    before = _coverage(api)
    assert before["summary"]["covered"] == 0 and before["progress"].get("accepted", 0) == 0
    links = _links(api, document=str(doc_id))
    assert len(links) == job["links"] == 6 and all(x["status"] in ("proposed", "needs-review") for x in links)
    breach = [x for x in links if "breach" in x["paragraph_text"]]
    top = min(breach, key=lambda x: x["rank"])
    article = top["provision_key"].split("/")[0]
    assert before["articles"][[a["key"] for a in before["articles"]].index(article)]["state"] == "suggested"

    reviewed = api.client.post(
        f"/api/v1/links/{top['id']}/review", json={"decision": "accept", "comment": "fits"}, headers=r
    )
    assert reviewed.status_code == 200, reviewed.text
    body = reviewed.json()
    assert body["link"]["status"] == "accepted" and body["review"]["accepted"] == 1
    assert body["recorded"][0]["reviewer"] == "reviewer-token" and body["recorded"][0]["comment"] == "fits"

    after = _coverage(api)
    assert after["summary"]["covered"] == 1 and after["progress"]["accepted"] == 1
    assert article in [a["key"] for a in after["articles"] if a["state"] == "covered"]
    assert article not in after["gaps"]
    cell = next(a for a in after["articles"] if a["key"] == article)["cells"][str(doc_id)]
    assert cell == "accepted"
    # the decision went through `compliance links review`'s use case: an append-only row with its source
    shown = api.client.get(f"/api/v1/links/{top['id']}", headers=r).json()
    assert [(x["decision"], x["reviewer"], x["source"]) for x in shown["reviews"]] == [
        ("accepted", "reviewer-token", "api")
    ]
    assert shown["audit"][0]["actor"] == "reviewer-token"


def test_coverage_report_in_three_formats_is_the_commands(api: Api, tmp_path: Any) -> None:
    from compliance.app.reports import coverage_report, write_report

    a = _upload(api, "a.txt", policy_text(1))
    b = _upload(api, "b.txt", policy_text(2))
    h = api.headers("viewer")
    data = _coverage(api)
    expected = coverage_report(api.store, "gdpr").to_dict()
    for report in (data, expected):
        report.pop("generated_at")
    assert data == expected and [d["id"] for d in data["documents"]] == [a, b]
    only_b = _coverage(api, documents=str(b))
    assert [d["id"] for d in only_b["documents"]] == [b]
    both = api.client.get(
        "/api/v1/reports/coverage", params=[("documents", f"{a},b.txt"), ("format", "json")], headers=h
    ).json()
    assert [d["id"] for d in both["documents"]] == [a, b]

    html = api.client.get("/api/v1/reports/coverage", params={"format": "html"}, headers=h)
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
    assert html.headers["content-disposition"] == 'inline; filename="coverage-gdpr.html"'
    assert 'id="matrix"' in html.text and "<script" not in html.text
    written = tmp_path / "coverage.html"
    write_report(coverage_report(api.store, "gdpr"), written, "html")
    assert len(html.text.splitlines()) == len(written.read_text(encoding="utf-8").splitlines())

    xlsx = api.client.get("/api/v1/reports/coverage", params={"format": "xlsx"}, headers=h)
    assert xlsx.status_code == 200 and xlsx.headers["content-type"] == XLSX
    assert xlsx.headers["content-disposition"] == 'attachment; filename="coverage-gdpr.xlsx"'
    from openpyxl import load_workbook

    wb = load_workbook(io.BytesIO(xlsx.content), read_only=True)
    assert len(wb.sheetnames) >= 2

    # a stored name with control characters (found by the contract test) still makes a workbook
    from compliance.connectors import parse_bytes

    api.store.save_document(parse_bytes(POLICY.encode(), "\x02odd\x1bname.txt"))
    odd = api.client.get("/api/v1/reports/coverage", params={"format": "xlsx"}, headers=h)
    assert odd.status_code == 200, odd.text
    names = [c.value for c in next(load_workbook(io.BytesIO(odd.content)).worksheets[1].iter_rows(max_row=1))]
    assert any(isinstance(n, str) and "\ufffdodd\ufffdname.txt" in n for n in names), names

    missing = api.client.get("/api/v1/reports/coverage", params={"law": "nis2"}, headers=h)
    assert missing.status_code == 404 and missing.json()["code"] == "C202"
    unknown = api.client.get("/api/v1/reports/coverage", params={"documents": "nope.txt"}, headers=h)
    assert unknown.status_code == 404 and unknown.json()["code"] == "C402"


def test_links_filters_are_the_commands(api: Api) -> None:
    from click.testing import CliRunner

    from compliance.cli import cli

    a = _upload(api, "a.txt", policy_text(1), top_k=3)
    _upload(api, "b.txt", policy_text(2), top_k=3)
    every = _links(api)
    api.client.post(
        "/api/v1/links/review",
        json={"link_ids": [every[0]["id"], every[4]["id"]], "decision": "reject"},
        headers=api.headers("reviewer"),
    )
    url = api.store.engine.url.render_as_string(hide_password=False)
    cases: list[dict[str, Any]] = [
        {},
        {"document": str(a)},
        {"document": "b.txt", "status": "rejected"},
        {"status": ["proposed", "rejected"], "min_score": 0.2},
        {"provision": "art:33", "law": "gdpr"},
        {"max_score": 0.5, "method": "classifier"},
    ]
    for params in cases:
        args = ["links", "list", "--json", "--database", url]
        for key, value in params.items():
            for v in value if isinstance(value, list) else [value]:
                args += [{"status": "--status"}.get(key, "--" + key.replace("_", "-")), str(v)]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        cli_ids = [row["link_id"] for row in json.loads(result.output)]
        api_ids = [x["id"] for x in _links(api, **params)]
        assert api_ids == cli_ids, params
    n = len(every)
    assert n >= 10 and [x["id"] for x in _links(api, limit=5, offset=n - 3)] == [x["id"] for x in every[-3:]]
    assert {x["status"] for x in _links(api, status="rejected")} == {"rejected"}
    bad = api.client.get("/api/v1/links", params={"status": "maybe"}, headers=api.headers("viewer"))
    assert bad.status_code == 422 and bad.json()["code"] == "C803"


def test_reviews_batch_comment_all_or_nothing(api: Api) -> None:
    _upload(api, "a.txt", POLICY)
    listed = _links(api)
    ids = [x["id"] for x in listed]
    r = api.headers("reviewer")
    batch = api.client.post(
        "/api/v1/links/review", json={"link_ids": ids[:3], "decision": "accept", "comment": "ok"}, headers=r
    )
    assert batch.status_code == 200, batch.text
    assert [(x["link_id"], x["decision"]) for x in batch.json()] == [(i, "accepted") for i in ids[:3]]
    # a comment keeps the status and is recorded with it
    commented = api.client.post(
        f"/api/v1/links/{ids[0]}/review",
        json={"decision": "comment", "comment": "checked with the DPO"},
        headers=r,
    )
    assert commented.status_code == 200 and commented.json()["link"]["status"] == "accepted"
    commented = api.client.post(
        f"/api/v1/links/{ids[3]}/review", json={"decision": "comment", "comment": "later"}, headers=r
    )
    assert commented.json()["link"]["status"] == listed[3]["status"]
    empty = api.client.post(f"/api/v1/links/{ids[3]}/review", json={"decision": "comment"}, headers=r)
    assert empty.status_code == 422 and empty.json()["code"] == "C803"  # the schema asks for the text
    # one unknown link: nothing is recorded
    refused = api.client.post(
        "/api/v1/links/review", json={"link_ids": [ids[4], 999_999], "decision": "reject"}, headers=r
    )
    assert refused.status_code == 404 and refused.json()["code"] == "C402"
    assert api.store.list_reviews(ids[4]) == []
    history = api.client.get(f"/api/v1/links/{ids[0]}", headers=r).json()["reviews"]
    assert [(x["decision"], x["comment"]) for x in history] == [
        ("accepted", "ok"),
        ("accepted", "checked with the DPO"),
    ]
    denied = api.client.post(
        "/api/v1/links/review",
        json={"link_ids": ids[:1], "decision": "reject"},
        headers=api.headers("viewer"),
    )
    assert denied.status_code == 403


def test_exports_in_every_format_and_the_spreadsheet_round_trip(api: Api) -> None:
    import yaml

    from compliance.reports.link_sheet import LINK_COLUMNS
    from tests.ciso_assistant_format import check_library
    from tests.oscal_schema import validate_oscal

    _upload(api, "a.txt", POLICY)
    h = api.headers("viewer")
    ids = [x["id"] for x in _links(api)]

    def export(**params: Any) -> Any:
        response = api.client.get("/api/v1/links/export", params=params, headers=h)
        assert response.status_code == 200, response.text
        return response

    sheet = export(format="csv")
    assert sheet.headers["content-type"].startswith("text/csv")
    assert sheet.headers["content-disposition"] == 'attachment; filename="links.csv"'
    rows = list(csv.DictReader(io.StringIO(sheet.text)))
    assert list(rows[0]) == list(LINK_COLUMNS) and [int(r["link_id"]) for r in rows] == ids
    xlsx = export(format="xlsx")
    assert xlsx.headers["content-type"] == XLSX and xlsx.content[:2] == b"PK"
    as_json = export(format="json").json()
    assert [r["link_id"] for r in as_json] == ids and "evidence_detail" in as_json[0]
    oscal = export(format="oscal", organisation="Acme")
    assert oscal.headers["content-disposition"] == 'attachment; filename="links.oscal.json"'
    assert validate_oscal(oscal.json()) == []
    ciso = export(**{"format": "ciso-assistant", "law": "gdpr"})
    assert ciso.headers["content-type"].startswith("application/yaml")
    assert check_library(yaml.safe_load(ciso.text)) == []
    filtered = list(csv.DictReader(io.StringIO(export(format="csv", provision="art:33").text)))
    assert filtered and all(r["provision"].startswith("art:33") for r in filtered)

    # fill in the decision column and send the sheet back: recorded under the token's name
    rows[0]["decision"], rows[1]["decision"] = "accept", "reject"
    rows[1]["comment"] = "not about breaches"
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(LINK_COLUMNS))
    writer.writeheader()
    writer.writerows(rows)
    r = {**api.headers("reviewer"), "Content-Type": "text/csv"}
    imported = api.client.post(
        "/api/v1/links/import", params={"name": "reviews.csv"}, content=out.getvalue().encode(), headers=r
    )
    assert imported.status_code == 200, imported.text
    result = imported.json()
    assert result["path"] == "reviews.csv" and result["applied"] == 2
    assert result["decisions"] == {"accepted": 1, "rejected": 1} and result["empty"] == len(rows) - 2
    assert {x["status"] for x in _links(api) if x["id"] in ids[:2]} == {"accepted", "rejected"}
    assert api.store.list_reviews(ids[1])[0].reviewer == "reviewer-token"
    # the same file again: the links were decided since that export → every bad row named, nothing applied
    again = api.client.post(
        "/api/v1/links/import", params={"name": "reviews.csv"}, content=out.getvalue().encode(), headers=r
    )
    assert again.status_code == 422 and again.json()["code"] == "C410"
    assert "reviews.csv" in again.json()["error"] and "/tmp" not in again.json()["error"]
    broken = api.client.post(
        "/api/v1/links/import", params={"name": "reviews.xlsx"}, content=b"not a workbook", headers=r
    )
    assert broken.status_code == 422 and broken.json()["code"] == "C301"
    assert broken.json()["error"].startswith("reviews.xlsx: ") and "compliance-import" not in broken.text


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_the_heatmap_page_shows_the_coverage_change(api: Api) -> None:
    from compliance.api.web import COOKIE
    from compliance.app.tokens import csrf_token

    doc_id = _upload(api, "a.txt", POLICY)
    secret = api.tokens["reviewer"]
    api.client.cookies.set(COOKIE, secret, path="/ui")
    assert 'href="/ui/coverage"' in api.client.get("/ui/").text
    page = api.client.get("/ui/coverage")
    assert page.status_code == 200 and 'id="heatmap"' in page.text
    assert 'id="covered-count">0<' in page.text and 'data-state="accepted"' not in page.text
    link = min((x for x in _links(api) if "breach" in x["paragraph_text"]), key=lambda x: x["rank"])
    article = link["provision_key"].split("/")[0]
    cell = f'data-doc="{doc_id}" data-article="{article}" data-state="'
    assert cell + "suggested" in page.text
    done = api.client.post(
        f"/ui/links/{link['id']}/review",
        data={"decision": "accept"},
        headers={"X-CSRF-Token": csrf_token(secret), "HX-Request": "true"},
    )
    assert done.status_code == 200 and "s-accepted" in done.text and 'id="progress"' in done.text
    other = next(x for x in _links(api) if x["id"] != link["id"])
    second = api.client.post(
        f"/ui/links/{other['id']}/review",
        data={"decision": "needs-review", "comment": "ask legal"},
        headers={"X-CSRF-Token": csrf_token(secret), "HX-Request": "true"},
    )
    assert (
        second.status_code == 200
        and "s-needs-review" in second.text
        and 'value="needs-review"' in second.text
    )
    shown = api.client.get(f"/api/v1/links/{other['id']}", headers=api.headers("viewer")).json()
    assert [(x["decision"], x["reviewer"], x["comment"], x["source"]) for x in shown["reviews"]] == [
        ("needs-review", "reviewer-token", "ask legal", "api")
    ]
    fragment = api.client.get("/ui/coverage/heatmap", params={"law": "gdpr"}, headers={"HX-Request": "true"})
    assert fragment.status_code == 200 and "<html" not in fragment.text
    assert cell + "accepted" in fragment.text and 'id="covered-count">1<' in fragment.text
    download = api.client.get("/ui/coverage/report", params={"format": "xlsx"})
    assert download.status_code == 200 and download.headers["content-type"] == XLSX
    assert download.headers["content-disposition"] == 'attachment; filename="coverage-gdpr.xlsx"'
    report = api.client.get("/ui/coverage/report")
    assert report.headers["content-type"].startswith("text/html") and 'id="matrix"' in report.text
    missing = api.client.get("/ui/coverage", params={"law": "nis2"})
    assert missing.status_code == 404 and "C202" in missing.text
    unknown = api.client.post(
        f"/ui/links/{link['id']}/review",
        data={"decision": "delete"},
        headers={"X-CSRF-Token": csrf_token(secret), "HX-Request": "true"},
    )
    assert unknown.status_code == 400 and len(api.store.list_reviews(link["id"])) == 1
    no_text = api.client.post(
        f"/ui/links/{link['id']}/review",
        data={"decision": "comment", "comment": "  "},
        headers={"X-CSRF-Token": csrf_token(secret), "HX-Request": "true"},
    )
    assert no_text.status_code == 400 and "write the comment first" in no_text.text


def test_add_a_missed_link_and_compare_runs(api: Api) -> None:
    doc_id = _upload(api, "a.txt", POLICY)
    r = api.headers("reviewer")
    before = _coverage(api)["summary"]["covered"]
    every = _links(api)
    laptops = next(x for x in every if "laptops" in x["paragraph_text"])
    by_id = api.client.post(
        "/api/v1/links",
        json={"paragraph_id": laptops["paragraph_id"], "provision": "5", "comment": "integrity"},
        headers=r,
    )
    assert by_id.status_code == 201, by_id.text
    added = by_id.json()
    assert (added["method"], added["status"], added["provision_key"], added["reviewer"]) == (
        "manual",
        "accepted",
        "art:5",
        "reviewer-token",
    )
    by_number = api.client.post(
        "/api/v1/links",
        json={"document": "a.txt", "paragraph": laptops["paragraph_ordinal"], "provision": "art:17"},
        headers=r,
    )
    assert by_number.status_code == 201 and by_number.json()["paragraph_id"] == laptops["paragraph_id"]
    assert sorted(x["provision_key"] for x in _links(api, method="manual")) == ["art:17", "art:5"]
    assert _coverage(api)["summary"]["covered"] == before + 2
    assert (
        api.client.post(
            "/api/v1/links", json={"paragraph_id": 999_999, "provision": "5"}, headers=r
        ).status_code
        == 404
    )
    both = api.client.post(
        "/api/v1/links",
        json={"paragraph_id": 1, "document": "a.txt", "paragraph": 1, "provision": "5"},
        headers=r,
    )
    assert both.status_code == 422 and both.json()["code"] == "C803"
    unknown = api.client.post(
        "/api/v1/links", json={"document": str(doc_id), "paragraph": 1, "provision": "art:99"}, headers=r
    )
    assert unknown.status_code == 404 and "art:99" in unknown.json()["error"]

    run = every[0]["run_id"]
    same = api.client.get("/api/v1/links/diff", params={"run_a": run, "run_b": run}, headers=r).json()
    assert same["counts"] == {"gained": 0, "lost": 0, "reranked": 0, "weakened": 0}
    assert same["paragraphs_compared"] == len({x["paragraph_id"] for x in every})
    missing = api.client.get("/api/v1/links/diff", params={"run_a": run, "run_b": 999_999}, headers=r)
    assert missing.status_code == 404 and missing.json()["code"] == "C402"
