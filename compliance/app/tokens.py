"""API token use cases: create (the secret is shown once), list, revoke, and authenticate a request's token.

A token is ``cpl_`` followed by 43 URL-safe characters (256 random bits); the store keeps only its SHA-256 (a
slow password hash adds nothing for secrets of that strength) and its first characters, to tell tokens apart in a
list. Roles are ordered: ``viewer`` reads; ``reviewer`` also reviews links, handles alerts and submits audits;
``admin`` also installs laws, manages tokens and trains models.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from compliance.errors import AuthenticationError, ConfigurationError, PermissionDeniedError

if TYPE_CHECKING:  # pragma: no cover
    from compliance.store import Store, TokenRecord

__all__ = [
    "ROLES",
    "NewToken",
    "Principal",
    "Role",
    "authenticate",
    "create_token",
    "csrf_token",
    "hash_token",
    "list_tokens",
    "require_role",
    "revoke_token",
]

Role = Literal["viewer", "reviewer", "admin"]
#: the roles, weakest first: each may do what the ones before it may
ROLES: tuple[Role, ...] = ("viewer", "reviewer", "admin")
PREFIX = "cpl_"


def hash_token(secret: str) -> str:
    """The stored form of a token's secret (SHA-256, hex)."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def csrf_token(secret: str) -> str:
    """The anti-forgery value a web form signed in with ``secret`` must send back (derived, not stored)."""
    return hmac.new(secret.encode("utf-8"), b"compliance-csrf", hashlib.sha256).hexdigest()


@dataclass(frozen=True, slots=True)
class NewToken:
    """A token just created: its record and the secret, which is shown this once and never stored."""

    record: TokenRecord
    secret: str

    def to_dict(self) -> dict[str, Any]:
        return {**token_to_dict(self.record), "token": self.secret}


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: the token's name (written to the audit log) and role."""

    name: str
    role: Role
    token_id: int | None = None

    def allows(self, role: Role) -> bool:
        """True when this principal's role is ``role`` or stronger."""
        return ROLES.index(self.role) >= ROLES.index(role)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "role": self.role, "token_id": self.token_id}


def token_to_dict(record: TokenRecord) -> dict[str, Any]:
    """A token for listings: id, name, role, prefix, who created it, times, active."""
    return {**record.to_dict(), "active": record.active}


def _role(role: str) -> Role:
    if role not in ROLES:
        raise ConfigurationError(f"unknown role {role!r}; use one of {', '.join(ROLES)}")
    return role  # type: ignore[return-value]


def create_token(store: Store, name: str, role: str, *, by: str | None = None) -> NewToken:
    """Create a token with a role; the returned secret is the only copy.

    Raises:
        ConfigurationError: an unknown role.
        ConflictError: the name is taken.
    """
    secret = PREFIX + secrets.token_urlsafe(32)
    record = store.create_token(name, _role(role), hash_token(secret), secret[:10], actor=by)
    return NewToken(record, secret)


def list_tokens(store: Store) -> list[dict[str, Any]]:
    """Every token (never a secret), oldest first."""
    return [token_to_dict(r) for r in store.list_tokens()]


def revoke_token(store: Store, token: int | str, *, by: str | None = None) -> dict[str, Any]:
    """Revoke a token by id or name; requests with it are refused from now on.

    Raises:
        NotFoundError: no such token.
    """
    return token_to_dict(store.revoke_token(token, actor=by))


def authenticate(store: Store, secret: str | None) -> Principal:
    """The principal a request's token stands for.

    Raises:
        AuthenticationError: no token, an unknown one or a revoked one (the message does not say which).
    """
    if not secret:
        raise AuthenticationError("this request needs an API token: send 'Authorization: Bearer <token>'")
    record = store.token_by_hash(hash_token(secret.strip()))
    if record is None or not record.active:
        raise AuthenticationError("the API token is unknown or revoked")
    store.touch_token(record.id)
    return Principal(record.name, _role(record.role), record.id)


def require_role(principal: Principal, role: Role) -> None:
    """Raise unless ``principal`` may act as ``role``.

    Raises:
        PermissionDeniedError: the principal's role is weaker.
    """
    if not principal.allows(role):
        raise PermissionDeniedError(
            f"token {principal.name!r} has the role {principal.role!r}; this needs {role!r} or above"
        )
