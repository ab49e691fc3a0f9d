"""Laws and provisions in the store (mixed into :class:`~compliance.store.Store`)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from compliance.errors import LawNotFoundError, NotFoundError, StoreError
from compliance.store.base import StoreBase, _chunks
from compliance.store.records import LawRecord, SavedLaw, StoredProvision, to_jsonable

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from compliance.rules.corpus import Law
    from compliance.store.orm import LawRow


class LawsMixin(StoreBase):
    """Laws and their provisions: one row per (identifier, checksum), provisions in document order."""

    # -- laws ------------------------------------------------------------------------------------------------
    def save_law(self, law: Law, *, actor: str | None = None) -> SavedLaw:
        """Store a law with its provisions.

        The same identifier and checksum as a stored version: nothing is written (``created=False``). Same
        identifier, new checksum: a new version (``max + 1``) is added and the old ones are kept. Idempotent
        under concurrency: two processes installing the same law at once store it once (the loser of the race
        is retried and finds the winner's row).

        Raises:
            StoreError: the short name already belongs to another law, or the law is malformed (empty
                identifier or checksum, duplicate provision keys, unknown parent keys).
        """
        if not law.identifier or not law.short_name:
            raise StoreError("a law needs an identifier and a short name to be stored")
        checksum = law.checksum or _law_content_checksum(law)
        keys = [p.key for p in law.provisions]
        if len(set(keys)) != len(keys):
            dupes = sorted({k for k in keys if keys.count(k) > 1})[:5]
            raise StoreError(f"{law.short_name}: duplicate provision keys {dupes}")
        known = set(keys)
        orphans = [p.key for p in law.provisions if p.parent_key is not None and p.parent_key not in known]
        if orphans:
            raise StoreError(f"{law.short_name}: provisions with unknown parents {orphans[:5]}")
        short_name = law.short_name.lower()
        return self._retry_on_conflict(lambda: self._save_law_once(law, checksum, short_name, actor))

    def _save_law_once(self, law: Law, checksum: str, short_name: str, actor: str | None) -> SavedLaw:
        from sqlalchemy import func, select, update

        from compliance.store.orm import LawRow, ProvisionRow

        with self.session() as s:
            existing = s.scalars(
                select(LawRow).where(LawRow.identifier == law.identifier, LawRow.checksum == checksum)
            ).first()
            if existing is not None:
                count = s.scalar(select(func.count()).where(ProvisionRow.law_id == existing.id)) or 0
                return SavedLaw(
                    existing.id, existing.identifier, existing.short_name, existing.version, False, count
                )
            other = s.scalars(
                select(LawRow.identifier).where(
                    LawRow.short_name == short_name, LawRow.identifier != law.identifier
                )
            ).first()
            if other is not None:
                raise StoreError(
                    f"the short name {short_name!r} already belongs to {other}; choose another name for "
                    f"{law.identifier}"
                )
            version = (
                s.scalar(select(func.max(LawRow.version)).where(LawRow.identifier == law.identifier)) or 0
            ) + 1
            row = LawRow(
                identifier=law.identifier,
                short_name=short_name,
                title=law.title,
                jurisdiction=law.jurisdiction,
                law_type=law.law_type,
                date_adopted=law.date_adopted,
                date_in_force=law.date_in_force,
                version_date=law.version_date,
                source=law.source,
                source_format=law.source_format,
                checksum=checksum,
                version=version,
                law_metadata=to_jsonable(dict(law.metadata)),
            )
            s.add(row)
            s.flush()
            prov_rows = [
                ProvisionRow(
                    law_id=row.id,
                    key=p.key,
                    kind=p.kind,
                    number=p.number,
                    title=p.title,
                    text=p.text,
                    position=i,
                    ordinal=p.ordinal,
                )
                for i, p in enumerate(law.provisions)
            ]
            s.add_all(prov_rows)
            s.flush()
            id_of = {r.key: r.id for r in prov_rows}
            parents = [
                {"id": id_of[p.key], "parent_id": id_of[p.parent_key]}
                for p in law.provisions
                if p.parent_key is not None
            ]
            if parents:
                s.execute(update(ProvisionRow), parents)
            self._log(
                s,
                "law.save",
                actor=actor,
                target_type="law",
                target_id=row.id,
                details={
                    "identifier": law.identifier,
                    "short_name": short_name,
                    "version": version,
                    "checksum": checksum,
                    "provisions": len(prov_rows),
                    "source": law.source,
                },
            )
            return SavedLaw(row.id, row.identifier, row.short_name, version, True, len(prov_rows))

    def _find_law(self, s: Session, name_or_identifier: str | int, version: int | None) -> LawRow:
        from sqlalchemy import or_, select

        from compliance.store.orm import LawRow

        if isinstance(name_or_identifier, int):
            row = s.get(LawRow, name_or_identifier)
            if row is None:
                raise LawNotFoundError(f"no stored law with id {name_or_identifier}")
            return row
        name = name_or_identifier.strip()
        stmt = select(LawRow).where(or_(LawRow.identifier == name, LawRow.short_name == name.lower()))
        if version is not None:
            stmt = stmt.where(LawRow.version == version)
        row = s.scalars(stmt.order_by(LawRow.version.desc(), LawRow.id.desc())).first()
        if row is None:
            which = f"{name!r}" + (f" version {version}" if version is not None else "")
            raise LawNotFoundError(f"no stored law {which}: install it with `compliance laws install {name}`")
        return row

    def get_law(self, name_or_identifier: str | int, version: int | None = None) -> Law:
        """The stored law as a :class:`~compliance.rules.corpus.Law` (latest version unless ``version``).

        ``name_or_identifier`` is a short name (``"gdpr"``), an identifier (``"32016R0679"``) or a law id.

        Raises:
            LawNotFoundError: nothing matches.
        """
        from compliance.rules.corpus import Law, Provision

        with self.session() as s:
            row = self._find_law(s, name_or_identifier, version)
            provisions = self._provisions(s, row.id)
            return Law(
                identifier=row.identifier,
                short_name=row.short_name,
                title=row.title,
                jurisdiction=row.jurisdiction,  # type: ignore[arg-type]
                law_type=row.law_type,
                provisions=tuple(
                    Provision(
                        kind=p.kind,  # type: ignore[arg-type]
                        key=p.key,
                        number=p.number,
                        text=p.text,
                        title=p.title,
                        parent_key=p.parent_key,
                        ordinal=p.ordinal,
                    )
                    for p in provisions
                ),
                date_adopted=row.date_adopted,
                date_in_force=row.date_in_force,
                version_date=row.version_date,
                source=row.source,
                source_format=row.source_format,
                checksum=row.checksum,
                metadata={str(k): str(v) for k, v in (row.law_metadata or {}).items()},
            )

    def law_record(self, name_or_identifier: str | int, version: int | None = None) -> LawRecord:
        """Metadata and provision counts of a stored law version (latest unless ``version``)."""
        with self.session() as s:
            row = self._find_law(s, name_or_identifier, version)
            return self._law_records(s, [row])[0]

    def list_laws(self, *, all_versions: bool = False) -> list[LawRecord]:
        """Stored laws by short name: the latest version of each, or every version."""
        from sqlalchemy import select

        from compliance.store.orm import LawRow

        with self.session() as s:
            rows = list(s.scalars(select(LawRow).order_by(LawRow.short_name, LawRow.version)))
            records = self._law_records(s, rows)
        return records if all_versions else [r for r in records if r.is_latest]

    def _law_records(self, s: Session, rows: Sequence[LawRow]) -> list[LawRecord]:
        from sqlalchemy import func, select

        from compliance.store.orm import LawRow, ProvisionRow

        if not rows:
            return []
        ids = [r.id for r in rows]
        counts: dict[int, dict[str, int]] = {i: {} for i in ids}
        for chunk in _chunks(ids):
            stmt = (
                select(ProvisionRow.law_id, ProvisionRow.kind, func.count())
                .where(ProvisionRow.law_id.in_(chunk))
                .group_by(ProvisionRow.law_id, ProvisionRow.kind)
            )
            for law_id, kind, n in s.execute(stmt):
                counts[law_id][kind] = n
        identifiers = sorted({r.identifier for r in rows})
        latest = dict(
            s.execute(
                select(LawRow.identifier, func.max(LawRow.version))
                .where(LawRow.identifier.in_(identifiers))
                .group_by(LawRow.identifier)
            ).all()
        )
        out = []
        for r in rows:
            c = dict(sorted(counts[r.id].items()))
            c["provisions"] = sum(counts[r.id].values())
            out.append(
                LawRecord(
                    id=r.id,
                    identifier=r.identifier,
                    short_name=r.short_name,
                    title=r.title,
                    jurisdiction=r.jurisdiction,
                    law_type=r.law_type,
                    version=r.version,
                    checksum=r.checksum,
                    source=r.source,
                    source_format=r.source_format,
                    date_adopted=r.date_adopted,
                    date_in_force=r.date_in_force,
                    version_date=r.version_date,
                    installed_at=r.installed_at,
                    metadata=dict(r.law_metadata or {}),
                    counts=c,
                    is_latest=latest.get(r.identifier) == r.version,
                )
            )
        return out

    def _provisions(
        self, s: Session, law_id: int, kinds: Iterable[str] | None = None, ids: Sequence[int] | None = None
    ) -> list[StoredProvision]:
        from sqlalchemy import select
        from sqlalchemy.orm import aliased

        from compliance.store.orm import ProvisionRow

        parent = aliased(ProvisionRow)
        stmt = select(ProvisionRow, parent.key).outerjoin(parent, ProvisionRow.parent_id == parent.id)
        if law_id >= 0:
            stmt = stmt.where(ProvisionRow.law_id == law_id)
        if kinds is not None:
            stmt = stmt.where(ProvisionRow.kind.in_(list(kinds)))
        if ids is not None:
            stmt = stmt.where(ProvisionRow.id.in_(list(ids)))
        stmt = stmt.order_by(ProvisionRow.law_id, ProvisionRow.position)
        return [
            StoredProvision(
                id=p.id,
                law_id=p.law_id,
                key=p.key,
                kind=p.kind,
                number=p.number,
                title=p.title,
                text=p.text,
                parent_key=parent_key,
                ordinal=p.ordinal,
                position=p.position,
            )
            for p, parent_key in s.execute(stmt)
        ]

    def list_provisions(self, law_id: int, kinds: Iterable[str] | None = None) -> list[StoredProvision]:
        """Provisions of a stored law version in document order, optionally only some kinds."""
        with self.session() as s:
            return self._provisions(s, law_id, kinds)

    def get_provisions(self, ids: Iterable[int]) -> list[StoredProvision]:
        """Provisions by id, in the order asked.

        Raises:
            NotFoundError: one of the ids does not exist.
        """
        wanted = list(ids)
        found: dict[int, StoredProvision] = {}
        with self.session() as s:
            for chunk in _chunks(sorted(set(wanted))):
                found.update((p.id, p) for p in self._provisions(s, -1, ids=chunk))
        missing = [i for i in wanted if i not in found]
        if missing:
            raise NotFoundError(f"no provisions with ids {missing[:10]}")
        return [found[i] for i in wanted]

    def provision_id_map(self, law_id: int) -> dict[str, int]:
        """``{provision key: provision id}`` for one stored law version."""
        from sqlalchemy import select

        from compliance.store.orm import ProvisionRow

        with self.session() as s:
            rows = s.execute(select(ProvisionRow.key, ProvisionRow.id).where(ProvisionRow.law_id == law_id))
            return {key: pid for key, pid in rows}


# -- row → record helpers ----------------------------------------------------------------------------------------
def _law_content_checksum(law: Law) -> str:
    """A checksum for laws built in code without source bytes: sha256 over the provisions."""
    h = hashlib.sha256()
    for p in law.provisions:
        h.update(f"{p.kind}\x1f{p.key}\x1f{p.number}\x1f{p.title}\x1f{p.parent_key}\x1f{p.text}\x1e".encode())
    return h.hexdigest()
