"""Review views: a document's paragraphs with their suggested links (score, evidence terms, the matching
provision's text) and each document's review progress — what the web review page and the HTTP API show.

The links are the latest version's, each with its current status (its latest review, else the status it was
proposed with).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any

from compliance.app.documents import document_summary
from compliance.text import snippet

if TYPE_CHECKING:  # pragma: no cover
    from compliance.rules.corpus import Law
    from compliance.store import LinkRecord, Store

__all__ = ["REVIEW_ACTIONS", "document_links", "documents_with_progress", "review_link", "review_progress"]

#: what a reviewer can do with a suggested link on the review page → the decision recorded (``None``: keep the
#: current status, record the comment)
REVIEW_ACTIONS: dict[str, str | None] = {
    "accept": "accepted",
    "reject": "rejected",
    "needs-review": "needs-review",
    "reopen": "proposed",
    "comment": None,
}

#: statuses that count as decided by a reviewer
DECIDED = ("accepted", "rejected")


def review_progress(links: list[LinkRecord]) -> dict[str, Any]:
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


def _latest_links(store: Store, document_id: int) -> list[LinkRecord]:
    paragraphs = {p.id for p in store.iter_paragraphs(document_ids=[document_id])}
    return [link for link in store.list_links(document_id=document_id) if link.paragraph_id in paragraphs]


def review_link(
    store: Store, link_id: int, action: str, reviewer: str, comment: str | None = None
) -> dict[str, Any]:
    """Record a reviewer's decision on a link (a new review row: the history is kept) and return the link as the
    review page shows it (:func:`document_links`' link form) with its document's new ``review`` progress.

    Raises:
        ConfigurationError: an unknown action, or a comment action without a comment.
        NotFoundError: no such link.
    """
    from compliance.errors import ConfigurationError

    if action not in REVIEW_ACTIONS:
        raise ConfigurationError(f"unknown review action {action!r}; use one of {', '.join(REVIEW_ACTIONS)}")
    link = store.get_link(link_id)
    decision = REVIEW_ACTIONS[action] or link.status
    if REVIEW_ACTIONS[action] is None and not (comment or "").strip():
        raise ConfigurationError("write a comment first")
    store.add_review(link_id, decision, reviewer, (comment or "").strip() or None)
    paragraph = store.get_paragraphs([link.paragraph_id])[0]
    view = document_links(store, paragraph.document_id)
    for p in view["paragraphs_with_links"]:
        for shown in p["links"]:
            if shown["id"] == link_id:
                return {"link": shown, "review": view["review"], "document_id": paragraph.document_id}
    raise ConfigurationError(f"link {link_id} belongs to an earlier version of its document")


def documents_with_progress(store: Store) -> list[dict[str, Any]]:
    """Every stored document (:func:`~compliance.app.documents.document_summary`) with its ``review``
    progress over the links of its latest version."""
    out = []
    for record in store.list_documents():
        data = document_summary(record)
        data["review"] = review_progress(_latest_links(store, record.id))
        out.append(data)
    return out


def document_links(store: Store, document: int | str, *, provision_chars: int = 400) -> dict[str, Any]:
    """A document's latest version: its summary, ``review`` progress and ``paragraphs_with_links`` — each
    paragraph with its links best first, every link with ``article_title``, ``terms`` (shared evidence terms)
    and ``provision_text`` (the linked provision's text, cut to ``provision_chars``).

    Raises:
        NotFoundError: no such document.
    """
    record = store.get_document(document)
    paragraphs = list(store.iter_paragraphs(document_ids=[record.id]))
    ids = {p.id for p in paragraphs}
    links = [link for link in store.list_links(document_id=record.id) if link.paragraph_id in ids]
    laws: dict[int, Law] = {}
    by_paragraph: defaultdict[int, list[dict[str, Any]]] = defaultdict(list)
    for link in sorted(links, key=lambda x: (x.paragraph_id, x.rank or 1 << 30, -x.score, x.id)):
        if link.law_id not in laws:
            laws[link.law_id] = store.get_law(link.law_id)
        law = laws[link.law_id]
        try:
            provision = law.get(link.provision_key)
            text = law.text_of(link.provision_key)
        except KeyError:
            provision, text = None, ""
        data = link.to_dict()
        data["article_title"] = link.evidence.get("title") or (provision.title if provision else None)
        data["terms"] = list(link.evidence.get("shared_terms", []))
        data["provision_text"] = snippet(text, provision_chars)
        by_paragraph[link.paragraph_id].append(data)
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
