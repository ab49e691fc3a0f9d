"""The application layer: one function per use case, typed inputs and outputs, no printing.

Every front end calls these — the ``compliance`` CLI, the HTTP API, the job workers, the LangChain components and
any Python program — so that storing a law raises the same alerts, and an audit stores the same links, whoever
asks. Nothing heavy is imported by ``import compliance.app``; see ``docs/architecture.md``.

Use cases (imported lazily)::

    open_store(database_url=None) -> Store
    ingest_documents(store, [path | folder | Upload(name, data, media_type)], ...) -> IngestReport
    audit_documents(store, sources, classifier, ...) -> AuditReport
    install_law(store, "gdpr") / add_law(store, path | Upload) / store_law(store, law) -> LawStored
    run_law_alerts(store, "eprivacy") / alerts_after_law_stored(...) -> AlertRunOutcome
    list_alerts / get_alert / acknowledge_alerts / train_decision
    search_laws(store, text=... | document=...) -> LawSearchResult;  search_controls(store, law) -> [ControlHit]
    load_classifier(path) -> ArticleClassifier;  map_texts(classifier, rows) -> {"id", "articles"} per row
    train_classifier(TrainRequest(...)) -> summary;  evaluate_classifier(path, query_files=...) -> report
    list_documents / document_detail(store, id | source | path, roles=...) / find_document / list_laws / law_detail
    train_roles(RoleTrainRequest(labels)) / evaluate_roles(labels) -> precision and recall per paragraph role
    list_runs(store) -> RunListing (reaps runs whose process is gone);  show_run(store, "audit:3") -> RunRecord
    list_links(store, LinkQuery(...)) / link_detail / review_links / add_link / diff_runs
    export_links_file(store, out, "xlsx" | "csv" | "json" | "oscal" | "ciso-assistant", LinkQuery(...))
    import_reviews(store, filled_in_sheet, reviewer) -> ImportResult   (all rows valid, or nothing applied)
    coverage_report(store, "gdpr", documents) -> CoverageReport;  write_report(report, out, "html" | "xlsx" | "json")
    rescore_documents(store, sources, classifier) -> RescoreReport;  link_other_laws(store, run_id, docs, laws)
    calibrate_classifier_from_reviews(model_path) -> summary;  TrainRequest(with_reviews=True)
    set_alerts_status(store, ids, "dismissed", by) (acknowledged / dismissed / resolved / open)
    create_token / list_tokens / revoke_token / authenticate / require_role   (API tokens and roles)
    submit_audit_job(store, sources, dispatcher) -> JobRecord;  run_job_item(store, item_id, worker=...);
    job_detail / list_jobs / recover_stale_items / resume_queued_items        (audits as one task per document)
"""

from __future__ import annotations

from compliance._lazy import lazy_exports

# function names differ from their module names (``ingest_documents`` in ``ingest``): once a submodule is
# imported, the package attribute of the same name is the module

_EXPORTS = {
    "open_store": "compliance.app.store",
    "Upload": "compliance.app.ingest",
    "IngestReport": "compliance.app.ingest",
    "ingest_documents": "compliance.app.ingest",
    "AuditReport": "compliance.app.audit",
    "AuditedDocument": "compliance.app.audit",
    "audit_documents": "compliance.app.audit",
    "LawStored": "compliance.app.laws",
    "add_law": "compliance.app.laws",
    "install_law": "compliance.app.laws",
    "law_detail": "compliance.app.laws",
    "list_laws": "compliance.app.laws",
    "store_law": "compliance.app.laws",
    "AlertRunOutcome": "compliance.app.alerts",
    "acknowledge_alerts": "compliance.app.alerts",
    "alerts_after_law_stored": "compliance.app.alerts",
    "get_alert": "compliance.app.alerts",
    "list_alerts": "compliance.app.alerts",
    "run_law_alerts": "compliance.app.alerts",
    "set_alerts_status": "compliance.app.alerts",
    "Principal": "compliance.app.tokens",
    "authenticate": "compliance.app.tokens",
    "create_token": "compliance.app.tokens",
    "list_tokens": "compliance.app.tokens",
    "require_role": "compliance.app.tokens",
    "revoke_token": "compliance.app.tokens",
    "AuditJobParams": "compliance.app.jobs",
    "job_detail": "compliance.app.jobs",
    "list_jobs": "compliance.app.jobs",
    "recover_stale_items": "compliance.app.jobs",
    "resume_queued_items": "compliance.app.jobs",
    "run_job_item": "compliance.app.jobs",
    "submit_audit_job": "compliance.app.jobs",
    "train_decision": "compliance.app.alerts",
    "search_controls": "compliance.app.search",
    "search_laws": "compliance.app.search",
    "TrainRequest": "compliance.app.classifier",
    "evaluate_classifier": "compliance.app.classifier",
    "load_classifier": "compliance.app.classifier",
    "map_texts": "compliance.app.classifier",
    "train_classifier": "compliance.app.classifier",
    "document_detail": "compliance.app.documents",
    "find_document": "compliance.app.documents",
    "list_documents": "compliance.app.documents",
    "RunListing": "compliance.app.runs",
    "list_runs": "compliance.app.runs",
    "show_run": "compliance.app.runs",
    "RoleTrainRequest": "compliance.app.roles",
    "evaluate_roles": "compliance.app.roles",
    "train_roles": "compliance.app.roles",
    "LinkQuery": "compliance.app.links",
    "add_link": "compliance.app.links",
    "diff_runs": "compliance.app.links",
    "export_links_file": "compliance.app.links",
    "import_reviews": "compliance.app.links",
    "link_detail": "compliance.app.links",
    "iter_links": "compliance.app.links",
    "list_links": "compliance.app.links",
    "page_links": "compliance.app.links",
    "review_links": "compliance.app.links",
    "coverage_report": "compliance.app.reports",
    "write_report": "compliance.app.reports",
    "rescore_documents": "compliance.app.rescore",
    "link_other_laws": "compliance.app.law_links",
    "calibrate_classifier_from_reviews": "compliance.app.classifier",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
