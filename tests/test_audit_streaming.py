"""The audit's streaming (issue 12): documents parsed ahead in a bounded thread, roles decided per window of
documents, paragraphs of many documents classified in full length-sorted batches, paragraph vectors in the
store."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from compliance.app.ingest import role_windows, save_sources
from compliance.runtime import LengthBatcher


def test_length_batcher_gives_full_sorted_batches_across_sources() -> None:
    batcher: LengthBatcher[str] = LengthBatcher(4, length=len, pool=8)
    assert batcher.pool == 8
    out: list[list[str]] = []
    # three "documents" of 3 paragraphs each: no batch waits for one document
    for doc in (["aaaaaa", "b", "ccc"], ["dd", "eeeee", "f"], ["gggg", "hhhhhhh", "ii"]):
        out.extend(batcher.add(doc))
    assert [len(b) for b in out] == [4]  # 9 waiting >= 8: the 4 shortest leave, 5 wait
    assert out[0] == sorted(out[0], key=len) and {len(x) for x in out[0]} == {1, 2}
    assert len(batcher) == 5
    rest = list(batcher.flush())
    assert [len(b) for b in rest] == [4, 1] and len(batcher) == 0
    everything = [x for b in out + rest for x in b]
    assert sorted(everything) == sorted(["aaaaaa", "b", "ccc", "dd", "eeeee", "f", "gggg", "hhhhhhh", "ii"])
    assert LengthBatcher(32, length=len, pool=100).pool == 128  # a whole number of batches
    with pytest.raises(ValueError):
        LengthBatcher(0, length=len)


def test_role_windows_are_even_and_bounded() -> None:
    assert role_windows(0) == []
    assert role_windows(7, 100) == [7]
    assert role_windows(101, 100) == [51, 50]  # no lone document in a window of its own
    sizes = role_windows(1000, 64)
    assert sum(sizes) == 1000 and max(sizes) <= 64 and max(sizes) - min(sizes) <= 1


def _write_docs(folder: Path, n: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        p = folder / f"policy-{i:02d}.md"
        p.write_text(
            f"# Policy {i}\n\nAcme Corp confidential\n\nStaff encrypt laptop number {i} with full disk "
            f"encryption.\n\nAccess rights of system {i} are reviewed every quarter by the owner.\n",
            encoding="utf-8",
        )
        paths.append(p)
    return paths


def test_save_sources_windows_keep_cross_document_roles(store: Any, tmp_path: Path) -> None:
    paths = _write_docs(tmp_path / "docs", 6)
    broken = tmp_path / "docs" / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4 not really")
    sources = [*paths[:3], broken, *paths[3:]]
    failures: list[str] = []
    whole = list(save_sources(store, sources, embed=None, on_error=lambda label, f: failures.append(label)))
    assert [type(o).__name__ for o in whole].count("FileFailure") == 1 and failures == [str(broken)]
    assert [o.label for o in whole if hasattr(o, "saved")] == [str(p) for p in paths]  # input order
    roles_whole = [tuple(p.role for p in o.document.paragraphs) for o in whole if hasattr(o, "saved")]
    # windows of three or four documents (7 sources, window 4): the repeated line is still seen repeated
    windowed = list(
        save_sources(store, sources, embed=None, window=4, parse_ahead=1, relative_to=tmp_path / "other")
    )
    roles_windowed = [tuple(p.role for p in o.document.paragraphs) for o in windowed if hasattr(o, "saved")]
    assert roles_windowed == roles_whole


def test_save_sources_stops_its_parser_thread_when_closed(store: Any, tmp_path: Path) -> None:
    import threading

    paths = _write_docs(tmp_path / "docs", 12)
    outcomes = save_sources(store, paths, embed=None, window=2, parse_ahead=1)
    first = next(outcomes)
    assert first.label == str(paths[0])
    outcomes.close()
    assert not any(t.name == "compliance-parse-ahead" and t.is_alive() for t in threading.enumerate())


def test_stored_paragraph_vectors(store: Any) -> None:
    from compliance.connectors import parse_bytes
    from compliance.errors import StoreError
    from compliance.store import ParagraphVectors

    text = (
        b"Laptops issued to staff use full disk encryption and are checked by the security team every year."
        b"\n\nAccess rights to the customer database are reviewed every quarter by the system owner."
    )
    saved = store.save_document(parse_bytes(text, "a.txt"))
    ids = [p.id for p in store.iter_paragraphs(document_ids=[saved.document_id])]
    assert len(ids) == 2
    vecs = np.arange(2 * 3 * 4, dtype="<f4").reshape(2, 3, 4)
    rows = [ParagraphVectors(pid, 3, 4, v.tobytes()) for pid, v in zip(ids, vecs, strict=True)]
    assert store.save_paragraph_vectors("space-a", rows) == 2
    assert store.save_paragraph_vectors("space-a", rows) == 0  # written once per (paragraph, space)
    assert store.save_paragraph_vectors("space-b", rows[:1]) == 1
    got = store.paragraph_vectors("space-a", [*ids, 999_999])
    assert set(got) == set(ids)
    back = np.frombuffer(got[ids[1]].data, dtype="<f4").reshape(got[ids[1]].chunks, got[ids[1]].dim)
    np.testing.assert_array_equal(back, vecs[1])
    assert store.paragraph_vectors("space-b", ids).keys() == {ids[0]}
    assert store.vector_spaces() == {"space-a": 2, "space-b": 1}
    with pytest.raises(StoreError):
        store.save_paragraph_vectors("space-a", [ParagraphVectors(ids[0], 3, 4, b"short")])
    with pytest.raises(StoreError):
        store.save_paragraph_vectors("space-c", [ParagraphVectors(999_999, 1, 1, b"\0\0\0\0")])


def test_the_audit_classifies_paragraphs_of_many_documents_in_full_batches(
    store: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("torch")
    from compliance.app import audit_documents
    from compliance.linking.classifier_links import ClassifierLinkConfig
    from compliance.models.classifier import ArticleClassifier, load
    from tests.fixtures.classifier.tiny import mini_gdpr, shared_tiny_classifier

    paths = _write_docs(tmp_path / "docs", 20)
    store.save_law(mini_gdpr())
    clf = load(shared_tiny_classifier(), device="cpu", bf16=False)
    sizes: list[int] = []
    original = ArticleClassifier.forward

    def counting(self: ArticleClassifier, texts: Any, space: Any = None) -> Any:
        sizes.append(len(texts))
        return original(self, texts, space)

    monkeypatch.setattr(ArticleClassifier, "forward", counting)
    report = audit_documents(store, paths, clf, config=ClassifierLinkConfig(top_k=2, batch_size=8))
    classified = sum(d.classified for d in report.documents)
    assert len(report.documents) == 20 and classified >= 20
    # document by document this would be 20 calls of one or two texts; across documents: full batches of 8
    assert len(sizes) == math.ceil(classified / 8) and sizes[:-1] == [8] * (len(sizes) - 1)
    assert [d.source for d in report.documents] == [f"policy-{i:02d}.md" for i in range(20)]
    assert all(d.classified >= 1 and d.links >= d.classified for d in report.documents)


def test_documents_are_read_by_several_worker_processes_in_input_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pool of parse workers (a GPU machine's cores): the same documents and failures, in input order, as one
    worker gives, and every worker process of the pool took part."""
    from compliance.app.ingest import _parse_ahead
    from compliance.connectors import sandbox
    from compliance.connectors.sandbox import ParseBudget, worker_pool
    from compliance.settings import reset_settings

    monkeypatch.setenv("COMPLIANCE_PARSE_ISOLATION", "process")
    reset_settings()
    paths = _write_docs(tmp_path / "docs", 9)
    broken = tmp_path / "docs" / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4 not really")
    sources = [*paths[:4], broken, *paths[4:]]
    budget = ParseBudget(timeout_s=60.0, memory_mb=1536)
    monkeypatch.setattr(
        "compliance.connectors.sandbox.ParseBudget.from_settings", classmethod(lambda cls: budget)
    )
    pool = worker_pool(3, budget)
    used: list[int] = []
    run = sandbox.ParseWorker.run

    def counted(self: Any, task: Any, source: str) -> Any:
        used.append(id(self))
        return run(self, task, source)

    monkeypatch.setattr(sandbox.ParseWorker, "run", counted)

    def read(workers: int) -> list[tuple[str, Any]]:
        used.clear()
        out = []
        for label, item in _parse_ahead(sources, config=None, relative_to=None, depth=2, workers=workers):
            texts = tuple(p.text for p in item.paragraphs) if hasattr(item, "paragraphs") else item.code
            out.append((label, texts))
        return out

    alone = read(1)
    assert set(used) == {id(pool[0])}  # one worker: the shared one
    together = read(3)
    assert together == alone
    assert [label for label, _ in together] == [str(s) for s in sources]
    assert together[4][1] == alone[4][1] and isinstance(together[4][1], str)  # the failure, in its place
    assert set(used) == {id(w) for w in pool} and len(used) == len(sources)  # three processes took part


def test_parse_workers_default_to_half_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    from compliance.connectors import sandbox
    from compliance.settings import reset_settings

    monkeypatch.setattr(sandbox.os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    assert sandbox.parse_workers() == 8
    monkeypatch.setattr(sandbox.os, "sched_getaffinity", lambda pid: {0, 1})
    assert sandbox.parse_workers() == 1  # two cores: one reads, the encoder has the other
    monkeypatch.setattr(sandbox.os, "sched_getaffinity", lambda pid: set(range(64)))
    assert sandbox.parse_workers() == sandbox.MAX_AUTO_WORKERS
    monkeypatch.setenv("COMPLIANCE_PARSE_WORKERS", "3")
    reset_settings()
    assert sandbox.parse_workers() == 3


def test_the_audits_forward_pads_little_on_real_policies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The texts the audit hands to each forward, cut into the classifier's windows and length-sorted batches,
    hold barely more tokens than the same windows sorted all at once (the bare forward's batches): the audit's
    batches are large enough that little is padded (batches of 64 padded 13 % on these policies)."""
    pytest.importorskip("torch")
    import dataclasses

    from bench.audit_throughput import write_corpus
    from compliance.app import audit_documents
    from compliance.models.classifier import ArticleClassifier, load
    from compliance.store import Store
    from tests.fixtures.classifier.tiny import mini_gdpr, shared_tiny_classifier

    write_corpus(tmp_path / "docs", 2500)  # the sample policies, replicated
    store = Store(f"sqlite:///{tmp_path / 'audit.db'}")  # batching is the store's business on no backend
    store.upgrade()
    store.save_law(mini_gdpr())
    clf = load(shared_tiny_classifier(), device="cpu", bf16=False)
    calls: list[list[str]] = []
    original = ArticleClassifier.forward

    def recording(self: ArticleClassifier, texts: Any, space: Any = None) -> Any:
        calls.append(list(texts))
        return original(self, texts, space)

    monkeypatch.setattr(ArticleClassifier, "forward", recording)
    report = audit_documents(store, [tmp_path / "docs"], clf, provision_targets=False)
    assert sum(d.classified for d in report.documents) == sum(map(len, calls)) > 1500

    # the shipped classifier's windows (128 tokens, stride 32, 32 a batch), cut by the tiny model's tokenizer
    shipped = dataclasses.replace(
        clf, config=dataclasses.replace(clf.config, max_length=128, stride=32, batch_size=32)
    )

    def padded_tokens(texts: list[str]) -> int:
        windows, _ = shipped._windows(texts)
        return sum(int(ids.numel()) for _, ids, _ in shipped.window_batches(windows))

    audit = sum(padded_tokens(texts) for texts in calls)
    ideal = padded_tokens([t for texts in calls for t in texts])
    store.dispose()
    assert audit <= 1.05 * ideal, (audit, ideal)
