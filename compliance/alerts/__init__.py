"""Corrective alerts: which stored controls does a newly stored law (or a changed version) concern?

Public API (imported lazily)::

    run_alerts(store, "eprivacy", decision=None, search=None, config=AlertConfig()) -> AlertRunResult
    changed_provisions(new_law, old_law) -> [article keys whose text changed]
    send_webhook(payload, WebhookConfig(url, secret))

The use cases around it (the pass that follows storing a law, listing, acknowledging) are in
:mod:`compliance.app.alerts`. See ``docs/alerts.md``.
"""

from __future__ import annotations

from compliance._lazy import lazy_exports

__all__ = [
    "AlertConfig",
    "AlertRunResult",
    "ProposedAlert",
    "WebhookConfig",
    "WebhookDelivery",
    "changed_provisions",
    "load_decision_model",
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
    "WebhookConfig": "compliance.alerts.notify",
    "WebhookDelivery": "compliance.alerts.notify",
    "send_webhook": "compliance.alerts.notify",
}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
