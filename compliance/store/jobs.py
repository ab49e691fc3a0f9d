"""Jobs and their items in the store (mixed into :class:`~compliance.store.Store`).

A job is a batch (an audit of many documents); each item is one task. A worker *claims* an item before working
on it: one conditional ``UPDATE`` that succeeds only when the item is queued, or running under a lease that has
expired (its worker died). The claim is a random secret; renewing the lease and finishing the item require it,
so a worker whose lease was taken over cannot finish the item a second time. Everything here is portable SQL
(no ``SELECT … FOR UPDATE SKIP LOCKED``), for SQLite and PostgreSQL alike.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any, cast

from compliance.errors import NotFoundError, StoreError
from compliance.store.base import StoreBase
from compliance.store.records import JobClaim, JobItemRecord, JobRecord, NewJobItem, to_jsonable

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from compliance.store.orm import JobItemRow, JobRow


class JobsMixin(StoreBase):
    """Jobs, their items, leases and progress."""

    def create_job(
        self,
        kind: str,
        params: Mapping[str, Any],
        items: Iterable[NewJobItem],
        *,
        actor: str | None = None,
    ) -> JobRecord:
        """Store a job with its items (all ``queued``); returns it with its counts. All or nothing."""
        from compliance.store.orm import JobItemRow, JobRow

        given = list(items)
        if not kind:
            raise StoreError("a job needs a kind")
        with self.session() as s:
            job = JobRow(
                kind=kind,
                status="queued",
                params=to_jsonable(dict(params)),
                created_by=actor or self.actor,
            )
            s.add(job)
            s.flush()
            s.add_all(
                JobItemRow(
                    job_id=job.id,
                    position=n,
                    source=item.source,
                    media_type=item.media_type or "",
                    size_bytes=len(item.content),
                    sha256=hashlib.sha256(item.content).hexdigest(),
                    content=item.content,
                    status="queued",
                    attempts=0,
                    result={},
                )
                for n, item in enumerate(given)
            )
            s.flush()
            self._log(
                s,
                "job.create",
                actor=actor,
                target_type="job",
                target_id=job.id,
                details={"kind": kind, "items": len(given)},
            )
            return self._job_record(s, job)

    def _job_record(self, s: Session, job: JobRow) -> JobRecord:
        from sqlalchemy import func, select

        from compliance.store.orm import JOB_ITEM_STATUSES, JobItemRow

        counts = dict.fromkeys(JOB_ITEM_STATUSES, 0)
        stmt = (
            select(JobItemRow.status, func.count())
            .where(JobItemRow.job_id == job.id)
            .group_by(JobItemRow.status)
        )
        for status, n in s.execute(stmt):
            counts[status] = int(n)
        counts["total"] = sum(counts.values())
        return JobRecord(
            id=job.id,
            kind=job.kind,
            status=job.status,
            params=dict(job.params or {}),
            created_by=job.created_by,
            created_at=job.created_at,
            finished_at=job.finished_at,
            notification=dict(job.notification) if job.notification is not None else None,
            counts=counts,
        )

    def get_job(self, job_id: int) -> JobRecord:
        """A job with its item counts. Raises :class:`~compliance.errors.NotFoundError`."""
        from compliance.store.orm import JobRow

        with self.session() as s:
            job = s.get(JobRow, job_id)
            if job is None:
                raise NotFoundError(f"no job {job_id}")
            return self._job_record(s, job)

    def list_jobs(self, *, kind: str | None = None, limit: int | None = None) -> list[JobRecord]:
        """Jobs, newest first."""
        from sqlalchemy import select

        from compliance.store.orm import JobRow

        stmt = select(JobRow).order_by(JobRow.id.desc())
        if kind is not None:
            stmt = stmt.where(JobRow.kind == kind)
        if limit is not None:
            stmt = stmt.limit(limit)
        with self.session() as s:
            return [self._job_record(s, job) for job in s.scalars(stmt)]

    def list_job_items(self, job_id: int) -> list[JobItemRecord]:
        """A job's items in submission order (without their bytes)."""
        from sqlalchemy import select
        from sqlalchemy.orm import defer

        from compliance.store.orm import JobItemRow, JobRow

        with self.session() as s:
            if s.get(JobRow, job_id) is None:
                raise NotFoundError(f"no job {job_id}")
            stmt = (
                select(JobItemRow)
                .options(defer(JobItemRow.content))
                .where(JobItemRow.job_id == job_id)
                .order_by(JobItemRow.position)
            )
            return [_item_record(r) for r in s.scalars(stmt)]

    def claim_job_item(self, item_id: int, worker: str, lease_s: float) -> JobClaim:
        """Take an item to work on under a lease of ``lease_s`` seconds.

        Returns:
            ``claimed`` (with the claim secret and the item's bytes) when the item was queued or its previous
            worker's lease expired; ``finished`` when it is done or failed; ``busy`` when another worker holds a
            live lease.

        Raises:
            NotFoundError: no such item.
        """
        from sqlalchemy import and_, or_, update

        from compliance.store.orm import JobItemRow, JobRow, utcnow

        now = utcnow()
        claim = secrets.token_hex(16)
        # write first, read after: on SQLite a transaction that reads before it writes cannot wait for the lock
        with self.session() as s:
            taken = _updated(
                s,
                update(JobItemRow)
                .where(
                    JobItemRow.id == item_id,
                    or_(
                        JobItemRow.status == "queued",
                        and_(JobItemRow.status == "running", JobItemRow.lease_until < now),
                    ),
                )
                .values(
                    status="running",
                    claim=claim,
                    worker=worker,
                    lease_until=now + timedelta(seconds=lease_s),
                    attempts=JobItemRow.attempts + 1,
                    started_at=now,
                )
                .execution_options(synchronize_session=False),
            )
            item = s.get(JobItemRow, item_id)
            if item is None:
                raise NotFoundError(f"no job item {item_id}")
            if taken != 1:
                outcome = "finished" if item.status in ("done", "failed") else "busy"
                return JobClaim(outcome, _item_record(item))
            s.execute(
                update(JobRow)
                .where(JobRow.id == item.job_id, JobRow.status == "queued")
                .values(status="running")
                .execution_options(synchronize_session=False)
            )
            self._log(
                s,
                "job.claim",
                actor=worker,
                target_type="job_item",
                target_id=item_id,
                details={"job": item.job_id, "attempt": item.attempts},
            )
            return JobClaim("claimed", _item_record(item), claim, item.content)

    def renew_job_item(self, item_id: int, claim: str, lease_s: float) -> bool:
        """Extend a lease held with ``claim``; False when the claim is no longer the item's (taken over)."""
        from sqlalchemy import update

        from compliance.store.orm import JobItemRow, utcnow

        with self.session() as s:
            renewed = _updated(
                s,
                update(JobItemRow)
                .where(JobItemRow.id == item_id, JobItemRow.claim == claim, JobItemRow.status == "running")
                .values(lease_until=utcnow() + timedelta(seconds=lease_s))
                .execution_options(synchronize_session=False),
            )
        return bool(renewed == 1)

    def finish_job_item(
        self,
        item_id: int,
        claim: str,
        status: str,
        result: Mapping[str, Any] | None = None,
        error: str | None = None,
        *,
        actor: str | None = None,
    ) -> bool:
        """Mark an item ``done`` or ``failed`` with its result, if ``claim`` still holds it; its bytes are
        dropped (the document is stored). False when the claim was taken over (nothing is written)."""
        from sqlalchemy import update

        from compliance.store.orm import JobItemRow, utcnow

        if status not in ("done", "failed"):
            raise StoreError(f"a job item finishes as 'done' or 'failed', not {status!r}")
        with self.session() as s:
            finished = _updated(
                s,
                update(JobItemRow)
                .where(JobItemRow.id == item_id, JobItemRow.claim == claim, JobItemRow.status == "running")
                .values(
                    status=status,
                    finished_at=utcnow(),
                    lease_until=None,
                    result=to_jsonable(dict(result or {})),
                    error=error,
                    content=None,
                )
                .execution_options(synchronize_session=False),
            )
            if finished == 1:
                self._log(
                    s,
                    "job.item-finish",
                    actor=actor,
                    target_type="job_item",
                    target_id=item_id,
                    details={"status": status, "error": error},
                )
        return bool(finished == 1)

    def release_job_item(self, item_id: int, claim: str) -> bool:
        """Give an item back to the queue (its attempt failed unexpectedly and will be retried); False when the
        claim no longer holds it."""
        from sqlalchemy import update

        from compliance.store.orm import JobItemRow

        with self.session() as s:
            released = _updated(
                s,
                update(JobItemRow)
                .where(JobItemRow.id == item_id, JobItemRow.claim == claim, JobItemRow.status == "running")
                .values(status="queued", claim=None, lease_until=None)
                .execution_options(synchronize_session=False),
            )
        return bool(released == 1)

    def finish_job_if_done(self, job_id: int, *, actor: str | None = None) -> JobRecord | None:
        """Close a job whose items are all done or failed: ``succeeded`` (none failed), ``partial`` or
        ``failed`` (all failed). Returns the job when *this* call closed it (exactly one caller does, so
        exactly one notification is sent), else None."""
        from sqlalchemy import func, select, update

        from compliance.store.orm import JobItemRow, JobRow, utcnow

        with self.session() as s:  # write first (see claim_job_item): close it if nothing is left to run
            unfinished = (
                select(JobItemRow.id)
                .where(JobItemRow.job_id == job_id, JobItemRow.status.in_(("queued", "running")))
                .exists()
            )
            closed = _updated(
                s,
                update(JobRow)
                .where(JobRow.id == job_id, JobRow.finished_at.is_(None), ~unfinished)
                .values(finished_at=utcnow())
                .execution_options(synchronize_session=False),
            )
            if closed != 1:
                return None
            rows = s.execute(
                select(JobItemRow.status, func.count())
                .where(JobItemRow.job_id == job_id)
                .group_by(JobItemRow.status)
            ).all()
            counts = {status: int(n) for status, n in rows}
            failed, done = counts.get("failed", 0), counts.get("done", 0)
            status = "failed" if failed and not done else ("partial" if failed else "succeeded")
            s.execute(
                update(JobRow)
                .where(JobRow.id == job_id)
                .values(status=status)
                .execution_options(synchronize_session=False)
            )
            self._log(
                s,
                "job.finish",
                actor=actor,
                target_type="job",
                target_id=job_id,
                details={"status": status, "done": done, "failed": failed},
            )
            job = s.get(JobRow, job_id)
            assert job is not None
            s.refresh(job)
            return self._job_record(s, job)

    def set_job_notification(self, job_id: int, notification: Mapping[str, Any]) -> None:
        """Record how the job's completion was notified (webhook delivered, failed, not configured)."""
        from sqlalchemy import update

        from compliance.store.orm import JobRow

        with self.session() as s:
            s.execute(
                update(JobRow)
                .where(JobRow.id == job_id)
                .values(notification=to_jsonable(dict(notification)))
                .execution_options(synchronize_session=False)
            )

    def requeue_stale_job_items(self, *, actor: str | None = None) -> list[tuple[int, int]]:
        """Put back in the queue the running items whose lease expired (their worker died or hung); returns
        ``(job_id, item_id)`` pairs to dispatch again. The claim changes nothing until an item is claimed anew:
        a late original worker can no longer finish it."""
        from sqlalchemy import select, update

        from compliance.store.orm import JobItemRow, utcnow

        now = utcnow()
        mark = "requeue-" + secrets.token_hex(8)
        with self.session() as s:  # write first (see claim_job_item), marking the rows it moved
            _updated(
                s,
                update(JobItemRow)
                .where(JobItemRow.status == "running", JobItemRow.lease_until < now)
                .values(status="queued", claim=mark, lease_until=None)
                .execution_options(synchronize_session=False),
            )
            moved = s.execute(select(JobItemRow.job_id, JobItemRow.id).where(JobItemRow.claim == mark)).all()
            out = [(int(job_id), int(item_id)) for job_id, item_id in moved]
            s.execute(
                update(JobItemRow)
                .where(JobItemRow.claim == mark)
                .values(claim=None)
                .execution_options(synchronize_session=False)
            )
            if out:
                self._log(
                    s,
                    "job.requeue",
                    actor=actor,
                    target_type="job_item",
                    details={"items": [i for _, i in out]},
                )
        return out

    def unfinished_job_items(self) -> list[tuple[int, int]]:
        """``(job_id, item_id)`` of every queued item (to dispatch again after a restart), oldest first."""
        from sqlalchemy import select

        from compliance.store.orm import JobItemRow

        with self.session() as s:
            rows = s.execute(
                select(JobItemRow.job_id, JobItemRow.id)
                .where(JobItemRow.status == "queued")
                .order_by(JobItemRow.id)
            ).all()
        return [(int(j), int(i)) for j, i in rows]


def _updated(session: Session, statement: Any) -> int:
    """Run an ``UPDATE``; the number of rows it matched."""
    from sqlalchemy.engine import CursorResult

    return int(cast("CursorResult[Any]", session.execute(statement)).rowcount)


def _item_record(r: JobItemRow) -> JobItemRecord:
    return JobItemRecord(
        id=r.id,
        job_id=r.job_id,
        position=r.position,
        source=r.source,
        media_type=r.media_type,
        size_bytes=r.size_bytes,
        sha256=r.sha256,
        status=r.status,
        attempts=r.attempts,
        worker=r.worker,
        lease_until=r.lease_until,
        started_at=r.started_at,
        finished_at=r.finished_at,
        result=dict(r.result or {}),
        error=r.error,
    )
