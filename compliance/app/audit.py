"""Audit: ingest documents → paragraphs → GDPR article classifier → scored links in the store → a summary per
document and an export of the links.

Re-running on unchanged documents classifies nothing again: a paragraph that already has classifier links from
the same model (same identity) is skipped. A changed document is a new version whose paragraphs are new.
"""

from __future__ import annotations

import csv
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compliance.app.ingest import FileFailure, OnError, Source, expand_sources, save_sources, source_labels
from compliance.errors import ConfigurationError
from compliance.linking.classifier_links import (
    METHOD,
    ClassifierLinkConfig,
    ParagraphLinks,
    classify_paragraphs,
)
from compliance.store import NewLink

if TYPE_CHECKING:  # pragma: no cover
    from compliance.models.classifier import ArticleClassifier
    from compliance.store import Store

__all__ = ["AuditReport", "AuditedDocument", "audit_documents", "export_links"]


@dataclass
class AuditedDocument:
    """What the audit found in one document."""

    source: str
    document_id: int
    version: int
    status: str  # new, new-version, unchanged
    paragraphs: int
    classified: int
    links: int
    top_articles: list[dict[str, Any]] = field(default_factory=list)
    needs_review: list[dict[str, Any]] = field(default_factory=list)
    #: the principle umbrellas (Art. 5 …) the document touches, kept apart so that they do not crowd out the
    #: specific articles in ``top_articles``
    principles: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class AuditReport:
    """The result of :func:`audit_documents`."""

    run_id: int
    model: dict[str, Any]
    documents: list[AuditedDocument]
    failures: list[FileFailure]
    links: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "model": self.model,
            "links": self.links,
            "documents": [asdict(d) for d in self.documents],
            "failures": [f.to_dict() for f in self.failures],
        }


def _ensure_gdpr(store: Store) -> int:
    """The stored GDPR's law id, installing the law pack's text into the store first if needed."""
    from compliance.errors import LawNotFoundError

    try:
        return int(store.law_record("gdpr").id)
    except LawNotFoundError:
        from compliance.rules import load_pack_law

        return int(store.save_law(load_pack_law("gdpr")).id)


def audit_documents(
    store: Store,
    sources: Iterable[Source],
    classifier: ArticleClassifier,
    *,
    config: ClassifierLinkConfig | None = None,
    relative_to: Path | None = None,
    recursive: bool = True,
    on_error: OnError | None = None,
    laws: Sequence[str] = (),
    reclassify: bool = False,
) -> AuditReport:
    """Ingest ``sources`` and link every new paragraph to GDPR articles.

    Args:
        store: an open, migrated :class:`~compliance.store.Store`.
        sources: files, folders and uploads.
        classifier: the GDPR article classifier.
        config: top-k, review band, batch size.
        relative_to: store document sources relative to this folder.
        recursive: descend into sub-folders.
        on_error: called for every file that could not be read (the audit goes on).
        laws: other installed laws (short names) to link every paragraph to as well, through the
            document-to-law retriever (:func:`compliance.app.law_links.link_other_laws`); ``gdpr`` is the
            classifier's and is skipped there.
        reclassify: classify every paragraph again even when this model already did (``audit --rescore``).

    Returns:
        The run id, a summary per document (top articles, paragraphs needing review) and the failures.
    """
    from compliance.connectors import SplitConfig

    config = config or ClassifierLinkConfig()
    given = list(sources)
    band = config.review_band or classifier.config.review_band
    law_id = _ensure_gdpr(store)
    provision_ids = store.provision_id_map(law_id)
    model_info = {
        "identity": classifier.identity,
        "recipe": classifier.meta.get("recipe", {}).get("name"),
        "path": classifier.meta.get("path"),
        "temperature": classifier.config.temperature,
        "review_band": list(band),
    }
    run_config = {
        "paths": source_labels(given),
        "linking": {**asdict(config), "review_band": list(band)},
        "law_id": law_id,
        "laws": list(laws),
        "reclassify": reclassify,
    }
    umbrella_articles = {a for a, _ in (classifier.config.umbrellas or ())}
    failures: list[FileFailure] = []
    summaries: list[AuditedDocument] = []
    total_links = 0
    items = expand_sources(given, recursive=recursive)
    for name in laws:  # an unknown law fails before anything is stored
        store.law_record(name)
    with store.run("audit", run_config, model=model_info) as run:
        for outcome in save_sources(
            store, items, config=SplitConfig(), relative_to=relative_to, on_error=on_error
        ):
            if isinstance(outcome, FileFailure):
                failures.append(outcome)
                continue
            doc, saved, status = outcome.document, outcome.saved, outcome.status
            paragraphs = list(store.iter_paragraphs(document_ids=[saved.document_id]))
            done = (
                set()
                if reclassify
                else {
                    link.paragraph_id
                    for link in store.list_links(document_id=saved.document_id)
                    if link.method == METHOD and (link.evidence or {}).get("model") == classifier.identity
                }
            )
            todo = [(p.id, p.text) for p in paragraphs if p.id not in done]
            results = classify_paragraphs(classifier, todo, config)
            links = new_links(results, provision_ids, classifier.identity, {"run": run.id})
            if links:
                store.add_links(run.id, links)
            total_links += len(links)
            text_of = {p.id: p for p in paragraphs}
            weight: defaultdict[int, float] = defaultdict(float)
            count: Counter[int] = Counter()
            titles: dict[int, str] = {}
            review: list[dict[str, Any]] = []
            for res in results:
                for score, _ in res.linked:
                    weight[score.article] += score.score
                    count[score.article] += 1
                    titles[score.article] = score.title
                if res.needs_review:
                    p = text_of[res.paragraph_id]
                    top = res.ranked[0]
                    review.append(
                        {
                            "paragraph_id": p.id,
                            "ordinal": p.ordinal,
                            "text": p.text[:200],
                            "top_article": top.article,
                            "score": round(top.score, 3),
                            "reason": "abstain" if res.abstained else "in review band",
                        }
                    )
            summaries.append(
                AuditedDocument(
                    source=doc.source,
                    document_id=saved.document_id,
                    version=saved.version,
                    status=status,
                    paragraphs=len(paragraphs),
                    classified=len(results),
                    links=len(links),
                    top_articles=[
                        {"article": a, "title": titles[a], "paragraphs": count[a], "weight": round(w, 3)}
                        for a, w in sorted(weight.items(), key=lambda kv: -kv[1])
                        if a not in umbrella_articles
                    ][:5],
                    needs_review=review,
                    principles=[
                        {"article": a, "title": titles[a], "paragraphs": count[a], "weight": round(w, 3)}
                        for a, w in sorted(weight.items(), key=lambda kv: -kv[1])
                        if a in umbrella_articles
                    ],
                )
            )
        if laws:
            from compliance.app.law_links import link_other_laws

            law_links = link_other_laws(store, run.id, [d.document_id for d in summaries], laws)
            run.stats["law_links"] = law_links
            total_links += law_links
        run.stats.update(
            {
                "documents": len(summaries),
                "failed": len(failures),
                "links": total_links,
                "paragraphs_classified": sum(s.classified for s in summaries),
                "needs_review": sum(len(s.needs_review) for s in summaries),
            }
        )
    return AuditReport(run.id, model_info, summaries, failures, total_links)


def new_links(
    results: Sequence[ParagraphLinks],
    provision_ids: Mapping[str, int],
    model_identity: str,
    extra_evidence: Mapping[str, Any] | None = None,
) -> list[NewLink]:
    """:class:`~compliance.store.NewLink` rows for ``results`` (``provision_ids``: ``art:N`` → provision id)."""
    links = []
    for res in results:
        for score, status in res.linked:
            key = f"art:{score.article}"
            if key not in provision_ids:
                raise ConfigurationError(f"the stored GDPR has no provision {key}")
            evidence: dict[str, Any] = {
                "model": model_identity,
                "article": score.article,
                "title": score.title,
                "abstain": res.abstained,
                **(extra_evidence or {}),
            }
            if score.components is not None:
                evidence["components"] = score.components
            if score.terms:
                evidence["shared_terms"] = list(score.terms)
            links.append(
                NewLink(
                    res.paragraph_id, provision_ids[key], METHOD, score.score, score.rank, evidence, status
                )
            )
    return links


def export_links(store: Store, run_id: int, out: Path) -> int:
    """Write the run's links to ``out`` (``.csv`` or ``.json``); returns the number of rows.

    Raises:
        ConfigurationError: another file extension.
    """
    rows = store.export_links(run_id)
    suffix = out.suffix.lower()
    if suffix == ".json":
        out.write_text(json.dumps(rows, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    elif suffix == ".csv":
        columns = list(rows[0]) if rows else ["link_id"]
        with out.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=columns)
            writer.writeheader()
            for row in rows:
                writer.writerow(
                    {
                        k: json.dumps(v, ensure_ascii=False) if isinstance(v, (dict, list)) else v
                        for k, v in row.items()
                    }
                )
    else:
        raise ConfigurationError(f"--export: use a .csv or .json file name, not {out.name!r}")
    return len(rows)
