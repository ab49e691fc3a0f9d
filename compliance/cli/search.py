"""``compliance search``: a control text or document → ranked laws and provisions; a law → ranked controls."""

from __future__ import annotations

from pathlib import Path

import click

from compliance.cli.options import database_option, echo_json, echo_table, json_option, open_store
from compliance.errors import ConfigurationError
from compliance.text import snippet


@click.command()
@click.option("--text", default=None, help="A control text: find the laws and provisions it relates to.")
@click.option(
    "--file",
    "file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A whole document (docx, pdf, txt, md, html) as the query.",
)
@click.option("--law", default=None, help="A stored law: find the stored controls it concerns.")
@click.option("--provision", default=None, help="With --law: one provision key (art:5, art:5/par:3).")
@click.option("--in-law", default=None, help="With --text/--file: search only this law's provisions.")
@click.option("-k", "k", type=int, default=10, show_default=True, help="Number of results.")
@click.option("--bm25-only", is_flag=True, help="BM25 alone (no dense encoder; faster, no model).")
@database_option
@json_option
def search(
    text: str | None,
    file: Path | None,
    law: str | None,
    provision: str | None,
    in_law: str | None,
    k: int,
    bm25_only: bool,
    database_url: str | None,
    as_json: bool,
) -> None:
    """Search in both directions: --text/--file → laws and provisions; --law [--provision] → controls."""
    from compliance.app import search_controls, search_laws

    if sum(x is not None for x in (text, file, law)) != 1:
        raise ConfigurationError("give exactly one of --text, --file or --law")
    if provision is not None and law is None:
        raise ConfigurationError("--provision needs --law")
    store = open_store(database_url)
    if law is not None:
        hits = search_controls(store, law, provision=provision, k=k, dense=not bm25_only)
        if as_json:
            echo_json({"law": law, "provision": provision, "controls": [h.to_dict() for h in hits]})
            return
        rows = [
            {
                "rank": h.rank,
                "score": f"{h.score:.3f}",
                "paragraph": h.paragraph_id,
                "document": Path(h.source).name,
                "terms": ", ".join(h.evidence.get("shared_terms", [])[:4]),
                "text": snippet(h.text, 70),
            }
            for h in hits
        ]
        echo_table(rows, ["rank", "score", "paragraph", "document", "terms", "text"])
        return
    result = search_laws(store, text=text, document=file, k=k, in_law=in_law, dense=not bm25_only)
    if as_json:
        echo_json(result.to_dict())
        return
    click.echo("Laws:")
    echo_table(
        [
            {
                "rank": h.rank,
                "law": h.law,
                "score": f"{h.score:.3f}",
                "best": h.best_provision,
                "title": snippet(h.title, 60),
            }
            for h in result.laws
        ],
        ["rank", "law", "score", "best", "title"],
    )
    click.echo("\nProvisions:")
    echo_table(
        [
            {
                "rank": p.rank,
                "law": p.law,
                "key": p.key,
                "score": f"{p.score:.3f}",
                "title": snippet(p.title, 60),
            }
            for p in result.provisions
        ],
        ["rank", "law", "key", "score", "title"],
    )
