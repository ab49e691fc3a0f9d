"""Issue 14: concurrent audits and killed audits (defects 4 and 5), with the tiny classifier fixture.

* two audits started at once on overlapping folders of an empty database: both succeed, the law is installed
  once, no document is reported "could not be read", no link is stored twice, and the links are exactly those
  of one audit alone;
* an audit killed with SIGKILL at several points, then run again: the killed run is marked failed, and the
  database ends with exactly the links of an audit that was never interrupted (0 duplicates, 0 paragraphs left
  without their links).
"""

from __future__ import annotations

import signal
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from compliance.store import Store
from tests.fixtures import concurrency
from tests.fixtures.classifier.tiny import POLICY_SENTENCES, mini_gdpr, shared_tiny_classifier

pytest.importorskip("torch")

SENTENCES = POLICY_SENTENCES[:5]


@pytest.fixture(scope="module")
def model_dir() -> Path:
    return shared_tiny_classifier()


def _folders(root: Path) -> dict[str, Path]:
    """Three folders: ``a`` and ``b`` audited by one audit each, ``shared`` by both."""
    out = {}
    for name, count in (("a", 2), ("shared", 3), ("b", 2)):
        folder = root / name
        folder.mkdir(parents=True)
        for i in range(count):
            text = "\n\n".join(SENTENCES[(i + k) % len(SENTENCES)] for k in range(3))
            (folder / f"{name}{i}.txt").write_text(f"{text}\n\nPolicy {name} number {i}.\n", encoding="utf-8")
        out[name] = folder
    return out


def _link_keys(store: Any) -> Counter[tuple[Any, ...]]:
    """Every stored link as (document, paragraph ordinal, provision, method, model), with its count."""
    import sqlalchemy as sa

    with store.engine.connect() as conn:
        rows = conn.execute(
            sa.text(
                "SELECT d.source, p.ordinal, v.key, l.method, l.model_version FROM links l "
                "JOIN paragraphs p ON p.id = l.paragraph_id JOIN document_versions dv ON dv.id = p.version_id "
                "JOIN documents d ON d.id = dv.document_id JOIN provisions v ON v.id = l.provision_id"
            )
        ).all()
    return Counter(tuple(r) for r in rows)


def _reference(tmp_path: Path, folders: dict[str, Path], model_dir: Path, names: list[str]) -> Counter[Any]:
    """The links of one uninterrupted audit of ``names`` (in this process)."""
    from compliance.app import audit_documents
    from compliance.models.classifier import load

    store = Store(f"sqlite:///{tmp_path / 'reference.db'}")
    store.upgrade()
    store.save_law(mini_gdpr())
    clf = load(model_dir, device="cpu", bf16=False)
    audit_documents(store, [folders[n] for n in names], clf, relative_to=folders["a"].parent)
    keys = _link_keys(store)
    store.dispose()
    return keys


# PostgreSQL in the default run (its READ COMMITTED writers really race); SQLite (writers serialised by
# BEGIN IMMEDIATE) in the slow run, to keep the default suite's added time small: each audit process loads torch
@pytest.fixture(
    params=[
        pytest.param("sqlite", marks=pytest.mark.slow),
        pytest.param("postgresql", marks=pytest.mark.postgres),
    ]
)
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """A migrated, empty database (no law installed: the audits install it themselves)."""
    import os

    from compliance.store.testing import migrated_store, postgres_unavailable_reason

    if request.param == "postgresql" and (reason := postgres_unavailable_reason()):
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    with migrated_store(request.param, tmp_path) as store:
        yield store


def test_two_concurrent_audits_on_overlapping_folders(
    empty_url: Any, tmp_path: Path, model_dir: Path
) -> None:
    store = empty_url
    folders = _folders(tmp_path / "docs")
    first = concurrency.spawn(
        "audit", store.url, str(model_dir), "none", str(folders["a"]), str(folders["shared"])
    )
    second = concurrency.spawn(
        "audit", store.url, str(model_dir), "none", str(folders["shared"]), str(folders["b"])
    )
    done = concurrency.results([first, second])
    assert [d["failures"] for d in done] == [[], []]  # no false "could not be read", no store error
    assert [d["documents"] for d in done] == [5, 5]
    assert len(store.list_laws()) == 1  # both raced to install the law: stored once
    assert len(store.list_documents()) == 7
    keys = _link_keys(store)
    assert max(keys.values()) == 1  # 0 duplicate links
    assert keys == _reference(tmp_path, folders, model_dir, ["a", "shared", "b"])
    assert {r.status for r in store.list_runs(kind="audit")} == {"succeeded"}


@pytest.mark.parametrize(
    "kill_at",
    [
        "add_links:2",  # the second document is saved, its links are not
        pytest.param("after_add_links:1", marks=pytest.mark.slow),  # the first document done, the second not
        pytest.param("save_document:3", marks=pytest.mark.slow),  # killed before the third document
        pytest.param("after_add_links:4", marks=pytest.mark.slow),
    ],
)
def test_killed_audit_is_reaped_and_resumed(tmp_path: Path, model_dir: Path, kill_at: str) -> None:
    from compliance.app import audit_documents
    from compliance.models.classifier import load

    folders = _folders(tmp_path / "docs")
    store = Store(f"sqlite:///{tmp_path / 'killed.db'}")
    store.upgrade()
    killed = concurrency.spawn(
        "audit", store.url, str(model_dir), kill_at, str(folders["a"]), str(folders["shared"])
    )
    killed.communicate(timeout=240)
    assert killed.returncode == -signal.SIGKILL
    [run] = store.list_runs(kind="audit")
    assert run.status == "running"  # what the killed process left behind
    store.save_law(mini_gdpr())
    report = audit_documents(
        store,
        [folders["a"], folders["shared"]],
        load(model_dir, device="cpu", bf16=False),
        relative_to=folders["a"].parent,
    )
    assert not report.failures
    killed_run = store.get_run(run.id)
    assert killed_run.status == "failed" and "is gone" in (killed_run.error or "")
    assert store.get_run(report.run_id).number == 2
    keys = _link_keys(store)
    assert max(keys.values()) == 1
    assert keys == _reference(tmp_path, folders, model_dir, ["a", "shared"])
    store.dispose()
