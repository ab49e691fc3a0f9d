"""Alert use cases: run an alert pass for a stored law (and notify), list, show and acknowledge alerts, train the
link decision.

:func:`alerts_after_law_stored` is what every caller that stores a new law gets by default
(:func:`compliance.app.laws.store_law`): it never raises for a failed run, since the law is stored either way, and
reports what happened in an :class:`AlertRunOutcome`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from compliance.errors import ComplianceError

if TYPE_CHECKING:  # pragma: no cover
    from compliance.alerts.engine import AlertConfig, AlertRunResult
    from compliance.alerts.notify import WebhookConfig
    from compliance.linking.decision import LinkDecisionConfig, LinkDecisionModel
    from compliance.search import LawSearch
    from compliance.store import Store
    from compliance.store.records import AlertRecord

__all__ = [
    "ALERT_ACTIONS",
    "AlertRunOutcome",
    "acknowledge_alerts",
    "alert_to_dict",
    "alerts_after_law_stored",
    "get_alert",
    "list_alerts",
    "notify_run",
    "run_law_alerts",
    "set_alerts_status",
    "train_decision",
]

logger = logging.getLogger(__name__)

RunStatus = Literal["ran", "skipped", "failed"]


@dataclass
class AlertRunOutcome:
    """What an alert pass did: its run summary, the alerts (best first) and the notification, or why it was
    skipped or failed.

    Attributes:
        status: ``ran``, ``skipped`` (no stored controls, no link-decision model) or ``failed``.
        reason: why it was skipped or failed.
        summary: the run's summary (run id, law, provisions queried, controls searched, counts).
        items: the stored alerts, best first: ``paragraph_id``, ``provision_key``, ``decision``, ``score``,
            ``rank``, ``document``, ``shared_terms`` (as in the webhook payload) and the whole ``evidence``.
        notification: ``{"webhook": "delivered"|"failed"|"not configured"|"disabled", ...}``.
    """

    status: RunStatus
    reason: str | None = None
    summary: dict[str, Any] = field(default_factory=dict)
    items: list[dict[str, Any]] = field(default_factory=list)
    notification: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "reason": self.reason,
            **self.summary,
            "notification": self.notification,
            "items": self.items,
        }


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


def _outcome(result: AlertRunResult, notification: dict[str, Any]) -> AlertRunOutcome:
    # the webhook payload's items, each with its whole evidence object
    items = [
        {**item, "evidence": a.evidence}
        for item, a in zip(result.payload()["items"], result.alerts, strict=True)
    ]
    return AlertRunOutcome("ran", summary=result.summary(), items=items, notification=notification)


def _search(store: Store, dense: bool) -> LawSearch:
    from compliance.search import LawSearch

    return LawSearch(store, dense=dense)


def run_law_alerts(
    store: Store,
    law: str,
    *,
    version: int | None = None,
    all_provisions: bool = False,
    model_path: str | Path | None = None,
    decision: LinkDecisionModel | None = None,
    search: LawSearch | None = None,
    dense: bool = True,
    config: AlertConfig | None = None,
    webhook: WebhookConfig | None = None,
    notify: bool = True,
) -> AlertRunOutcome:
    """Run an alert pass for a stored ``law`` against every stored control paragraph, then notify.

    Args:
        store: the database.
        law: short name or identifier of a stored law.
        version: the law version (default: the latest; diffed against the previous one).
        all_provisions: query every provision, not only those whose text changed.
        model_path: the link-decision model (default ``<model_dir>/link-decision``).
        decision: an already loaded link-decision model (instead of ``model_path``).
        search: the controls search (default: hybrid BM25 + dense, or BM25 alone with ``dense=False``).
        dense: with the dense encoder (default) or BM25 alone.
        config: the run's parameters (``all_provisions`` sets ``changed_only``).
        webhook: where to post the result (default: ``COMPLIANCE_WEBHOOK_URL``); ``notify=False`` posts nothing.

    Raises:
        ComplianceError: unknown law, no link-decision model, …
    """
    from dataclasses import replace

    from compliance.alerts.engine import AlertConfig, load_decision_model, run_alerts
    from compliance.alerts.notify import WebhookConfig

    config = config or AlertConfig()
    if all_provisions:
        config = replace(config, changed_only=False)
    if decision is None:
        decision = load_decision_model(str(model_path) if model_path is not None else None)
    result = run_alerts(
        store,
        law,
        version=version,
        decision=decision,
        search=search or _search(store, dense),
        config=config,
    )
    if not notify:
        return _outcome(result, {"webhook": "disabled"})
    return _outcome(result, notify_run(result, webhook or WebhookConfig.from_settings()))


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
    notify: bool = True,
) -> AlertRunOutcome:
    """The alert pass that follows storing a new law or law version; reports problems instead of raising them.

    Skipped (with the reason) when no control paragraph is stored or no link-decision model is trained; a run
    that fails with a :class:`~compliance.errors.ComplianceError` is reported as failed (the law stays stored).
    """
    from compliance.runtime import decision_dir

    if next(iter(store.iter_paragraphs()), None) is None:
        return AlertRunOutcome("skipped", reason="no stored controls")
    if decision is None:
        path = Path(model_path) if model_path is not None else decision_dir()
        if not (path / "config.json").is_file():
            return AlertRunOutcome(
                "skipped",
                reason=f"no link-decision model at {path} (train one: compliance alerts train-decision)",
            )
        model_path = path
    try:
        return run_law_alerts(
            store,
            law_name,
            version=version,
            model_path=model_path,
            decision=decision,
            search=search,
            config=config,
            webhook=webhook,
            notify=notify,
        )
    except ComplianceError as exc:  # the law is stored either way; the run is recorded as failed
        logger.warning("alert run for %s failed: %s", law_name, exc)
        return AlertRunOutcome(
            "failed", reason=f"[{exc.code}] {exc} (retry with: compliance alerts run {law_name})"
        )


def list_alerts(
    store: Store,
    *,
    status: str | None = None,
    law: str | None = None,
    run_id: int | None = None,
    decision: str | None = None,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """Stored alerts as dicts (:func:`alert_to_dict`), newest run first, then by rank within a run.

    Args:
        status: ``open``, ``acknowledged``, ``dismissed`` or ``resolved``.
        law: a law's short name or identifier.
        run_id: one alert run.
        decision: ``alert`` or ``review`` (review-band items).
        limit: at most this many.
    """
    items = [alert_to_dict(r) for r in store.list_alerts(status=status, law=law, run_id=run_id)]
    if decision is not None:
        items = [a for a in items if a["decision"] == decision]
    items.sort(key=lambda a: (-a["run_id"], a["rank"] if a["rank"] is not None else 1 << 30, a["id"]))
    return items if limit is None else items[:limit]


def get_alert(store: Store, alert_id: int) -> dict[str, Any]:
    """One alert with its evidence and acknowledgements."""
    return alert_to_dict(store.get_alert(alert_id))


def acknowledge_alerts(
    store: Store, alert_ids: Sequence[int], by: str, comment: str | None = None
) -> list[dict[str, Any]]:
    """Acknowledge alerts (the history of acknowledgements is kept); returns them as they are now."""
    return set_alerts_status(store, alert_ids, "acknowledged", by, comment)


#: what an officer can do with an alert → the status it leaves
ALERT_ACTIONS = {
    "acknowledge": "acknowledged",
    "dismiss": "dismissed",
    "resolve": "resolved",
    "reopen": "open",
}


def set_alerts_status(
    store: Store, alert_ids: Sequence[int], status: str, by: str, comment: str | None = None
) -> list[dict[str, Any]]:
    """Set alerts' status — ``acknowledged``, ``dismissed`` (a false positive), ``resolved`` (the control was
    updated) or ``open`` (reopened) — with who and why; every change is kept in the alert's history.

    Raises:
        NotFoundError: an unknown alert id (the alerts before it are changed).
        StoreError: an unknown status or an empty name.
    """
    return [alert_to_dict(store.set_alert_status(i, status, by, comment)) for i in alert_ids]


def train_decision(
    config: LinkDecisionConfig,
    *,
    out_dir: Path | None = None,
    law_mirror: Path | None = None,
    exclude: Sequence[str] = ("eprivacy",),
) -> dict[str, Any]:
    """Fine-tune the link-decision bi-encoder on graded law-passage pairs and calibrate its threshold.

    Args:
        config: base model, pairs per grade, epochs, loss, device …
        out_dir: where to save (default ``<model_dir>/link-decision``).
        law_mirror: a folder holding ``laws/`` (default: ``COMPLIANCE_LAW_MIRROR``, else download).
        exclude: laws kept out of training (short names).

    Returns:
        Where it was saved, the threshold and review band, and the held-out metrics.
    """
    from compliance.linking.decision import train_link_decision, training_laws
    from compliance.runtime import default_decision_dir

    target = out_dir or default_decision_dir()
    model = train_link_decision(training_laws(law_mirror, exclude=exclude), config, out_dir=target)
    return {
        "path": str(target),
        "threshold": model.threshold,
        "band_lower": model.lower,
        "metrics": model.info["metrics"],
        "training": model.info["training"],
        "data": model.info["data"],
    }
