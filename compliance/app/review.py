"""Review views, on top of :mod:`compliance.app.links`: a document's paragraphs with their suggested links (score,
evidence terms, the matching provision's text), each document's review progress, and the coverage heatmap — what
the web review page and the HTTP API show.

Decisions are recorded by :func:`compliance.app.links.review_links` (the use case of ``compliance links review``:
append-only review rows with the reviewer and comment); this module only reads. The links shown are the current
ones (:func:`compliance.app.links.list_links`: the latest document version, superseded runs left out), each with
its current status (its latest review, else the status it was proposed with).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from compliance.app.documents import document_summary
from compliance.app.links import COMMENT_DECISION, LinkQuery, list_links
from compliance.text import snippet

if TYPE_CHECKING:  # pragma: no cover
    from compliance.rules.corpus import Law
    from compliance.store import Store
    from compliance.store.link_history import CurrentLink

__all__ = [
    "REVIEW_ACTIONS",
    "coverage_heatmap",
    "document_links",
    "documents_with_progress",
    "link_view",
    "review_progress",
    "reviewed_link",
]

#: what a reviewer can do with a suggested link (the decisions :func:`~compliance.app.links.review_links` takes)
REVIEW_ACTIONS = ("accept", "reject", "needs-review", "reopen", COMMENT_DECISION)

#: statuses that count as decided by a reviewer
DECIDED = ("accepted", "rejected")


def review_progress(links: Sequence[CurrentLink]) -> dict[str, Any]:
    """Counts of links by current status, and the share decided (accepted or rejected)."""
    counts = Counter(link.status for link in links)
    total = len(links)
    reviewed = sum(counts[s] for s in DECIDED)
    return {
        "links": total,
        "reviewed": reviewed,
        "accepted": counts["accepted"],
        "rejected": counts["rejected"],
        "open": total - reviewed,
        "progress": round(reviewed / total, 4) if total else 0.0,
    }


class _Laws:
    """Stored laws by id, each loaded once per view."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._laws: dict[int, Law] = {}

    def __call__(self, law_id: int) -> Law:
        if law_id not in self._laws:
            self._laws[law_id] = self.store.get_law(law_id)
        return self._laws[law_id]


def held_for_review(evidence: Mapping[str, Any]) -> str | None:
    """Why the machine held a classifier link for review instead of proposing it, when its evidence says: the
    article defines the act's terms and the audit never proposes definitions (``definitions: "review"``), the
    paragraph's wording is too far from the article's (``components.text_cosine`` below the ``corroboration``
    level the audit used), or a principle umbrella ranked high on its member articles' mass (``components.own``
    far below the score), or the provision it fits best obliges public bodies only (``provision.public_bodies``). None when the evidence says none of these."""
    from compliance.rules.addressees import defines_terms

    if evidence.get("definitions") == "review" and defines_terms(evidence.get("title")):
        return "a definition: a paragraph that uses a defined term does not implement the definition"
    provision = evidence.get("provision")
    if isinstance(provision, Mapping) and provision.get("public_bodies"):
        return (
            f"the provision it fits best, {provision.get('label') or provision.get('key')}, obliges public bodies "
            "only (a supervisory authority, a Member State): a policy does not implement it"
        )
    components = evidence.get("components")
    if not isinstance(components, Mapping):
        return None
    cosine, level = components.get("text_cosine"), evidence.get("corroboration")
    if isinstance(cosine, float | int) and isinstance(level, float | int) and cosine < level:
        return (
            f"the paragraph's wording is far from the article's (cosine {cosine:.2f} with its closest paragraph "
            f"or point; the link decision drops below {level:.2f})"
        )
    own, share = components.get("own"), components.get("umbrella")
    if isinstance(own, float | int) and isinstance(share, float | int) and share >= 0.5:
        return f"a principle ranked on the articles that give it effect ({share:.0%} of its score; its own {own:.2f})"
    return None


def link_view(link: CurrentLink, law: Law | None = None, *, provision_chars: int = 400) -> dict[str, Any]:
    """A current link as the page and the API show it: every field of the link (``link_id`` also as ``id``), its
    ``article`` number, ``article_title``, ``terms`` (the shared evidence terms), ``provision_text`` (the
    provision's text from ``law``, cut to ``provision_chars``), ``text_match`` (the paragraph's cosine with the
    article's closest passage, when the audit measured it) and ``held`` (:func:`held_for_review`)."""
    text, title = "", link.provision_title
    if law is not None:
        try:
            provision = law.get(link.provision_key)
            text = law.text_of(link.provision_key)
            title = title or provision.title
        except KeyError:
            pass
    return {
        **link.to_dict(),
        "id": link.link_id,
        "article": link.article,
        "article_title": link.evidence.get("title") or title,
        "terms": list(link.evidence.get("shared_terms", [])),
        "cited_as": link.evidence.get("cited_as"),
        "read_with": link.evidence.get("read_with"),
        "abbreviations": dict(link.evidence.get("abbreviations") or {}),
        "provision_text": snippet(text, provision_chars),
        "text_match": (link.evidence.get("components") or {}).get("text_cosine"),
        "held": held_for_review(link.evidence) if link.method == "classifier" else None,
    }


def documents_with_progress(store: Store) -> list[dict[str, Any]]:
    """Every stored document (:func:`~compliance.app.documents.document_summary`) with its ``review``
    progress over its current links."""
    by_document: defaultdict[int, list[CurrentLink]] = defaultdict(list)
    for link in list_links(store):
        by_document[link.document_id].append(link)
    out = []
    for record in store.list_documents():
        data = document_summary(record)
        data["review"] = review_progress(by_document.get(record.id, []))
        out.append(data)
    return out


def document_links(store: Store, document: int | str, *, provision_chars: int = 400) -> dict[str, Any]:
    """A document's latest version: its summary, ``review`` progress and ``paragraphs_with_links`` — each
    paragraph with its current links best first (:func:`link_view`).

    Raises:
        NotFoundError: no such document.
    """
    from compliance.app.documents import find_document

    record = find_document(store, document)
    paragraphs = list(store.iter_paragraphs(document_ids=[record.id]))
    links = list_links(store, LinkQuery(document=record.id))
    laws = _Laws(store)
    by_paragraph: defaultdict[int, list[dict[str, Any]]] = defaultdict(list)
    for link in sorted(links, key=lambda x: (x.paragraph_id, x.rank or 1 << 30, -x.score, x.link_id)):
        by_paragraph[link.paragraph_id].append(
            link_view(link, laws(link.law_id), provision_chars=provision_chars)
        )
    summary = document_summary(record)
    summary["review"] = review_progress(links)
    summary["paragraphs_with_links"] = [
        {
            "id": p.id,
            "ordinal": p.ordinal,
            "text": p.text,
            "kind": p.kind,
            "page": p.page,
            "heading_path": list(p.heading_path),
            "links": by_paragraph.get(p.id, []),
        }
        for p in paragraphs
    ]
    return summary


def reviewed_link(store: Store, link_id: int, *, provision_chars: int = 400) -> dict[str, Any]:
    """After a review: the link (:func:`link_view`), its document's new ``review`` progress and ``document_id``.

    Raises:
        NotFoundError: no such link.
    """
    from compliance.errors import NotFoundError

    found = store.current_links(link_ids=[link_id], current_only=False)
    if not found:
        raise NotFoundError(f"no link {link_id}")
    link = found[0]
    progress = review_progress(list_links(store, LinkQuery(document=link.document_id)))
    return {
        "link": link_view(link, _Laws(store)(link.law_id), provision_chars=provision_chars),
        "review": progress,
        "document_id": link.document_id,
    }


def coverage_heatmap(
    store: Store, law: str = "gdpr", documents: Sequence[int | str] | None = None
) -> dict[str, Any]:
    """The document × article coverage matrix of ``law`` for the review page, from
    :func:`compliance.app.reports.coverage_report` (the report's own data): ``summary``, ``documents`` (each with
    ``cells``, one state per article: ``accepted``, ``suggested``, ``rejected`` or ``none``), ``articles`` (key,
    number, title, chapter, overall state) and ``chapters``.

    Raises:
        LawNotFoundError: the law is not stored.
        NotFoundError: an unknown document.
    """
    from compliance.app.reports import coverage_report

    report = coverage_report(store, law, documents)
    data = report.to_dict()
    articles = [
        {"key": a.key, "number": a.number, "title": a.title, "chapter": a.chapter, "state": a.state}
        for a in report.articles
    ]
    rows = [
        {
            "id": d.id,
            "source": d.source,
            "version": d.version,
            "links": d.links,
            "accepted": d.accepted,
            "cells": [a.cells.get(d.id) or "none" for a in report.articles],
        }
        for d in report.documents
    ]
    return {
        "law": report.law,
        "law_title": report.law_title,
        "law_version": report.law_version,
        "summary": data["summary"],
        "progress": data["progress"],
        "chapters": data["chapters"],
        "articles": articles,
        "documents": rows,
    }
