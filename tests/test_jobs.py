"""Audit jobs: leases (a killed worker's document is taken over, never stored twice), the in-process pool gives
the links of `compliance audit`, the finished job posts one signed webhook; tokens and alert statuses in the
store. On SQLite and PostgreSQL."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner

from compliance.app.ingest import Upload
from compliance.app.jobs import AuditJobParams, job_detail, run_job_item, submit_audit_job
from compliance.errors import ConflictError, NotFoundError, StoreError
from compliance.store import NewAlert, NewJobItem
from tests.fixtures.api import POLICY, policy_text, tiny_classifier
from tests.fixtures.classifier.tiny import mini_gdpr


class _Recorder:
    """A dispatcher that only remembers what it was given (the test runs the items itself)."""

    def __init__(self) -> None:
        self.items: list[int] = []

    def dispatch(self, job_id: int, item_ids: Any) -> None:
        self.items.extend(item_ids)


def test_claims_leases_and_take_over(store: Any) -> None:
    job = store.create_job("audit", {"top_k": 3}, [NewJobItem("a.txt", b"aaa"), NewJobItem("b.txt", b"bbbb")])
    assert job.status == "queued" and job.counts == {
        "queued": 2,
        "running": 0,
        "done": 0,
        "failed": 0,
        "total": 2,
    }
    a, b = (i.id for i in store.list_job_items(job.id))
    first = store.claim_job_item(a, "w1", lease_s=60)
    assert first.outcome == "claimed" and first.content == b"aaa" and first.item.attempts == 1
    assert store.get_job(job.id).status == "running"
    busy = store.claim_job_item(a, "w2", lease_s=60)
    assert busy.outcome == "busy" and busy.claim is None
    # w1 dies: its lease runs out, nobody renews it; the item goes back to the queue and w2 takes it
    store.renew_job_item(a, first.claim, lease_s=-1)
    assert store.requeue_stale_job_items() == [(job.id, a)]
    second = store.claim_job_item(a, "w2", lease_s=60)
    assert second.outcome == "claimed" and second.item.attempts == 2
    # the late first worker can neither renew nor finish: its claim was taken over
    assert not store.renew_job_item(a, first.claim, 60)
    assert not store.finish_job_item(a, first.claim, "done", {"links": 99})
    assert store.finish_job_item(a, second.claim, "done", {"links": 3})
    assert store.claim_job_item(a, "w3", 60).outcome == "finished"
    assert store.finish_job_if_done(job.id) is None  # b is still queued
    third = store.claim_job_item(b, "w1", 60)
    assert store.finish_job_item(b, third.claim, "failed", {}, "unreadable")
    closed = store.finish_job_if_done(job.id)
    assert closed is not None and closed.status == "partial" and closed.finished_at is not None
    assert store.finish_job_if_done(job.id) is None  # exactly one caller closes it
    items = store.list_job_items(job.id)
    assert [i.status for i in items] == ["done", "failed"] and items[0].result == {"links": 3}
    with pytest.raises(NotFoundError):
        store.claim_job_item(123456, "w1", 60)


def test_tokens_are_unique_and_revocable(store: Any) -> None:
    from compliance.app.tokens import authenticate, create_token, list_tokens, revoke_token

    made = create_token(store, "dms", "reviewer", by="ops")
    assert made.secret.startswith("cpl_") and len(made.secret) > 40
    assert authenticate(store, made.secret).role == "reviewer"
    with pytest.raises(ConflictError):
        create_token(store, "dms", "viewer")
    revoke_token(store, "dms", by="ops")
    assert [t["active"] for t in list_tokens(store)] == [False]
    from compliance.errors import AuthenticationError

    with pytest.raises(AuthenticationError):
        authenticate(store, made.secret)
    with pytest.raises(StoreError):
        store.create_token("x", "root", "0" * 64, "cpl_")


def test_alert_statuses_keep_their_history(store: Any) -> None:
    from compliance.app.alerts import list_alerts, set_alerts_status
    from compliance.connectors import parse_bytes

    law = store.save_law(mini_gdpr())
    store.save_document(parse_bytes(POLICY.encode(), "p.txt"))
    paragraph = next(iter(store.iter_paragraphs()))
    run = store.start_run("alert", {})
    store.add_alerts(
        run, [NewAlert(law.id, paragraph.id, 0.9, rank=1), NewAlert(law.id, paragraph.id, 0.5, rank=2)]
    )
    first, second = (a.id for a in store.list_alerts())
    set_alerts_status(store, [first], "acknowledged", "ann", "looking")
    set_alerts_status(store, [first], "dismissed", "ann", "false positive: not about breaches")
    set_alerts_status(store, [second], "resolved", "bob", "control updated")
    assert [a["status"] for a in list_alerts(store, status="dismissed")] == ["dismissed"]
    history = store.get_alert(first).acknowledgements
    assert [(h.status, h.by) for h in history] == [("acknowledged", "ann"), ("dismissed", "ann")]
    assert store.get_alert(second).status == "resolved"
    assert [e.action for e in store.list_audit(target_type="alert")][:3] == [
        "alert.resolve",
        "alert.dismiss",
        "alert.acknowledge",
    ]
    with pytest.raises(StoreError):
        set_alerts_status(store, [first], "deleted", "ann")


def _link_keys(store: Any) -> list[tuple[Any, ...]]:
    return sorted(
        (
            row["document_source"],
            row["paragraph_ordinal"],
            row["provision_key"],
            row["rank"],
            round(row["score"], 6),
            row["proposed_status"],
        )
        for row in store.export_links()
    )


def test_in_process_jobs_give_the_links_of_the_cli_audit(store: Any, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from compliance.app import audit_documents
    from compliance.linking.classifier_links import ClassifierLinkConfig
    from compliance.store.testing import migrated_store
    from compliance.workers.inprocess import ThreadDispatcher

    folder = tmp_path / "policies"
    folder.mkdir()
    for n in range(4):
        (folder / f"policy-{n}.txt").write_text(policy_text(n), encoding="utf-8")
    clf = tiny_classifier()
    store.save_law(mini_gdpr())
    pool = ThreadDispatcher(store, threads=2, classifier=lambda params: clf)
    job = submit_audit_job(
        store, [folder], pool, params=AuditJobParams(top_k=3), relative_to=folder, by="ann"
    )
    assert pool.wait(120)
    done = job_detail(store, job.id)
    assert done["status"] == "succeeded" and done["counts"]["done"] == 4 and done["progress"] == 1.0
    with migrated_store("sqlite", tmp_path / "cli") as cli_store:
        cli_store.save_law(mini_gdpr())
        audit_documents(cli_store, [folder], clf, config=ClassifierLinkConfig(top_k=3), relative_to=folder)
        assert _link_keys(store) == _link_keys(cli_store) and len(_link_keys(store)) >= 12
    # the same job again: every document is unchanged and already linked — nothing is stored twice
    before = len(store.export_links())
    again = submit_audit_job(store, [folder], pool, params=AuditJobParams(top_k=3), relative_to=folder)
    assert pool.wait(120)
    assert job_detail(store, again.id)["links"] == 0 and len(store.export_links()) == before
    pool.shutdown()


class _Hook(BaseHTTPRequestHandler):
    received: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        expected = "sha256=" + hmac.new(b"hook-secret", body, hashlib.sha256).hexdigest()
        self.received.append(
            {
                "event": self.headers["X-Compliance-Event"],
                "signed": hmac.compare_digest(expected, self.headers.get("X-Compliance-Signature", "")),
                "payload": json.loads(body),
            }
        )
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def hook(monkeypatch: pytest.MonkeyPatch) -> Iterator[type[_Hook]]:
    from compliance.settings import reset_settings

    handler = type("Hook", (_Hook,), {"received": []})
    server = HTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("COMPLIANCE_WEBHOOK_URL", f"http://127.0.0.1:{server.server_port}/hook")
    monkeypatch.setenv("COMPLIANCE_WEBHOOK_SECRET", "hook-secret")
    reset_settings()
    yield handler
    server.shutdown()
    server.server_close()


def test_a_finished_job_posts_one_signed_webhook(store: Any, hook: type[_Hook]) -> None:
    pytest.importorskip("torch")
    clf = tiny_classifier()
    store.save_law(mini_gdpr())
    recorder = _Recorder()
    uploads = [Upload("a.txt", POLICY.encode()), Upload("b.txt", b"\x00\x01 not text", "application/pdf")]
    job = submit_audit_job(store, uploads, recorder, params=AuditJobParams(top_k=2), by="dms")
    assert len(recorder.items) == 2
    outcomes = [run_job_item(store, i, worker="w", classifier=lambda p: clf) for i in recorder.items]
    assert [o.status for o in outcomes] == ["done", "failed"]
    assert outcomes[1].error and outcomes[0].job_finished is None and outcomes[1].job_finished is not None
    # a re-delivered task for a finished item stores nothing and sends nothing
    assert run_job_item(store, recorder.items[0], worker="w2", classifier=lambda p: clf).status == "skipped"
    deadline = time.time() + 10
    while not hook.received and time.time() < deadline:
        time.sleep(0.05)
    assert len(hook.received) == 1
    got = hook.received[0]
    assert got["event"] == "audit.finished" and got["signed"]
    assert got["payload"]["job"]["id"] == job.id and got["payload"]["job"]["status"] == "partial"
    assert store.get_job(job.id).notification["webhook"] == "delivered"


def test_jobs_cli_runs_in_process_without_a_broker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    from compliance.cli import cli
    from compliance.store import Store
    from tests.fixtures.classifier.tiny import shared_tiny_classifier

    db = f"sqlite:///{tmp_path / 'c.db'}"
    Store(db).upgrade()
    Store(db).save_law(mini_gdpr())
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "one.txt").write_text(POLICY, encoding="utf-8")
    (folder / "two.md").write_text("# Two\n\n" + POLICY, encoding="utf-8")
    monkeypatch.delenv("COMPLIANCE_BROKER_URL", raising=False)
    runner = CliRunner()
    result = runner.invoke(
        cli,
        ["jobs", "audit", str(folder), "--model", str(shared_tiny_classifier()), "--database", db, "--json"],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["status"] == "succeeded" and data["counts"]["done"] == 2 and data["links"] > 0
    listed = runner.invoke(cli, ["jobs", "list", "--database", db])
    assert listed.exit_code == 0 and "succeeded" in listed.output
    shown = runner.invoke(cli, ["jobs", "show", str(data["id"]), "--database", db])
    assert shown.exit_code == 0 and "one.txt" in shown.output
    made = runner.invoke(cli, ["tokens", "create", "--name", "dms", "--role", "viewer", "--database", db])
    assert made.exit_code == 0 and made.stdout.strip().startswith("cpl_")
    assert "dms" in runner.invoke(cli, ["tokens", "list", "--database", db]).output
    assert runner.invoke(cli, ["tokens", "revoke", "dms", "--database", db]).exit_code == 0
    assert "revoked" in runner.invoke(cli, ["tokens", "list", "--database", db]).output


def test_one_classifier_cache_per_process_for_the_api_and_the_jobs(
    store: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The API's `map`, the in-process job threads and a worker's tasks share one cache: the default classifier is
    loaded once, however it is named (None, its directory, `auto` or the resolved device)."""
    pytest.importorskip("fastapi")
    import compliance.app.classifier as classifier_module
    from compliance.app.jobs import (
        cached_classifier,
        clear_classifier_cache,
        loaded_classifiers,
        set_default_classifier,
    )
    from compliance.runtime import default_classifier_dir, resolve_device
    from compliance.settings import reset_settings

    monkeypatch.setenv("COMPLIANCE_MODEL_DIR", str(tmp_path / "models"))
    reset_settings()
    loads: list[tuple[Path, str | None]] = []

    def counting_load(path: Path | None = None, *, device: str | None = None, **kw: Any) -> Any:
        loads.append((Path(path or default_classifier_dir()), device))
        return tiny_classifier()

    monkeypatch.setattr(classifier_module, "load_classifier", counting_load)
    clear_classifier_cache()
    try:
        default = default_classifier_dir()
        first = cached_classifier()
        assert cached_classifier(None, device="auto") is first
        assert cached_classifier(str(default)) is first
        assert cached_classifier(default.parent / "." / default.name, device=str(resolve_device())) is first
        assert len(loads) == 1 and loaded_classifiers() == [(str(default.resolve()), str(resolve_device()))]

        # the application's default `map` classifier and its default in-process job pool use the same entry
        from fastapi.testclient import TestClient

        from compliance.api import create_app
        from compliance.app.tokens import create_token

        store.save_law(mini_gdpr())
        app = create_app(store)
        token = create_token(store, "v", "reviewer").secret
        h = {"Authorization": f"Bearer {token}"}
        with TestClient(app) as client:
            mapped = client.post(
                "/api/v1/map", json={"texts": [{"text": "Breaches are notified."}]}, headers=h
            )
            assert mapped.status_code == 200, mapped.text
            up = client.post(
                "/api/v1/audits",
                params={"name": "p.txt"},
                content=POLICY.encode(),
                headers={**h, "Content-Type": "text/plain"},
            )
            assert up.status_code == 202
            assert app.state.services.dispatcher.wait(60)
            assert client.get(f"/api/v1/jobs/{up.json()['id']}", headers=h).json()["status"] == "succeeded"
        assert len(loads) == 1  # map and the job: no second load
        # a model rewritten on disk (a train job in another process) is loaded again on its next use
        default.mkdir(parents=True, exist_ok=True)
        (default / "config.json").write_text("{}", encoding="utf-8")
        reloaded = cached_classifier()
        assert reloaded is not first and cached_classifier() is reloaded and len(loads) == 2

        # `compliance worker --model DIR`: jobs that name no model use the model the worker loaded at start
        other = tmp_path / "other-model"
        set_default_classifier(other)
        worker_model = cached_classifier()
        assert worker_model is not first and cached_classifier(str(other)) is worker_model
        assert len(loads) == 3 and loads[-1][0] == other.resolve()
    finally:
        set_default_classifier(None)
        clear_classifier_cache()


@contextmanager
def _reviewed_store(tmp_path: Path, shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A SQLite store with four audited policies, the best link of every linked paragraph accepted by ann."""
    from compliance.app import audit_documents
    from compliance.app.links import list_links, review_links
    from compliance.linking.classifier_links import ClassifierLinkConfig
    from compliance.settings import reset_settings
    from compliance.store.testing import migrated_store

    monkeypatch.setenv("COMPLIANCE_LAW_MIRROR", str(shared_data / "laws"))
    reset_settings()
    with migrated_store("sqlite", tmp_path) as store:
        store.save_law(mini_gdpr())
        for n in range(1, 5):
            (tmp_path / f"p{n}.txt").write_text(policy_text(n), encoding="utf-8")
        audit_documents(
            store, sorted(tmp_path.glob("p*.txt")), tiny_classifier(), config=ClassifierLinkConfig(top_k=2)
        )
        best: dict[int, int] = {}
        for link in list_links(store):
            best.setdefault(link.paragraph_id, link.link_id)
        review_links(store, list(best.values()), "accept", "ann")
        assert len(best) >= 10
        yield store


def test_a_train_job_recalibrates_from_the_reviews_and_the_cache_reloads(
    tmp_path: Path, shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `train` job (mode calibrate) refits the classifier on the stored reviews on a worker, and the worker's
    cache drops the old model so that the next audit loads the improved one; `compliance jobs train` too."""
    import shutil

    from compliance.app.jobs import (
        TrainJobParams,
        cached_classifier,
        clear_classifier_cache,
        submit_train_job,
    )
    from compliance.cli import cli
    from compliance.errors import ConfigurationError
    from compliance.store.testing import migrated_store
    from compliance.workers.inprocess import ThreadDispatcher
    from tests.fixtures.classifier.tiny import shared_tiny_classifier

    model = tmp_path / "model"
    shutil.copytree(shared_tiny_classifier(), model)
    clear_classifier_cache()
    (tmp_path / "empty").mkdir()
    with (
        migrated_store("sqlite", tmp_path / "empty") as empty,
        pytest.raises(ConfigurationError, match="no reviewed GDPR links"),
    ):
        empty.save_law(mini_gdpr())
        submit_train_job(empty, _Recorder(), TrainJobParams(mode="calibrate", model=str(model)))
    with _reviewed_store(tmp_path, shared_data, monkeypatch) as store:
        pool = ThreadDispatcher(store, name="trainer")
        before = cached_classifier(model)
        job = submit_train_job(store, pool, TrainJobParams(mode="calibrate", model=str(model)), by="ann")
        assert pool.wait(120)
        pool.shutdown()
        done = job_detail(store, job.id)
        assert (done["kind"], done["status"], done["created_by"]) == ("train", "succeeded", "ann")
        result = store.list_job_items(job.id)[0].result
        assert result["mode"] == "calibrate" and result["summary"]["reviewed_paragraphs"] >= 10
        after = cached_classifier(model)
        assert after is not before  # the worker's cache forgot the recalibrated model: reloaded
        written = json.loads((model / "config.json").read_text())["inference"]["temperature"]
        assert after.config.temperature == written == result["summary"]["after"]["temperature"]
        args = ["jobs", "train", "--calibrate", "--model", str(model), "--database", store.url, "--json"]
        res = CliRunner().invoke(cli, args, env={"COMPLIANCE_BROKER_URL": ""})
        assert res.exit_code == 0, res.output
        assert json.loads(res.stdout)["status"] == "succeeded"
    clear_classifier_cache()


@pytest.mark.slow
def test_a_train_job_retrains_with_the_reviews(
    tmp_path: Path, shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `train` job (mode train) retrains the classifier with the reviewed links as extra supervision."""
    from compliance.app.jobs import TrainJobParams, submit_train_job
    from compliance.workers.inprocess import ThreadDispatcher
    from tests.fixtures.classifier.tiny import single_threaded
    from tests.fixtures.tiny_bert import make_tiny_bert

    retrained = tmp_path / "retrained"
    with _reviewed_store(tmp_path, shared_data, monkeypatch) as store:
        pool = ThreadDispatcher(store, name="trainer")
        params = TrainJobParams(
            model=str(retrained),
            overrides={"base_model": str(make_tiny_bert(tmp_path / "base")), "min_k": 2, "freeze_layers": 1},
        )
        with single_threaded():  # type: ignore[attr-defined]
            job = submit_train_job(store, pool, params)
            assert pool.wait(300)
        pool.shutdown()
        done = job_detail(store, job.id)
        assert done["status"] == "succeeded", done
        result = store.list_job_items(job.id)[0].result
        assert result["mode"] == "train" and result["model"] == str(retrained)
        assert len(json.loads((retrained / "config.json").read_text())["labels"]) == 99


def test_a_job_stores_sources_as_the_cli_audit_does(store: Any, tmp_path: Path) -> None:
    """Without ``relative_to`` both take the folder the given paths share: the same folder audited either way is
    the same documents."""
    from compliance.workers.inprocess import ThreadDispatcher

    folder = tmp_path / "policies"
    (folder / "hr").mkdir(parents=True)
    (folder / "policy-0.txt").write_text(policy_text(0), encoding="utf-8")
    (folder / "hr" / "policy-1.txt").write_text(policy_text(1), encoding="utf-8")
    clf = tiny_classifier()
    store.save_law(mini_gdpr())
    pool = ThreadDispatcher(store, threads=1, classifier=lambda params: clf)
    job = submit_audit_job(store, [folder], pool, params=AuditJobParams(top_k=3))
    assert pool.wait(120)
    pool.shutdown()
    assert job_detail(store, job.id)["status"] == "succeeded"
    assert sorted(d.source for d in store.list_documents()) == ["hr/policy-1.txt", "policy-0.txt"]
