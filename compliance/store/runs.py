"""Run records in the store (mixed into :class:`~compliance.store.Store`).

Runs are numbered per kind (the first audit is "audit 1", whatever ran before it); the number is what people see
and what commands accept (``audit:1``), while ``id`` stays unique over all runs. Each run records the process that
runs it (``host:pid:start-token``), so that :meth:`RunsMixin.reap_runs` can mark failed the runs whose process is
gone (killed, crashed, or the machine restarted) instead of leaving them ``running`` forever.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from compliance.errors import NotFoundError, StoreError
from compliance.store.base import StoreBase
from compliance.store.records import ActiveRun, RunRecord, to_jsonable

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from compliance.store.orm import RunRow

logger = logging.getLogger(__name__)


class RunsMixin(StoreBase):
    """Run records: kind, config, model identity, timing, status, stats."""

    # -- runs ------------------------------------------------------------------------------------------------
    def start_run(self, kind: str, config: Any = None, model: Any = None, *, actor: str | None = None) -> int:
        """Record the start of a run and return its id.

        Args:
            kind: what runs: ``ingest``, ``law-install``, ``audit``, ``map``, ``alert``, ``train`` …
            config: the run's typed config (dataclass, pydantic model or mapping), stored as JSON.
            model: the model identity (name, revision, checksum …), stored as JSON.
        """
        return self._start_run(kind, config, model, actor=actor).id

    def _start_run(self, kind: str, config: Any, model: Any, *, actor: str | None = None) -> RunRecord:
        if not kind:
            raise StoreError("a run needs a kind")
        config_json = to_jsonable(config) if config is not None else {}
        model_json = to_jsonable(model) if model is not None else None
        return self._retry_on_conflict(
            lambda: self._insert_run(kind, config_json, model_json, actor), attempts=20
        )

    def _insert_run(self, kind: str, config: Any, model: Any, actor: str | None) -> RunRecord:
        from compliance.store.orm import RunRow

        with self.session() as s:
            number = next_run_number(s, kind)
            row = RunRow(
                kind=kind,
                number=number,
                owner=process_owner(),
                config=config,
                model=model,
                status="running",
                stats={},
            )
            s.add(row)
            s.flush()
            self._log(
                s,
                "run.start",
                actor=actor,
                target_type="run",
                target_id=row.id,
                details={"kind": kind, "number": number},
            )
            return _run_record(row)

    def finish_run(
        self,
        run_id: int,
        status: str = "succeeded",
        stats: Mapping[str, Any] | None = None,
        error: str | None = None,
        *,
        actor: str | None = None,
    ) -> RunRecord:
        """Mark a run finished (``succeeded`` or ``failed``) with its stats and error text."""
        from compliance.store.orm import RunRow, utcnow

        if status not in ("succeeded", "failed"):
            raise StoreError(f"a run finishes as 'succeeded' or 'failed', not {status!r}")
        with self.session() as s:
            row = s.get(RunRow, run_id)
            if row is not None and stats is None:
                stats = dict(row.stats or {})
            if row is None:
                raise NotFoundError(f"no run {run_id}")
            if row.status != "running":
                raise StoreError(f"run {run_id} already finished ({row.status})")
            now = utcnow()
            row.status = status
            row.finished_at = now
            row.duration_s = (now - row.started_at).total_seconds()
            row.stats = to_jsonable(dict(stats or {}))
            row.error = error
            s.flush()
            self._log(
                s,
                "run.finish",
                actor=actor,
                target_type="run",
                target_id=run_id,
                details={"kind": row.kind, "status": status, "error": error},
            )
            return _run_record(row)

    @contextmanager
    def run(self, kind: str, config: Any = None, model: Any = None) -> Iterator[ActiveRun]:
        """Record a run around a block: ``succeeded`` when it ends, ``failed`` (with the error) when it raises.

        Work done inside the block through other ``Store`` methods is committed by those methods; the run row
        only records the outcome. Put counts in ``active.stats``.
        """
        record = self._start_run(kind, config, model)
        run_id = record.id
        active = ActiveRun(id=run_id, kind=kind, number=record.number)
        started = time.perf_counter()
        try:
            yield active
        except BaseException as e:
            active.stats.setdefault("elapsed_s", round(time.perf_counter() - started, 3))
            try:
                self.finish_run(run_id, "failed", active.stats, error=f"{type(e).__name__}: {e}")
            except Exception:  # pragma: no cover - keep the original error
                logger.exception("could not mark run %s failed", run_id)
            raise
        try:
            self.finish_run(run_id, "succeeded", active.stats)
        except Exception as e:  # e.g. stats that cannot be stored: do not leave the run "running"
            self.finish_run(
                run_id, "failed", {}, error=f"could not store the run's stats: {type(e).__name__}: {e}"
            )
            raise

    def get_run(self, run_id: int) -> RunRecord:
        """A run by id. Raises :class:`~compliance.errors.NotFoundError`."""
        from compliance.store.orm import RunRow

        with self.session() as s:
            row = s.get(RunRow, run_id)
            if row is None:
                raise NotFoundError(f"no run {run_id}")
            return _run_record(row)

    def resolve_run(self, ref: int | str) -> RunRecord:
        """A run by reference: ``"audit:3"`` (kind and number, as people see it), or an id (``17``, ``"17"``).

        Raises:
            NotFoundError: no such run.
            StoreError: a malformed reference.
        """
        from sqlalchemy import select

        from compliance.store.orm import RunRow

        if isinstance(ref, int) or ref.strip().isdigit():
            return self.get_run(int(ref))
        kind, sep, number = ref.strip().rpartition(":")
        if not sep or not kind or not number.isdigit():
            raise StoreError(f"a run is named KIND:NUMBER (for example audit:3) or by its id, not {ref!r}")
        with self.session() as s:
            row = s.scalars(select(RunRow).where(RunRow.kind == kind, RunRow.number == int(number))).first()
            if row is None:
                raise NotFoundError(f"no run {ref} (see `compliance runs list`)")
            return _run_record(row)

    def reap_runs(self, *, actor: str | None = None) -> list[RunRecord]:
        """Mark failed the ``running`` runs whose process is gone; returns them (now failed, with the reason).

        A run is reaped when its owner process ran on this machine and no longer exists (or its process id now
        belongs to another process). Runs started on other machines, and old runs without an owner, are left
        alone: nothing here can tell whether they are still working. The work of a reaped audit resumes on the
        next audit of the same documents (paragraphs already linked by the same model are skipped).
        """
        from sqlalchemy import select

        from compliance.store.orm import RunRow

        with self.session() as s:
            candidates = [
                (r.id, r.owner) for r in s.scalars(select(RunRow).where(RunRow.status == "running"))
            ]
        reaped: list[RunRecord] = []
        for run_id, owner in candidates:
            reason = owner_gone(owner)
            if reason is None:
                continue
            try:
                reaped.append(self.finish_run(run_id, "failed", None, error=reason, actor=actor))
            except StoreError:  # finished meanwhile by its own process
                continue
            logger.warning("run %s marked failed: %s", run_id, reason)
        return reaped

    def list_runs(
        self, kind: str | None = None, limit: int | None = None, *, status: str | None = None
    ) -> list[RunRecord]:
        """Runs, newest first (optionally of one kind and one status)."""
        from sqlalchemy import select

        from compliance.store.orm import RunRow

        stmt = select(RunRow).order_by(RunRow.id.desc())
        if kind is not None:
            stmt = stmt.where(RunRow.kind == kind)
        if status is not None:
            stmt = stmt.where(RunRow.status == status)
        if limit is not None:
            stmt = stmt.limit(limit)
        with self.session() as s:
            return [_run_record(r) for r in s.scalars(stmt)]


def _run_record(r: RunRow) -> RunRecord:
    return RunRecord(
        id=r.id,
        kind=r.kind,
        status=r.status,
        config=dict(r.config or {}),
        model=dict(r.model) if r.model is not None else None,
        started_at=r.started_at,
        finished_at=r.finished_at,
        duration_s=r.duration_s,
        error=r.error,
        stats=dict(r.stats or {}),
        number=r.number,
        owner=r.owner,
    )


def _start_token(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (Linux), to tell a reused process id apart."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[19] if len(fields) > 19 else None


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return False


def process_owner() -> str:
    """``host:pid:start-token`` of this process (the token is empty where it cannot be read)."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{_start_token(pid) or ''}"[:255]


def owner_gone(owner: str | None) -> str | None:
    """Why the process that owns a run is gone (``None``: it may still run, or it cannot be told from here)."""
    if not owner:
        return None
    parts = owner.rsplit(":", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return None
    host, pid_text, token = parts
    if host != socket.gethostname():
        return None
    pid = int(pid_text)
    why = f"its process (pid {pid} on {host}) is gone: killed or crashed; re-run to resume its work"
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return why
    except PermissionError:  # another account's process with that id: it exists
        pass
    except OSError:  # pragma: no cover
        return None
    if _zombie(pid):
        return why
    current = _start_token(pid)
    if token and current is not None and current != token:
        return why  # the id now belongs to another process
    return None


def next_run_number(s: Session, kind: str) -> int:
    """The number the next run of ``kind`` gets (runs are numbered per kind: ``audit:1``, ``audit:2`` …); two
    writers that race for it collide on the unique (kind, number) and the loser retries."""
    from sqlalchemy import func, select

    from compliance.store.orm import RunRow

    return int(s.scalar(select(func.max(RunRow.number)).where(RunRow.kind == kind)) or 0) + 1
