"""The SQL store: documents, laws, runs, links, reviews, alerts and the audit log.

Everything goes through :class:`Store` (``compliance.store.repository``), which takes and returns plain frozen
dataclasses (``compliance.store.records``) — never ORM objects. Importing this package loads nothing heavy and
connects to nothing: the engine is created on first use.

Quick tour::

    from compliance.store import Store, NewLink

    store = Store()                      # COMPLIANCE_DATABASE_URL, else sqlite:///<home>/compliance.db
    store.upgrade()                      # Alembic upgrade to head (or store.ensure_schema(): only if empty)

    saved = store.save_law(law)          # -> SavedLaw(id, identifier, short_name, version, created, ...)
    law = store.get_law("gdpr")          # -> compliance.rules.corpus.Law (latest version, provisions in order)
    ids = store.provision_id_map(saved.id)        # {"art:32": 123, ...}

    doc = store.save_document(parsed)    # -> SavedDocument(document_id, version_id, version, created, ...)
    for p in store.iter_paragraphs():    # StoredParagraph of the latest version of every document
        ...

    with store.run("map", config, model={"name": ...}) as run:   # failed + error text on exception
        store.add_links(run.id, [NewLink(p.id, ids["art:32"], "classifier", 0.91, rank=1)])
        run.stats["links"] = 1
    store.add_review(link_id, "accepted", reviewer="alice", comment="ok")
    rows = store.export_links(run.id)    # flat dicts for CSV/JSON reports

API of :class:`Store` (every mutating method runs in one transaction and writes an ``audit_log`` row in it;
``actor=`` defaults to ``Store.actor``, the OS user name):

Schema
    ``upgrade(revision="head")``, ``downgrade(revision)``, ``current_revision()``, ``head_revision()``,
    ``is_empty()``, ``ensure_schema(auto_upgrade=True)`` (upgrade an empty database; raise
    :class:`~compliance.errors.StoreError` when an existing one is behind head), ``schema_diff()`` (Alembic
    autogenerate comparison; ``[]`` when models and database agree), ``session()`` (context manager: commit on
    success, rollback + ``StoreError`` on database errors), ``counts()`` (rows per table), ``dispose()``.
Laws
    ``save_law(law) -> SavedLaw`` (same identifier + checksum: no-op; new checksum: new version, old kept),
    ``get_law(name_or_identifier, version=None) -> Law``, ``law_record(name_or_identifier, version=None) ->
    LawRecord``, ``list_laws(all_versions=False) -> list[LawRecord]``, ``provision_id_map(law_id) ->
    dict[key, id]``, ``list_provisions(law_id, kinds=None) -> list[StoredProvision]``,
    ``get_provisions(ids) -> list[StoredProvision]``.
Documents
    ``save_document(doc) -> SavedDocument`` (same source + same checksum as the latest version: nothing added;
    changed: new version), ``list_documents() -> list[DocumentRecord]``, ``get_document(id_or_source) ->
    DocumentRecord``, ``iter_paragraphs(*, latest_only=True, document_ids=None) -> Iterator[StoredParagraph]``,
    ``get_paragraphs(ids) -> list[StoredParagraph]`` (in the order asked), ``get_document_text(document_id,
    version=None) -> str`` (the full text the paragraphs' character offsets point into).
Runs
    ``start_run(kind, config, model=None) -> int``, ``finish_run(run_id, status="succeeded", stats=None,
    error=None)``, ``run(kind, config, model=None)`` (context manager yielding :class:`ActiveRun`; marks the
    run failed with the error text when the block raises, then re-raises), ``get_run(id)``,
    ``list_runs(kind=None, limit=None)``. ``config``/``model`` may be dicts, dataclasses or pydantic models.
Links and reviews (append-only)
    ``add_links(run_id, links: Iterable[NewLink]) -> int``, ``list_links(*, run_id=None, paragraph_id=None,
    provision_id=None, law=None, document_id=None, status=None, limit=None, offset=0) -> list[LinkRecord]``
    (``status`` is the current, derived status), ``get_link(id)``, ``export_links(run_id=None) -> list[dict]``,
    ``add_review(link_id, decision, reviewer, comment=None) -> ReviewRecord``, ``list_reviews(link_id)``;
    the officer's view (:mod:`compliance.store.link_history`): ``current_links(...) -> list[CurrentLink]``,
    ``add_reviews([NewReview, ...])`` (all or nothing), ``add_manual_link(paragraph_id, provision_id, reviewer)``.
Alerts
    ``add_alerts(run_id, alerts: Iterable[NewAlert]) -> int``, ``list_alerts(status=None, law=None, run_id=None)
    -> list[AlertRecord]``, ``get_alert(id) -> AlertRecord`` (with acknowledgements),
    ``acknowledge_alert(id, by, comment=None) -> AlertRecord``, ``set_alert_status(id, status, by,
    comment=None)`` (``acknowledged``, ``dismissed`` — a false positive — or ``resolved``; history kept).
API tokens
    ``create_token(name, role, token_hash, prefix)``, ``token_by_hash(hash)``, ``list_tokens()``,
    ``revoke_token(id_or_name)``, ``touch_token(id)`` (:mod:`compliance.app.tokens` makes and checks secrets).
Jobs
    ``create_job(kind, params, items)``, ``get_job(id)``, ``list_jobs(limit=None)``, ``list_job_items(job_id)``,
    ``claim_job_item(item_id, worker, lease_s) -> JobClaim``, ``renew_job_item(item_id, claim, lease_s)``,
    ``finish_job_item(item_id, claim, status, result, error)``, ``finish_job_if_done(job_id)``,
    ``requeue_stale_job_items()``, ``unfinished_job_items()``, ``set_job_notification(job_id, notification)``.
Paragraph vectors (migration 0006)
    ``save_paragraph_vectors(space, [ParagraphVectors(paragraph_id, chunks, dim, data), ...]) -> int`` (once per
    paragraph and embedding space), ``paragraph_vectors(space, paragraph_ids) -> dict[int, ParagraphVectors]``,
    ``vector_spaces() -> dict[str, int]``: the audit's encoder vectors, reused by the controls index.
Audit log
    ``log(action, actor=None, target_type=None, target_id=None, details=None)``, ``list_audit(*, action=None,
    target_type=None, target_id=None, limit=None, offset=0) -> list[AuditEntry]`` (newest first).

Testing: :mod:`compliance.store.testing` (``migrated_store``, ``temporary_postgres_schema``) and the ``store``
pytest fixture in ``tests/conftest.py`` (SQLite and PostgreSQL, a fresh database per test).

Errors: :class:`~compliance.errors.NotFoundError` (C402) for unknown ids, :class:`~compliance.errors.
LawNotFoundError` (C202) for unknown laws, :class:`~compliance.errors.StoreError` (C401) for database
problems and invalid statuses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from compliance._lazy import lazy_exports

if TYPE_CHECKING:
    from compliance.store.link_history import CurrentLink, NewReview
    from compliance.store.records import (
        AcknowledgementRecord,
        ActiveRun,
        AlertRecord,
        AuditEntry,
        DocumentRecord,
        DocumentVersionRecord,
        JobClaim,
        JobItemRecord,
        JobRecord,
        LawRecord,
        LinkRecord,
        NewAlert,
        NewJobItem,
        NewLink,
        ParagraphVectors,
        ReviewRecord,
        RunRecord,
        SavedDocument,
        SavedLaw,
        StoredParagraph,
        StoredProvision,
        TokenRecord,
    )
    from compliance.store.repository import Store

__all__ = [
    "AcknowledgementRecord",
    "ActiveRun",
    "AlertRecord",
    "AuditEntry",
    "CurrentLink",
    "DocumentRecord",
    "DocumentVersionRecord",
    "JobClaim",
    "JobItemRecord",
    "JobRecord",
    "LawRecord",
    "LinkRecord",
    "NewAlert",
    "NewJobItem",
    "NewLink",
    "NewReview",
    "ParagraphVectors",
    "ReviewRecord",
    "RunRecord",
    "SavedDocument",
    "SavedLaw",
    "Store",
    "StoredParagraph",
    "StoredProvision",
    "TokenRecord",
]

_LAZY = {name: "compliance.store.records" for name in __all__ if name != "Store"}
_LAZY["Store"] = "compliance.store.repository"
_LAZY["CurrentLink"] = _LAZY["NewReview"] = "compliance.store.link_history"
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
