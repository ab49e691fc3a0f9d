"""Run use cases: list runs (after reaping those whose process is gone), show one run by reference."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from compliance.store import RunRecord, Store

__all__ = ["RunListing", "list_runs", "show_run"]


@dataclass(frozen=True, slots=True)
class RunListing:
    """Runs, newest first, and the runs this call found dead and marked failed."""

    runs: list[RunRecord]
    reaped: list[RunRecord]

    def to_dict(self) -> dict[str, Any]:
        return {
            "runs": [_run_dict(r) for r in self.runs],
            "reaped": [_run_dict(r) for r in self.reaped],
        }


def _run_dict(run: RunRecord) -> dict[str, Any]:
    return {"ref": f"{run.kind}:{run.number}", **run.to_dict()}


def list_runs(
    store: Store,
    *,
    kind: str | None = None,
    status: str | None = None,
    limit: int | None = 50,
    reap: bool = True,
) -> RunListing:
    """Runs, newest first; with ``reap`` the ``running`` runs whose process is gone are marked failed first.

    Args:
        store: an open, migrated store.
        kind: only runs of this kind (``audit``, ``ingest``, ``law-install`` …).
        status: only runs with this status (``running``, ``succeeded``, ``failed``).
        limit: at most this many runs.
        reap: mark failed the runs whose process is gone (:meth:`~compliance.store.Store.reap_runs`).
    """
    reaped = store.reap_runs() if reap else []
    return RunListing(store.list_runs(kind, limit, status=status), reaped)


def show_run(store: Store, ref: int | str) -> RunRecord:
    """A run by reference: ``audit:3`` (its kind and number, as shown to people) or its id.

    Raises:
        NotFoundError: no such run.
    """
    return store.resolve_run(ref)
