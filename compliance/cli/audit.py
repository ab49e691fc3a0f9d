"""``compliance audit PATH…``: ingest documents, map every new paragraph to GDPR articles, store the scored
links for review, print a summary per document and optionally export the links."""

from __future__ import annotations

from pathlib import Path

import click

from compliance.cli.options import (
    allow_failures_option,
    classifier_options,
    database_option,
    echo_json,
    json_option,
    load_classifier,
    open_store,
    printable,
)


@click.command("audit")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path, exists=True))
@classifier_options
@click.option(
    "--top-k",
    type=click.IntRange(1, 99),
    default=5,
    show_default=True,
    help="At most this many articles linked per paragraph.",
)
@click.option(
    "--export",
    "export_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write every current link of the audited documents to a .xlsx, .csv or .json file (a re-audit of "
    "unchanged files exports them too).",
)
@click.option(
    "--laws",
    default=None,
    help="Also link paragraphs to these installed laws' provisions (comma-separated short names, e.g. "
    "gdpr,eprivacy) through the document-to-law retriever.",
)
@click.option(
    "--rescore",
    is_flag=True,
    help="Classify every paragraph again (after a model change) and report links gained, lost and re-ranked; "
    "decisions are carried over, accepted links whose score fell below the review band become needs-review.",
)
@click.option(
    "--relative-to",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Store document sources relative to this folder (default: the folder the given paths share).",
)
@click.option("--no-recursive", is_flag=True, help="Do not descend into sub-folders.")
@allow_failures_option
@click.option(
    "--processes",
    type=click.IntRange(0, 64),
    default=None,
    help="Share the documents among this many processes, each with its own copy of the classifier on the same "
    "device, one per window of 100 documents at most (roles are decided per window). Default "
    "COMPLIANCE_AUDIT_PROCESSES, 0: auto (half the cores, at most 8, with a GPU, where the Python around the "
    "model bounds an audit; one on a CPU).",
)
@click.option(
    "--all-roles",
    is_flag=True,
    help="Map every paragraph, not only statements and definitions (headings, metadata, forms, page "
    "furniture, references and descriptive text are skipped by default).",
)
@database_option
@json_option
def audit_command(
    paths: tuple[Path, ...],
    model_path: Path | None,
    top_k: int,
    export_path: Path | None,
    relative_to: Path | None,
    no_recursive: bool,
    allow_failures: bool,
    processes: int | None,
    all_roles: bool,
    laws: str | None,
    rescore: bool,
    device: str | None,
    train_if_missing: bool,
    database_url: str | None,
    as_json: bool,
) -> None:
    """Audit documents against the GDPR: ingest, classify paragraphs, store scored links, summarise.

    Files that cannot be read are reported on stderr and the audit goes on; the exit status is then 1 (0 with
    --allow-failures when at least one document was audited).
    """
    from compliance.app import audit_documents
    from compliance.app.links import LinkQuery, export_links_file
    from compliance.cli.ingest import report_failure
    from compliance.connectors.roles import MAPPED_ROLES
    from compliance.linking.classifier_links import ClassifierLinkConfig

    classifier = load_classifier(model_path, device, train_if_missing)
    store = open_store(database_url)
    law_names = tuple(x.strip() for x in (laws or "").split(",") if x.strip())
    options = {
        "config": ClassifierLinkConfig(top_k=top_k),
        "relative_to": relative_to,
        "recursive": not no_recursive,
        "on_error": report_failure,
        "laws": law_names,
        "roles": None if all_roles else MAPPED_ROLES,
        "processes": processes,
    }
    rescored = None
    if rescore:
        from compliance.app.rescore import rescore_documents

        rescored = rescore_documents(store, list(paths), classifier, **options)  # type: ignore[arg-type]
        result = rescored.audit
    else:
        result = audit_documents(store, list(paths), classifier, **options)  # type: ignore[arg-type]
    exported = None
    if export_path is not None:
        every = LinkQuery(documents=tuple(d.document_id for d in result.documents))
        exported = export_links_file(store, export_path, None, every).links
    if as_json:
        data = rescored.to_dict() if rescored is not None else result.to_dict()
        data["exported"] = {"path": str(export_path), "rows": exported} if export_path else None
        echo_json(data)
    else:
        shared = f", shared among {result.processes} processes" if result.processes > 1 else ""
        click.echo(
            f"audit run audit:{result.run_number} (id {result.run_id}): {len(result.documents)} document(s), "
            f"{result.links} link(s), model {result.model['identity']}{shared}"
        )
        for doc in result.documents:
            click.echo(
                f"\n{printable(doc.source)} (document {doc.document_id} v{doc.version}, {doc.status}): "
                f"{doc.classified}/{doc.paragraphs} paragraph(s) classified, {doc.links} link(s)"
            )
            if doc.skipped:
                skipped = ", ".join(f"{n} {role}" for role, n in doc.skipped.items())
                click.echo(f"  not mapped, by paragraph role: {skipped}")
            if doc.other_languages:
                languages = ", ".join(f"{n} {language}" for language, n in doc.other_languages.items())
                click.echo(f"  not mapped, written in a language the classifier does not read: {languages}")
            for a in doc.top_articles:
                click.echo(
                    f"  Art. {a['article']:>2} {a['title']}: {a['paragraphs']} paragraph(s) linked, "
                    f"mean score {a['mean_score']:.2f}"
                )
            for a in doc.principles:
                click.echo(
                    f"  principles, Art. {a['article']} {a['title']}: {a['paragraphs']} paragraph(s) "
                    "(with the articles that give them effect)"
                )
            if doc.needs_review:
                click.echo(f"  {len(doc.needs_review)} paragraph(s) need review")
        if rescored is not None:
            d = rescored.diff
            click.echo(
                f"\nrescore: {len(d.gained)} link(s) gained, {len(d.lost)} lost, {len(d.reranked)} re-ranked; "
                f"{rescored.carried_over} decision(s) carried over, {len(rescored.flagged)} accepted link(s) "
                "set to needs-review:"
            )
            for f in rescored.flagged:
                click.echo(f"  link {f['link_id']}: {f['reason']}")
        if exported is not None:
            click.echo(f"\n{exported} current link(s) exported to {export_path}")
        if result.failures:
            click.echo(f"{len(result.failures)} file(s) could not be read", err=True)
    if not result.documents or (result.failures and not allow_failures):
        raise click.exceptions.Exit(1)
