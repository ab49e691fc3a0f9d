"""One JSON error body over every route: ``{"ok": false, "error", "code", "status"}``, the status being the
``http_status`` of the ComplianceError whose ``code`` it carries — for errors of the framework (unknown route,
wrong method, invalid body) and of the use cases alike."""

from __future__ import annotations

import re
from typing import Any

import pytest

from compliance.errors import ComplianceError
from tests.fixtures import api as api_fixtures
from tests.fixtures.api import Api
from tests.test_api_auth import ROUTE_ROLES, _request

api = api_fixtures.api  # the fixture


def _codes() -> dict[str, int]:
    found: dict[str, int] = {}
    todo: list[type[ComplianceError]] = [ComplianceError]
    while todo:
        cls = todo.pop()
        found.setdefault(cls.code, cls.http_status)
        todo.extend(cls.__subclasses__())
    return found


CODES = _codes()


def assert_error_body(response: Any, where: str) -> None:
    assert response.headers["content-type"].startswith("application/json"), where
    body = response.json()
    assert set(body) == {"ok", "error", "code", "status"}, (where, body)
    assert body["ok"] is False and isinstance(body["error"], str) and body["error"], (where, body)
    assert body["status"] == response.status_code, (where, body)
    assert CODES.get(body["code"]) == response.status_code, (where, body)


def _bad_requests(method: str, template: str) -> list[dict[str, Any]]:
    """Requests each route must refuse: unknown ids, invalid parameters and bodies, wrong content types."""
    good = _request(method, template)
    out = []
    if "{" in template:
        bad_path = re.sub(r"\{(\w+)\}", "not-a-number", template)
        out.append({**good, "url": bad_path})
    if "json" in good:
        out.append(
            {**good, "json": None, "content": b"{not json", "headers": {"Content-Type": "application/json"}}
        )
        out.append({**good, "json": {"unexpected": [1, 2, 3]}})
    if "content" in good:
        out.append({**good, "headers": {"Content-Type": "image/png"}})
    if "params" in good:
        out.append({**good, "params": {k: "" for k in good["params"]}})
    if method == "GET" and "{" not in template:
        out.append({**good, "params": {"limit": "-1", "status": "nonsense", "law": "x" * 500}})
    out.append({**good, "url": good["url"] + "/nope"})
    return out


def test_every_route_answers_errors_with_one_body(api: Api) -> None:
    seen: set[int] = set()
    for (method, template), role in sorted(ROUTE_ROLES.items()):
        if role is None:
            continue
        for request in _bad_requests(method, template):
            request["headers"] = {**request.get("headers", {}), **api.headers("admin")}
            response = api.client.request(**{k: v for k, v in request.items() if v is not None})
            if response.status_code >= 400:
                assert_error_body(response, f"{method} {request['url']}")
                seen.add(response.status_code)
        # the wrong method on the route
        other = "PATCH"
        response = api.client.request(other, _request(method, template)["url"], headers=api.headers("admin"))
        assert_error_body(response, f"{other} {template}")
    api.dispatcher.wait(60)
    assert {404, 405, 415, 422} <= seen


def test_use_case_errors_keep_their_code(api: Api) -> None:
    h = api.headers("admin")
    cases = [
        (api.client.get("/api/v1/documents/424242", headers=h), "C402", 404),
        (api.client.get("/api/v1/laws/no-such-law", headers=h), "C202", 404),
        (api.client.post("/api/v1/laws/install", json={"name": "no-such-pack"}, headers=h), "C202", 404),
        (
            api.client.post("/api/v1/tokens", json={"name": "admin-token", "role": "viewer"}, headers=h),
            "C805",
            409,
        ),
        (
            api.client.post(
                "/api/v1/audits",
                params={"name": "scan.pdf"},
                content=b"\x89PNG",
                headers={**h, "Content-Type": "image/png"},
            ),
            "C806",
            415,
        ),
        (
            api.client.post(
                "/api/v1/audits",
                params={"name": "scan.png"},
                content=b"\x89PNG",
                headers={**h, "Content-Type": "application/octet-stream"},
            ),
            "C803",
            422,
        ),
        (
            api.client.post(
                "/api/v1/laws",
                params={"name": "law.xml"},
                content=b"<x/>",
                headers={**h, "Content-Type": "application/xml"},
            ),
            "C201",
            422,
        ),
        (api.client.post("/api/v1/map", json={"texts": [], "top_k": 3}, headers=h), "C803", 422),
        (
            api.client.post("/api/v1/map", json={"texts": [{"text": "x"}], "top_k": 100}, headers=h),
            "C803",
            422,
        ),
    ]
    for response, code, status in cases:
        assert response.status_code == status, response.text
        assert response.json()["code"] == code
        assert_error_body(response, code)


def test_size_limits_answer_413(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    from compliance.settings import reset_settings

    monkeypatch.setenv("COMPLIANCE_MAX_DOCUMENT_BYTES", "1000")
    monkeypatch.setenv("COMPLIANCE_MAX_REQUEST_BYTES", "2000")
    reset_settings()
    h = {**api.headers("reviewer"), "Content-Type": "text/plain"}
    big = b"All laptops use full disk encryption. " * 100
    declared = api.client.post("/api/v1/audits", params={"name": "big.txt"}, content=big, headers=h)
    assert declared.status_code == 413 and declared.json()["code"] == "C304"
    assert_error_body(declared, "declared")

    def chunks() -> Any:  # no Content-Length: the body is counted as it streams in
        for _ in range(100):
            yield b"All laptops use full disk encryption. "

    streamed = api.client.post("/api/v1/audits", params={"name": "big.txt"}, content=chunks(), headers=h)
    assert streamed.status_code == 413 and streamed.json()["code"] == "C304"
    texts = {"texts": [{"id": n, "text": "x" * 100} for n in range(40)]}
    too_big = api.client.post("/api/v1/map", json=texts, headers=api.headers("viewer"))
    assert too_big.status_code == 413 and too_big.json()["code"] == "C807"
    assert api.store.list_jobs() == []


def test_an_unexpected_failure_is_a_500_with_the_same_body(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    import compliance.app.review as review

    def broken(store: Any) -> Any:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(review, "documents_with_progress", broken)
    response = api.client.get("/api/v1/documents", headers=api.headers("viewer"))
    assert response.status_code == 500
    assert_error_body(response, "500")
    assert "disk on fire" not in response.text  # internals stay in the server log
