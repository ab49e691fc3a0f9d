"""The officer's use cases on links: list and show them, record decisions, add a link the model missed, export
every current link (review spreadsheet, OSCAL, CISO Assistant) and import a filled-in spreadsheet, and compare
two runs.

Every function takes an open :class:`~compliance.store.Store` and typed arguments and returns records or
JSON-ready dataclasses (``to_dict()``); nothing prints. The CLI (``compliance links …``) and the HTTP API call
these.
"""

from __future__ import annotations

import contextlib
import itertools
from collections import Counter
from collections.abc import Generator, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compliance.errors import ConfigurationError, NotFoundError, ReviewImportError

if TYPE_CHECKING:  # pragma: no cover
    from compliance.reports.link_sheet import SheetRow
    from compliance.store import Store
    from compliance.store.link_history import CurrentLink
    from compliance.store.records import ReviewRecord

__all__ = [
    "COMMENT_DECISION",
    "EXPORT_FORMATS",
    "EXPORT_MEDIA_TYPES",
    "ExportResult",
    "ImportResult",
    "LinkChange",
    "LinkDiff",
    "LinkQuery",
    "LinkState",
    "add_link",
    "diff_links",
    "diff_runs",
    "export_links_file",
    "import_reviews",
    "iter_links",
    "link_detail",
    "link_states",
    "list_links",
    "normalise_decision",
    "page_links",
    "review_links",
]

EXPORT_FORMATS = ("xlsx", "csv", "json", "oscal", "ciso-assistant")
#: what each export format is sent as over HTTP, and its file suffix
EXPORT_MEDIA_TYPES = {
    "xlsx": ("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "xlsx"),
    "csv": ("text/csv", "csv"),
    "json": ("application/json", "json"),
    "oscal": ("application/json", "oscal.json"),
    "ciso-assistant": ("application/yaml", "yaml"),
}
#: the decision of :func:`review_links` that records a comment and keeps each link's status
COMMENT_DECISION = "comment"


@dataclass(frozen=True)
class LinkQuery:
    """Which links: every filter is optional (all current links by default).

    Attributes:
        document: a document id or source (file name as stored).
        documents: several documents (with ``document``: their union).
        law: a law's short name or identifier.
        provision: a provision key (``art:32`` also matches its paragraphs) or an article number.
        status: current status(es): ``proposed``, ``accepted``, ``rejected``, ``needs-review``.
        min_score: score at least this.
        max_score: score below this.
        model: the suggesting model's identity (prefix).
        run: links of this run only.
        method: ``classifier``, ``retriever`` or ``manual``.
        include_superseded: also links of earlier document versions and superseded runs.
    """

    document: int | str | None = None
    documents: tuple[int | str, ...] = ()
    law: str | None = None
    provision: str | None = None
    status: tuple[str, ...] = ()
    min_score: float | None = None
    max_score: float | None = None
    model: str | None = None
    run: int | None = None
    method: str | None = None
    include_superseded: bool = False


def _document_ids(store: Store, *documents: int | str | None) -> list[int] | None:
    """The ids of the documents named by id, stored source or path (:func:`~compliance.app.documents.find_document`:
    ``privacy-notice.pdf`` finds ``examples/privacy-notice.pdf``)."""
    from compliance.app.documents import find_document

    wanted = [d for d in documents if d is not None]
    if not wanted:
        return None
    return [int(find_document(store, d).id) for d in wanted]


def list_links(store: Store, query: LinkQuery | None = None) -> list[CurrentLink]:
    """Current links (with their decision) matching ``query``, by document, paragraph, law and rank.

    Raises:
        NotFoundError: an unknown document.
        ConfigurationError: an unknown status.
    """
    return list(iter_links(store, query))


def page_links(
    store: Store, query: LinkQuery | None = None, *, offset: int = 0, limit: int | None = None
) -> list[CurrentLink]:
    """The ``limit`` links after the first ``offset`` of :func:`list_links` (all when ``limit`` is None), read
    until the page is full and no further: the first page of a store with a hundred thousand links reads a few
    pages of rows, not every link.

    Raises:
        NotFoundError: an unknown document.
        ConfigurationError: an unknown status; a negative offset or limit.
    """
    if offset < 0 or (limit is not None and limit < 0):
        raise ConfigurationError(f"offset and limit must not be negative, got {offset} and {limit}")
    stop = None if limit is None else offset + limit
    with contextlib.closing(iter_links(store, query)) as links:
        return list(itertools.islice(links, offset, stop))


def iter_links(store: Store, query: LinkQuery | None = None) -> Generator[CurrentLink, None, None]:
    """:func:`list_links` one link at a time (:meth:`~compliance.store.Store.iter_current_links`: bounded memory
    however many links match); the query is checked before this returns.

    Raises:
        NotFoundError: an unknown document.
        ConfigurationError: an unknown status.
    """
    from compliance.store.orm import LINK_STATUSES

    q = query or LinkQuery()
    bad = [s for s in q.status if s not in LINK_STATUSES]
    if bad:
        raise ConfigurationError(f"unknown status {bad[0]!r}; use one of {', '.join(LINK_STATUSES)}")
    return store.iter_current_links(
        document_ids=_document_ids(store, q.document, *q.documents),
        law=q.law,
        provision=q.provision,
        status=q.status or None,
        min_score=q.min_score,
        max_score=q.max_score,
        model=q.model,
        run_id=q.run,
        method=q.method,
        current_only=not q.include_superseded,
    )


def link_detail(store: Store, link_id: int) -> dict[str, Any]:
    """A link with its paragraph, provision, suggestion and evidence, every decision on it (oldest first, each
    with the run and model it decided on) and its audit-log entries.

    Raises:
        NotFoundError: no such link.
    """
    found = store.current_links(link_ids=[link_id], current_only=False)
    if not found:
        raise NotFoundError(f"no link {link_id}")
    link = found[0]
    history = [
        {
            "review_id": r.id,
            "decision": r.decision,
            "reviewer": r.reviewer,
            "comment": r.comment,
            "decided_at": r.decided_at.isoformat(),
            "source": r.source,
            "suggested_by": {"run_id": r.suggested_run_id, "model": r.suggested_model},
        }
        for r in store.list_reviews(link_id)
    ]
    current = {c.link_id for c in store.current_links(document_ids=[link.document_id])}
    return {
        **link.to_dict(),
        "article": link.article,
        "target": link.target,
        "current": link.link_id in current,
        "reviews": history,
        "audit": [e.to_dict() for e in store.list_audit(target_type="link", target_id=link_id)],
    }


def normalise_decision(value: str) -> str:
    """``accept`` → ``accepted``, ``reject`` → ``rejected``, ``needs-review``, ``reopen`` → ``proposed``.

    Raises:
        ConfigurationError: anything else.
    """
    from compliance.reports.link_sheet import DECISION_VALUES

    key = value.strip().lower()
    if key not in DECISION_VALUES:
        raise ConfigurationError(f"invalid decision {value!r}: use accept, reject, needs-review or reopen")
    return DECISION_VALUES[key]


def review_links(
    store: Store,
    link_ids: Sequence[int],
    decision: str,
    reviewer: str,
    comment: str | None = None,
    *,
    source: str = "cli",
) -> list[ReviewRecord]:
    """Record one decision on several links (all or none): a new review row per link, each recording the run and
    model whose suggestion it decides, and an audit-log entry.

    ``decision`` is one of :func:`normalise_decision`'s values, or ``comment``: a comment on the links that keeps
    each one's current status (a review row with that status and the comment).

    Raises:
        ConfigurationError: an invalid decision, no link ids, or a ``comment`` without a comment.
        NotFoundError: an unknown link.
        StoreError: an empty reviewer name.
    """
    from compliance.store.link_history import NewReview

    if not link_ids:
        raise ConfigurationError("name at least one link id")
    ids = [int(i) for i in link_ids]
    text = (comment or "").strip() or None
    if decision.strip().lower() == COMMENT_DECISION:
        if text is None:
            raise ConfigurationError("a comment needs its text: write the comment first")
        current = {c.link_id: c.status for c in store.current_links(link_ids=ids, current_only=False)}
        missing = [i for i in ids if i not in current]
        if missing:
            raise NotFoundError(f"no link {missing[0]}")
        return store.add_reviews([NewReview(i, current[i], reviewer, text, source) for i in ids])
    status = normalise_decision(decision)
    return store.add_reviews([NewReview(i, status, reviewer, text, source) for i in ids])


def add_link(
    store: Store,
    *,
    law: str,
    provision: str,
    reviewer: str,
    paragraph_id: int | None = None,
    document: int | str | None = None,
    paragraph: int | None = None,
    comment: str | None = None,
) -> CurrentLink:
    """A link the model missed, added (and accepted) by a reviewer.

    The paragraph is given by its id, or by its document and ordinal (the number ``links list`` shows, in the
    latest version). The provision is a key of the law's latest stored version (``art:30``, ``art:30/par:1``;
    a bare number means ``art:N``).

    Raises:
        ConfigurationError: neither or both ways of naming the paragraph.
        NotFoundError: unknown document, paragraph or provision.
        LawNotFoundError: unknown law.
    """
    if (paragraph_id is None) == (document is None or paragraph is None):
        raise ConfigurationError("name the paragraph by --paragraph-id, or by a document and its --paragraph")
    if paragraph_id is None:
        ids = _document_ids(store, document)
        assert ids is not None
        wanted = [p for p in store.iter_paragraphs(document_ids=ids) if p.ordinal == paragraph]
        if not wanted:
            raise NotFoundError(
                f"document {document} has no paragraph {paragraph} (see `compliance documents show`)"
            )
        paragraph_id = wanted[0].id
    else:
        store.get_paragraphs([paragraph_id])  # raises when unknown
    record = store.law_record(law)
    key = f"art:{provision}" if provision.isdigit() else provision
    provision_id = store.provision_id_map(record.id).get(key)
    if provision_id is None:
        raise NotFoundError(f"{record.short_name} version {record.version} has no provision {key!r}")
    link_id = store.add_manual_link(paragraph_id, provision_id, reviewer, comment)
    return store.current_links(link_ids=[link_id], current_only=False)[0]


# -- export -------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ExportResult:
    """What an export wrote."""

    path: str
    format: str
    links: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def export_links_file(
    store: Store,
    out: Path,
    fmt: str | None = None,
    query: LinkQuery | None = None,
    *,
    organisation: str = "Our organisation",
) -> ExportResult:
    """Write every current link matching ``query`` to ``out``.

    Formats: ``xlsx``/``csv`` (the review spreadsheet, with a decision column), ``json`` (the same rows with the
    full evidence), ``oscal`` (an OSCAL mapping collection: the organisation's controls → the law's provisions),
    ``ciso-assistant`` (a CISO Assistant mapping library, YAML). Default: from the file suffix. Rejected links
    are left out of the two GRC formats.

    Raises:
        ConfigurationError: unknown format; an OSCAL or CISO Assistant export without exactly one law.
    """
    fmt = (
        fmt
        or {".yaml": "ciso-assistant", ".yml": "ciso-assistant"}.get(out.suffix.lower())
        or out.suffix.lstrip(".")
    ).lower()
    if fmt not in EXPORT_FORMATS:
        raise ConfigurationError(f"export format must be one of {', '.join(EXPORT_FORMATS)}, not {fmt!r}")
    if fmt in ("xlsx", "csv", "json"):  # streamed: an export of a large audit stays in bounded memory
        from compliance.reports.link_sheet import write_link_sheet

        n = write_link_sheet(iter_links(store, query), out, fmt)
        return ExportResult(str(out), fmt, n)
    links = list_links(store, query)
    law_name = (query.law if query else None) or "gdpr"
    law = store.get_law(law_name)
    chosen = [link for link in links if link.law_short_name == law.short_name and link.status != "rejected"]
    if fmt == "oscal":
        import json

        from compliance.reports.oscal import oscal_mapping_collection

        doc = oscal_mapping_collection(chosen, law, organisation=organisation)
        out.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    else:
        from compliance.reports.ciso_assistant import ciso_assistant_library, dump_yaml

        out.write_text(
            dump_yaml(ciso_assistant_library(chosen, law, organisation=organisation)), encoding="utf-8"
        )
    return ExportResult(str(out), fmt, len(chosen))


# -- import -------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ImportResult:
    """What an import recorded: reviews per decision, rows unchanged (same decision as stored, no comment) and
    rows without a decision."""

    path: str
    rows: int
    applied: int
    unchanged: int
    empty: int
    decisions: dict[str, int]
    review_ids: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _int_or_none(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def import_reviews(store: Store, path: Path, reviewer: str, *, source: str = "import") -> ImportResult:
    """Read a filled-in review spreadsheet (XLSX or CSV from :func:`export_links_file`) and record its decisions.

    Every row is checked first; a row is bad when its link id is missing, not a number, unknown or repeated, its
    decision is not one of accept / reject / needs-review / reopen, or — for rows with a decision — its paragraph
    is no longer current (the document changed since the export), its text fingerprint differs from the stored
    paragraph, or the link was decided by someone else since the export. One bad row and nothing is applied:
    :class:`~compliance.errors.ReviewImportError` names every bad row. Otherwise all decisions are recorded in
    one transaction (rows whose decision equals the current status and carry no comment are left alone).

    Raises:
        ConfigurationError: the file cannot be read or lacks the ``link_id``/``decision`` columns.
        ReviewImportError: bad rows (nothing applied).
    """
    from compliance.reports.link_sheet import DECISION_VALUES, iter_review_sheet
    from compliance.store.link_history import NewReview

    if not reviewer or not reviewer.strip():
        raise ConfigurationError("an import needs the reviewer's name (--reviewer)")
    # read row by row: a row without a decision keeps only its number and link id, so a sheet of every link of
    # a large audit with a few decisions filled in is not held whole (nor is every link it names)
    entries: list[tuple[int, Any, int | None, SheetRow | None]] = []
    for r in iter_review_sheet(path):
        raw_decision = r.values.get("decision")
        decided = raw_decision is not None and bool(str(raw_decision).strip())
        raw_id = r.values.get("link_id")
        entries.append((r.row, raw_id, _int_or_none(raw_id), r if decided else None))
    stored = store.existing_link_ids(i for _, _, i, _ in entries if i is not None)
    decided_ids = [i for _, _, i, r in entries if r is not None and i is not None]
    known = (
        {c.link_id: c for c in store.current_links(link_ids=decided_ids, current_only=False)}
        if decided_ids
        else {}
    )
    current: set[int] = set()
    for doc_id in {c.document_id for c in known.values()}:
        current.update(c.link_id for c in store.current_links(document_ids=[doc_id]))
    problems: list[tuple[int, int | None, str]] = []
    todo: list[NewReview] = []
    seen: dict[int, int] = {}
    unchanged = empty = 0
    for row, raw_id, link_id, sheet_row in entries:
        if link_id is None:
            problems.append((row, None, f"link_id {raw_id!r} is not a link number"))
            continue
        if link_id in seen:
            problems.append((row, link_id, f"link {link_id} appears again (first on row {seen[link_id]})"))
            continue
        seen[link_id] = row
        if link_id not in stored:
            problems.append((row, link_id, f"unknown link id {link_id}"))
            continue
        if sheet_row is None:
            empty += 1
            continue
        r, link = sheet_row, known[link_id]
        text = str(r.values.get("decision")).strip()
        decision = DECISION_VALUES.get(text.lower())
        if decision is None:
            problems.append(
                (r.row, link_id, f"invalid decision {text!r}: use accept, reject, needs-review or reopen")
            )
            continue
        if not link.is_current_version:
            problems.append(
                (
                    r.row,
                    link_id,
                    f"the document {link.document_source} changed since the export (now version "
                    f"{link.latest_version}, the row is about version {link.document_version}): export again",
                )
            )
            continue
        if link_id not in current:
            problems.append(
                (r.row, link_id, "the link was superseded by a later run (audit --rescore): export again")
            )
            continue
        digest = r.values.get("text_sha256")
        if digest not in (None, "") and str(digest).strip() != link.text_sha256:
            problems.append(
                (
                    r.row,
                    link_id,
                    "the paragraph text fingerprint (text_sha256) does not match the stored paragraph",
                )
            )
            continue
        exported = r.values.get("status")
        if exported not in (None, "") and str(exported).strip() != link.status:
            problems.append(
                (
                    r.row,
                    link_id,
                    f"the link was decided since the export (now {link.status}"
                    + (f" by {link.reviewer}" if link.reviewer else "")
                    + f", the file says {exported}): export again",
                )
            )
            continue
        comment_raw = r.values.get("comment")
        comment = str(comment_raw).strip() if comment_raw not in (None, "") else None
        if decision == link.status and not comment:
            unchanged += 1
            continue
        todo.append(NewReview(link_id, decision, reviewer, comment, source))
    if problems:
        raise ReviewImportError(str(path), problems)
    recorded = store.add_reviews(todo) if todo else []
    return ImportResult(
        path=str(path),
        rows=len(entries),
        applied=len(recorded),
        unchanged=unchanged,
        empty=empty,
        decisions=dict(Counter(r.decision for r in recorded)),
        review_ids=[r.id for r in recorded],
    )


# -- diffs --------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LinkChange:
    """One (paragraph, provision) whose link appeared, disappeared or moved between two runs."""

    paragraph_id: int
    document: str
    paragraph: int
    law: str
    provision: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class LinkDiff:
    """Links gained, lost and re-ranked between run ``run_a`` and run ``run_b`` (over the paragraphs both runs
    scored), and the accepted links whose supporting score fell below the review band."""

    run_a: int
    run_b: int
    paragraphs_compared: int
    gained: list[LinkChange]
    lost: list[LinkChange]
    reranked: list[LinkChange]
    weakened: list[LinkChange]

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_a": self.run_a,
            "run_b": self.run_b,
            "paragraphs_compared": self.paragraphs_compared,
            "counts": {
                "gained": len(self.gained),
                "lost": len(self.lost),
                "reranked": len(self.reranked),
                "weakened": len(self.weakened),
            },
            "gained": [c.to_dict() for c in self.gained],
            "lost": [c.to_dict() for c in self.lost],
            "reranked": [c.to_dict() for c in self.reranked],
            "weakened": [c.to_dict() for c in self.weakened],
        }


@dataclass(frozen=True, slots=True)
class LinkState:
    """What a diff compares of one link, without its texts and evidence: a run's links held for a diff take a
    small fraction of the memory of :class:`~compliance.store.CurrentLink` records (a whole audit's links are
    compared in bounded memory however long its paragraphs are)."""

    paragraph_id: int
    document: str
    paragraph: int
    law: str
    provision_key: str
    link_id: int
    run_id: int
    method: str
    model: str | None
    score: float
    rank: int | None
    status: str
    reviewer: str | None

    @classmethod
    def of(cls, link: CurrentLink | LinkState) -> LinkState:
        if isinstance(link, LinkState):
            return link
        return cls(
            link.paragraph_id,
            link.document_source,
            link.paragraph_ordinal,
            link.law_short_name,
            link.provision_key,
            link.link_id,
            link.run_id,
            link.method,
            link.model,
            link.score,
            link.rank,
            link.status,
            link.reviewer,
        )

    @property
    def key(self) -> tuple[int, str, str]:
        """What identifies the link across runs: its paragraph, law and provision."""
        return (self.paragraph_id, self.law, self.provision_key)


def link_states(links: Iterable[CurrentLink | LinkState]) -> dict[tuple[int, str, str], LinkState]:
    """``links`` as :class:`LinkState` by :attr:`LinkState.key` (read one at a time: an iterator such as
    :meth:`~compliance.store.Store.iter_current_links` is never held whole)."""
    return {(s := LinkState.of(x)).key: s for x in links}


def _brief(link: LinkState) -> dict[str, Any]:
    return {
        "link_id": link.link_id,
        "run_id": link.run_id,
        "score": round(link.score, 4),
        "rank": link.rank,
        "status": link.status,
        "model": link.model,
    }


def diff_links(
    before: Iterable[CurrentLink | LinkState],
    after: Iterable[CurrentLink | LinkState],
    *,
    run_a: int = 0,
    run_b: int = 0,
    review_band: tuple[float, float] | None = None,
) -> LinkDiff:
    """Compare two sets of links over the paragraphs that ``after`` scored; each side is read once (an iterator
    is fine) and held as :class:`LinkState`.

    ``weakened``: links accepted in ``before`` whose score in ``after`` is below the review band's upper edge
    (or that ``after`` no longer proposes at all).
    """
    b = link_states(after)
    scored = {key[0] for key in b}
    a = {key: x for key, x in link_states(before).items() if key[0] in scored}
    high = review_band[1] if review_band is not None else None

    def change(key: tuple[int, str, str], reason: str = "") -> LinkChange:
        x = a.get(key) or b[key]
        return LinkChange(
            paragraph_id=key[0],
            document=x.document,
            paragraph=x.paragraph,
            law=key[1],
            provision=key[2],
            before=_brief(a[key]) if key in a else None,
            after=_brief(b[key]) if key in b else None,
            reason=reason,
        )

    gained = [change(k) for k in sorted(b.keys() - a.keys())]
    lost = [change(k) for k in sorted(a.keys() - b.keys())]
    reranked = [change(k) for k in sorted(a.keys() & b.keys()) if a[k].rank != b[k].rank]
    weakened: list[LinkChange] = []
    for k in sorted(a):
        if a[k].status != "accepted" or a[k].method == "manual":
            continue
        if k not in b:
            weakened.append(change(k, f"accepted, no longer proposed (score was {a[k].score:.2f})"))
        elif high is not None and b[k].score < high:
            weakened.append(
                change(
                    k,
                    f"accepted, score fell from {a[k].score:.2f} to {b[k].score:.2f}, below the review band ({high:.2f})",
                )
            )
    return LinkDiff(run_a, run_b, len(scored), gained, lost, reranked, weakened)


def diff_runs(store: Store, run_a: int, run_b: int) -> LinkDiff:
    """Links gained, lost and re-ranked from run ``run_a`` to run ``run_b`` (read-only), over the paragraphs
    both scored; the review band is run B's (its model's), where it recorded one.

    Raises:
        NotFoundError: an unknown run.
    """
    store.get_run(run_a)
    rb = store.get_run(run_b)
    # each run's links read one at a time and held as LinkState only; diff_links keeps of run A the paragraphs
    # run B scored, and of run B those run A scored are given
    before = link_states(store.iter_current_links(run_id=run_a, current_only=False))
    scored_a = {key[0] for key in before}
    after = link_states(store.iter_current_links(run_id=run_b, current_only=False))
    band = (rb.model or {}).get("review_band")
    return diff_links(
        before.values(),
        (x for key, x in after.items() if key[0] in scored_a),
        run_a=run_a,
        run_b=run_b,
        review_band=(float(band[0]), float(band[1])) if band else None,
    )
