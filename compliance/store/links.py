"""Links and reviews in the store (mixed into :class:`~compliance.store.Store`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from compliance.errors import NotFoundError, StoreError
from compliance.store.base import StoreBase, latest_review_subquery
from compliance.store.records import LinkRecord, NewLink, ReviewRecord, to_jsonable

if TYPE_CHECKING:
    from compliance.store.orm import LinkRow


class LinksMixin(StoreBase):
    """Paragraph ↔ provision links and their reviews (append-only; current status derived)."""

    # -- links and reviews -----------------------------------------------------------------------------------
    def add_links(self, run_id: int, links: Iterable[NewLink], *, actor: str | None = None) -> int:
        """Store links proposed by a run; returns how many were stored. All or nothing.

        A link is stored once per (paragraph, provision, method, model version): a link already stored (by this
        run, by an earlier run, or by a concurrent one at the same moment) is skipped, on SQLite and PostgreSQL
        alike (``INSERT … ON CONFLICT DO NOTHING`` on the unique constraint), so the count can be lower than the
        number of links given.

        Raises:
            NotFoundError: the run does not exist.
            StoreError: an invalid status, or a paragraph/provision id that does not exist.
        """
        from compliance.store.orm import LINK_STATUSES, RunRow, utcnow

        now = utcnow()
        rows = []
        for link in links:
            if link.status not in LINK_STATUSES:
                raise StoreError(f"invalid link status {link.status!r}; expected one of {LINK_STATUSES}")
            rows.append(
                {
                    "run_id": run_id,
                    "paragraph_id": int(link.paragraph_id),
                    "provision_id": int(link.provision_id),
                    "method": link.method,
                    "model_version": link.resolved_model_version()[:255],
                    "score": float(link.score),
                    "rank": None if link.rank is None else int(link.rank),
                    "evidence": to_jsonable(dict(link.evidence)),
                    "status": link.status,
                    "created_at": now,
                }
            )
        with self.session() as s:
            if s.get(RunRow, run_id) is None:
                raise NotFoundError(f"no run {run_id}")
            stored = 0
            if rows:
                self._check_ids(s, "paragraph", {r["paragraph_id"] for r in rows})
                self._check_ids(s, "provision", {r["provision_id"] for r in rows})
                stored = self._insert_new_links(s, rows)
            self._log(
                s,
                "links.add",
                actor=actor,
                target_type="run",
                target_id=run_id,
                details={"count": stored, "skipped": len(rows) - stored},
            )
        return stored

    def _insert_new_links(self, s: Any, rows: list[dict[str, Any]]) -> int:
        """Insert link rows, skipping those that the unique constraint says are stored already."""
        from sqlalchemy import insert

        from compliance.store.orm import LinkRow

        unique = ["paragraph_id", "provision_id", "method", "model_version"]
        dialect = self.dialect
        if dialect in ("sqlite", "postgresql"):
            from sqlalchemy.dialects import postgresql, sqlite

            dialect_insert: Any = sqlite.insert if dialect == "sqlite" else postgresql.insert
            stmt = dialect_insert(LinkRow).on_conflict_do_nothing(index_elements=unique).returning(LinkRow.id)
            stored = 0
            for start in range(0, len(rows), 500):
                stored += len(s.execute(stmt, rows[start : start + 500]).all())
            return stored
        # other databases: skip what exists, then insert (the constraint still refuses a concurrent duplicate)
        from sqlalchemy import select, tuple_

        keys = {tuple(r[c] for c in unique) for r in rows}
        existing = set(
            s.execute(
                select(*(getattr(LinkRow, c) for c in unique)).where(
                    tuple_(*(getattr(LinkRow, c) for c in unique)).in_(list(keys))
                )
            ).all()
        )
        fresh: dict[tuple[Any, ...], dict[str, Any]] = {}
        for r in rows:
            key = tuple(r[c] for c in unique)
            if key not in existing:
                fresh.setdefault(key, r)
        if fresh:
            s.execute(insert(LinkRow), list(fresh.values()))
        return len(fresh)

    def _links_query(self) -> Any:
        from sqlalchemy import func, select

        from compliance.store.orm import LawRow, LinkRow, ProvisionRow, ReviewRow

        latest_sq = latest_review_subquery()
        current = func.coalesce(ReviewRow.decision, LinkRow.status).label("current_status")
        stmt = (
            select(LinkRow, ProvisionRow.key, ProvisionRow.law_id, LawRow.short_name, current)
            .join(ProvisionRow, LinkRow.provision_id == ProvisionRow.id)
            .join(LawRow, ProvisionRow.law_id == LawRow.id)
            .outerjoin(latest_sq, latest_sq.c.link_id == LinkRow.id)
            .outerjoin(ReviewRow, ReviewRow.id == latest_sq.c.review_id)
        )
        return stmt, current

    def list_links(
        self,
        *,
        run_id: int | None = None,
        paragraph_id: int | None = None,
        provision_id: int | None = None,
        law: str | int | None = None,
        document_id: int | None = None,
        status: str | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[LinkRecord]:
        """Links (oldest first) with their current status, filtered by any combination of the arguments.

        ``law`` is a short name, identifier or law id (every stored version of it); ``status`` filters on the
        current (derived) status.
        """
        from sqlalchemy import or_, select

        from compliance.store.orm import DocumentVersion, LawRow, LinkRow, ParagraphRow, ProvisionRow

        stmt, current = self._links_query()
        if run_id is not None:
            stmt = stmt.where(LinkRow.run_id == run_id)
        if paragraph_id is not None:
            stmt = stmt.where(LinkRow.paragraph_id == paragraph_id)
        if provision_id is not None:
            stmt = stmt.where(LinkRow.provision_id == provision_id)
        if law is not None:
            if isinstance(law, int):
                stmt = stmt.where(ProvisionRow.law_id == law)
            else:
                stmt = stmt.where(or_(LawRow.short_name == law.lower(), LawRow.identifier == law))
        if document_id is not None:
            para_ids = (
                select(ParagraphRow.id)
                .join(DocumentVersion, ParagraphRow.version_id == DocumentVersion.id)
                .where(DocumentVersion.document_id == document_id)
            )
            stmt = stmt.where(LinkRow.paragraph_id.in_(para_ids))
        if status is not None:
            stmt = stmt.where(current == status)
        stmt = stmt.order_by(LinkRow.id)
        if offset:
            stmt = stmt.offset(offset)
        if limit is not None:
            stmt = stmt.limit(limit)
        with self.session() as s:
            return [_link_record(*row) for row in s.execute(stmt)]

    def get_link(self, link_id: int) -> LinkRecord:
        """A link with its current status. Raises :class:`~compliance.errors.NotFoundError`."""
        from compliance.store.orm import LinkRow

        stmt, _ = self._links_query()
        with self.session() as s:
            row = s.execute(stmt.where(LinkRow.id == link_id)).first()
            if row is None:
                raise NotFoundError(f"no link {link_id}")
            return _link_record(*row)

    def existing_link_ids(self, link_ids: Iterable[int]) -> set[int]:
        """Which of ``link_ids`` are stored links (of any run or document version): ids only, in chunks."""
        with self.session() as s:
            return self._existing_ids(s, "link", link_ids)

    def export_links(self, run_id: int | None = None) -> list[dict[str, Any]]:
        """Flat rows for reports (CSV/JSON), one per link of ``run_id`` (every run when ``None``).

        Columns: link_id, run_id, run_kind, model, document_id, document_source, document_version, paragraph_id,
        paragraph_ordinal, paragraph_page, heading_path, paragraph_text, law_short_name, law_identifier,
        law_version, provision_id, provision_key, provision_kind, provision_number, provision_title, method,
        score, rank, proposed_status, status, reviewer, review_comment, reviewed_at, evidence, created_at.
        """
        from sqlalchemy import select

        from compliance.store.orm import (
            Document,
            DocumentVersion,
            LawRow,
            LinkRow,
            ParagraphRow,
            ProvisionRow,
            ReviewRow,
            RunRow,
        )

        latest = latest_review_subquery()
        stmt = (
            select(
                LinkRow,
                RunRow,
                ParagraphRow,
                DocumentVersion.version,
                Document,
                ProvisionRow,
                LawRow,
                ReviewRow,
            )
            .join(RunRow, LinkRow.run_id == RunRow.id)
            .join(ParagraphRow, LinkRow.paragraph_id == ParagraphRow.id)
            .join(DocumentVersion, ParagraphRow.version_id == DocumentVersion.id)
            .join(Document, DocumentVersion.document_id == Document.id)
            .join(ProvisionRow, LinkRow.provision_id == ProvisionRow.id)
            .join(LawRow, ProvisionRow.law_id == LawRow.id)
            .outerjoin(latest, latest.c.link_id == LinkRow.id)
            .outerjoin(ReviewRow, ReviewRow.id == latest.c.review_id)
            .order_by(LinkRow.run_id, Document.id, ParagraphRow.ordinal, LinkRow.rank, LinkRow.id)
        )
        if run_id is not None:
            stmt = stmt.where(LinkRow.run_id == run_id)
        out: list[dict[str, Any]] = []
        with self.session() as s:
            for link, run, para, doc_version, doc, prov, law, review in s.execute(stmt):
                out.append(
                    {
                        "link_id": link.id,
                        "run_id": run.id,
                        "run_kind": run.kind,
                        "model": run.model,
                        "document_id": doc.id,
                        "document_source": doc.source,
                        "document_version": doc_version,
                        "paragraph_id": para.id,
                        "paragraph_ordinal": para.ordinal,
                        "paragraph_page": para.page,
                        "heading_path": list(para.heading_path or []),
                        "paragraph_text": para.text,
                        "law_short_name": law.short_name,
                        "law_identifier": law.identifier,
                        "law_version": law.version,
                        "provision_id": prov.id,
                        "provision_key": prov.key,
                        "provision_kind": prov.kind,
                        "provision_number": prov.number,
                        "provision_title": prov.title,
                        "method": link.method,
                        "score": link.score,
                        "rank": link.rank,
                        "proposed_status": link.status,
                        "status": review.decision if review is not None else link.status,
                        "reviewer": review.reviewer if review is not None else None,
                        "review_comment": review.comment if review is not None else None,
                        "reviewed_at": review.decided_at.isoformat() if review is not None else None,
                        "evidence": dict(link.evidence or {}),
                        "created_at": link.created_at.isoformat(),
                    }
                )
        return out

    def add_review(
        self,
        link_id: int,
        decision: str,
        reviewer: str,
        comment: str | None = None,
        *,
        source: str = "cli",
    ) -> ReviewRecord:
        """Record a reviewer's decision on a link (a new row; earlier decisions are kept). The review records the
        run and model whose suggestion it decides (see :meth:`add_reviews` for several at once).

        Args:
            decision: ``accepted``, ``rejected``, ``needs-review`` or ``proposed`` (reopen).
            source: how the decision came in (``cli``, ``api``, ``import`` …).

        Raises:
            NotFoundError: no such link.
            StoreError: invalid decision or empty reviewer.
        """
        from compliance.store.link_history import NewReview

        return self.add_reviews([NewReview(link_id, decision, reviewer, comment, source)])[0]  # type: ignore[attr-defined,no-any-return]

    def list_reviews(self, link_id: int) -> list[ReviewRecord]:
        """Every decision on a link, oldest first."""
        from sqlalchemy import select

        from compliance.store.orm import ReviewRow

        with self.session() as s:
            rows = s.scalars(select(ReviewRow).where(ReviewRow.link_id == link_id).order_by(ReviewRow.id))
            return [ReviewRecord.of(r) for r in rows]


def _link_record(
    link: LinkRow, provision_key: str, law_id: int, law_short_name: str, current_status: str
) -> LinkRecord:
    return LinkRecord(
        id=link.id,
        run_id=link.run_id,
        paragraph_id=link.paragraph_id,
        provision_id=link.provision_id,
        law_id=law_id,
        law_short_name=law_short_name,
        provision_key=provision_key,
        method=link.method,
        score=link.score,
        rank=link.rank,
        evidence=dict(link.evidence or {}),
        proposed_status=link.status,
        status=current_status,
        created_at=link.created_at,
        model_version=link.model_version,
    )
