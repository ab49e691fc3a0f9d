"""The officer's view of links (mixed into :class:`~compliance.store.Store`): which links are *current*, batches of
reviews recorded all at once, and links a reviewer adds by hand.

A link is **current** when

* its paragraph belongs to the latest version of its document (a changed document is a new version with new
  paragraphs: the old version's links are history), and
* no later run of the same method has scored the same paragraph against the same law (a re-audit with another
  model, or ``audit --rescore``, supersedes the earlier suggestions; the reviews of the earlier links stay in the
  history and are carried over by the rescore use case);
* links a reviewer added by hand (method ``manual``) are always current.

Links and reviews stay append-only: nothing here updates or deletes a row.
"""

from __future__ import annotations

import hashlib
from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from compliance.errors import NotFoundError, StoreError
from compliance.store.base import StoreBase, _chunks, latest_review_subquery
from compliance.store.records import ReviewRecord, _Record, to_jsonable

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

__all__ = ["MANUAL_METHOD", "CurrentLink", "LinkFilters", "LinkHistoryMixin", "NewReview", "text_digest"]

#: the method of links a reviewer added by hand
MANUAL_METHOD = "manual"


class LinkFilters(TypedDict, total=False):
    """The filters of :meth:`LinkHistoryMixin.current_links` and :meth:`LinkHistoryMixin.iter_current_links`."""

    document_ids: Sequence[int] | None
    law: str | None
    provision: str | None
    status: str | Sequence[str] | None
    min_score: float | None
    max_score: float | None
    model: str | None
    run_id: int | None
    method: str | None
    link_ids: Sequence[int] | None
    current_only: bool


def text_digest(text: str) -> str:
    """A short, stable fingerprint of a paragraph's text (first 16 hex digits of its sha256)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class NewReview:
    """A decision to record with :meth:`LinkHistoryMixin.add_reviews`.

    ``source`` says how it came in (``cli``, ``api``, ``import``, ``manual``, ``rescore``, ``law-change``,
    ``carry-over``); for system decisions the ``comment`` carries the reason.
    """

    link_id: int
    decision: str
    reviewer: str
    comment: str | None = None
    source: str = "cli"


@dataclass(frozen=True, slots=True)
class CurrentLink(_Record):
    """A link with everything a reviewer reads: the paragraph and its document, the provision and its law, the
    suggestion (method, model, run, score, evidence) and the current decision (latest review)."""

    link_id: int
    run_id: int
    run_kind: str
    method: str
    model: str | None
    document_id: int
    document_source: str
    document_version: int
    latest_version: int
    paragraph_id: int
    paragraph_ordinal: int
    paragraph_page: int | None
    heading_path: tuple[str, ...]
    paragraph_text: str
    text_sha256: str
    law_id: int
    law_short_name: str
    law_identifier: str
    law_version: int
    provision_id: int
    provision_key: str
    provision_kind: str
    provision_number: str | None
    provision_title: str | None
    score: float
    rank: int | None
    proposed_status: str
    status: str
    reviewer: str | None
    review_comment: str | None
    reviewed_at: datetime | None
    created_at: datetime
    evidence: dict[str, Any] = field(default_factory=dict)

    @property
    def article(self) -> int | None:
        """The article number for ``art:N`` keys (and their paragraphs, ``art:N/par:M``), else None."""
        head = self.provision_key.split("/", 1)[0]
        if head.startswith("art:") and head[4:].isdigit():
            return int(head[4:])
        return None

    @property
    def target(self) -> str:
        """The provision as a lawyer names it: the paragraph or point the provision picker chose within the
        linked article (``evidence.provision.label``, ``Art. 32(1)(a)``), else the linked provision's label."""
        from compliance.rules.references import provision_label

        chosen = self.evidence.get("provision") if isinstance(self.evidence, dict) else None
        if isinstance(chosen, dict) and chosen.get("label"):
            return str(chosen["label"])
        return provision_label(self.provision_key)

    @property
    def is_current_version(self) -> bool:
        return self.document_version == self.latest_version


class LinkHistoryMixin(StoreBase):
    """Current links, batches of reviews, manual links."""

    def current_links(self, **filters: Unpack[LinkFilters]) -> list[CurrentLink]:
        """Links with their current status, filtered; ordered by document, paragraph, law, rank.

        Args:
            document_ids: only links of these documents.
            law: a law's short name or identifier (every stored version of it).
            provision: a provision key; ``art:32`` also matches ``art:32/par:1`` (a bare number means ``art:N``).
            status: the current status (or several).
            min_score: only links scoring at least this.
            max_score: only links scoring below this.
            model: the suggesting model's identity (a prefix is enough).
            run_id: only links proposed by this run.
            method: ``classifier``, ``retriever``, ``manual`` …
            link_ids: only these links.
            current_only: False: also superseded links (old document versions, earlier runs).
        """
        return list(self.iter_current_links(**filters))

    def iter_current_links(
        self, *, page: int = 1000, **filters: Unpack[LinkFilters]
    ) -> Generator[CurrentLink, None, None]:
        """:meth:`current_links` one link at a time, in the same order, holding one paragraph's links and a page
        of ``page`` rows of the query at once (an export of a whole audit's links stays in bounded memory however
        many there are). The database reads the links in document and paragraph order; one paragraph's links
        (every version's at that position, when ``current_only`` is False) are then filtered and sorted as
        :meth:`current_links` documents. The session stays open until the iterator is exhausted or closed."""
        from sqlalchemy import or_, select

        from compliance.store.orm import (
            Document,
            DocumentVersion,
            LawRow,
            LinkRow,
            ParagraphRow,
            ProvisionRow,
            ReviewRow,
            RunRow,
        )

        document_ids = filters.get("document_ids")
        law, provision, status = filters.get("law"), filters.get("provision"), filters.get("status")
        min_score, max_score = filters.get("min_score"), filters.get("max_score")
        model, run_id, method = filters.get("model"), filters.get("run_id"), filters.get("method")
        link_ids, current_only = filters.get("link_ids"), filters.get("current_only", True)
        latest = latest_review_subquery()
        stmt = (
            select(LinkRow, RunRow.kind, RunRow.model, ParagraphRow, DocumentVersion.version, Document)
            .add_columns(ProvisionRow, LawRow, ReviewRow)
            .join(RunRow, LinkRow.run_id == RunRow.id)
            .join(ParagraphRow, LinkRow.paragraph_id == ParagraphRow.id)
            .join(DocumentVersion, ParagraphRow.version_id == DocumentVersion.id)
            .join(Document, DocumentVersion.document_id == Document.id)
            .join(ProvisionRow, LinkRow.provision_id == ProvisionRow.id)
            .join(LawRow, ProvisionRow.law_id == LawRow.id)
            .outerjoin(latest, latest.c.link_id == LinkRow.id)
            .outerjoin(ReviewRow, ReviewRow.id == latest.c.review_id)
        )
        if current_only:
            stmt = stmt.where(DocumentVersion.version == Document.latest_version)
        if document_ids is not None:
            stmt = stmt.where(Document.id.in_(list(document_ids)))
        if law is not None:
            stmt = stmt.where(or_(LawRow.short_name == law.lower(), LawRow.identifier == law))
        if provision is not None:
            key = f"art:{provision}" if provision.isdigit() else provision
            stmt = stmt.where(or_(ProvisionRow.key == key, ProvisionRow.key.startswith(key + "/")))
        if run_id is not None:
            stmt = stmt.where(LinkRow.run_id == run_id)
        if method is not None:
            stmt = stmt.where(LinkRow.method == method)
        if link_ids is not None:
            stmt = stmt.where(LinkRow.id.in_(list(link_ids)))
        stmt = stmt.order_by(Document.id, ParagraphRow.ordinal).execution_options(yield_per=page)
        statuses = {status} if isinstance(status, str) else set(status) if status is not None else None
        drop_superseded = current_only and link_ids is None

        def finished(group: list[CurrentLink]) -> list[CurrentLink]:
            kept = _drop_superseded(group) if drop_superseded else group
            out = [
                r
                for r in kept
                if (statuses is None or r.status in statuses)
                and (min_score is None or r.score >= min_score)
                and (max_score is None or r.score < max_score)
                and (model is None or (r.model or "").startswith(model))
            ]
            out.sort(key=lambda r: (r.law_short_name, r.rank or 10**6, r.link_id))
            return out

        group: list[CurrentLink] = []
        at: tuple[int, int] | None = None
        with self.session() as s:
            for link, run_kind, run_model, para, version, doc, prov, law_row, review in s.execute(stmt):
                if (doc.id, para.ordinal) != at:
                    yield from finished(group)
                    group, at = [], (doc.id, para.ordinal)
                evidence = dict(link.evidence or {})
                identity = evidence.get("model") or (run_model or {}).get("identity")
                group.append(
                    CurrentLink(
                        link_id=link.id,
                        run_id=link.run_id,
                        run_kind=run_kind,
                        method=link.method,
                        model=str(identity) if identity else None,
                        document_id=doc.id,
                        document_source=doc.source,
                        document_version=version,
                        latest_version=doc.latest_version,
                        paragraph_id=para.id,
                        paragraph_ordinal=para.ordinal,
                        paragraph_page=para.page,
                        heading_path=tuple(para.heading_path or ()),
                        paragraph_text=para.text,
                        text_sha256=text_digest(para.text),
                        law_id=law_row.id,
                        law_short_name=law_row.short_name,
                        law_identifier=law_row.identifier,
                        law_version=law_row.version,
                        provision_id=prov.id,
                        provision_key=prov.key,
                        provision_kind=prov.kind,
                        provision_number=prov.number,
                        provision_title=prov.title,
                        score=float(link.score),
                        rank=link.rank,
                        proposed_status=link.status,
                        status=review.decision if review is not None else link.status,
                        reviewer=review.reviewer if review is not None else None,
                        review_comment=review.comment if review is not None else None,
                        reviewed_at=review.decided_at if review is not None else None,
                        created_at=link.created_at,
                        evidence=evidence,
                    )
                )
            yield from finished(group)

    def add_reviews(self, reviews: Iterable[NewReview], *, actor: str | None = None) -> list[ReviewRecord]:
        """Record several decisions in one transaction: all of them or none.

        Each review copies the suggestion it decides (the link's run and model) and writes one ``link.review``
        audit-log entry (who, what, on which model's suggestion).

        Raises:
            NotFoundError: a link does not exist.
            StoreError: an invalid decision or source, or an empty reviewer name.
        """
        from compliance.store.orm import LINK_STATUSES, REVIEW_SOURCES

        todo = list(reviews)
        for r in todo:
            if r.decision not in LINK_STATUSES:
                raise StoreError(f"invalid decision {r.decision!r}; expected one of {LINK_STATUSES}")
            if r.source not in REVIEW_SOURCES:
                raise StoreError(f"invalid review source {r.source!r}; expected one of {REVIEW_SOURCES}")
            if not r.reviewer or not r.reviewer.strip():
                raise StoreError("a review needs a reviewer name")
        with self.session() as s:
            return self._add_reviews(s, todo, actor=actor)

    def _add_reviews(self, s: Session, todo: Sequence[NewReview], *, actor: str | None) -> list[ReviewRecord]:
        from sqlalchemy import select

        from compliance.store.orm import LinkRow, ReviewRow, RunRow

        links: dict[int, tuple[LinkRow, dict[str, Any] | None]] = {}
        ids = sorted({r.link_id for r in todo})
        for chunk in _chunks(ids):
            for link, run_model in s.execute(
                select(LinkRow, RunRow.model)
                .join(RunRow, LinkRow.run_id == RunRow.id)
                .where(LinkRow.id.in_(chunk))
            ):
                links[link.id] = (link, run_model)
        missing = [i for i in ids if i not in links]
        if missing:
            raise NotFoundError(f"no link {missing[0]}" if len(missing) == 1 else f"no links {missing[:10]}")
        out: list[ReviewRecord] = []
        for r in todo:
            link, run_model = links[r.link_id]
            model = (link.evidence or {}).get("model") or (run_model or {}).get("identity")
            row = ReviewRow(
                link_id=r.link_id,
                decision=r.decision,
                reviewer=r.reviewer.strip(),
                comment=r.comment,
                suggested_run_id=link.run_id,
                suggested_model=str(model)[:255] if model else None,
                source=r.source,
            )
            s.add(row)
            s.flush()
            self._log(
                s,
                "link.review",
                actor=actor or r.reviewer.strip(),
                target_type="link",
                target_id=r.link_id,
                details={
                    "decision": r.decision,
                    "comment": r.comment,
                    "review_id": row.id,
                    "source": r.source,
                    "suggested_by": {
                        "run_id": link.run_id,
                        "model": row.suggested_model,
                        "method": link.method,
                    },
                },
            )
            out.append(ReviewRecord.of(row))
        return out

    def add_manual_link(
        self,
        paragraph_id: int,
        provision_id: int,
        reviewer: str,
        comment: str | None = None,
        *,
        evidence: dict[str, Any] | None = None,
    ) -> int:
        """A link the model missed, added by a reviewer: a ``review`` run, the link (method ``manual``, score 1)
        and its ``accepted`` review, in one transaction. Returns the new link id.

        Raises:
            StoreError: unknown paragraph or provision, or an empty reviewer name.
        """

        if not reviewer or not reviewer.strip():
            raise StoreError("a manual link needs a reviewer name")
        return self._retry_on_conflict(
            lambda: self._insert_manual_link(paragraph_id, provision_id, reviewer, comment, evidence),
            attempts=20,
        )

    def _insert_manual_link(
        self,
        paragraph_id: int,
        provision_id: int,
        reviewer: str,
        comment: str | None,
        evidence: dict[str, Any] | None,
    ) -> int:
        from compliance.store.orm import LinkRow, RunRow, utcnow
        from compliance.store.runs import next_run_number

        with self.session() as s:
            self._check_ids(s, "paragraph", {paragraph_id})
            self._check_ids(s, "provision", {provision_id})
            now = utcnow()
            run = RunRow(
                kind="review",
                number=next_run_number(s, "review"),
                config={"action": "add-link", "paragraph_id": paragraph_id, "provision_id": provision_id},
                model=None,
                status="succeeded",
                started_at=now,
                finished_at=now,
                duration_s=0.0,
                stats={"links": 1},
            )
            s.add(run)
            s.flush()
            link = LinkRow(
                run_id=run.id,
                paragraph_id=paragraph_id,
                provision_id=provision_id,
                method=MANUAL_METHOD,
                score=1.0,
                rank=None,
                evidence=to_jsonable({"added_by": reviewer.strip(), "comment": comment, **(evidence or {})}),
                status="accepted",
                created_at=now,
            )
            s.add(link)
            s.flush()
            self._log(
                s,
                "link.add",
                actor=reviewer.strip(),
                target_type="link",
                target_id=link.id,
                details={"paragraph_id": paragraph_id, "provision_id": provision_id, "run_id": run.id},
            )
            self._add_reviews(
                s, [NewReview(link.id, "accepted", reviewer, comment, "manual")], actor=reviewer.strip()
            )
            return int(link.id)


def _drop_superseded(rows: list[CurrentLink]) -> list[CurrentLink]:
    """Keep, per (paragraph, method, law), the links of the latest run that scored it (manual links: all)."""
    newest: dict[tuple[int, str, str], int] = {}
    for r in rows:
        if r.method == MANUAL_METHOD:
            continue
        k = (r.paragraph_id, r.method, r.law_identifier)
        newest[k] = max(newest.get(k, 0), r.run_id)
    return [
        r
        for r in rows
        if r.method == MANUAL_METHOD or newest[(r.paragraph_id, r.method, r.law_identifier)] == r.run_id
    ]
