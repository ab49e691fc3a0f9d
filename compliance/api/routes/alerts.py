"""The alert inbox: list, show, acknowledge, dismiss as a false positive, resolve, reopen."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Path, Query

from compliance.api import schemas
from compliance.api.auth import Caller, reviewer, viewer
from compliance.api.errors import ERROR_RESPONSES

router = APIRouter(tags=["alerts"], responses=ERROR_RESPONSES)

AlertAction = Literal["acknowledge", "dismiss", "resolve", "reopen"]


@router.get("/alerts", response_model=list[schemas.Alert])
def alerts_list(
    status: Literal["open", "acknowledged", "dismissed", "resolved"] | None = None,
    law: str | None = Query(None, max_length=64),
    run_id: int | None = Query(None, ge=1, le=2**31 - 1),
    decision: Literal["alert", "review"] | None = None,
    limit: int | None = Query(None, ge=1, le=10_000),
    caller: Caller = viewer,
) -> list[dict[str, Any]]:
    """Alerts, newest run first, then by rank; each with its evidence."""
    from compliance.app.alerts import list_alerts

    return list_alerts(caller.store, status=status, law=law, run_id=run_id, decision=decision, limit=limit)


@router.get("/alerts/{alert_id}", response_model=schemas.Alert)
def alert_show(alert_id: int = Path(ge=1, le=2**31 - 1), caller: Caller = viewer) -> dict[str, Any]:
    """One alert with its evidence and its status history."""
    from compliance.app.alerts import get_alert

    return get_alert(caller.store, alert_id)


@router.post("/alerts/{alert_id}/{action}", response_model=schemas.Alert)
def alert_change(
    action: AlertAction,
    body: schemas.AlertChange,
    alert_id: int = Path(ge=1, le=2**31 - 1),
    caller: Caller = reviewer,
) -> dict[str, Any]:
    """Acknowledge an alert, dismiss it as a false positive, resolve it (the control was updated) or reopen
    it; the change is kept in its history with the token's name. Reviewer."""
    from compliance.app.alerts import ALERT_ACTIONS, set_alerts_status

    changed = set_alerts_status(
        caller.store, [alert_id], ALERT_ACTIONS[action], caller.principal.name, body.comment
    )
    return changed[0]
