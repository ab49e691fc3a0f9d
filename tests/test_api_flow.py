"""The HTTP API end to end (SQLite and PostgreSQL): upload → job → links → review → report, alerts handled,
`map` with the contract of `compliance map`, search in both directions, a law installed and added."""

from __future__ import annotations

import os
import time
from typing import Any

import pytest

from tests.fixtures import api as api_fixtures
from tests.fixtures.api import POLICY, Api, tiny_classifier

api = api_fixtures.api  # the fixture


def _wait_job(api: Api, job_id: int, role: str = "viewer") -> dict[str, Any]:
    deadline = time.time() + 120
    while time.time() < deadline:
        job = api.client.get(f"/api/v1/jobs/{job_id}", headers=api.headers(role)).json()
        if job["finished_at"]:
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} did not finish")


def test_upload_job_links_review_report(api: Api) -> None:
    r = api.headers("reviewer")
    up = api.client.post(
        "/api/v1/audits",
        params={"name": "security-policy.txt", "top_k": 2},
        content=POLICY.encode(),
        headers={**r, "Content-Type": "text/plain"},
    )
    assert up.status_code == 202, up.text
    job = up.json()
    assert job["status"] in ("queued", "running", "succeeded") and job["counts"]["total"] == 1
    assert job["params"]["top_k"] == 2 and job["created_by"] == "reviewer-token"
    done = _wait_job(api, job["id"])
    assert done["status"] == "succeeded" and done["progress"] == 1.0
    item = done["items"][0]
    assert (
        item["status"] == "done"
        and item["links"] == done["links"] == 6
        and item["source"] == "security-policy.txt"
    )
    listed = api.client.get("/api/v1/jobs", headers=api.headers("viewer")).json()
    assert [j["id"] for j in listed] == [job["id"]]

    documents = api.client.get("/api/v1/documents", headers=api.headers("viewer")).json()
    assert [d["source"] for d in documents] == ["security-policy.txt"]
    assert documents[0]["review"] == {
        "links": 6,
        "reviewed": 0,
        "accepted": 0,
        "rejected": 0,
        "open": 6,
        "progress": 0.0,
    }
    doc_id = item["document_id"]
    view = api.client.get(f"/api/v1/documents/{doc_id}/links", headers=api.headers("viewer")).json()
    linked = [p for p in view["paragraphs_with_links"] if p["links"]]
    assert len(linked) == 3 and all(len(p["links"]) == 2 for p in linked)
    breach = next(p for p in linked if "breach" in p["text"])
    top = breach["links"][0]
    assert top["law_short_name"] == "gdpr" and top["provision_key"].startswith("art:")
    assert top["provision_text"] and isinstance(top["terms"], list) and top["article_title"]
    detail = api.client.get(f"/api/v1/documents/{doc_id}", headers=api.headers("viewer")).json()
    assert len(detail["paragraphs"]) == detail["history"][0]["paragraph_count"]

    reviewed = api.client.post(
        f"/api/v1/links/{top['id']}/review", json={"decision": "accept", "comment": "fits"}, headers=r
    )
    assert reviewed.status_code == 200, reviewed.text
    assert reviewed.json()["link"]["status"] == "accepted" and reviewed.json()["review"]["accepted"] == 1
    other = breach["links"][1]["id"]
    api.client.post(f"/api/v1/links/{other}/review", json={"decision": "reject"}, headers=r)
    link = api.client.get(f"/api/v1/links/{other}", headers=api.headers("viewer")).json()
    assert link["status"] == "rejected" and link["reviews"][0]["reviewer"] == "reviewer-token"
    assert (
        api.client.get("/api/v1/links", params={"status": "accepted"}, headers=r).json()[0]["id"] == top["id"]
    )
    # the report: each document's review progress, and the audit log of who decided
    report = api.client.get("/api/v1/documents", headers=api.headers("viewer")).json()[0]["review"]
    assert report == {"links": 6, "reviewed": 2, "accepted": 1, "rejected": 1, "open": 4, "progress": 0.3333}
    assert api.store.list_audit(action="link.review")[0].actor == "reviewer-token"
    # a viewer may read but not review
    denied = api.client.post(
        f"/api/v1/links/{top['id']}/review", json={"decision": "reject"}, headers=api.headers("viewer")
    )
    assert denied.status_code == 403


def test_batch_upload_is_one_task_per_document(api: Api) -> None:
    files = [
        ("files", ("a.txt", POLICY.encode(), "text/plain")),
        ("files", ("b.md", ("# B\n\n" + POLICY).encode(), "text/markdown")),
        ("files", ("c.png", b"\x89PNG", "image/png")),
    ]
    up = api.client.post(
        "/api/v1/audits/batch", files=files, data={"top_k": "1"}, headers=api.headers("reviewer")
    )
    assert up.status_code == 202, up.text
    job = up.json()
    assert job["counts"]["total"] == 2 and [r["path"] for r in job["params"]["rejected"]] == ["c.png"]
    done = _wait_job(api, job["id"])
    assert done["status"] == "succeeded" and [i["links"] for i in done["items"]] == [3, 3]


def test_map_answers_the_contract_of_the_command(api: Api) -> None:
    from compliance.app import map_texts

    texts = [
        {
            "id": "c1",
            "text": "A personal data breach is notified to the supervisory authority within 72 hours.",
        },
        {"id": 7, "text": "Laptops use full disk encryption."},
        {"text": "Copies of personal data are given to the data subject on request."},
    ]
    response = api.client.post(
        "/api/v1/map", json={"texts": texts, "top_k": 3}, headers=api.headers("viewer")
    )
    assert response.status_code == 200
    expected = list(
        map_texts(tiny_classifier(), [(t.get("id", n), t["text"]) for n, t in enumerate(texts, 1)], top_k=3)
    )
    assert response.json() == {"results": expected}
    assert [r["id"] for r in response.json()["results"]] == ["c1", 7, 3]


def test_search_in_both_directions(api: Api) -> None:
    api.client.post(
        "/api/v1/audits",
        params={"name": "p.txt"},
        content=POLICY.encode(),
        headers={**api.headers("reviewer"), "Content-Type": "text/plain"},
    )
    api.dispatcher.wait(60)
    laws = api.client.post(
        "/api/v1/search/laws",
        json={"text": "notify the breach to the supervisory authority", "k": 3},
        headers=api.headers("viewer"),
    ).json()
    assert laws["laws"][0]["law"] == "gdpr" and laws["provisions"][0]["key"] == "art:33"
    controls = api.client.get(
        "/api/v1/search/controls",
        params={"law": "gdpr", "provision": "art:33", "k": 2},
        headers=api.headers("viewer"),
    ).json()
    assert "breach" in controls[0]["text"]


def test_alerts_acknowledge_dismiss_resolve(api: Api) -> None:
    from compliance.connectors import parse_bytes
    from compliance.store import NewAlert

    law = api.store.law_record("gdpr")
    api.store.save_document(parse_bytes(POLICY.encode(), "p.txt"))
    paragraph = next(iter(api.store.iter_paragraphs()))
    run = api.store.start_run("alert", {})
    api.store.add_alerts(run, [NewAlert(law.id, paragraph.id, 0.8, rank=n) for n in (1, 2, 3)])
    ids = [a["id"] for a in api.client.get("/api/v1/alerts", headers=api.headers("viewer")).json()]
    r = api.headers("reviewer")
    for alert_id, action, status in zip(
        ids, ("acknowledge", "dismiss", "resolve"), ("acknowledged", "dismissed", "resolved"), strict=True
    ):
        changed = api.client.post(f"/api/v1/alerts/{alert_id}/{action}", json={"comment": action}, headers=r)
        assert changed.status_code == 200 and changed.json()["status"] == status
    dismissed = api.client.get("/api/v1/alerts", params={"status": "dismissed"}, headers=r).json()
    assert [a["id"] for a in dismissed] == [ids[1]]
    history = api.client.get(f"/api/v1/alerts/{ids[1]}", headers=r).json()["acknowledgements"]
    assert [(h["status"], h["by"], h["comment"]) for h in history] == [
        ("dismissed", "reviewer-token", "dismiss")
    ]
    bad = api.client.post(f"/api/v1/alerts/{ids[0]}/delete", json={}, headers=r)
    assert bad.status_code == 422


def test_laws_install_and_add(api: Api, shared_data: Any) -> None:
    if not (shared_data / "laws" / "eu" / "eprivacy.json").is_file():
        pytest.skip("the ePrivacy Directive is not in the shared law mirror")
    os.environ.setdefault("COMPLIANCE_LAW_MIRROR", str(shared_data / "laws"))
    a = api.headers("admin")
    installed = api.client.post("/api/v1/laws/install", json={"name": "eprivacy"}, headers=a)
    assert installed.status_code == 200, installed.text
    data = installed.json()
    assert data["short_name"] == "eprivacy" and data["created"] is True
    assert data["after_store"]["status"] == "skipped"  # no stored control yet: nothing to alert on
    again = api.client.post("/api/v1/laws/install", json={"name": "eprivacy"}, headers=a).json()
    assert again["created"] is False
    names = [
        law["short_name"] for law in api.client.get("/api/v1/laws", headers=api.headers("viewer")).json()
    ]
    assert sorted(names) == ["eprivacy", "gdpr"]
    shown = api.client.get("/api/v1/laws/eprivacy", headers=api.headers("viewer")).json()
    assert shown["articles"] and shown["short_name"] == "eprivacy"
    body = (shared_data / "laws" / "eu" / "eprivacy.json").read_bytes()
    added = api.client.post(
        "/api/v1/laws",
        params={"name": "eprivacy.json", "short_name": "eprivacy-copy"},
        content=body,
        headers={**a, "Content-Type": "application/json"},
    )
    assert added.status_code == 200, added.text
    assert api.store.list_audit(action="run.start")[0].actor == "admin-token"


def test_serve_and_worker_commands(tmp_path: Any) -> None:
    """`compliance serve` answers /health on a real socket; `compliance worker` without a broker says what to set."""
    import socket
    import subprocess
    import sys
    from pathlib import Path

    import httpx
    from click.testing import CliRunner

    from compliance.cli import cli

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    repo = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(repo), "COMPLIANCE_HOME": str(tmp_path)}
    env.pop("COMPLIANCE_BROKER_URL", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "compliance", "serve", "--port", str(port)],
        cwd=repo,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.time() + 60
        health = None
        while time.time() < deadline and health is None:
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).json()
            except httpx.HTTPError:
                time.sleep(0.2)
        assert health is not None and health["ok"] and health["jobs"] == "in-process"
        assert httpx.get(f"http://127.0.0.1:{port}/api/v1/documents").status_code == 401
    finally:
        proc.terminate()
        proc.wait(20)
    result = CliRunner().invoke(cli, ["worker"], env={"COMPLIANCE_BROKER_URL": ""})
    assert result.exit_code == 1 and "COMPLIANCE_BROKER_URL" in result.output


def test_web_alert_inbox_actions_need_the_anti_forgery_value(api: Api) -> None:
    from compliance.api.web import COOKIE
    from compliance.app.tokens import csrf_token
    from compliance.connectors import parse_bytes
    from compliance.store import NewAlert

    law = api.store.law_record("gdpr")
    api.store.save_document(parse_bytes(POLICY.encode(), "p.txt"))
    paragraph = next(iter(api.store.iter_paragraphs()))
    run = api.store.start_run("alert", {})
    evidence = {
        "shared_terms": ["breach"],
        "provision_key": "art:33/par:1",
        "provision_label": "Art. 33(1)",
        "explained_by": {"key": "rec:85", "label": "Recital 85"},
    }
    api.store.add_alerts(run, [NewAlert(law.id, paragraph.id, 0.8, rank=1, evidence=evidence)])
    alert_id = api.store.list_alerts()[0].id
    secret = api.tokens["reviewer"]
    api.client.cookies.set(COOKIE, secret, path="/ui")
    page = api.client.get("/ui/alerts")
    assert (
        page.status_code == 200 and f'id="alert-{alert_id}"' in page.text and csrf_token(secret) in page.text
    )
    assert "Art. 33(1)" in page.text and "via Recital 85" in page.text  # the label, and the recital behind it
    forged = api.client.post(f"/ui/alerts/{alert_id}/dismiss", data={"comment": "x"})
    assert forged.status_code == 403 and api.store.get_alert(alert_id).status == "open"
    done = api.client.post(
        f"/ui/alerts/{alert_id}/dismiss",
        data={"comment": "false positive"},
        headers={"X-CSRF-Token": csrf_token(secret), "HX-Request": "true"},
    )
    assert done.status_code == 200 and "dismissed" in done.text
    assert api.store.get_alert(alert_id).acknowledgements[-1].by == "reviewer-token"
    assert "No alert with the status open" in api.client.get("/ui/alerts").text
    api.client.cookies.clear()
    assert (
        api.client.post(f"/ui/alerts/{alert_id}/resolve", headers={"HX-Request": "true"}).status_code == 401
    )
