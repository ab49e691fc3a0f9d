"""An audit shared among worker processes (issue 12: what scales an audit on a GPU, where the Python around the
forward is the bound): the same links, scores, provision targets, vectors and summaries as one process gives, on
SQLite and on PostgreSQL, with the unreadable files reported as failures of the run."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compliance.app.audit_pool import split_windows
from compliance.app.ingest import Upload
from tests.fixtures.classifier.tiny import POLICY_SENTENCES, mini_gdpr, shared_tiny_classifier

SENTENCES = POLICY_SENTENCES


def test_shares_are_whole_role_windows_balanced_by_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compliance.settings import reset_settings

    monkeypatch.setenv("COMPLIANCE_ROLE_WINDOW", "2")
    reset_settings()
    paths = []
    for i, size in enumerate([900, 100, 100, 100, 500, 400, 300]):
        path = tmp_path / f"d{i}.md"
        path.write_text("x" * size)
        paths.append(path)
    # windows of one process: [0 1] [2 3] [4 5] [6] → 1000, 200, 900, 300 bytes
    shares = split_windows(paths, 2)
    assert shares == [([0, 1, 2, 3], [2, 2]), ([4, 5, 6], [2, 1])]  # 1000 + 200 | 900 + 300, input order
    assert sorted(i for positions, _ in split_windows(paths, 3) for i in positions) == list(range(7))
    # more shares than windows: no empty share; uploads count by their bytes
    monkeypatch.setenv("COMPLIANCE_ROLE_WINDOW", "100")
    reset_settings()
    assert split_windows([Upload("a.md", b"abc"), Upload("b.md", b"defg")], 4) == [([0, 1], [2])]


@pytest.fixture(scope="module")
def model_dir() -> Path:
    pytest.importorskip("torch")
    return shared_tiny_classifier()


@pytest.fixture
def pools() -> Iterator[None]:
    """The worker pools started by a test are stopped after it (their processes hold the test's environment)."""
    from compliance.app.audit_pool import close_pools

    yield
    close_pools()


def _documents(folder: Path, count: int) -> list[Path]:
    folder.mkdir(parents=True)
    paths = []
    for i in range(count):
        text = "\n\n".join(SENTENCES[(i + k) % len(SENTENCES)] for k in range(2 + i % 3))
        path = folder / f"policy-{i}.md"
        path.write_text(
            f"# Policy {i}\n\n{text}\n\nThis policy number {i} is owned by the CISO.\n", encoding="utf-8"
        )
        paths.append(path)
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 not really a PDF")
    return paths


def _mini_store(path: Path) -> Any:
    """A migrated SQLite store at ``path`` with the mini regulation installed."""
    from compliance.store import Store

    store = Store(f"sqlite:///{path}")
    store.upgrade()
    store.save_law(mini_gdpr())
    return store


def _links(store: Any, run_id: int) -> dict[tuple[Any, ...], tuple[Any, ...]]:
    out = {}
    for link in store.export_links(run_id):
        provision = (link["evidence"] or {}).get("provision") or {}
        key = (link["document_source"], link["paragraph_ordinal"], link["provision_key"], link["method"])
        out[key] = (
            link["score"],
            link["rank"],
            link["proposed_status"],
            provision.get("key"),
            provision.get("score"),
        )
    return out


def _vectors(store: Any) -> dict[tuple[str, int], bytes]:
    import sqlalchemy as sa

    with store.engine.connect() as conn:
        rows = conn.execute(
            sa.text(
                "SELECT d.source, p.ordinal, v.vectors FROM paragraph_vectors v JOIN paragraphs p ON p.id = "
                "v.paragraph_id JOIN document_versions dv ON dv.id = p.version_id JOIN documents d ON d.id = "
                "dv.document_id"
            )
        ).all()
    return {(r[0], r[1]): bytes(r[2]) for r in rows}


def _windows_of_three(tmp_path: Path, model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Any]:
    """Eight files (one unreadable) in a folder, roles decided over windows of 3 documents, and the classifier on
    the CPU."""
    from compliance.models.classifier import load
    from compliance.settings import reset_settings

    monkeypatch.setenv("COMPLIANCE_ROLE_WINDOW", "3")
    reset_settings()
    folder = tmp_path / "docs"
    _documents(folder, 7)
    return folder, load(model_dir, device="cpu", bf16=False)


def test_an_audit_in_two_processes_stores_what_one_process_stores(
    store: Any, tmp_path: Path, model_dir: Path, monkeypatch: pytest.MonkeyPatch, pools: None
) -> None:
    import numpy as np

    from compliance.app import audit_documents

    # the controls index embeds with the default classifier's encoder, this one: the audit stores vectors (the
    # worker processes inherit the variable)
    monkeypatch.setenv("COMPLIANCE_MODEL_DIR", str(model_dir.parent))
    # roles are decided over windows of 3 documents (8 files: 3 windows), in one process as in two
    folder, clf = _windows_of_three(tmp_path, model_dir, monkeypatch)
    # one process, into a store of its own
    alone = _mini_store(tmp_path / "alone.db")
    failed_alone: list[str] = []
    one = audit_documents(alone, [folder], clf, on_error=lambda label, f: failed_alone.append(label))
    # two processes, into the store under test (SQLite: WAL, writers in turn; PostgreSQL: side by side); the pool
    # started ahead, each worker with its model loaded
    from compliance.app.audit_pool import start_pool

    workers = start_pool(clf, 2)
    assert len(workers) == 2 and os.getpid() not in workers
    store.save_law(mini_gdpr())
    failed: list[str] = []
    two = audit_documents(
        store.as_actor("auditor"), [folder], clf, processes=2, on_error=lambda label, f: failed.append(label)
    )

    assert store.get_run(two.run_id).config["processes"] == two.processes == 2 and one.processes == 1
    # the workers write into the audit log under the parent store's actor
    logged = store.list_audit(action="links.add") + store.list_audit(action="document.save")
    assert logged and {e.actor for e in logged} == {"auditor"}
    assert failed == failed_alone == [str(folder / "broken.pdf")]
    assert [f.code for f in two.failures] == [f.code for f in one.failures] == ["C301"]
    # the summaries: same documents, in input order, with the same counts and articles
    assert [(d.source, d.paragraphs, d.classified, d.links) for d in two.documents] == [
        (d.source, d.paragraphs, d.classified, d.links) for d in one.documents
    ]
    assert [d.top_articles for d in two.documents] == [d.top_articles for d in one.documents]
    assert two.links == one.links > 0
    # every link: same paragraph, provision, rank, status and provision target; scores equal to float noise
    got, expected = _links(store, two.run_id), _links(alone, one.run_id)
    assert got.keys() == expected.keys()
    for key, (score, rank, status, target, target_score) in got.items():
        e_score, e_rank, e_status, e_target, e_target_score = expected[key]
        assert (rank, status, target) == (e_rank, e_status, e_target), key
        assert score == pytest.approx(e_score, abs=1e-5) and target_score == pytest.approx(
            e_target_score, abs=1e-4
        )
    # the controls index's vectors, from each worker's own forward pass: the same vectors
    vectors, expected_vectors = _vectors(store), _vectors(alone)
    assert vectors.keys() == expected_vectors.keys() and vectors
    for key, data in vectors.items():
        np.testing.assert_allclose(
            np.frombuffer(data, "<f4"), np.frombuffer(expected_vectors[key], "<f4"), atol=1e-5
        )
    # audited again: nothing new to classify, in the same workers
    again = audit_documents(store, [folder], clf, processes=2)
    assert start_pool(clf, 2) == workers
    assert again.links == 0 and {d.status for d in again.documents} == {"unchanged"}
    alone.dispose()


def test_processes_fall_back_to_one_where_the_store_cannot_be_shared(tmp_path: Path) -> None:
    from compliance.app.audit import audit_processes
    from compliance.errors import ConfigurationError
    from compliance.store import Store

    assert audit_processes(4, Store("sqlite://"), 10) == 1  # in memory: no other process can open it
    on_disk = Store(f"sqlite:///{tmp_path / 'x.db'}")
    assert audit_processes(4, on_disk, 10) == 4
    assert audit_processes(4, on_disk, 3) == 3  # at most one per role window
    with pytest.raises(ConfigurationError):
        audit_processes(0, on_disk, 10)


def test_auto_processes_share_a_gpu_audit_and_leave_a_cpu_audit_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from compliance.app.audit import wanted_processes
    from compliance.settings import Settings

    assert Settings().audit_processes == 0  # auto by default
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    assert wanted_processes(0, "cuda:0") == 8  # half the cores, at most 8
    assert wanted_processes(0, "cpu") == 1  # the forward needs the cores
    assert wanted_processes(3, "cpu") == 3  # asked for
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(64)), raising=False)
    assert wanted_processes(0, "cuda") == 8
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert wanted_processes(0, "cuda") == 1


def test_every_error_survives_the_trip_from_a_worker_process() -> None:
    """A worker's error reaches the parent pickled: each error class comes back with its message and code."""
    import inspect
    import pickle

    from compliance import errors

    classes = [
        c
        for c in vars(errors).values()
        if isinstance(c, type) and issubclass(c, errors.ComplianceError) and c.__module__ == errors.__name__
    ]
    assert len(classes) > 20
    for cls in classes:
        params = [p for p in inspect.signature(cls.__init__).parameters.values() if p.name != "self"]
        args = [
            [(3, 7, "no status")] if p.name == "problems" else f"{p.name} of {cls.__name__}" for p in params
        ]
        error = cls(*args)
        back = pickle.loads(pickle.dumps(error))
        assert type(back) is cls and str(back) == str(error) and back.code == error.code, cls


@pytest.mark.slow  # 26 s: `make test-slow`
def test_a_worker_killed_fails_the_run_and_the_next_audit_starts_new_workers(
    tmp_path: Path, model_dir: Path, monkeypatch: pytest.MonkeyPatch, pools: None
) -> None:
    import signal

    from compliance.app import audit_documents
    from compliance.app.audit_pool import start_pool
    from compliance.errors import ModelError

    folder, clf = _windows_of_three(tmp_path, model_dir, monkeypatch)
    store = _mini_store(tmp_path / "killed.db")
    workers = start_pool(clf, 2)
    os.kill(workers[0], signal.SIGKILL)  # out of memory, say
    with pytest.raises(ModelError) as raised:
        audit_documents(store, [folder], clf, processes=2)
    assert raised.value.code == "C501" and "audit worker process stopped" in str(raised.value)
    assert [r.status for r in store.list_runs(kind="audit")] == ["failed"]
    again = audit_documents(store, [folder], clf, processes=2)  # a new pool: the broken one was dropped
    assert again.processes == 2 and len(again.documents) == 7 and [f.code for f in again.failures] == ["C301"]
    assert workers[0] not in start_pool(clf, 2)
    store.dispose()


def test_given_role_windows_must_cover_the_sources(store: Any, tmp_path: Path) -> None:
    from compliance.app.ingest import save_sources
    from compliance.errors import ConfigurationError

    paths = _documents(tmp_path / "docs", 3)
    with pytest.raises(ConfigurationError):
        list(save_sources(store, paths, embed=None, windows=[2, 2]))
    saved = list(save_sources(store, paths, embed=None, windows=[1, 2]))
    assert [o.label for o in saved] == [str(p) for p in paths]
