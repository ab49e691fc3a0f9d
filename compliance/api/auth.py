"""Who is calling: the bearer token of an API request, checked against the stored (hashed) tokens, and the role
each route needs.

Every route but ``/health`` depends on :func:`requires`; ``tests/test_api_auth.py`` walks the OpenAPI route list
to prove it. The request's store writes the token's name into the audit log.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fastapi import Depends, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from compliance.app.tokens import Principal, Role, authenticate, require_role

if TYPE_CHECKING:  # pragma: no cover
    from compliance.store import Store

__all__ = ["Caller", "bearer", "requires"]

bearer = HTTPBearer(auto_error=False, description="An API token: `compliance tokens create --role …`.")


@dataclass(frozen=True)
class Caller:
    """The authenticated principal and a store that writes its name into the audit log."""

    principal: Principal
    store: Store
    services: Any  # compliance.api.app.Services


_credentials = Security(bearer)


def requires(role: Role) -> Callable[..., Caller]:
    """A dependency that authenticates the request and checks that its token's role is ``role`` or above."""

    def dependency(
        request: Request, credentials: HTTPAuthorizationCredentials | None = _credentials
    ) -> Caller:
        services = request.app.state.services
        principal = authenticate(services.store, credentials.credentials if credentials else None)
        require_role(principal, role)
        return Caller(principal, services.store.as_actor(principal.name), services)

    dependency.__name__ = f"requires_{role}"
    return dependency


viewer = Depends(requires("viewer"))
reviewer = Depends(requires("reviewer"))
admin = Depends(requires("admin"))
