"""Coverage and gaps: which articles of a law the organisation's documents cover, and how sure we are.

Built from the current links (:meth:`~compliance.store.Store.current_links`) and the law's structure. A cell of
the document × article matrix is

* ``accepted`` — at least one link of the document to the article (or one of its paragraphs) was accepted;
* ``suggested`` — only unreviewed suggestions (``proposed`` or ``needs-review``);
* ``rejected`` — every link was rejected;
* empty — no link at all.

An article is **covered** when some document has an accepted link to it; **suggested only** when it has
suggestions but no accepted link; a **gap** when no accepted link exists (suggested-only articles are gaps too,
marked as such). Coverage per chapter is the share of its articles that are covered.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from compliance.rules.corpus import Law
    from compliance.store.link_history import CurrentLink

__all__ = [
    "ArticleCoverage",
    "ChapterCoverage",
    "CoverageReport",
    "DocumentColumn",
    "build_coverage",
]


@dataclass(frozen=True)
class DocumentColumn:
    """A document of the report."""

    id: int
    source: str
    version: int
    links: int
    accepted: int


@dataclass(frozen=True)
class Evidence:
    """The best paragraph for an article: accepted first, then by score."""

    link_id: int
    document_id: int
    document: str
    paragraph: int
    text: str
    score: float
    status: str
    method: str
    target: str = ""  # the paragraph or point within the article that fits best (``Art. 32(1)(a)``), if named


@dataclass(frozen=True)
class ArticleCoverage:
    """One article: its cells (document id → state), counts and best evidence."""

    key: str
    number: str
    title: str
    chapter: str
    state: str  # covered, suggested, gap (no link), rejected (only rejected links)
    cells: dict[int, str]
    accepted: int
    suggested: int
    rejected: int
    evidence: Evidence | None = None


@dataclass(frozen=True)
class ChapterCoverage:
    """Coverage of one chapter: its articles covered (accepted), suggested only, and neither."""

    key: str
    title: str
    articles: int
    covered: int
    suggested: int

    @property
    def share(self) -> float:
        return self.covered / self.articles if self.articles else 0.0


@dataclass
class CoverageReport:
    """Everything the HTML, XLSX and JSON reports show."""

    law: str
    law_title: str
    law_identifier: str
    law_version: int
    generated_at: str
    documents: list[DocumentColumn]
    articles: list[ArticleCoverage]
    chapters: list[ChapterCoverage]
    progress: dict[str, int]
    other_laws: dict[str, int] = field(default_factory=dict)

    @property
    def gaps(self) -> list[ArticleCoverage]:
        """Articles with no accepted link (suggested-only ones included)."""
        return [a for a in self.articles if a.state != "covered"]

    @property
    def suggested_only(self) -> list[ArticleCoverage]:
        return [a for a in self.articles if a.state == "suggested"]

    @property
    def covered(self) -> list[ArticleCoverage]:
        return [a for a in self.articles if a.state == "covered"]

    @property
    def reviewed_share(self) -> float:
        total = sum(self.progress.values())
        decided = self.progress.get("accepted", 0) + self.progress.get("rejected", 0)
        return decided / total if total else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "law": self.law,
            "law_title": self.law_title,
            "law_identifier": self.law_identifier,
            "law_version": self.law_version,
            "generated_at": self.generated_at,
            "summary": {
                "articles": len(self.articles),
                "covered": len(self.covered),
                "suggested_only": len(self.suggested_only),
                "gaps": len(self.gaps),
                "coverage": round(len(self.covered) / len(self.articles), 4) if self.articles else 0.0,
                "reviewed_share": round(self.reviewed_share, 4),
            },
            "documents": [asdict(d) for d in self.documents],
            "chapters": [{**asdict(c), "share": round(c.share, 4)} for c in self.chapters],
            "articles": [
                {**asdict(a), "cells": {str(k): v for k, v in a.cells.items()}} for a in self.articles
            ],
            "gaps": [a.key for a in self.gaps],
            "suggested_only": [a.key for a in self.suggested_only],
            "progress": dict(self.progress),
            "other_laws": dict(self.other_laws),
        }


def _article_key(law: Law, key: str) -> str | None:
    """The article a provision key belongs to (``art:32/par:1`` → ``art:32``), None if not under an article."""
    head = key.split("/", 1)[0]
    if head.startswith("art:"):
        return head
    try:
        current: str | None = key
        while current is not None:
            prov = law.get(current)
            if prov.kind == "article":
                return prov.key
            current = prov.parent_key
    except KeyError:
        return None
    return None


def _cell_state(statuses: Sequence[str]) -> str:
    if "accepted" in statuses:
        return "accepted"
    if any(s in ("proposed", "needs-review") for s in statuses):
        return "suggested"
    return "rejected" if statuses else ""


def build_coverage(
    law: Law,
    links: Iterable[CurrentLink],
    documents: Sequence[tuple[int, str, int]],
    *,
    other_links: Iterable[CurrentLink] = (),
    generated_at: datetime | None = None,
    law_version: int = 1,
) -> CoverageReport:
    """The coverage report of ``law`` over ``documents`` (``(id, source, version)``) from their current links to
    the law (links to other laws only feed the ``other_laws`` counts). Each iterable is read once, link by link
    (:meth:`~compliance.store.Store.iter_current_links`): what is kept is the statuses per article and document
    and the best link per article, not the links."""
    doc_ids = [d[0] for d in documents]
    wanted = set(doc_ids)
    per_cell: dict[tuple[str, int], list[str]] = {}
    best: dict[str, CurrentLink] = {}
    doc_links: Counter[int] = Counter()
    doc_accepted: Counter[int] = Counter()
    progress: Counter[str] = Counter()
    for link in links:
        art = _article_key(law, link.provision_key)
        if art is None or link.document_id not in wanted:
            continue
        per_cell.setdefault((art, link.document_id), []).append(link.status)
        doc_links[link.document_id] += 1
        doc_accepted[link.document_id] += link.status == "accepted"
        progress[link.status] += 1
        if link.status != "rejected":
            cur = best.get(art)
            rank = (link.status == "accepted", link.score)
            if cur is None or rank > (cur.status == "accepted", cur.score):
                best[art] = link
    articles: list[ArticleCoverage] = []
    for prov in law.articles:
        chapter = law.chapter_of(prov.key)
        chapter_label = (
            f"Chapter {chapter.number}" + (f" — {chapter.title}" if chapter.title else "") if chapter else "—"
        )
        cells = {d: _cell_state(per_cell.get((prov.key, d), [])) for d in doc_ids}
        statuses = [s for d in doc_ids for s in per_cell.get((prov.key, d), [])]
        n_acc = sum(s == "accepted" for s in statuses)
        n_sug = sum(s in ("proposed", "needs-review") for s in statuses)
        n_rej = sum(s == "rejected" for s in statuses)
        state = "covered" if n_acc else "suggested" if n_sug else "rejected" if n_rej else "gap"
        ev = best.get(prov.key)
        articles.append(
            ArticleCoverage(
                key=prov.key,
                number=prov.number or prov.key,
                title=prov.title or "",
                chapter=chapter_label,
                state=state,
                cells=cells,
                accepted=n_acc,
                suggested=n_sug,
                rejected=n_rej,
                evidence=Evidence(
                    ev.link_id,
                    ev.document_id,
                    ev.document_source,
                    ev.paragraph_ordinal,
                    ev.paragraph_text,
                    round(ev.score, 4),
                    ev.status,
                    ev.method,
                    ev.target if "provision" in ev.evidence else "",
                )
                if ev is not None
                else None,
            )
        )
    chapters: dict[str, list[ArticleCoverage]] = {}
    for a in articles:
        chapters.setdefault(a.chapter, []).append(a)
    chapter_rows = [
        ChapterCoverage(
            key=name,
            title=name,
            articles=len(group),
            covered=sum(a.state == "covered" for a in group),
            suggested=sum(a.state == "suggested" for a in group),
        )
        for name, group in chapters.items()
    ]
    other = Counter(link.law_short_name for link in other_links if link.document_id in wanted)
    return CoverageReport(
        law=law.short_name,
        law_title=law.title,
        law_identifier=law.identifier,
        law_version=law_version,
        generated_at=(generated_at or datetime.now(UTC)).replace(microsecond=0).isoformat(),
        documents=[DocumentColumn(d, src, ver, doc_links[d], doc_accepted[d]) for d, src, ver in documents],
        articles=articles,
        chapters=chapter_rows,
        progress={s: progress.get(s, 0) for s in ("accepted", "proposed", "needs-review", "rejected")},
        other_laws=dict(other),
    )
