"""Audit at the speed of the encoder (issue 12): end-to-end audit throughput against the bare encoder forward on
the same paragraphs, in the same process and precision; peak memory of a large audit; an alert search for a new
act over 100,000 stored paragraphs whose vectors are already in the store.

    python -m bench.audit_throughput --model DIR                     # ratio (fp32, bf16) on >= 1,000 paragraphs
    python -m bench.audit_throughput --model DIR --rss 10000         # + peak RSS of a 10,000-paragraph audit
    python -m bench.audit_throughput --model DIR --alerts 100000     # + alert search over 100,000 stored vectors
    python -m bench.audit_throughput --no-ratio --parse 6            # PDF/DOCX read by 1 and 2 parse workers
    python -m bench.audit_throughput --device cuda --batch-size 256  # the ratio on a GPU
    python -m bench.audit_throughput --device cuda --batch-size 256 --processes 8  # 8 audit worker processes
    python -m bench.audit_throughput --no-ratio --encoder-free 2000 --repeats 3  # all but the encoder
    python -m bench.audit_throughput --no-ratio --parse-roles 2000 --repeats 3   # roles decided once or twice

``DIR`` is a trained classifier directory (``compliance train --recipe r-fast --out DIR``); default: the one at
the default location. The corpus: the sample policies in ``examples/`` (parsed once) written as Markdown
documents, replicated until it holds ``--paragraphs`` paragraphs; each copy's paragraphs end with a short
reference (``Ref k-j.``) so that no two paragraphs are the same text.

* **ratio** = bare forward seconds / audit seconds (target >= 0.9). The audit: ``app.audit_documents`` into a
  fresh SQLite store (parse, roles, store, classify with the lexical expert and evidence, store links and
  vectors), the GDPR already installed, the model loaded and the provision picker's passage vectors computed (all
  reported apart). The bare forward: the encoder forward alone over the classifier's windows of the paragraphs
  the audit classified, pre-tokenised, in length-sorted batches of the classifier's batch size (what
  ``bench.classification`` calls bare).
* **rss**: ``ru_maxrss`` of a child process that loads the model and audits ``--rss`` paragraphs.
* **alerts**: ``--alerts`` synthetic paragraphs stored with synthetic unit vectors in the controls index's
  embedding space (no encoder pass over them: that is the point), then NIS2 (``../shared/data/laws/eu/
  nis2.json``) as a new act: the controls index built from the store (BM25 + the stored vectors) and the alert
  run's candidate searches (every article, top 20, and the whole act, top 50). The link-decision scoring of the
  candidates is not included (it needs a trained link-decision model).

``run()`` returns the figures as a dict (``python -m bench``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
#: CPU seconds (all threads of this process) of the last audit and bare forward: steadier than wall time when
#: other jobs share the machine
_CPU: dict[str, float] = {}


def _cpu_now() -> float:
    """CPU seconds of this process (all threads) and of its finished children (the parse sandbox)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _setup_home(model: Path, home: Path) -> None:
    """A fresh COMPLIANCE_HOME whose default classifier is ``model`` (the controls index then embeds with its
    encoder, so the audit's vectors are the index's)."""
    os.environ["COMPLIANCE_HOME"] = str(home)
    models = home / "models"
    models.mkdir(parents=True, exist_ok=True)
    link = models / "gdpr-classifier"
    if not link.exists():
        link.symlink_to(model.resolve())
    os.environ["COMPLIANCE_MODEL_DIR"] = str(models)
    from compliance.settings import reset_settings

    reset_settings()


def write_corpus(folder: Path, paragraphs: int) -> int:
    """The sample policies as Markdown documents, replicated to at least ``paragraphs`` paragraphs; returns the
    number of paragraphs written (headings included)."""
    from compliance.connectors import parse_path

    docs = [parse_path(p) for p in sorted((ROOT / "examples").iterdir()) if p.is_file()]
    folder.mkdir(parents=True, exist_ok=True)
    written = 0
    copy = 0
    while written < paragraphs:
        for d, doc in enumerate(docs):
            lines = [f"# {doc.title or 'Policy'} {copy}"]
            for j, p in enumerate(doc.paragraphs):
                if p.kind == "heading":
                    lines.append(f"## {p.text}")
                else:
                    lines.append(f"{p.text} Ref {copy}-{j}.")
            (folder / f"policy-{copy:04d}-{d}.md").write_text("\n\n".join(lines) + "\n", encoding="utf-8")
            written += len(lines)
        copy += 1
    return written


def _corpus_texts(folder: Path) -> list[str]:
    """Every paragraph text of the corpus's documents (headings included), as the audit reads them."""
    from compliance.connectors import parse_path

    return [p.text for path in sorted(folder.iterdir()) for p in parse_path(path).paragraphs]


def _sync(clf: Any) -> None:
    """Wait for the device's queued work (CUDA runs asynchronously; a host clock read before it would flatter)."""
    import torch

    if clf.encoder.device.type == "cuda":
        torch.cuda.synchronize()


def _bare_forward(clf: Any, texts: list[str]) -> float:
    """Seconds of the encoder forward alone over the classifier's windows of ``texts`` (pre-tokenised, on the
    model's device before the clock starts)."""
    import torch

    windows, _ = clf._windows(texts)
    batches = [{"input_ids": ids, "attention_mask": mask} for _, ids, mask in clf.window_batches(windows)]
    _sync(clf)
    t0, c0 = time.perf_counter(), _cpu_now()
    with torch.inference_mode():
        for b in batches:
            clf.encoder.pooled(b)
    _sync(clf)
    _CPU["bare"] = _cpu_now() - c0
    return time.perf_counter() - t0


def _audit(
    clf: Any,
    corpus: Path,
    db: Path,
    *,
    store_vectors: bool = True,
    batch_size: int | None = None,
    processes: int = 1,
    texts: bool = True,
) -> tuple[float, Any, list[str]]:
    """Seconds of one audit of ``corpus`` into a fresh store (GDPR installed before the clock starts); the report
    and the texts of the paragraphs it classified (read back from the store after the clock; ``texts=False``: not
    read, so that a peak-memory figure is the audit's own)."""
    from compliance.app import audit_documents
    from compliance.linking.classifier_links import ClassifierLinkConfig
    from compliance.rules import load_pack_law
    from compliance.store import Store

    store = Store(f"sqlite:///{db}")
    store.upgrade()
    store.save_law(load_pack_law("gdpr"))
    config = ClassifierLinkConfig(batch_size=batch_size) if batch_size else None
    t0, c0 = time.perf_counter(), _cpu_now()
    report = audit_documents(
        store, [corpus], clf, config=config, store_vectors=store_vectors, processes=processes
    )
    _sync(clf)
    seconds = time.perf_counter() - t0
    _CPU["audit"] = _cpu_now() - c0
    classified: list[str] = []
    if texts:
        ids = {link["paragraph_id"] for link in store.export_links(report.run_id)}
        classified = [p.text for p in store.iter_paragraphs() if p.id in ids]
    store.dispose()
    return seconds, report, classified


def _prepare_picker(clf: Any, db: Path) -> float:
    """Seconds to build the audit's provision picker for the GDPR with ``clf``'s encoder (kept for the process)."""
    from compliance.app.audit import _picker_for
    from compliance.rules import load_pack_law
    from compliance.store import Store

    store = Store(f"sqlite:///{db}")
    store.upgrade()
    law_id = int(store.save_law(load_pack_law("gdpr")).id)
    t0 = time.perf_counter()
    _picker_for(store, law_id, clf)
    seconds = time.perf_counter() - t0
    store.dispose()
    return seconds


def ratio(
    model: Path,
    paragraphs: int,
    repeats: int,
    device: str = "cpu",
    batch_size: int | None = None,
    precisions: tuple[str, ...] = ("fp32", "bf16"),
    processes: int = 1,
    without_vectors: bool = True,
) -> dict[str, Any]:
    """Audit vs bare forward in each of ``precisions`` (``fp32``, ``bf16``: autocast), same process, same texts,
    on ``device``; ``batch_size`` (paragraphs per audit batch and windows per forward, both) overrides the
    defaults (256 and the model's 32); ``processes``: the audit shares the documents among that many worker
    processes (started, and their models loaded, by the untimed warm-up audit; the bare forward stays one
    process's); ``without_vectors``: one more audit, storing no vectors."""
    import dataclasses

    import torch

    from compliance.models.classifier import load
    from compliance.runtime import bf16_supported

    work = Path(tempfile.mkdtemp(prefix="bench-audit-"))
    _setup_home(model, work / "home")
    corpus = work / "corpus"
    written = write_corpus(corpus, paragraphs)
    t0 = time.perf_counter()
    clf = load(model, device=device)
    if batch_size:
        clf.config = dataclasses.replace(clf.config, batch_size=batch_size)
    load_s = time.perf_counter() - t0
    out: dict[str, Any] = {
        "paragraphs_written": written,
        "documents": len(list(corpus.iterdir())),
        "model_load_s": round(load_s, 2),
        # one-off per law version and encoder, like the model load: the GDPR's passages embedded for the
        # provision picker (cached under the index directory for later processes)
        "provision_vectors_s": round(_prepare_picker(clf, work / "picker.db"), 2),
        "device": str(clf.encoder.device),
        "device_name": torch.cuda.get_device_name(clf.encoder.device)
        if clf.encoder.device.type == "cuda"
        else None,
        "batch_size": batch_size or "default",
        "torch_threads": torch.get_num_threads(),
        "audit_processes": processes,
        "bf16_native": bf16_supported(clf.encoder.device),
        "runs": [],
    }
    # one untimed audit of two documents first: what the first audit of a process imports and loads lazily
    # (the role model, the store's migrations, CUDA kernels) is one-off, like the model load
    warm = work / "warm"
    warm.mkdir()
    for path in sorted(corpus.iterdir())[: 2 * processes]:
        (warm / path.name).write_bytes(path.read_bytes())
    if processes > 1:
        from compliance.app.audit_pool import start_pool
        from compliance.settings import reset_settings

        t0 = time.perf_counter()
        out["worker_processes_started"] = len(start_pool(clf, processes))
        out["pool_start_s"] = round(time.perf_counter() - t0, 2)  # the workers' model loads, one-off
        window = os.environ.get("COMPLIANCE_ROLE_WINDOW")
        os.environ["COMPLIANCE_ROLE_WINDOW"] = "2"  # the warm-up: a window of two documents for every worker
        reset_settings()
    t0 = time.perf_counter()
    _audit(clf, warm, work / "warm.db", batch_size=batch_size, processes=processes)
    out["first_audit_warm_up_s"] = round(time.perf_counter() - t0, 2)
    if processes > 1:
        if window is None:
            del os.environ["COMPLIANCE_ROLE_WINDOW"]
        else:
            os.environ["COMPLIANCE_ROLE_WINDOW"] = window
        reset_settings()
    n = 0
    texts_of_corpus = _corpus_texts(corpus)
    for bf16 in [p == "bf16" for p in precisions]:
        clf.encoder.use_bf16 = bf16
        clf.predict_proba(["warm up the encoder and the lexical expert"] * 8)
        # oneDNN (and CUDA) prepare their kernels for each new input shape on first use: one untimed forward over
        # the corpus's paragraphs, so that neither the first timed audit nor the bare forward pays that one-off
        # (it used to be paid, unseen, by the provision picker's embedding of the law's passages)
        clf.forward(texts_of_corpus)
        audits: list[float] = []
        bares: list[float] = []
        cpu_ratios: list[float] = []
        classified = 0
        vectors = 0
        for _ in range(repeats):
            n += 1
            seconds, report, texts = _audit(
                clf, corpus, work / f"audit-{n}.db", batch_size=batch_size, processes=processes
            )
            audits.append(seconds)
            if clf.encoder.device.type == "cuda" and not bares:
                # CUDA loads kernels for new shapes and dtypes lazily: a one-off, not the forward's
                _bare_forward(clf, texts)
            bares.append(_bare_forward(clf, texts))
            cpu_ratios.append(_CPU["bare"] / _CPU["audit"])
            classified = sum(d.classified for d in report.documents)
            vectors = len(texts)
        audit_s, bare_s = statistics.median(audits), statistics.median(bares)
        out["runs"].append(
            {
                "precision": "bf16-autocast" if bf16 else "fp32",
                "paragraphs_classified": classified,
                "paragraphs_linked": vectors,
                "audit_s": round(audit_s, 2),
                "bare_forward_s": round(bare_s, 2),
                "audit_paragraphs_per_s": round(classified / audit_s, 1),
                "bare_paragraphs_per_s": round(classified / bare_s, 1),
                "ratio": round(bare_s / audit_s, 3),
                "ratio_each_run": [round(b / a, 3) for a, b in zip(audits, bares, strict=True)],
                # the worker processes' CPU time is not this process's (they outlive the audit): no CPU ratio then
                "cpu_time_ratio": round(statistics.median(cpu_ratios), 3) if processes == 1 else None,
                "repeats": repeats,
            }
        )
    if not without_vectors:
        return out
    # the same audit without storing vectors: what the second use costs (in the device's default precision: bf16
    # autocast where the CPU or GPU runs it natively, fp32 elsewhere; the key says which)
    clf.encoder.use_bf16 = bf16_supported(clf.encoder.device)
    seconds, _, _ = _audit(
        clf, corpus, work / "novec.db", store_vectors=False, batch_size=batch_size, processes=processes
    )
    precision = "bf16" if clf.encoder.use_bf16 else "fp32"
    out[f"{precision}_audit_without_vectors_s"] = round(seconds, 2)
    return out


def rss(model: Path, paragraphs: int) -> dict[str, Any]:
    """Peak RSS of a child process that loads the model and audits ``paragraphs`` paragraphs."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.audit_throughput",
            "--model",
            str(model),
            "--child-rss",
            str(paragraphs),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    child = json.loads(proc.stdout.strip().splitlines()[-1])
    child["wall_s"] = round(time.perf_counter() - t0, 1)
    return child


def _child_rss(model: Path, paragraphs: int) -> dict[str, Any]:
    from compliance.models.classifier import load

    work = Path(tempfile.mkdtemp(prefix="bench-rss-"))
    _setup_home(model, work / "home")
    written = write_corpus(work / "corpus", paragraphs)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    clf = load(model, device="cpu")
    loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    seconds, report, _ = _audit(clf, work / "corpus", work / "rss.db", texts=False)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "paragraphs_written": written,
        "paragraphs_classified": sum(d.classified for d in report.documents),
        "documents": len(report.documents),
        "audit_s": round(seconds, 1),
        "rss_before_model_mb": round(before / 1024, 1),
        "rss_after_model_load_mb": round(loaded / 1024, 1),
        "peak_rss_mb": round(peak / 1024, 1),
    }


def alerts(model: Path, paragraphs: int, seed: int = 0) -> dict[str, Any]:
    """NIS2 as a new act over ``paragraphs`` stored paragraphs with stored vectors: controls index from the store
    and the alert run's candidate searches."""
    import numpy as np

    from compliance.alerts.engine import candidate_searches, changed_provisions
    from compliance.connectors.document import Paragraph, ParsedDocument
    from compliance.retrieval.encoding import TextEncoder
    from compliance.retrieval.indexes import CONTROL_INDEX, index_config
    from compliance.rules import load_law_file
    from compliance.search import LawSearch
    from compliance.store import ParagraphVectors, Store

    work = Path(tempfile.mkdtemp(prefix="bench-alerts-"))
    _setup_home(model, work / "home")
    store = Store(f"sqlite:///{work / 'alerts.db'}")
    store.upgrade()
    from bench.retrieval_alerts import synthetic_paragraphs

    texts = synthetic_paragraphs(paragraphs, seed)
    encoder = TextEncoder(index_config(CONTROL_INDEX).dense)
    space = encoder.space()
    assert space is not None
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    per_doc = 100
    for start in range(0, len(texts), per_doc):
        chunk = texts[start : start + per_doc]
        body, paras, at = [], [], 0
        for j, t in enumerate(chunk):
            paras.append(Paragraph(j, t, at, at + len(t), role="statement"))
            body.append(t)
            at += len(t) + 2
        doc = ParsedDocument(
            f"synthetic-{start // per_doc:05d}.txt",
            "text/plain",
            f"{start:064d}",
            "",
            "\n\n".join(body),
            tuple(paras),
        )
        saved = store.save_document(doc)
        ids = [p.id for p in store.iter_paragraphs(document_ids=[saved.document_id])]
        vecs = rng.standard_normal((len(ids), encoder.dim)).astype("<f4")
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        store.save_paragraph_vectors(
            space.id,
            [ParagraphVectors(i, 1, encoder.dim, v.tobytes()) for i, v in zip(ids, vecs, strict=True)],
        )
    fill_s = time.perf_counter() - t0
    law = load_law_file(ROOT.parent / "shared" / "data" / "laws" / "eu" / "nis2.json")
    store.save_law(law)
    keys = changed_provisions(law, None, ("article", "recital"))  # a new act: every article and recital
    queries = [f"{law.get(k).title or ''}\n{law.text_of(k)}".strip() for k in keys]
    embedded: list[int] = []
    original = TextEncoder.encode_chunks

    def counting(self: Any, batch: Any) -> Any:
        embedded.append(len(batch))
        return original(self, batch)

    TextEncoder.encode_chunks = counting  # type: ignore[method-assign]
    try:
        search = LawSearch(store, index_dir=work / "idx", encoder=encoder)
        t0 = time.perf_counter()
        index = search.controls_index()
        build_s = time.perf_counter() - t0
        controls_embedded = sum(embedded)
        t0 = time.perf_counter()
        candidate_searches(index, law, keys, 20, 50)  # what alerts.engine._decide runs
        search_s = time.perf_counter() - t0
    finally:
        TextEncoder.encode_chunks = original  # type: ignore[method-assign]
    t0 = time.perf_counter()
    chunks, _ = encoder.encode_chunks(queries)
    encode_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    LawSearch(store, index_dir=work / "idx", encoder=encoder).controls_index()  # the next run: from disk
    load_s = time.perf_counter() - t0
    return {
        "paragraphs": paragraphs,
        "store_fill_s": round(fill_s, 1),
        "controls_index_from_store_s": round(build_s, 2),
        "control_texts_embedded": controls_embedded,
        "queries": len(queries) + 1,
        "query_texts_embedded": sum(embedded) - controls_embedded,
        "query_chunks": len(chunks),
        "candidate_searches_s": round(search_s, 2),
        "of_which_query_encoding_s": round(encode_s, 2),
        "alert_retrieval_total_s": round(build_s + search_s, 2),
        "store_side_s": round(build_s + search_s - encode_s, 2),
        "controls_index_load_next_run_s": round(load_s, 2),
        "target_s": 10.0,
    }


def encoder_free(model: Path, paragraphs: int, repeats: int) -> dict[str, Any]:
    """The audit's throughput with the encoder taken out: the classifier's forward returns the real outputs of an
    earlier, untimed audit of the same corpus (looked up by text), so what is timed is everything around the
    forward — reading, roles, storing, ranking, evidence, provision targets, links and vectors. On a GPU the
    forward is nearly free (about 26,000 paragraphs/s on one H100), so this is about the most a GPU audit can do;
    it is not a GPU figure."""
    import numpy as np

    from compliance.models import classifier as module
    from compliance.models.classifier import ForwardPass, load

    work = Path(tempfile.mkdtemp(prefix="bench-audit-free-"))
    _setup_home(model, work / "home")
    corpus = work / "corpus"
    written = write_corpus(corpus, paragraphs)
    clf = load(model)
    real = module.ArticleClassifier.forward
    memo: dict[tuple[str, bool], tuple[Any, Any, Any]] = {}

    def recalled(self: Any, texts: Any, space: Any = None, also: Any = ()) -> Any:
        wanted = space is not None
        every = [*texts, *also] if wanted else list(texts)
        missing = list(dict.fromkeys(t for t in every if (t, wanted) not in memo))
        if missing:
            result = real(self, missing, space)
            assert result.embeddings is not None
            for i, t in enumerate(missing):
                vectors = None if result.vectors is None else result.vectors[i]
                memo[(t, wanted)] = (result.logits[i], vectors, result.embeddings[i])
        rows = [memo[(t, wanted)] for t in texts]
        return ForwardPass(
            np.stack([r[0] for r in rows]),
            [memo[(t, wanted)][1] for t in every] if wanted else None,
            np.stack([r[2] for r in rows]),
        )

    module.ArticleClassifier.forward = recalled  # type: ignore[method-assign]
    try:
        _prepare_picker(clf, work / "picker.db")
        _audit(clf, corpus, work / "fill.db")  # every real output computed once, untimed
        rates: list[float] = []
        classified = 0
        for n in range(repeats):
            seconds, report, _ = _audit(clf, corpus, work / f"free-{n}.db")
            classified = sum(d.classified for d in report.documents)
            rates.append(round(classified / seconds, 1))
    finally:
        module.ArticleClassifier.forward = real  # type: ignore[method-assign]
    return {
        "paragraphs_written": written,
        "paragraphs_classified": classified,
        "paragraphs_per_s_each_run": rates,
        "paragraphs_per_s": statistics.median(rates),
    }


def parse_pool(copies: int, workers: int) -> dict[str, Any]:
    """Seconds to read the sample policies' PDF and DOCX files (``copies`` copies each) by one parse worker and by
    ``workers`` (the audit's parse-ahead, :func:`compliance.app.ingest._parse_ahead`), best of two, processes
    started before the clock."""
    import shutil

    from compliance.app.ingest import _parse_ahead
    from compliance.connectors.sandbox import worker_pool

    os.environ["COMPLIANCE_PARSE_ISOLATION"] = "process"
    from compliance.settings import reset_settings

    reset_settings()
    work = Path(tempfile.mkdtemp(prefix="bench-parse-"))
    originals = [p for p in sorted((ROOT / "examples").iterdir()) if p.suffix in (".pdf", ".docx")]
    files = []
    for k in range(copies):
        for path in originals:
            copy = work / f"{k}-{path.name}"
            shutil.copy(path, copy)
            files.append(copy)
    out: dict[str, Any] = {"files": len(files)}
    for n in sorted({1, workers}):
        list(_parse_ahead(files[: n * 2], config=None, relative_to=None, depth=8, workers=n))  # start them
        times = []
        for _ in range(2):
            t0 = time.perf_counter()
            docs = list(_parse_ahead(files, config=None, relative_to=None, depth=8, workers=n))
            times.append(time.perf_counter() - t0)
        out["paragraphs"] = sum(len(getattr(d, "paragraphs", ())) for _, d in docs)
        out[f"workers_{n}_s"] = round(min(times), 2)
    out["workers_pool_size"] = len(worker_pool(workers))
    return out


def parse_roles(paragraphs: int, rounds: int) -> dict[str, Any]:
    """Seconds to read the sample policies as Markdown (replicated to ``paragraphs`` paragraphs, one window) and
    decide their roles over the window, with the roles also decided per document while parsing (as before
    session 24) and without (what the ingest and the audit do now); ``rounds`` alternating rounds, the parse
    worker started before the clock."""
    from compliance.app.ingest import FileFailure, _parse_ahead
    from compliance.connectors import SplitConfig
    from compliance.connectors.roles import assign_roles

    work = Path(tempfile.mkdtemp(prefix="bench-parse-roles-"))
    write_corpus(work, paragraphs)
    files = sorted(work.iterdir())
    list(_parse_ahead(files[:2], config=None, relative_to=None, depth=len(files)))  # start the worker
    out: dict[str, Any] = {"files": len(files)}
    for _ in range(rounds):
        for label, per_document in (("roles_while_parsing", True), ("roles_once", False)):
            t0 = time.perf_counter()
            config = SplitConfig(assign_roles=per_document)
            parsed = [d for _, d in _parse_ahead(files, config=config, relative_to=None, depth=len(files))]
            t1 = time.perf_counter()
            assign_roles([d for d in parsed if not isinstance(d, FileFailure)])
            t2 = time.perf_counter()
            out.setdefault(f"{label}_parse_s", []).append(round(t1 - t0, 2))
            out.setdefault(f"{label}_window_roles_s", []).append(round(t2 - t1, 2))
    return out


def run() -> dict[str, Any]:
    """``python -m bench`` entry: the ratio on the default classifier (BENCH_N paragraphs, default 1,000)."""
    from compliance.runtime import classifier_dir

    model = Path(os.environ.get("BENCH_MODEL", str(classifier_dir())))
    return ratio(model, int(os.environ.get("BENCH_N", "1000")), int(os.environ.get("BENCH_REPEATS", "1")))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--paragraphs", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--no-ratio", action="store_true")
    parser.add_argument("--rss", type=int, default=0)
    parser.add_argument("--alerts", type=int, default=0)
    parser.add_argument("--child-rss", type=int, default=0)
    parser.add_argument("--parse", type=int, default=0, help="read N copies of the sample PDF/DOCX files")
    parser.add_argument(
        "--parse-roles",
        type=int,
        default=0,
        help="read N paragraphs of Markdown with roles decided per document and over the window, or once",
    )
    parser.add_argument(
        "--encoder-free",
        type=int,
        default=0,
        help="audit N paragraphs with the forward's outputs recalled, not computed: all but the encoder",
    )
    parser.add_argument("--parse-workers", type=int, default=2)
    parser.add_argument(
        "--processes", type=int, default=1, help="the ratio's audits shared among N worker processes"
    )
    parser.add_argument(
        "--no-without-vectors",
        action="store_true",
        help="skip the ratio's extra audit that stores no vectors",
    )
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N (the ratio and the alert search)")
    parser.add_argument(
        "--batch-size", type=int, default=0, help="audit batch and forward batch (0: defaults)"
    )
    parser.add_argument(
        "--precision",
        choices=("both", "fp32", "bf16"),
        default="both",
        help="the ratio in fp32, bf16 autocast or both (bf16 is emulated, and slow, on a CPU without avx512_bf16)",
    )
    args = parser.parse_args(argv)
    os.environ["COMPLIANCE_DEVICE"] = args.device  # the index encoder and the provision picker follow it
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from compliance.runtime import classifier_dir

    model = args.model or classifier_dir()
    if args.child_rss:
        print(json.dumps(_child_rss(model, args.child_rss)))
        return 0
    out: dict[str, Any] = {"cpu_flags_bf16": "avx512_bf16" in Path("/proc/cpuinfo").read_text()}
    if not args.no_ratio:
        precisions = ("fp32", "bf16") if args.precision == "both" else (args.precision,)
        out["ratio"] = ratio(
            model,
            args.paragraphs,
            args.repeats,
            args.device,
            args.batch_size or None,
            precisions,
            args.processes,
            not args.no_without_vectors,
        )
        print(json.dumps(out, indent=2), flush=True)
    if args.rss:
        out["rss"] = rss(model, args.rss)
        print(json.dumps(out, indent=2), flush=True)
    if args.parse:
        out["parse"] = parse_pool(args.parse, args.parse_workers)
    if args.parse_roles:
        out["parse_roles"] = parse_roles(args.parse_roles, max(1, args.repeats))
    if args.encoder_free:
        out["encoder_free"] = encoder_free(model, args.encoder_free, max(1, args.repeats))
    if args.alerts:
        out["alerts"] = alerts(model, args.alerts)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
