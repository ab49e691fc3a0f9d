"""``compliance search``: a control text or document → ranked laws and provisions; a law → ranked controls."""

from __future__ import annotations

from pathlib import Path

import click

from compliance.cli.options import database_option, echo_json, echo_table, json_option
from compliance.errors import ConfigurationError


def _snippet(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


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
    from compliance.cli.db import open_store
    from compliance.search import LawSearch, default_retrieval_config

    if sum(x is not None for x in (text, file, law)) != 1:
        raise ConfigurationError("give exactly one of --text, --file or --law")
    if provision is not None and law is None:
        raise ConfigurationError("--provision needs --law")
    service = LawSearch(open_store(database_url), default_retrieval_config(dense=not bm25_only))
    if law is not None:
        hits = service.controls_for_law(law, provision=provision, k=k)
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
                "text": _snippet(h.text, 70),
            }
            for h in hits
        ]
        echo_table(rows, ["rank", "score", "paragraph", "document", "terms", "text"])
        return
    if file is not None:
        from compliance.connectors import parse_path

        document = parse_path(file)
        query = "\n\n".join(p.text for p in document.paragraphs if p.kind != "heading") or document.text
    else:
        query = str(text)
    result = service.laws_for_text(query, k=k, provisions_k=max(k, 50), law=in_law)
    if as_json:
        echo_json(result.to_dict() | {"provisions": [p.to_dict() for p in result.provisions[:k]]})
        return
    click.echo("Laws:")
    echo_table(
        [
            {
                "rank": h.rank,
                "law": h.law,
                "score": f"{h.score:.3f}",
                "best": h.best_provision,
                "title": _snippet(h.title, 60),
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
                "title": _snippet(p.title, 60),
            }
            for p in result.provisions[:k]
        ],
        ["rank", "law", "key", "score", "title"],
    )
