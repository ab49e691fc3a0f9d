"""The web review page: server-rendered (Jinja2) HTML under ``/ui`` with htmx (vendored, served from
``/ui/static``; nothing comes from a CDN).

Sign-in exchanges an API token for an HttpOnly, SameSite=Strict cookie; every page checks it like the API checks
a bearer token, and every form that changes something also sends an anti-forgery value derived from the token.
Pages call the same use cases as the JSON API.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import FastAPI, Form, Path, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, PackageLoader, select_autoescape

from compliance.app.tokens import Principal, Role, authenticate, csrf_token, require_role
from compliance.errors import (
    AuthenticationError,
    ComplianceError,
    ConfigurationError,
    PermissionDeniedError,
)

__all__ = ["COOKIE", "register_web"]

COOKIE = "compliance_token"
CSRF_HEADER = "X-CSRF-Token"

_templates = Jinja2Templates(
    env=Environment(
        loader=PackageLoader("compliance.api", "templates"),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
)


_DOCUMENTS = Query([], description="Only these documents (ids); none: all.")


class SignInRequired(Exception):
    """No valid session cookie: the page sends the browser to the sign-in form."""


def _session(request: Request, role: Role = "viewer", *, unsafe: bool = False) -> tuple[Principal, Any]:
    """The signed-in principal and a store writing its name to the audit log.

    Raises:
        SignInRequired: no cookie, or a token that is unknown or revoked.
        PermissionDeniedError: the role is too weak, or a change without the anti-forgery value.
    """
    services = request.app.state.services
    secret = request.cookies.get(COOKIE)
    try:
        principal = authenticate(services.store, secret)
    except AuthenticationError as e:
        raise SignInRequired() from e
    if unsafe:
        sent = request.headers.get(CSRF_HEADER, "")
        if not secret or sent != csrf_token(secret):
            raise PermissionDeniedError("missing or wrong anti-forgery token: reload the page and try again")
    require_role(principal, role)
    return principal, services.store.as_actor(principal.name)


def _page(
    request: Request, template: str, principal: Principal, status: int = 200, **context: Any
) -> Response:
    secret = request.cookies.get(COOKIE, "")
    return _templates.TemplateResponse(
        request,
        template,
        {
            "me": principal,
            "csrf": csrf_token(secret) if secret else "",
            "can_review": principal.allows("reviewer"),
            **context,
        },
        status_code=status,
    )


def register_web(app: FastAPI) -> None:
    """Mount the web pages and their static files on ``app`` (hidden from the OpenAPI document)."""
    app.mount("/ui/static", StaticFiles(packages=[("compliance.api", "static")]), name="ui-static")

    @app.exception_handler(SignInRequired)
    async def sign_in(request: Request, exc: SignInRequired) -> Response:
        if request.headers.get("HX-Request"):
            return Response(status_code=401, headers={"HX-Redirect": "/ui/login"})
        return RedirectResponse("/ui/login", status_code=303)

    def fragment_error(request: Request, exc: ComplianceError) -> Response:
        return _templates.TemplateResponse(request, "error.html", {"error": exc}, status_code=exc.http_status)

    @app.get("/ui/login", response_class=HTMLResponse, include_in_schema=False)
    def login_form(request: Request) -> Response:
        return _templates.TemplateResponse(request, "login.html", {"error": None})

    @app.post("/ui/login", response_class=HTMLResponse, include_in_schema=False)
    def login(request: Request, token: str = Form(max_length=200)) -> Response:
        services = request.app.state.services
        try:
            authenticate(services.store, token)
        except AuthenticationError as e:
            return _templates.TemplateResponse(request, "login.html", {"error": str(e)}, status_code=401)
        response = RedirectResponse("/ui/", status_code=303)
        response.set_cookie(
            COOKIE,
            token.strip(),
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            path="/ui",
        )
        return response

    @app.post("/ui/logout", include_in_schema=False)
    def logout(request: Request) -> Response:
        response = RedirectResponse("/ui/login", status_code=303)
        response.delete_cookie(COOKIE, path="/ui")
        return response

    @app.get("/ui", include_in_schema=False)
    def ui_root() -> Response:
        return RedirectResponse("/ui/", status_code=307)

    @app.get("/ui/", response_class=HTMLResponse, include_in_schema=False)
    def documents_page(request: Request) -> Response:
        from compliance.app.jobs import list_jobs
        from compliance.app.review import documents_with_progress

        principal, store = _session(request)
        return _page(
            request,
            "documents.html",
            principal,
            documents=documents_with_progress(store),
            jobs=list_jobs(store, limit=10),
        )

    @app.get("/ui/documents/{document_id}", response_class=HTMLResponse, include_in_schema=False)
    def document_page(request: Request, document_id: int = Path(ge=1, le=2**31 - 1)) -> Response:
        from compliance.app.review import document_links

        principal, store = _session(request)
        try:
            doc = document_links(store, document_id)
        except ComplianceError as e:
            return _page(request, "error_page.html", principal, status=e.http_status, error=e)
        return _page(request, "document.html", principal, doc=doc)

    @app.post("/ui/links/{link_id}/review", response_class=HTMLResponse, include_in_schema=False)
    def link_review(
        request: Request,
        link_id: int = Path(ge=1, le=2**31 - 1),
        decision: str | None = Form(None, max_length=32),
        comment: str | None = Form(None, max_length=2000),
    ) -> Response:
        from compliance.app.links import review_links
        from compliance.app.review import REVIEW_ACTIONS, reviewed_link

        try:
            principal, store = _session(request, "reviewer", unsafe=True)  # before the form is judged
            if decision not in REVIEW_ACTIONS:
                raise ConfigurationError(
                    f"unknown review action {decision!r}; use one of {', '.join(REVIEW_ACTIONS)}"
                )
            review_links(store, [link_id], decision, principal.name, comment, source="api")
            reviewed = reviewed_link(store, link_id)
        except ComplianceError as e:
            return fragment_error(request, e)
        link_html = _page(request, "link_row.html", principal, link=reviewed["link"])
        progress_html = _page(
            request, "progress.html", principal, doc={"review": reviewed["review"]}, oob=True
        )
        body = bytes(link_html.body) + bytes(progress_html.body)
        return HTMLResponse(body)

    def heatmap_context(store: Any, law: str, documents: list[int]) -> dict[str, Any]:
        from compliance.app.review import coverage_heatmap

        try:
            return {"heatmap": coverage_heatmap(store, law, documents or None), "error": None}
        except ComplianceError as e:
            return {"heatmap": None, "error": e}

    @app.get("/ui/coverage", response_class=HTMLResponse, include_in_schema=False)
    def coverage_page(
        request: Request,
        law: str = Query("gdpr", max_length=64),
        documents: list[int] = _DOCUMENTS,
    ) -> Response:
        from compliance.app.laws import list_laws
        from compliance.app.review import documents_with_progress

        principal, store = _session(request)
        context = heatmap_context(store, law, documents)
        status = context["error"].http_status if context["error"] is not None else 200
        return _page(
            request,
            "coverage.html",
            principal,
            status=status,
            law=law,
            laws=[r.short_name for r in list_laws(store)],
            all_documents=documents_with_progress(store),
            chosen=set(documents),
            **context,
        )

    @app.get("/ui/coverage/report", include_in_schema=False)
    def coverage_download(
        request: Request,
        law: str = Query("gdpr", max_length=64),
        format: Literal["html", "xlsx", "json"] = "html",
        documents: list[int] = _DOCUMENTS,
    ) -> Response:
        from compliance.api.routes.reports import report_file

        principal, store = _session(request)
        try:
            return report_file(store, law, [str(d) for d in documents], format)
        except ComplianceError as e:
            return _page(request, "error_page.html", principal, status=e.http_status, error=e)

    @app.get("/ui/coverage/heatmap", response_class=HTMLResponse, include_in_schema=False)
    def coverage_fragment(
        request: Request,
        law: str = Query("gdpr", max_length=64),
        documents: list[int] = _DOCUMENTS,
    ) -> Response:
        principal, store = _session(request)
        context = heatmap_context(store, law, documents)
        status = context["error"].http_status if context["error"] is not None else 200
        return _page(request, "heatmap.html", principal, status=status, law=law, **context)

    @app.get("/ui/alerts", response_class=HTMLResponse, include_in_schema=False)
    def alerts_page(request: Request, status: str | None = "open") -> Response:
        from compliance.app.alerts import list_alerts

        principal, store = _session(request)
        wanted = status if status in ("open", "acknowledged", "dismissed", "resolved") else None
        return _page(
            request,
            "alerts.html",
            principal,
            alerts=list_alerts(store, status=wanted, limit=500),
            wanted=wanted,
        )

    @app.post("/ui/alerts/{alert_id}/{action}", response_class=HTMLResponse, include_in_schema=False)
    def alert_action(
        request: Request,
        action: str,
        alert_id: int = Path(ge=1, le=2**31 - 1),
        comment: str | None = Form(None, max_length=10_000),
    ) -> Response:
        from compliance.app.alerts import ALERT_ACTIONS, set_alerts_status

        try:
            principal, store = _session(request, "reviewer", unsafe=True)
            if action not in ALERT_ACTIONS:
                raise PermissionDeniedError(f"unknown action {action!r}")
            alert = set_alerts_status(store, [alert_id], ALERT_ACTIONS[action], principal.name, comment)[0]
        except ComplianceError as e:
            return fragment_error(request, e)
        return _page(request, "alert_row.html", principal, alert=alert)
