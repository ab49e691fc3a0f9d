"""Run records in the store (mixed into :class:`~compliance.store.Store`)."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from compliance.errors import NotFoundError, StoreError
from compliance.store.base import StoreBase
from compliance.store.records import ActiveRun, RunRecord, to_jsonable

if TYPE_CHECKING:
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
        from compliance.store.orm import RunRow

        if not kind:
            raise StoreError("a run needs a kind")
        with self.session() as s:
            row = RunRow(
                kind=kind,
                config=to_jsonable(config) if config is not None else {},
                model=to_jsonable(model) if model is not None else None,
                status="running",
                stats={},
            )
            s.add(row)
            s.flush()
            self._log(
                s, "run.start", actor=actor, target_type="run", target_id=row.id, details={"kind": kind}
            )
            return row.id

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
        run_id = self.start_run(kind, config, model)
        active = ActiveRun(id=run_id, kind=kind)
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

    def list_runs(self, kind: str | None = None, limit: int | None = None) -> list[RunRecord]:
        """Runs, newest first."""
        from sqlalchemy import select

        from compliance.store.orm import RunRow

        stmt = select(RunRow).order_by(RunRow.id.desc())
        if kind is not None:
            stmt = stmt.where(RunRow.kind == kind)
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
    )
