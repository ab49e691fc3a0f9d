"""Audit: ingest documents → paragraphs → GDPR article classifier → scored links in the store → a summary per
document and an export of the links.

Re-running on unchanged documents classifies nothing again: a paragraph that already has classifier links from
the same model (same identity) is skipped. A changed document is a new version whose paragraphs are new.
"""

from __future__ import annotations

import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compliance.abbreviations import ABBREVIATIONS, defined_abbreviations, write_out, written_out
from compliance.app.ingest import (
    FileFailure,
    OnError,
    SavedSource,
    Source,
    Upload,
    common_folder,
    expand_sources,
    role_windows,
    save_sources,
    source_labels,
)
from compliance.connectors.lists import lead_in_contexts, read_with
from compliance.connectors.roles import MAPPED_ROLES
from compliance.errors import ConfigurationError, StoreError
from compliance.linking.classifier_links import (
    METHOD,
    ClassifierLinkConfig,
    ParagraphLinks,
    classifiable,
    classify_paragraphs,
    corroborate_links,
    specific_first_links,
)
from compliance.progress import bar
from compliance.rules.addressees import AUTHORITY_WEIGHT
from compliance.runtime import LengthBatcher
from compliance.store import NewLink, ParagraphVectors

if TYPE_CHECKING:  # pragma: no cover
    from compliance.linking.provisions import ProvisionPicker
    from compliance.models.classifier import ArticleClassifier
    from compliance.rules.corpus import Law
    from compliance.runtime import EmbeddingSpace
    from compliance.store import Store

__all__ = ["AuditReport", "AuditedDocument", "audit_documents", "controls_space"]

#: paragraphs waiting for the classifier, in batches: a larger pool pads less and keeps more documents waiting
POOL_BATCHES = 8


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
    #: the articles linked most, each with the paragraphs linked to it and their mean classifier score
    top_articles: list[dict[str, Any]] = field(default_factory=list)
    needs_review: list[dict[str, Any]] = field(default_factory=list)
    #: the principle umbrellas (Art. 5 …) the document touches, kept apart so that they do not crowd out the
    #: specific articles in ``top_articles``
    principles: list[dict[str, Any]] = field(default_factory=list)
    #: paragraphs not mapped because of their role (``{"metadata": 7, "furniture": 2}``)
    skipped: dict[str, int] = field(default_factory=dict)
    #: paragraphs not mapped because they are written in a language the classifier does not read (``{"de": 12}``)
    other_languages: dict[str, int] = field(default_factory=dict)


@dataclass
class AuditReport:
    """The result of :func:`audit_documents`."""

    run_id: int
    model: dict[str, Any]
    documents: list[AuditedDocument]
    failures: list[FileFailure]
    links: int
    #: the run's number among audits ("audit 3"); ``run_id`` is unique over all runs
    run_number: int | None = None
    #: processes the documents were shared among (one per role window at most: :func:`audit_processes`)
    processes: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "run_number": self.run_number,
            "processes": self.processes,
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
    roles: Collection[str] | None = MAPPED_ROLES,
    laws: Sequence[str] = (),
    reclassify: bool = False,
    store_vectors: bool = True,
    provision_targets: bool = True,
    processes: int | None = None,
) -> AuditReport:
    """Ingest ``sources`` and link every new paragraph of a mapped role to GDPR articles.

    Args:
        store: an open, migrated :class:`~compliance.store.Store`.
        sources: files, folders and uploads.
        classifier: the GDPR article classifier.
        config: top-k, review band, batch size.
        relative_to: store document sources relative to this folder (default: the folder the given paths
            share, :func:`~compliance.app.ingest.common_folder`).
        recursive: descend into sub-folders.
        on_error: called for every file that could not be read (the audit goes on).
        roles: the paragraph roles that are mapped (default: statements and definitions); None maps every
            paragraph. Paragraphs stored before roles existed (no role) are always mapped, and so is a description
            or a reference that cites the act by name (:data:`CITATION_ROLES`).
        laws: other installed laws (short names) to link every paragraph of a mapped role to as well, through the
            document-to-law retriever (:func:`compliance.app.law_links.link_other_laws`); ``gdpr`` is the
            classifier's and is skipped there.
        reclassify: classify every paragraph again even when this model already did (``audit --rescore``).
        store_vectors: keep each classified paragraph's vectors in the controls index's embedding space, from
            the classifier's own forward pass, when the index embeds with this classifier's encoder
            (:func:`controls_space`): an alert run then embeds only the law's provisions.
        provision_targets: name, within each linked article, the paragraph or point that fits best
            (:class:`~compliance.linking.provisions.ProvisionPicker`: BM25 over the article's paragraphs and
            points, mixed with the cosine of the classifier's own encoder — the paragraph's vector from this
            audit's forward pass, the passages' the classifier's own (:func:`law_picker`: its passage expert
            carries them), else embedded once per encoder and cached under the index directory);
            stored as ``evidence.provision`` (key, label such as ``Art. 32(1)(a)``, score, method).
        processes: audit this many shares of the documents side by side, each in a worker process with its own
            copy of the classifier on the classifier's device, inside this one run, one per role window at most
            (default ``COMPLIANCE_AUDIT_PROCESSES``; 0, auto: :func:`wanted_processes`, half the cores up to 8
            for a classifier on a GPU, where the forward is nearly free and the Python around it bounds an audit,
            and one on a CPU; docs/performance.md). The links are the same as one process gives (test).

    Returns:
        The run id, a summary per document (top articles, paragraphs needing review) and the failures.
    """
    from compliance.settings import get_settings

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
        "provision_targets": "hybrid" if provision_targets else None,
    }
    failures: list[FileFailure] = []
    summaries: list[AuditedDocument] = []

    def walk_failed(failure: FileFailure) -> None:
        failures.append(failure)
        if on_error is not None:
            on_error(failure.path, failure)

    items = expand_sources(given, recursive=recursive, on_failure=walk_failed)
    store.reap_runs()  # runs whose process was killed: marked failed; their documents resume below
    relative_to = relative_to if relative_to is not None else common_folder(given)
    run_config["roles"] = sorted(roles) if roles is not None else None
    for name in laws:  # an unknown law fails before anything is stored
        store.law_record(name)
    space = controls_space(classifier) if store_vectors else None
    run_config["vectors"] = space.id if space is not None else None
    level = corroboration(classifier) if config.corroborate else None
    run_config["corroboration"] = level
    picker = (
        _LazyPicker(store, law_id, classifier, config.provision_authority_weight)
        if provision_targets or level is not None
        else None
    )
    wanted = wanted_processes(
        processes if processes is not None else get_settings().audit_processes, str(classifier.encoder.device)
    )
    workers = audit_processes(wanted, store, len(role_windows(len(items))))
    run_config["processes"] = workers
    with store.run("audit", run_config, model=model_info) as run:
        if workers > 1:
            from compliance.app.audit_pool import audit_in_processes

            if picker is not None:  # the provision vectors cached once here, not computed by every process
                picker.prepare()
            finished, shard_failures, total_links = audit_in_processes(
                store,
                items,
                classifier,
                wanted,
                AuditShard(
                    store_url=store.url,
                    actor=store.actor,
                    items=[],
                    positions=[],
                    windows=[],
                    run_id=run.id,
                    config=config,
                    relative_to=relative_to,
                    roles=roles,
                    reclassify=reclassify,
                    store_vectors=store_vectors,
                    provision_targets=provision_targets,
                ),
            )
            for failure in shard_failures:
                failures.append(failure)
                if on_error is not None:
                    on_error(failure.path, failure)
        else:
            with bar(None, desc="classifying paragraphs", unit="para") as shown:
                finished, shard_failures, total_links = audit_items(
                    store,
                    items,
                    list(range(len(items))),
                    classifier,
                    config,
                    run.id,
                    roles=roles,
                    reclassify=reclassify,
                    relative_to=relative_to,
                    on_error=on_error,
                    space=space,
                    level=level,
                    picker=picker,
                    provision_ids=provision_ids,
                    provision_targets=provision_targets,
                    shown=shown.update,
                )
            failures.extend(shard_failures)
        summaries.extend(summary for _, summary in sorted(finished, key=lambda item: item[0]))
        if laws:
            from compliance.app.law_links import link_other_laws

            law_links = link_other_laws(store, run.id, [d.document_id for d in summaries], laws, roles=roles)
            run.stats["law_links"] = law_links
            total_links += law_links
        run.stats.update(
            {
                "documents": len(summaries),
                "failed": len(failures),
                "links": total_links,
                "paragraphs_classified": sum(s.classified for s in summaries),
                "needs_review": sum(len(s.needs_review) for s in summaries),
                "skipped_by_role": dict(sum((Counter(s.skipped) for s in summaries), Counter())),
                "skipped_by_language": dict(sum((Counter(s.other_languages) for s in summaries), Counter())),
            }
        )
    return AuditReport(run.id, model_info, summaries, failures, total_links, run.number, workers)


def audit_items(
    store: Store,
    items: Sequence[Path | Upload],
    positions: Sequence[int],
    classifier: ArticleClassifier,
    config: ClassifierLinkConfig,
    run_id: int,
    *,
    roles: Collection[str] | None,
    reclassify: bool,
    relative_to: Path | None,
    on_error: OnError | None,
    space: EmbeddingSpace | None,
    level: float | None,
    picker: _LazyPicker | None,
    provision_ids: Mapping[str, int],
    provision_targets: bool,
    shown: Callable[[int], Any],
    windows: Sequence[int] | None = None,
) -> tuple[list[tuple[int, AuditedDocument]], list[FileFailure], int]:
    """The audit loop of one process over ``items`` (files and uploads, already expanded), inside run
    ``run_id``: read them, classify the paragraphs of many documents in full, length-sorted batches and store each
    document's links as soon as its last paragraph is classified. Returns ``(position, summary)`` for every
    audited document (``positions[i]`` is the ``i``-th item's place in the whole audit), the failures and the
    number of links stored; ``shown`` is told how many paragraphs each batch classified; ``windows``: the sizes
    of the windows of documents whose roles are decided together (default
    :func:`~compliance.app.ingest.role_windows`)."""
    from compliance.connectors import SplitConfig

    umbrella_articles = {a for a, _ in (classifier.config.umbrellas or ())}
    batcher: LengthBatcher[tuple[int, int, str]] = LengthBatcher(
        config.batch_size, length=lambda item: len(item[2]), pool=config.batch_size * POOL_BATCHES
    )
    pending: dict[int, _PendingDocument] = {}
    finished: list[tuple[int, AuditedDocument]] = []
    failures: list[FileFailure] = []
    total_links = 0

    def finish(seq: int) -> None:
        nonlocal total_links
        state = pending.pop(seq)
        try:
            summary = _store_document(
                store,
                state,
                classifier,
                config,
                provision_ids,
                run_id,
                umbrella_articles,
                roles,
                space,
                picker,
                provision_targets=provision_targets,
                corroboration=level,
            )
        except StoreError as e:  # one document's transaction failed: it costs that document, not the run
            label = state.outcome.label
            failure = FileFailure(label, e.code, f"{label}: could not store its links: {e}")
            failures.append(failure)
            if on_error is not None:
                on_error(label, failure)
            return
        total_links += summary.links
        finished.append((positions[seq], summary))

    def classify(batch: list[tuple[int, int, str]]) -> None:
        plain = {pid: pending[seq].own_texts[pid] for seq, pid, _ in batch if pid in pending[seq].own_texts}
        results = classify_paragraphs(
            classifier,
            [(pid, text) for _, pid, text in batch],
            config,
            space=space,
            progress=False,
            one_document=False,
            plain=plain,
        )
        for (seq, _, _), result in zip(batch, results, strict=True):
            state = pending[seq]
            state.results.append(result)
            if len(state.results) == state.todo:
                finish(seq)
        shown(len(batch))

    for seq, outcome in enumerate(
        save_sources(
            store, items, config=SplitConfig(), relative_to=relative_to, on_error=on_error, windows=windows
        )
    ):
        if isinstance(outcome, FileFailure):
            failures.append(outcome)
            continue
        state = _prepare_document(store, outcome, classifier, config, roles, reclassify)
        pending[seq] = state
        if not state.todo:
            finish(seq)
            continue
        for batch in batcher.add([(seq, pid, text) for pid, text in state.paragraphs_todo]):
            classify(batch)
        state.paragraphs_todo = []
    for batch in batcher.flush():
        classify(batch)
    return finished, failures, total_links


@dataclass
class AuditShard:
    """What an audit worker process needs to audit its share of the documents inside the parent's run (picklable:
    the store by URL, the classifier by the worker's own copy)."""

    store_url: str
    actor: str
    items: list[Path | Upload]
    positions: list[int]
    #: the role windows of ``items``: whole windows of the audit (:func:`~compliance.app.ingest.role_windows`), so
    #: that every paragraph gets the role one process gives it
    windows: list[int]
    run_id: int
    config: ClassifierLinkConfig
    relative_to: Path | None
    roles: Collection[str] | None
    reclassify: bool
    store_vectors: bool
    provision_targets: bool


#: the most audit worker processes the automatic choice starts
MAX_AUTO_PROCESSES = 8


def wanted_processes(count: int, device: str) -> int:
    """The audit processes asked for: ``count``, or when it is 0 (auto) half the CPU cores this process may run on,
    at most :data:`MAX_AUTO_PROCESSES`, for a classifier on a GPU (the forward is nearly free there and the Python
    around it bounds the audit) and one on a CPU (the forward needs the cores)."""
    if count:
        return count
    if not device.startswith("cuda"):
        return 1
    import os

    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - platforms without affinity masks
        cores = os.cpu_count() or 1
    return max(1, min(MAX_AUTO_PROCESSES, cores // 2))


def audit_processes(count: int, store: Store, windows: int) -> int:
    """How many processes audit side by side: ``count`` (:func:`wanted_processes`), at most one per window of
    documents whose roles are decided together (:func:`~compliance.app.ingest.role_windows`: 100 documents), and
    one for a store other processes cannot open (SQLite in memory)."""
    from sqlalchemy.engine import make_url

    if count < 1:
        raise ConfigurationError(f"audit processes must be at least 1, got {count}")
    url = make_url(store.url)
    if url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:"):
        return 1
    return max(1, min(count, windows))


@dataclass
class _PendingDocument:
    """A saved document whose paragraphs wait for the classifier."""

    outcome: SavedSource
    paragraphs: list[Any]
    paragraphs_todo: list[tuple[int, str]]
    todo: int
    results: list[ParagraphLinks] = field(default_factory=list)
    # paragraph id → the lead-in sentence a list item is classified with (compliance.connectors.lists), and the
    # item's own text
    contexts: dict[int, str] = field(default_factory=dict)
    own_texts: dict[int, str] = field(default_factory=dict)
    # paragraph id → the abbreviations its document defines that it is classified with, written out
    abbreviations: dict[int, dict[str, str]] = field(default_factory=dict)
    # paragraphs of a role that is not mapped, mapped because they cite the act by name
    cited: set[int] = field(default_factory=set)
    # paragraphs set aside because of their language: language → how many
    other_languages: dict[str, int] = field(default_factory=dict)


def _prepare_document(
    store: Store,
    outcome: SavedSource,
    classifier: ArticleClassifier,
    config: ClassifierLinkConfig,
    roles: Collection[str] | None,
    reclassify: bool,
) -> _PendingDocument:
    """The mapped, long enough paragraphs of one saved document that have no links from this model yet."""
    saved = outcome.saved
    paragraphs = list(store.iter_paragraphs(document_ids=[saved.document_id]))
    done = (
        set()
        if reclassify or outcome.status != "unchanged"  # a new version's paragraphs are new: nothing linked
        else {
            link.paragraph_id
            for link in store.list_links(document_id=saved.document_id)
            if link.method == METHOD and (link.evidence or {}).get("model") == classifier.identity
        }
    )
    # a description or a pointer that cites the act by name ("… according to Art. 28(7) or (8) GDPR") is mapped
    # all the same: the citation says which article it concerns
    cited = {
        p.id
        for p in paragraphs
        if not _is_mapped(p.role, roles)
        and p.role in CITATION_ROLES
        and p.id not in done
        and _cites_the_act(classifier, p.text)
    }
    todo = [
        (p.id, p.text)
        for p in paragraphs
        if p.id not in done and (_is_mapped(p.role, roles) or p.id in cited) and classifiable(p.text, config)
    ]
    other_languages: Counter[str] = Counter()
    if config.languages and todo:  # a paragraph in a language the classifier does not read is not mapped
        from compliance.linking.language import other_language

        kept = []
        for pid, text in todo:
            if language := other_language(text, config.languages):
                other_languages[language] += 1
            else:
                kept.append((pid, text))
        todo = kept
    contexts: dict[int, str] = {}
    own_texts: dict[int, str] = {}
    if config.lead_in_context and todo:
        found = lead_in_contexts(paragraphs)
        contexts = {pid: found[pid] for pid, _ in todo if pid in found}
        own_texts = {pid: text for pid, text in todo if pid in contexts}
        todo = [(pid, read_with(contexts[pid], text) if pid in contexts else text) for pid, text in todo]
    abbreviations: dict[int, dict[str, str]] = {}
    if config.document_abbreviations and todo:
        todo, abbreviations = _written_out(todo, paragraphs, own_texts, classifier.config.abbreviations)
    return _PendingDocument(
        outcome,
        paragraphs,
        todo,
        len(todo),
        contexts=contexts,
        abbreviations=abbreviations,
        own_texts=own_texts,
        cited=cited,
        other_languages=dict(sorted(other_languages.items())),
    )


def _picker_texts(
    paragraphs: Sequence[Any],
    results: Sequence[ParagraphLinks],
    classifier: ArticleClassifier,
    abbreviations: Mapping[int, Mapping[str, str]],
) -> dict[int, str]:
    """Paragraph id → the text the provision picker reads for each linked paragraph: its own text with the
    abbreviations written out as the classifier read them (the document's own, then the classifier's)."""
    linked = {r.paragraph_id for r in results if r.linked}
    own = [(p.id, p.text) for p in paragraphs if p.id in linked]
    texts = [write_out(t, abbreviations[pid]) if pid in abbreviations else t for pid, t in own]
    return dict(zip((pid for pid, _ in own), classifier.reading(texts), strict=True))


#: the classifier's own abbreviations, compared without case with a document's definitions
_KNOWN_ABBREVIATIONS = {k.lower(): v.lower() for k, v in ABBREVIATIONS.items()}


def _written_out(
    todo: list[tuple[int, str]], paragraphs: Sequence[Any], own_texts: dict[int, str], reads: bool
) -> tuple[list[tuple[int, str]], dict[int, dict[str, str]]]:
    """``todo`` with the abbreviations the document (``paragraphs``) defines written out in each text
    (:func:`~compliance.abbreviations.written_out`), and per changed paragraph the abbreviations written out;
    ``own_texts`` gets each changed paragraph's own text (its stored vectors are that text's); ``reads``: the
    classifier writes out :data:`~compliance.abbreviations.ABBREVIATIONS` itself."""
    # what the classifier writes out itself (the same words) is left to it: no second reading, no second window
    known = _KNOWN_ABBREVIATIONS if reads else {}
    defined = {
        k: v
        for k, v in defined_abbreviations(p.text for p in paragraphs).items()
        if known.get(k.lower()) != v.lower()
    }
    if not defined:
        return todo, {}
    own = {p.id: p.text for p in paragraphs}
    out: list[tuple[int, str]] = []
    added: dict[int, dict[str, str]] = {}
    for pid, text in todo:
        read, used = written_out(text, defined)
        if used:
            added[pid] = used
            own_texts.setdefault(pid, own[pid])
        out.append((pid, read))
    return out, added


def controls_space(classifier: ArticleClassifier) -> EmbeddingSpace | None:
    """The embedding space of the controls index (:func:`compliance.retrieval.indexes.index_config`) when its
    dense encoder is this classifier's encoder (same weights), so that the audit's forward gives the index's
    vectors too; None when the index embeds with another model (its vectors are then computed by the index)."""
    from compliance.artifacts import weights_sha256
    from compliance.retrieval.encoding import default_dense_model
    from compliance.retrieval.indexes import CONTROL_INDEX, index_config
    from compliance.runtime import EmbeddingSpace, resolve_model_path

    dense = index_config(CONTROL_INDEX).dense
    if dense is None:
        return None
    source = resolve_model_path(dense.model) if dense.model else default_dense_model()
    own = weights_sha256(Path(classifier.encoder.name))
    if own is None or weights_sha256(Path(source)) != own:
        return None
    return EmbeddingSpace(
        own, dense.pooling, dense.layer, dense.max_length, dense.stride, dense.max_chunks, dense.abbreviations
    )


def _store_document(
    store: Store,
    state: _PendingDocument,
    classifier: ArticleClassifier,
    config: ClassifierLinkConfig,
    provision_ids: Mapping[str, int],
    run_id: int,
    umbrella_articles: set[int],
    roles: Collection[str] | None,
    space: EmbeddingSpace | None,
    picker: _LazyPicker | None,
    *,
    provision_targets: bool = True,
    corroboration: float | None = None,
) -> AuditedDocument:
    """Store the links (and the paragraph vectors) of one document whose paragraphs are all classified; its
    summary. With ``corroboration`` (the link decision's drop edge) and a picker, each paragraph's statuses are
    decided again with the text's own evidence of each ranked article (:func:`corroborate_links`)."""
    outcome, paragraphs = state.outcome, state.paragraphs
    doc, saved, status = outcome.document, outcome.saved, outcome.status
    order = {p.id: i for i, p in enumerate(paragraphs)}
    results = sorted(state.results, key=lambda r: order.get(r.paragraph_id, 0))
    band = config.review_band or classifier.config.review_band
    if (
        config.specific_first is not None
    ):  # the classifier ranked paragraphs of many documents: re-rank per document
        results = specific_first_links(results, config.specific_first, band, **config.status_rules())
    # the articles a paragraph is linked to do not depend on which of them is proposed: targets first, so that an
    # article whose best-fitting provision obliges public bodies only is held for review below
    targets = (
        picker.targets(results, _picker_texts(paragraphs, results, classifier, state.abbreviations))
        if picker is not None and provision_targets and results
        else None
    )
    public: defaultdict[int, set[int]] = defaultdict(set)
    if targets and not config.propose_public_duties:
        for (pid, article), target in targets.items():
            if target.get("public_bodies"):
                public[pid].add(article)
    if picker is not None and (corroboration is not None or public):
        results = [
            corroborate_links(
                r,
                band,
                picker.article_cosines(r) if corroboration is not None and r.embedding is not None else {},
                corroboration if corroboration is not None else 0.0,
                held=public.get(r.paragraph_id, ()),
                **config.status_rules(),
            )
            if (corroboration is not None and r.embedding is not None) or r.paragraph_id in public
            else r
            for r in results
        ]
    links = new_links(
        results,
        provision_ids,
        classifier.identity,
        _run_evidence(run_id, config, corroboration),
        model_version=suggestion_version(classifier, config, corroboration),
        provision_targets=targets,
        contexts=state.contexts,
        abbreviations=state.abbreviations,
    )
    # links another audit stored meanwhile (same paragraph, article, model and settings) are skipped
    stored = store.add_links(run_id, links) if links else 0
    if space is not None:
        vectors = [
            ParagraphVectors(
                r.paragraph_id,
                int(r.vectors.shape[0]),
                int(r.vectors.shape[1]),
                r.vectors.astype("<f4").tobytes(),
            )
            for r in results
            if r.vectors is not None and len(r.vectors)
        ]
        if vectors:
            store.save_paragraph_vectors(space.id, vectors)
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
    return AuditedDocument(
        source=doc.source,
        document_id=saved.document_id,
        version=saved.version,
        status=status,
        paragraphs=len(paragraphs),
        classified=len(results),
        links=stored,
        top_articles=[
            _article_summary(a, titles[a], count[a], w)
            for a, w in sorted(weight.items(), key=lambda kv: -kv[1])
            if a not in umbrella_articles
        ][:5],
        needs_review=review,
        principles=[
            _article_summary(a, titles[a], count[a], w)
            for a, w in sorted(weight.items(), key=lambda kv: -kv[1])
            if a in umbrella_articles
        ],
        skipped=_skipped_roles([p for p in paragraphs if p.id not in state.cited], roles),
        other_languages=state.other_languages,
    )


#: provision pickers by the law version's checksum: built once per process (a worker audits one document per task)
_PICKERS: dict[str, ProvisionPicker] = {}
_PICKERS_LOCK = threading.Lock()
_PICKERS_KEPT = 4


class _LazyPicker:
    """The provision picker over the stored GDPR, built on first use and kept for this process, keyed by the law
    version's checksum and the classifier's encoder: BM25 mixed with the cosine of the encoder's embeddings (the
    paragraph's from the audit's forward pass, :attr:`ParagraphLinks.embedding`) (seed 001: the encoder
    fine-tuned to classify legal text by article matches it best; on the NIS2 provision labels the hybrid with
    the classifier's encoder names the right paragraph or point for 0.56 of the paragraphs, BM25 alone 0.41,
    docs/officer.md)."""

    def __init__(
        self, store: Store, law_id: int, classifier: ArticleClassifier, authority_weight: float
    ) -> None:
        self.store, self.law_id, self.classifier = store, law_id, classifier
        self.authority_weight = authority_weight
        self._picker: ProvisionPicker | None = None

    def _get(self) -> ProvisionPicker:
        if self._picker is None:
            self._picker = _picker_for(self.store, self.law_id, self.classifier, self.authority_weight)
        return self._picker

    def prepare(self) -> None:
        """Build the picker now (its passage vectors embedded, or read from their cache)."""
        self._get()

    def article_cosines(self, result: ParagraphLinks) -> dict[int, float]:
        """Article → the paragraph's cosine with the article's closest passage, for every ranked article (the
        paragraph's vector from the audit's own forward pass)."""
        return self._get().article_cosines(result.embedding, [s.article for s in result.ranked])

    def targets(
        self, results: Sequence[ParagraphLinks], texts: Mapping[int, str]
    ) -> dict[tuple[int, int], dict[str, Any]]:
        """``{(paragraph id, article): evidence.provision}`` for every linked article that has a target."""
        picker = self._get()
        out: dict[tuple[int, int], dict[str, Any]] = {}
        for res in results:
            if not res.linked:
                continue
            vector = res.embedding  # from the audit's own forward pass: no second encoding
            text = texts[res.paragraph_id]
            for score, _ in res.linked:
                # "Art. 6(1)(f) GDPR": the text names the point (read once, by the classifier's ranking)
                target = picker.cited_target(score.article, score.cited_keys) if score.cited_keys else None
                if target is None:
                    target = picker.pick(text, score.article, vector=vector)
                if target is not None:
                    out[(res.paragraph_id, score.article)] = target.to_dict()
        return out


def _picker_for(
    store: Store, law_id: int, classifier: ArticleClassifier, authority_weight: float = AUTHORITY_WEIGHT
) -> ProvisionPicker:
    record = store.law_record(law_id)
    return law_picker(
        classifier, record.checksum, lambda: store.get_law(law_id), authority_weight=authority_weight
    )


def law_picker(
    classifier: ArticleClassifier,
    checksum: str,
    law: Callable[[], Law],
    *,
    authority_weight: float = AUTHORITY_WEIGHT,
) -> ProvisionPicker:
    """The provision picker over a law (``law()``, read only when the picker is not built yet) with the
    classifier's encoder on its dense side, kept for this process by the law version's ``checksum``, the
    encoder's weights and ``authority_weight`` (:class:`~compliance.linking.provisions.ProvisionPicker`). The
    passages' vectors are the classifier's own when it carries this law version's passages (its passage expert,
    :meth:`~compliance.models.passages.PassageExpert.vectors_of`: nothing is embedded); otherwise they are
    embedded once per encoder and cached under the index directory."""
    from compliance.linking.provisions import ProvisionPicker

    key = f"{checksum}:{_encoder_id(classifier)}:{authority_weight:g}"
    with _PICKERS_LOCK:
        picker = _PICKERS.get(key)
    if picker is None:
        picker = ProvisionPicker(law(), authority_weight=authority_weight)
        picker.attach_vectors(
            classifier_passage_vectors(classifier, checksum, picker.texts), encode=_embedder(classifier)
        )
        with _PICKERS_LOCK:
            while len(_PICKERS) >= _PICKERS_KEPT:
                _PICKERS.pop(next(iter(_PICKERS)))
            _PICKERS[key] = picker
    return picker


def classifier_passage_vectors(classifier: ArticleClassifier, checksum: str, texts: Sequence[str]) -> Any:
    """The vectors of a law's passages ``texts`` by ``classifier``'s encoder: the ones its passage expert carries
    when it carries these passages of this law version (``checksum``;
    :meth:`~compliance.models.passages.PassageExpert.vectors_of`: nothing is embedded), otherwise embedded once per
    encoder and cached under the index directory (:func:`~compliance.linking.provisions.cached_passage_vectors`)."""
    from compliance.linking.provisions import cached_passage_vectors
    from compliance.settings import get_settings

    carried = classifier.passages
    vectors = carried.vectors_of(texts, checksum) if carried is not None else None
    if vectors is not None:
        return vectors
    return cached_passage_vectors(
        texts,
        _embedder(classifier),
        encoder_id=_encoder_id(classifier),
        cache_dir=get_settings().resolved_index_dir / "provision-vectors",
    )


def _encoder_id(classifier: ArticleClassifier) -> str:
    """What names the classifier's encoder in cache keys: its weights' sha256, or its name without weights."""
    from compliance.artifacts import weights_sha256

    return weights_sha256(Path(classifier.encoder.name)) or classifier.encoder.name


def _embedder(classifier: ArticleClassifier) -> Callable[[Sequence[str]], Any]:
    """Texts in, their vectors by the classifier's encoder out (numpy rows)."""
    encoder = classifier.encoder

    def encode(texts: Sequence[str]) -> Any:
        return encoder.embed(texts).numpy()

    return encode


def _cites_the_act(classifier: ArticleClassifier, text: str) -> bool:
    """Whether ``text`` cites an article of the classifier's act by the act's name (False when it reads none)."""
    found = classifier.citations([text])
    return bool(found and found[0])


#: roles that are not mapped by default but are when the paragraph cites the act by name
CITATION_ROLES = frozenset({"description", "reference"})


def _is_mapped(role: str | None, roles: Collection[str] | None) -> bool:
    """Whether a paragraph of this role is mapped (no role: stored before roles existed, always mapped)."""
    return roles is None or role is None or role in roles


def _skipped_roles(paragraphs: Iterable[Any], roles: Collection[str] | None) -> dict[str, int]:
    """How many paragraphs of each role are not mapped."""
    return dict(sorted(Counter(p.role for p in paragraphs if not _is_mapped(p.role, roles)).items()))


def _article_summary(article: int, title: str, paragraphs: int, weight: float) -> dict[str, Any]:
    """One article of a document summary: the paragraphs linked to it, their mean classifier score, and
    ``weight``, the sum of those scores (what the articles are ranked by)."""
    return {
        "article": article,
        "title": title,
        "paragraphs": paragraphs,
        "mean_score": round(weight / paragraphs, 3) if paragraphs else 0.0,
        "weight": round(weight, 3),
    }


def _run_evidence(run_id: int, config: ClassifierLinkConfig, corroboration: float | None) -> dict[str, Any]:
    """What every link of the run carries of the rules that decided its status: the run, the corroboration level
    (when applied) and ``definitions: "review"`` (when definitions are never proposed), so that the review page can
    say why a link was held (:func:`compliance.app.review.held_for_review`)."""
    out: dict[str, Any] = {"run": run_id}
    if corroboration is not None:
        out["corroboration"] = round(corroboration, 4)
    if not config.propose_definitions:
        out["definitions"] = "review"
    return out


def corroboration(classifier: ArticleClassifier) -> float | None:
    """The cosine a proposal needs between a paragraph and the article's closest passage: the link decision's
    drop edge when it was calibrated on this classifier's encoder (:func:`~compliance.linking.decision.
    corroboration_level`), else None (no corroboration)."""
    from compliance.artifacts import weights_sha256
    from compliance.linking.decision import corroboration_level

    return corroboration_level(weights_sha256(Path(classifier.encoder.name)))


def suggestion_version(
    classifier: ArticleClassifier, config: ClassifierLinkConfig, corroboration: float | None = None
) -> str:
    """What made a classifier link, as stored in its ``model_version``: the model's identity (its weights) and a
    short digest of everything else that decides its score and status: every number of the classifier's inference
    configuration but its batch size (temperature, prior, the experts' weights, umbrellas, consequences, windows),
    the review band, top-k, the shortest paragraph classified, the link rules and what the model's files hold
    beyond its configuration (the lexical expert's terms, the law prior's reading, the passages' law version). A
    link is stored once per (paragraph, provision, method, this), so a second audit with the same model and
    settings stores nothing twice, while a recalibrated model, a refreshed scoring or a changed band gives new
    suggestions that ``audit --rescore`` compares with the old ones."""
    from compliance.artifacts import json_sha256

    band = config.review_band or classifier.config.review_band
    scoring: dict[str, Any] = {
        # a scoring refreshed without retraining leaves the weights' checksum as it was (session 63)
        "inference": json_sha256({k: v for k, v in asdict(classifier.config).items() if k != "batch_size"})[
            :12
        ],
        "review_band": [float(band[0]), float(band[1])],
        "top_k": config.top_k,
        "min_words": config.min_words,
    }
    if config.specific_first is not None:
        scoring["specific_first"] = asdict(config.specific_first)
    if config.own_evidence:  # statuses decided on own evidence (umbrellas)
        scoring["status"] = "own-evidence"
    if corroboration is not None:  # proposals borne out by the text (the link decision's drop edge)
        scoring["corroboration"] = round(float(corroboration), 4)
    if not config.propose_definitions:  # definitions held for review
        scoring["definitions"] = "review"
    if config.lead_in_context:  # list items read after their lead-in
        scoring["context"] = "lead-in"
    if not config.propose_public_duties:  # provisions obliging public bodies only held for review
        scoring["public_duties"] = "review"
    if config.document_abbreviations:  # abbreviations each document defines read written out
        scoring["document_abbreviations"] = True
    provisions = (classifier.meta.get("recipe") or {}).get("data", {}).get("lexical_provisions")
    if provisions and classifier.uses_lexical:  # the lexical expert also indexes other acts' provisions
        scoring["lexical_provisions"] = provisions
    # the lexical expert reads terms otherwise than every model before session 35 did (stop words, numbers)
    lexical = classifier.lexical if classifier.uses_lexical else None
    if lexical is not None and lexical.analysis != lexical.DEFAULT_ANALYSIS:
        scoring["lexical_terms"] = lexical.analysis
    # the law prior reads "Member State law" as law, not as an institution (session 62)
    law_prior = (classifier.meta.get("recipe") or {}).get("law_prior") or {}
    if classifier.uses_prior and law_prior.get("member_state_law") == "law":
        scoring["member_state_law"] = "law"
    if classifier.uses_passages:  # the passages' law version (their weight is in the inference configuration)
        assert classifier.passages is not None
        scoring["passages"] = classifier.passages.source.get("law_checksum")
    return f"{classifier.identity}/{json_sha256(scoring)[:8]}"


def new_links(
    results: Sequence[ParagraphLinks],
    provision_ids: Mapping[str, int],
    model_identity: str,
    extra_evidence: Mapping[str, Any] | None = None,
    *,
    model_version: str | None = None,
    provision_targets: Mapping[tuple[int, int], Mapping[str, Any]] | None = None,
    contexts: Mapping[int, str] | None = None,
    abbreviations: Mapping[int, Mapping[str, str]] | None = None,
) -> list[NewLink]:
    """:class:`~compliance.store.NewLink` rows for ``results`` (``provision_ids``: ``art:N`` → provision id);
    ``model_version`` (default: the identity) is what the store keeps each link unique by; ``provision_targets``
    (``(paragraph id, article)`` → target) become ``evidence.provision``; ``contexts`` (paragraph id → the
    lead-in sentence it was classified with) become ``evidence.read_with``."""
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
            if score.citation:
                evidence["cited_as"] = score.citation
            if contexts and res.paragraph_id in contexts:
                evidence["read_with"] = contexts[res.paragraph_id]
            if abbreviations and res.paragraph_id in abbreviations:
                evidence["abbreviations"] = abbreviations[res.paragraph_id]
            target = (provision_targets or {}).get((res.paragraph_id, score.article))
            if target is not None:
                evidence["provision"] = dict(target)
            links.append(
                NewLink(
                    res.paragraph_id,
                    provision_ids[key],
                    METHOD,
                    score.score,
                    score.rank,
                    evidence,
                    status,
                    model_version=model_version,
                )
            )
    return links
