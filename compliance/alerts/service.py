"""Glue between storing a law and alerting: what ``laws install``/``laws add`` call, and alert formatting."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compliance.errors import ComplianceError

if TYPE_CHECKING:  # pragma: no cover
    from compliance.alerts.engine import AlertConfig, AlertRunResult
    from compliance.alerts.notify import WebhookConfig
    from compliance.linking.decision import LinkDecisionModel
    from compliance.search import LawSearch
    from compliance.store import Store
    from compliance.store.records import AlertRecord

__all__ = ["AlertHookResult", "alert_to_dict", "alerts_after_law_stored", "notify_run"]

logger = logging.getLogger(__name__)


class AlertHookResult(dict):  # type: ignore[type-arg]
    """A JSON-friendly dict whose ``str()`` is the console summary (the ``laws`` commands print it)."""

    def __str__(self) -> str:
        return str(self.get("console", ""))


def alert_to_dict(alert: AlertRecord) -> dict[str, Any]:
    """An alert for ``--json`` output and the HTTP API: the record plus a top-level ``decision``.

    The ``evidence`` object is kept whole (best provision, snippets, shared terms, scores).
    """
    data = alert.to_dict()
    data["decision"] = alert.evidence.get("decision", "alert")
    return data


def notify_run(result: AlertRunResult, webhook: WebhookConfig | None) -> dict[str, Any]:
    """Post the run's payload to the webhook, if one is configured.

    Returns:
        ``{"webhook": "delivered"|"failed"|"not configured", ...}``; a failed delivery is reported, not raised.
    """
    from compliance.alerts.notify import send_webhook

    if webhook is None:
        return {"webhook": "not configured"}
    try:
        delivery = send_webhook(result.payload(), webhook)
    except ComplianceError as exc:
        logger.warning("alert notification failed: %s", exc)
        return {"webhook": "failed", "error": str(exc)}
    return {"webhook": "delivered", "status_code": delivery.status_code, "attempts": delivery.attempts}


def alerts_after_law_stored(
    store: Store,
    law_name: str,
    version: int | None = None,
    *,
    model_path: str | Path | None = None,
    decision: LinkDecisionModel | None = None,
    search: LawSearch | None = None,
    config: AlertConfig | None = None,
    webhook: WebhookConfig | None = None,
    use_settings_webhook: bool = True,
) -> AlertHookResult:
    """Start an alert run for a newly stored law and notify; reports problems instead of raising them.

    Skips (with a note) when no control paragraph is stored or no link-decision model is trained; a run that
    fails with a :class:`~compliance.errors.ComplianceError` is reported (the law stays stored).
    """
    from compliance.alerts.engine import load_decision_model, run_alerts
    from compliance.alerts.notify import WebhookConfig, console_summary
    from compliance.linking.decision import default_decision_dir

    if next(iter(store.iter_paragraphs()), None) is None:
        return AlertHookResult(
            status="skipped", reason="no stored controls", console="alerts: no stored controls"
        )
    if decision is None:
        path = Path(model_path) if model_path is not None else default_decision_dir()
        if not (path / "config.json").is_file():
            note = f"alerts skipped: no link-decision model at {path} (train one: compliance alerts train-decision)"
            return AlertHookResult(status="skipped", reason=note, console=note)
    try:
        if decision is None:
            decision = load_decision_model(str(path))
        result = run_alerts(store, law_name, version=version, decision=decision, search=search, config=config)
    except ComplianceError as exc:  # the law is stored either way; the run is recorded as failed
        logger.warning("alert run for %s failed: %s", law_name, exc)
        note = f"alert run failed [{exc.code}]: {exc} (retry with: compliance alerts run {law_name})"
        return AlertHookResult(status="failed", reason=str(exc), console=note)
    if webhook is None and use_settings_webhook:
        webhook = WebhookConfig.from_settings()
    notification = notify_run(result, webhook)
    alerts = [
        {"paragraph_id": a.paragraph_id, "decision": a.decision, "score": a.score, "evidence": a.evidence}
        for a in result.alerts
    ]
    text = console_summary(result.summary(), alerts)
    if notification["webhook"] == "failed":
        text += f"\nwebhook notification failed: {notification['error']}"
    return AlertHookResult(status="ran", **result.summary(), notification=notification, console=text)
