"""Authentication and roles over every route: no token → 401; each role × each route → allowed or 403; only
/health answers without a token (the test walks the OpenAPI route list, so a new route cannot slip through)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.fixtures import api as api_fixtures
from tests.fixtures.api import Api

api = api_fixtures.api  # the fixture

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

ROLES = ("viewer", "reviewer", "admin")

#: the weakest role each route needs (None: no token needed); every OpenAPI route must be listed
ROUTE_ROLES: dict[tuple[str, str], str | None] = {
    ("GET", "/health"): None,
    ("GET", "/api/v1/openapi.json"): "viewer",
    ("GET", "/api/v1/me"): "viewer",
    ("GET", "/api/v1/tokens"): "admin",
    ("POST", "/api/v1/tokens"): "admin",
    ("DELETE", "/api/v1/tokens/{token_id}"): "admin",
    ("POST", "/api/v1/map"): "viewer",
    ("POST", "/api/v1/search/laws"): "viewer",
    ("GET", "/api/v1/search/controls"): "viewer",
    ("POST", "/api/v1/audits"): "reviewer",
    ("POST", "/api/v1/audits/batch"): "reviewer",
    ("GET", "/api/v1/jobs"): "viewer",
    ("GET", "/api/v1/jobs/{job_id}"): "viewer",
    ("GET", "/api/v1/documents"): "viewer",
    ("GET", "/api/v1/documents/{document_id}"): "viewer",
    ("GET", "/api/v1/documents/{document_id}/links"): "viewer",
    ("GET", "/api/v1/links"): "viewer",
    ("GET", "/api/v1/links/{link_id}"): "viewer",
    ("POST", "/api/v1/links/{link_id}/review"): "reviewer",
    ("POST", "/api/v1/links/review"): "reviewer",
    ("POST", "/api/v1/links"): "reviewer",
    ("GET", "/api/v1/links/diff"): "viewer",
    ("GET", "/api/v1/links/export"): "viewer",
    ("POST", "/api/v1/links/import"): "reviewer",
    ("GET", "/api/v1/reports/coverage"): "viewer",
    ("GET", "/api/v1/alerts"): "viewer",
    ("GET", "/api/v1/alerts/{alert_id}"): "viewer",
    ("POST", "/api/v1/alerts/{alert_id}/{action}"): "reviewer",
    ("GET", "/api/v1/laws"): "viewer",
    ("GET", "/api/v1/laws/{name}"): "viewer",
    ("POST", "/api/v1/laws/install"): "admin",
    ("POST", "/api/v1/laws"): "admin",
}

PATH_VALUES = {"action": "acknowledge", "name": "gdpr"}
COUNTER = iter(range(1, 1_000_000))


def _request(method: str, template: str) -> dict[str, Any]:
    """A well-formed request for the route (valid parameters and body), so that only the token decides."""
    path = re.sub(
        r"\{(\w+)\}", lambda m: PATH_VALUES.get(m.group(1), "999999"), template
    )  # ids that do not exist: 404 once allowed
    kwargs: dict[str, Any] = {}
    if template == "/api/v1/tokens" and method == "POST":
        kwargs["json"] = {"name": f"made-{next(COUNTER)}", "role": "viewer"}
    elif template == "/api/v1/map":
        kwargs["json"] = {
            "texts": [{"id": "c1", "text": "Breaches are notified within 72 hours."}],
            "top_k": 2,
        }
    elif template == "/api/v1/search/laws":
        kwargs["json"] = {"text": "encryption of personal data"}
    elif template == "/api/v1/search/controls":
        kwargs["params"] = {"law": "gdpr"}
    elif template == "/api/v1/audits":
        kwargs["params"] = {"name": f"doc-{next(COUNTER)}.txt"}
        kwargs["content"] = b"A personal data breach is notified to the authority within 72 hours."
        kwargs["headers"] = {"Content-Type": "text/plain"}
    elif template == "/api/v1/audits/batch":
        kwargs["files"] = [
            ("files", (f"b-{next(COUNTER)}.txt", b"Access rights are reviewed.", "text/plain"))
        ]
    elif template == "/api/v1/links/{link_id}/review":
        kwargs["json"] = {"decision": "accept", "comment": "ok"}
    elif template == "/api/v1/links/review":
        kwargs["json"] = {"link_ids": [999999], "decision": "reject", "comment": "no"}
    elif template == "/api/v1/links" and method == "POST":
        kwargs["json"] = {"paragraph_id": 999999, "provision": "art:32", "comment": "missed"}
    elif template == "/api/v1/links/diff":
        kwargs["params"] = {"run_a": 999998, "run_b": 999999}
    elif template == "/api/v1/links/export":
        kwargs["params"] = {"format": "csv", "law": "gdpr"}
    elif template == "/api/v1/links/import":
        kwargs["params"] = {"name": "reviews.csv"}
        kwargs["content"] = b"link_id,decision\n"
        kwargs["headers"] = {"Content-Type": "text/csv"}
    elif template == "/api/v1/reports/coverage":
        kwargs["params"] = {"law": "gdpr", "format": "json"}
    elif template.startswith("/api/v1/alerts/") and method == "POST":
        kwargs["json"] = {"comment": "seen"}
    elif template == "/api/v1/laws/install":
        kwargs["json"] = {"name": "no-such-pack"}
    elif template == "/api/v1/laws" and method == "POST":
        kwargs["params"] = {"name": "law.xml"}
        kwargs["content"] = b"<not-a-law/>"
        kwargs["headers"] = {"Content-Type": "application/xml"}
    return {"method": method, "url": path, **kwargs}


def openapi_routes(api: Api) -> set[tuple[str, str]]:
    doc = api.client.get("/api/v1/openapi.json", headers=api.headers("viewer")).json()
    routes = {(m.upper(), "/health") for m in ("get",)}
    for path, ops in doc["paths"].items():
        routes |= {(method.upper(), path) for method in ops}
    return routes


def test_the_role_table_covers_every_route(api: Api) -> None:
    assert openapi_routes(api) == set(ROUTE_ROLES)


def test_no_route_but_health_answers_without_a_token(api: Api) -> None:
    for method, template in sorted(openapi_routes(api)):
        response = api.client.request(**_request(method, template))
        if template == "/health":
            assert response.status_code == 200
            continue
        assert response.status_code == 401, (method, template, response.text)
        body = response.json()
        assert body == {"ok": False, "error": body["error"], "code": "C801", "status": 401}
        assert response.headers["WWW-Authenticate"] == "Bearer"


def test_an_unknown_or_revoked_token_is_refused(api: Api) -> None:
    from compliance.app.tokens import revoke_token

    assert api.client.get("/api/v1/me", headers={"Authorization": "Bearer cpl_nope"}).status_code == 401
    assert api.client.get("/api/v1/me", headers={"Authorization": "Basic eDp5"}).status_code == 401
    assert api.client.get("/api/v1/me", headers=api.headers("viewer")).json()["role"] == "viewer"
    revoke_token(api.store, "viewer-token")
    response = api.client.get("/api/v1/me", headers=api.headers("viewer"))
    assert response.status_code == 401 and response.json()["code"] == "C801"


@pytest.mark.parametrize("role", ROLES)
def test_each_role_on_each_route_is_allowed_or_forbidden(api: Api, role: str) -> None:
    from compliance.app.tokens import ROLES as ORDER

    for (method, template), needed in sorted(ROUTE_ROLES.items(), key=lambda kv: kv[0]):
        if needed is None:
            continue
        request = _request(method, template)
        request["headers"] = {**request.get("headers", {}), **api.headers(role)}
        response = api.client.request(**request)
        allowed = ORDER.index(role) >= ORDER.index(needed)  # type: ignore[arg-type]
        if allowed:
            assert response.status_code not in (401, 403), (role, method, template, response.text)
        else:
            assert response.status_code == 403, (role, method, template, response.text)
            assert response.json()["code"] == "C802"
    api.dispatcher.wait(60)


def test_writes_are_in_the_audit_log_with_the_tokens_name(api: Api) -> None:
    made = api.client.post(
        "/api/v1/tokens", json={"name": "ci-bot", "role": "reviewer"}, headers=api.headers("admin")
    )
    assert made.status_code == 201 and made.json()["token"].startswith("cpl_")
    entry = api.store.list_audit(action="token.create")[0]
    assert entry.actor == "admin-token" and entry.details["name"] == "ci-bot"
    secret = made.json()["token"]
    assert api.client.get("/api/v1/me", headers={"Authorization": f"Bearer {secret}"}).json() == {
        "name": "ci-bot",
        "role": "reviewer",
        "token_id": made.json()["id"],
    }
    job = api.client.post(
        "/api/v1/audits",
        params={"name": "p.txt"},
        content=b"A personal data breach is notified within 72 hours.",
        headers={**api.headers("reviewer"), "Content-Type": "text/plain"},
    )
    assert job.status_code == 202
    api.dispatcher.wait(60)
    assert api.store.list_audit(action="job.create")[0].actor == "reviewer-token"
    saved = api.store.list_audit(action="document.save")[0]
    assert saved.actor == "reviewer-token"  # the worker writes on behalf of the job's submitter
    # tokens are stored hashed: the secret appears nowhere in the database
    with api.store.engine.connect() as conn:
        from sqlalchemy import text

        hashes = [r[0] for r in conn.execute(text("SELECT token_hash FROM api_tokens"))]
    assert secret not in hashes and all(len(h) == 64 for h in hashes)


def test_web_pages_need_a_signed_in_token(api: Api) -> None:
    from compliance.api.web import COOKIE

    open_routes = {"/ui/login", "/ui/static", "/ui", "/ui/logout"}
    for route in api.client.app.routes:
        path = getattr(route, "path", "")
        if not path.startswith("/ui") or path in open_routes:
            continue
        for method in sorted(getattr(route, "methods", None) or {"GET"}):
            if method == "HEAD":
                continue
            url = re.sub(r"\{(\w+)\}", lambda m: PATH_VALUES.get(m.group(1), "1"), path)
            response = api.client.request(method, url, follow_redirects=False)
            assert response.status_code in (303, 401), (method, path, response.status_code)
            if response.status_code == 303:
                assert response.headers["location"] == "/ui/login"
    # a viewer may look but not change: the anti-forgery value and the role are both checked
    api.client.cookies.set(COOKIE, api.tokens["viewer"], path="/ui")
    assert api.client.get("/ui/").status_code == 200
    denied = api.client.post("/ui/alerts/1/acknowledge", data={})
    assert denied.status_code == 403
