"""``compliance links``: list, show, review, add, export, import and diff the scored links."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from compliance.cli.options import database_option, echo_json, echo_table, json_option, open_store
from compliance.text import snippet

F = TypeVar("F", bound=Callable[..., Any])

_STATUSES = ("proposed", "accepted", "rejected", "needs-review")


def _default_reviewer() -> str:
    import getpass

    try:
        return getpass.getuser()
    except Exception:  # pragma: no cover - no user name in some containers
        return ""


def reviewer_option(func: F) -> F:
    """``--reviewer NAME`` (default: COMPLIANCE_REVIEWER, else the OS user name)."""
    return click.option(
        "--reviewer",
        envvar="COMPLIANCE_REVIEWER",
        default=_default_reviewer,
        show_default="COMPLIANCE_REVIEWER or your user name",
        help="Who decides (recorded with every review and in the audit log).",
    )(func)


def filter_options(func: F) -> F:
    """The link filters shared by ``list`` and ``export``."""
    options = [
        click.option("--document", default=None, help="A document id or its stored source."),
        click.option("--law", default=None, help="A law's short name (gdpr, eprivacy …)."),
        click.option(
            "--provision", default=None, help="A provision key (art:32 also matches its paragraphs)."
        ),
        click.option(
            "--status",
            "statuses",
            multiple=True,
            type=click.Choice(_STATUSES),
            help="Current status (repeat for several).",
        ),
        click.option("--min-score", type=float, default=None, help="Score at least this."),
        click.option("--max-score", type=float, default=None, help="Score below this."),
        click.option("--model", default=None, help="The suggesting model's identity (prefix)."),
        click.option("--run", "run_id", type=int, default=None, help="Links of this run only."),
        click.option(
            "--method",
            type=click.Choice(["classifier", "retriever", "manual"]),
            default=None,
            help="How made.",
        ),
        click.option(
            "--all-versions", is_flag=True, help="Also links of older document versions and superseded runs."
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _query(
    document: str | None,
    law: str | None,
    provision: str | None,
    statuses: tuple[str, ...],
    min_score: float | None,
    max_score: float | None,
    model: str | None,
    run_id: int | None,
    method: str | None,
    all_versions: bool,
) -> Any:
    from compliance.app.links import LinkQuery

    return LinkQuery(
        document=document,
        law=law,
        provision=provision,
        status=tuple(statuses),
        min_score=min_score,
        max_score=max_score,
        model=model,
        run=run_id,
        method=method,
        include_superseded=all_versions,
    )


@click.group()
def links() -> None:
    """Scored links between paragraphs and law provisions: list, review, export, import, diff."""


@links.command("list")
@filter_options
@click.option("--limit", type=click.IntRange(1), default=None, help="At most this many links.")
@database_option
@json_option
def list_command(limit: int | None, database_url: str | None, as_json: bool, **filters: Any) -> None:
    """List current links (one line each) with their status."""
    from compliance.app.links import page_links

    rows = page_links(open_store(database_url), _query(**filters), limit=limit)
    if as_json:
        echo_json([{**r.to_dict(), "article": r.article, "target": r.target} for r in rows])
        return
    echo_table(
        [
            {
                "id": r.link_id,
                "doc": r.document_id,
                "para": r.paragraph_ordinal,
                "law": r.law_short_name,
                "provision": r.provision_key,
                "target": r.target,
                "score": f"{r.score:.2f}",
                "status": r.status,
                "method": r.method,
                "text": snippet(r.paragraph_text, 60),
            }
            for r in rows
        ],
        ["id", "doc", "para", "law", "provision", "target", "score", "status", "method", "text"],
    )


@links.command("show")
@click.argument("link_id", type=int)
@database_option
@json_option
def show_command(link_id: int, database_url: str | None, as_json: bool) -> None:
    """Show a link: paragraph, provision, evidence and every decision on it."""
    from compliance.app.links import link_detail
    from compliance.app.review import held_for_review

    d = link_detail(open_store(database_url), link_id)
    if as_json:
        echo_json(d)
        return
    click.echo(
        f"link {d['link_id']}: {d['law_short_name']} {d['provision_key']} {d['provision_title'] or ''}"
    )
    click.echo(
        f"  status {d['status']} (proposed as {d['proposed_status']}), score {d['score']:.3f}, rank {d['rank']}"
    )
    click.echo(f"  suggested by {d['method']} {d['model'] or ''} in run {d['run_id']}")
    click.echo(
        f"  {d['document_source']} v{d['document_version']} ¶{d['paragraph_ordinal']}: {snippet(d['paragraph_text'], 200)}"
    )
    chosen = d["evidence"].get("provision")
    if isinstance(chosen, dict) and chosen.get("label"):
        click.echo(
            f"  provision within the article: {chosen['label']} ({chosen.get('method', '')} score "
            f"{chosen.get('score', 0):.2f}, share {chosen.get('share', 0):.2f}"
            + (f"; next {chosen['runner_up']}" if chosen.get("runner_up") else "")
            + ")"
        )
    if d["evidence"].get("cited_as"):
        click.echo(f"  cited in the text as: {d['evidence']['cited_as']}")
    if d["evidence"].get("read_with"):
        click.echo(f"  read after its list's lead-in: {d['evidence']['read_with']}")
    if d["evidence"].get("abbreviations"):
        defined = "; ".join(f"{k} = {v}" for k, v in d["evidence"]["abbreviations"].items())
        click.echo(f"  read with the document's abbreviations: {defined}")
    if d["evidence"].get("shared_terms"):
        click.echo("  shared terms: " + ", ".join(d["evidence"]["shared_terms"]))
    cosine = (d["evidence"].get("components") or {}).get("text_cosine")
    if isinstance(cosine, float | int):
        click.echo(
            f"  text match {cosine:.2f} (the paragraph's cosine with the article's closest paragraph or point)"
        )
    held = held_for_review(d["evidence"]) if d["method"] == "classifier" else None
    if held and d["proposed_status"] == "needs-review":
        click.echo(f"  held for review: {held}")
    for r in d["reviews"]:
        click.echo(
            f"  {r['decided_at']}  {r['decision']:<12} by {r['reviewer']} ({r['source']})"
            + (f": {r['comment']}" if r["comment"] else "")
        )


@links.command("review")
@click.argument("link_ids", nargs=-1, type=int, required=True)
@click.option("--accept", "decision", flag_value="accepted", help="Accept the link(s).")
@click.option("--reject", "decision", flag_value="rejected", help="Reject the link(s).")
@click.option("--needs-review", "decision", flag_value="needs-review", help="Mark for a second look.")
@click.option("--reopen", "decision", flag_value="proposed", help="Back to proposed.")
@reviewer_option
@click.option("--comment", default=None, help="Why (recorded with the review).")
@database_option
@json_option
def review_command(
    link_ids: tuple[int, ...],
    decision: str | None,
    reviewer: str,
    comment: str | None,
    database_url: str | None,
    as_json: bool,
) -> None:
    """Record a decision on one or more links (a new review row each; the history is kept)."""
    from compliance.app.links import review_links

    if decision is None:
        raise click.UsageError("choose --accept, --reject, --needs-review or --reopen")
    recorded = review_links(open_store(database_url), list(link_ids), decision, reviewer, comment)
    if as_json:
        echo_json([r.to_dict() for r in recorded])
        return
    for r in recorded:
        click.echo(f"link {r.link_id}: {r.decision} by {r.reviewer} (review {r.id})")


@links.command("add")
@click.option("--document", default=None, help="The document (id or source) of the paragraph.")
@click.option("--paragraph", type=int, default=None, help="The paragraph's number in the document (¶).")
@click.option("--paragraph-id", type=int, default=None, help="Or the paragraph's id.")
@click.option("--law", default="gdpr", show_default=True, help="The law's short name.")
@click.option(
    "--provision", required=True, help="A provision key (art:30, art:30/par:1) or an article number."
)
@reviewer_option
@click.option("--comment", default=None, help="Why the link holds.")
@database_option
@json_option
def add_command(
    document: str | None,
    paragraph: int | None,
    paragraph_id: int | None,
    law: str,
    provision: str,
    reviewer: str,
    comment: str | None,
    database_url: str | None,
    as_json: bool,
) -> None:
    """Add a link the model missed (recorded as accepted by you)."""
    from compliance.app.links import add_link

    link = add_link(
        open_store(database_url),
        law=law,
        provision=provision,
        reviewer=reviewer,
        paragraph_id=paragraph_id,
        document=document,
        paragraph=paragraph,
        comment=comment,
    )
    if as_json:
        echo_json(link.to_dict())
        return
    click.echo(
        f"link {link.link_id}: {link.document_source} ¶{link.paragraph_ordinal} → {link.law_short_name} "
        f"{link.provision_key} (accepted by {link.reviewer})"
    )


@links.command("export")
@click.argument("out", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["xlsx", "csv", "json", "oscal", "ciso-assistant"]),
    default=None,
    help="Default: from the file suffix (.yaml: ciso-assistant).",
)
@filter_options
@click.option(
    "--organisation", default="Our organisation", show_default=True, help="Named in OSCAL / CISO Assistant."
)
@database_option
@json_option
def export_command(
    out: Path, fmt: str | None, organisation: str, database_url: str | None, as_json: bool, **filters: Any
) -> None:
    """Export every current link (filtered): review spreadsheet (xlsx, csv), json, OSCAL or CISO Assistant."""
    from compliance.app.links import export_links_file

    result = export_links_file(
        open_store(database_url), out, fmt, _query(**filters), organisation=organisation
    )
    if as_json:
        echo_json(result.to_dict())
        return
    click.echo(f"{result.links} link(s) exported to {result.path} ({result.format})")


@links.command("import")
@click.argument("path", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@reviewer_option
@database_option
@json_option
def import_command(path: Path, reviewer: str, database_url: str | None, as_json: bool) -> None:
    """Record the decisions of a filled-in review spreadsheet (all rows valid, or nothing is applied)."""
    from compliance.app.links import import_reviews

    result = import_reviews(open_store(database_url), path, reviewer)
    if as_json:
        echo_json(result.to_dict())
        return
    counts = ", ".join(f"{k} {v}" for k, v in sorted(result.decisions.items())) or "none"
    click.echo(
        f"{result.applied} decision(s) recorded from {path.name} ({counts}); "
        f"{result.unchanged} unchanged, {result.empty} row(s) without a decision"
    )


@links.command("diff")
@click.argument("run_a", type=int)
@click.argument("run_b", type=int)
@database_option
@json_option
def diff_command(run_a: int, run_b: int, database_url: str | None, as_json: bool) -> None:
    """Links gained, lost and re-ranked from RUN_A to RUN_B, and accepted links that weakened."""
    from compliance.app.links import diff_runs

    d = diff_runs(open_store(database_url), run_a, run_b)
    if as_json:
        echo_json(d.to_dict())
        return
    click.echo(
        f"run {run_a} → run {run_b}: {d.paragraphs_compared} paragraph(s) compared; {len(d.gained)} gained, "
        f"{len(d.lost)} lost, {len(d.reranked)} re-ranked, {len(d.weakened)} accepted link(s) weakened"
    )
    for name, changes in (("+", d.gained), ("-", d.lost), ("~", d.reranked), ("!", d.weakened)):
        for c in changes:
            before = f"rank {c.before['rank']} {c.before['score']:.2f}" if c.before else ""
            after = f"rank {c.after['rank']} {c.after['score']:.2f}" if c.after else ""
            click.echo(
                f"  {name} {c.document} ¶{c.paragraph} {c.law} {c.provision}  {before} → {after} {c.reason}"
            )
