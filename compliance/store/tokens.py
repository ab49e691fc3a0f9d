"""API tokens in the store (mixed into :class:`~compliance.store.Store`).

The store keeps only the SHA-256 of a token's secret and its first characters (to recognise it in a list);
making and checking secrets is the application layer's job (:mod:`compliance.app.tokens`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from compliance.errors import ConflictError, NotFoundError, StoreError
from compliance.store.base import StoreBase
from compliance.store.records import TokenRecord

if TYPE_CHECKING:
    from compliance.store.orm import ApiTokenRow


class TokensMixin(StoreBase):
    """Hashed API tokens with a role; revoked tokens are kept (the audit log refers to their names)."""

    def create_token(
        self, name: str, role: str, token_hash: str, prefix: str, *, actor: str | None = None
    ) -> TokenRecord:
        """Store a new token.

        Raises:
            StoreError: an unknown role or an empty name.
            ConflictError: a token of that name exists (revoked ones included: names stay unique).
        """
        from sqlalchemy import select

        from compliance.store.orm import TOKEN_ROLES, ApiTokenRow

        name = name.strip()
        if not name:
            raise StoreError("a token needs a name")
        if role not in TOKEN_ROLES:
            raise StoreError(f"invalid role {role!r}; expected one of {TOKEN_ROLES}")
        with self.session() as s:
            if s.scalars(select(ApiTokenRow.id).where(ApiTokenRow.name == name)).first() is not None:
                raise ConflictError(f"a token named {name!r} already exists; choose another name")
            row = ApiTokenRow(
                name=name, role=role, token_hash=token_hash, prefix=prefix, created_by=actor or self.actor
            )
            s.add(row)
            s.flush()
            self._log(
                s,
                "token.create",
                actor=actor,
                target_type="token",
                target_id=row.id,
                details={"name": name, "role": role},
            )
            return _token_record(row)

    def token_by_hash(self, token_hash: str) -> TokenRecord | None:
        """The token whose secret hashes to ``token_hash`` (revoked or not), or None."""
        from sqlalchemy import select

        from compliance.store.orm import ApiTokenRow

        with self.session() as s:
            row = s.scalars(select(ApiTokenRow).where(ApiTokenRow.token_hash == token_hash)).first()
            return None if row is None else _token_record(row)

    def touch_token(self, token_id: int) -> None:
        """Record that a token was just used (not an audited mutation)."""
        from sqlalchemy import update

        from compliance.store.orm import ApiTokenRow, utcnow

        with self.session() as s:
            s.execute(update(ApiTokenRow).where(ApiTokenRow.id == token_id).values(last_used_at=utcnow()))

    def list_tokens(self) -> list[TokenRecord]:
        """Every token, oldest first."""
        from sqlalchemy import select

        from compliance.store.orm import ApiTokenRow

        with self.session() as s:
            return [_token_record(r) for r in s.scalars(select(ApiTokenRow).order_by(ApiTokenRow.id))]

    def revoke_token(self, token: int | str, *, actor: str | None = None) -> TokenRecord:
        """Revoke a token by id or name (revoking twice keeps the first time).

        Raises:
            NotFoundError: no such token.
        """
        from sqlalchemy import select

        from compliance.store.orm import ApiTokenRow, utcnow

        with self.session() as s:
            row: ApiTokenRow | None = None
            if isinstance(token, int) or token.isdigit():
                row = s.get(ApiTokenRow, int(token))
            if row is None and isinstance(token, str):
                row = s.scalars(select(ApiTokenRow).where(ApiTokenRow.name == token)).first()
            if row is None:
                raise NotFoundError(f"no token {token!r} (see `compliance tokens list`)")
            if row.revoked_at is None:
                row.revoked_at = utcnow()
                s.flush()
                self._log(
                    s,
                    "token.revoke",
                    actor=actor,
                    target_type="token",
                    target_id=row.id,
                    details={"name": row.name},
                )
            return _token_record(row)


def _token_record(r: ApiTokenRow) -> TokenRecord:
    return TokenRecord(
        id=r.id,
        name=r.name,
        role=r.role,
        prefix=r.prefix,
        created_by=r.created_by,
        created_at=r.created_at,
        revoked_at=r.revoked_at,
        last_used_at=r.last_used_at,
    )
