"""Corrective alerts: which stored controls does a newly stored law (or a changed version) concern?

Public API (imported lazily)::

    run_alerts(store, "eprivacy", decision=None, search=None, config=AlertConfig()) -> AlertRunResult
    alerts_after_law_stored(store, "eprivacy")      # what ``laws install``/``laws add`` call; never raises
    changed_provisions(new_law, old_law) -> [article keys whose text changed]
    send_webhook(payload, WebhookConfig(url, secret)) / console_summary(run, alerts)

See ``docs/alerts.md``.
"""

from __future__ import annotations

from compliance._lazy import lazy_exports

__all__ = [
    "AlertConfig",
    "AlertHookResult",
    "AlertRunResult",
    "ProposedAlert",
    "WebhookConfig",
    "WebhookDelivery",
    "alert_to_dict",
    "alerts_after_law_stored",
    "changed_provisions",
    "console_summary",
    "load_decision_model",
    "notify_run",
    "run_alerts",
    "send_webhook",
]

_LAZY = {
    "AlertConfig": "compliance.alerts.engine",
    "AlertRunResult": "compliance.alerts.engine",
    "ProposedAlert": "compliance.alerts.engine",
    "changed_provisions": "compliance.alerts.engine",
    "load_decision_model": "compliance.alerts.engine",
    "run_alerts": "compliance.alerts.engine",
    "AlertHookResult": "compliance.alerts.service",
    "alert_to_dict": "compliance.alerts.service",
    "alerts_after_law_stored": "compliance.alerts.service",
    "notify_run": "compliance.alerts.service",
    "WebhookConfig": "compliance.alerts.notify",
    "WebhookDelivery": "compliance.alerts.notify",
    "console_summary": "compliance.alerts.notify",
    "send_webhook": "compliance.alerts.notify",
}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
