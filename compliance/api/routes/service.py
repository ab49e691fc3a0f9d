"""``/health``, who am I, API tokens, ``map`` and search in both directions."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.concurrency import run_in_threadpool

from compliance.api import schemas
from compliance.api.auth import Caller, admin, viewer
from compliance.api.errors import ERROR_RESPONSES

health_router = APIRouter(tags=["service"])
router = APIRouter(responses=ERROR_RESPONSES)


@health_router.get("/health", response_model=schemas.Health, tags=["service"])
def health(request: Request) -> dict[str, Any]:
    """Liveness: the only route that answers without a token (it says nothing about the data)."""
    from compliance import __version__

    return {"ok": True, "version": __version__, "jobs": request.app.state.services.mode}


@router.get("/openapi.json", tags=["service"], response_model=dict[str, Any])
def openapi_document(request: Request, caller: Caller = viewer) -> dict[str, Any]:
    """This API's OpenAPI 3 document."""
    return request.app.openapi()  # type: ignore[no-any-return]


@router.get("/me", response_model=schemas.Me, tags=["service"])
def me(caller: Caller = viewer) -> dict[str, Any]:
    """The calling token's name and role."""
    return caller.principal.to_dict()


# -- tokens ------------------------------------------------------------------------------------------------------
@router.get("/tokens", response_model=list[schemas.Token], tags=["tokens"])
def tokens_list(caller: Caller = admin) -> list[dict[str, Any]]:
    """Every API token (never a secret). Admin."""
    from compliance.app.tokens import list_tokens

    return list_tokens(caller.store)


@router.post("/tokens", response_model=schemas.NewToken, status_code=201, tags=["tokens"])
def tokens_create(body: schemas.TokenCreate, caller: Caller = admin) -> dict[str, Any]:
    """Create a token; the secret in the answer is its only copy. Admin."""
    from compliance.app.tokens import create_token

    return create_token(caller.store, body.name, body.role, by=caller.principal.name).to_dict()


@router.delete("/tokens/{token_id}", response_model=schemas.Token, tags=["tokens"])
def tokens_revoke(token_id: int = Path(ge=1, le=2**31 - 1), caller: Caller = admin) -> dict[str, Any]:
    """Revoke a token: requests with it are refused from now on. Admin (not the token making the request:
    revoke it with another admin token or `compliance tokens revoke`)."""
    from compliance.app.tokens import revoke_token
    from compliance.errors import ConflictError

    if token_id == caller.principal.token_id:
        raise ConflictError(
            "a token cannot revoke itself; use another admin token or `compliance tokens revoke`"
        )
    return revoke_token(caller.store, token_id, by=caller.principal.name)


# -- map and search ----------------------------------------------------------------------------------------------
@router.post("/map", response_model=schemas.MapResponse, tags=["classifier"])
async def map_texts(body: schemas.MapRequest, caller: Caller = viewer) -> dict[str, Any]:
    """Rank GDPR articles for a batch of texts: the contract of `compliance map` (one result per text, in
    order, `{"id", "articles": [{"article", "title", "score"}]}`)."""
    from compliance.app.classifier import map_texts as map_use_case

    def run() -> list[dict[str, Any]]:
        classifier = caller.services.classifier()
        rows = [(t.id if t.id is not None else n, t.text) for n, t in enumerate(body.texts, 1)]
        return list(map_use_case(classifier, rows, top_k=body.top_k))

    return {"results": await run_in_threadpool(run)}


@router.post("/search/laws", response_model=schemas.LawSearchResponse, tags=["search"])
def search_laws(body: schemas.LawSearchRequest, caller: Caller = viewer) -> dict[str, Any]:
    """Laws and provisions ranked for a control text (BM25, with the dense encoder when `dense`)."""
    from compliance.app.search import search_laws as search

    result = search(caller.store, text=body.text, k=body.k, in_law=body.law, dense=body.dense)
    return result.to_dict()


@router.get("/search/controls", response_model=list[schemas.ControlHit], tags=["search"])
def search_controls(
    law: str = Query(min_length=1, max_length=64, description="A stored law (short name or identifier)."),
    provision: str | None = Query(None, max_length=255, description="One provision key (art:32)."),
    k: int = Query(10, ge=1, le=100),
    dense: bool = Query(False, description="Add the dense encoder to BM25 (loads a model)."),
    caller: Caller = viewer,
) -> list[dict[str, Any]]:
    """Stored control paragraphs ranked for a law (all its articles) or one of its provisions."""
    from compliance.app.search import search_controls as search

    return [h.to_dict() for h in search(caller.store, law, provision=provision, k=k, dense=dense)]
