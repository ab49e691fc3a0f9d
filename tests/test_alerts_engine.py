"""Alert runs on a hand-written fixture: 3 controls, a 3-article mini law, a changed version, the CLI."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from compliance.alerts.engine import AlertConfig, changed_provisions, run_alerts
from compliance.rules.corpus import Law, Provision

FIXTURES = Path(__file__).parent / "fixtures" / "alerts"

COOKIE, MARKETING, CLEAN_DESK = 0, 1, 2  # paragraph ordinals in controls.txt


@pytest.fixture(scope="module")
def decision() -> Any:
    """The packaged all-MiniLM-L6-v2, un-tuned, with a fixed threshold and band (the decision logic is under
    test here, not the calibration, which test_linking_decision covers)."""
    from compliance.linking.decision import LinkDecisionModel

    return LinkDecisionModel.from_base(None, threshold=0.45, lower=0.35)


@pytest.fixture
def loaded(store: Any, tmp_path: Path) -> dict[str, Any]:
    from compliance.connectors import parse_path
    from compliance.rules import load_law_file
    from compliance.search import LawSearch

    saved_doc = store.save_document(parse_path(FIXTURES / "controls.txt"))
    law = load_law_file(FIXTURES / "mini_cookie_law.json")
    saved = store.save_law(law)
    paragraphs = {p.ordinal: p.id for p in store.iter_paragraphs()}
    search = LawSearch(store, dense=False, index_dir=tmp_path / "idx")
    return {"law": law, "saved": saved, "doc": saved_doc, "para": paragraphs, "search": search}


def test_alerts_rank_the_concerned_controls(store: Any, loaded: dict[str, Any], decision: Any) -> None:
    result = run_alerts(store, "minicookie", decision=decision, search=loaded["search"])
    para = loaded["para"]
    decided = {a.paragraph_id: a for a in result.alerts}
    assert decided[para[COOKIE]].decision == "alert"
    # alerts name the paragraph of the article that fits (art:1/par:1: consent to cookies)
    assert decided[para[COOKIE]].provision_key.startswith("art:1/par:")
    assert decided[para[MARKETING]].decision == "alert"
    assert decided[para[MARKETING]].provision_key.startswith("art:2/par:")
    assert para[CLEAN_DESK] not in decided or decided[para[CLEAN_DESK]].decision == "review"
    assert [a.rank for a in result.alerts] == list(range(1, len(result.alerts) + 1))

    stored = store.list_alerts(run_id=result.run_id)
    assert {a.paragraph_id for a in stored} == set(decided)
    cookie = next(a for a in stored if a.paragraph_id == para[COOKIE])
    ev = cookie.evidence
    assert cookie.provision_key == ev["provision_key"]  # provision id resolved and stored
    assert ev["article_key"] == "art:1" and ev["provision_label"].startswith("Art. 1(")
    assert ev["provisions"][0]["key"] == ev["provision_key"]  # the best provisions listed, best first
    assert [p["score"] for p in ev["provisions"]] == sorted(
        (p["score"] for p in ev["provisions"]), reverse=True
    )
    assert ev["decision"] == "alert"
    assert ev["provision_title"] == "Cookies and terminal equipment"
    assert "cooki" in " ".join(ev["shared_terms"]).lower()
    assert ev["scores"]["link"] >= decision.threshold
    assert set(ev["scores"]) >= {"link", "law", "fused", "retrieval_provision", "retrieval_law"}
    assert "terminal equipment" in ev["provision_snippet"]
    # the provision's own text; its title is shown apart
    assert not ev["provision_snippet"].startswith(ev["provision_title"])
    assert ev["document"].endswith("controls.txt")

    run = store.get_run(result.run_id)
    assert run.kind == "alerts" and run.status == "succeeded"
    # named as people see runs, numbered per kind: the first alert run is alerts:1
    assert result.run_number == run.number == 1
    from compliance.cli.alerts import alert_run_summary

    first_line = alert_run_summary(result.summary(), result.payload()["items"]).splitlines()[0]
    assert first_line.startswith(f"alert run alerts:1 (id {result.run_id}) for law minicookie:"), first_line
    assert run.stats["alerts"] == sum(a.decision == "alert" for a in result.alerts)
    assert run.config["law"] == "minicookie"
    assert run.model["threshold"] == pytest.approx(0.45)
    assert (
        run.model["retrieval"] == loaded["search"].configs.controls.to_dict()
    )  # the controls index's config


def test_new_version_alerts_only_on_changed_articles(
    store: Any, loaded: dict[str, Any], decision: Any
) -> None:
    law: Law = loaded["law"]
    run_alerts(store, "minicookie", decision=decision, search=loaded["search"])
    # version 2: only article 2 (e-mail marketing) changes
    provisions = tuple(
        replace(p, text=p.text + " Consent shall be recorded.") if p.key == "art:2/par:1" else p
        for p in law.provisions
    )
    v2 = replace(law, provisions=provisions, checksum="0" * 64)
    saved = store.save_law(v2)
    assert saved.version == 2
    assert changed_provisions(v2, law) == ["art:2"]
    result = run_alerts(store, "minicookie", decision=decision, search=loaded["search"])
    assert result.changed_only and result.queried_keys == ("art:2",)
    assert result.law_version == 2
    alerted = {a.paragraph_id for a in result.alerts if a.decision == "alert"}
    assert alerted == {loaded["para"][MARKETING]}
    assert all(a.evidence["article_key"] == "art:2" for a in result.alerts)
    # unchanged version: nothing queried
    result_all = run_alerts(
        store,
        "minicookie",
        decision=decision,
        search=loaded["search"],
        config=AlertConfig(changed_only=False),
    )
    assert len(result_all.queried_keys) == 3


def test_changed_provisions_detects_new_and_removed_text() -> None:
    a = Law("X", "x", "X", "EU", "directive", (Provision("article", "art:1", "1", "one"),))
    b = Law(
        "X",
        "x",
        "X",
        "EU",
        "directive",
        (Provision("article", "art:1", "1", "one"), Provision("article", "art:2", "2", "two")),
    )
    assert changed_provisions(b, a) == ["art:2"]
    assert changed_provisions(b, None) == ["art:1", "art:2"]
    assert changed_provisions(a, a) == []


def test_hook_skips_without_model_or_controls(store: Any) -> None:
    from compliance.app.alerts import alerts_after_law_stored
    from compliance.connectors import parse_path
    from compliance.rules import load_law_file

    store.save_law(load_law_file(FIXTURES / "mini_cookie_law.json"))
    assert alerts_after_law_stored(store, "minicookie").reason == "no stored controls"
    store.save_document(parse_path(FIXTURES / "controls.txt"))
    note = alerts_after_law_stored(store, "minicookie")
    assert note.status == "skipped" and "train-decision" in str(note.reason)


def test_cli_laws_add_raises_alerts_then_list_show_ack(
    tmp_path: Path, decision: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compliance.cli import cli

    model_dir = tmp_path / "models"
    monkeypatch.setenv("COMPLIANCE_MODEL_DIR", str(model_dir))
    monkeypatch.setenv("COMPLIANCE_INDEX_DIR", str(tmp_path / "idx"))
    from compliance.settings import reset_settings

    reset_settings()
    decision.save(model_dir / "link-decision")
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    runner = CliRunner()
    out = runner.invoke(cli, ["ingest", str(FIXTURES / "controls.txt"), "--database", db])
    assert out.exit_code == 0, out.output
    out = runner.invoke(cli, ["laws", "add", str(FIXTURES / "mini_cookie_law.json"), "--database", db])
    assert out.exit_code == 0, out.output
    assert "alert run" in out.output and "alert(s)" in out.output

    out = runner.invoke(cli, ["alerts", "list", "--json", "--database", db])
    assert out.exit_code == 0, out.output
    items = json.loads(out.stdout)
    assert items and all("evidence" in a and "decision" in a for a in items)
    top = items[0]
    assert top["rank"] == 1 and top["decision"] == "alert"
    assert top["evidence"]["article_key"] in {"art:1", "art:2"}

    out = runner.invoke(cli, ["alerts", "show", str(top["id"]), "--database", db])
    assert out.exit_code == 0 and "provision:" in out.output

    out = runner.invoke(
        cli, ["alerts", "ack", str(top["id"]), "--by", "alice", "--comment", "ok", "--json", "--database", db]
    )
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)[0]["status"] == "acknowledged"
    out = runner.invoke(cli, ["alerts", "list", "--status", "open", "--json", "--database", db])
    assert top["id"] not in {a["id"] for a in json.loads(out.stdout)}

    out = runner.invoke(cli, ["alerts", "show", "999999", "--database", db])
    assert out.exit_code == 1 and "C402" in out.output

    # --no-alerts: a new version is stored without an alert run
    changed = json.loads((FIXTURES / "mini_cookie_law.json").read_text())
    changed["articles"][2]["text"] += " Providers shall keep an inventory of breaches."
    (tmp_path / "v2.json").write_text(json.dumps(changed))
    out = runner.invoke(cli, ["laws", "add", str(tmp_path / "v2.json"), "--no-alerts", "--database", db])
    assert out.exit_code == 0 and "alert run" not in out.output


def test_cli_alerts_run_posts_signed_webhook(tmp_path: Path, decision: Any) -> None:
    import hashlib
    import hmac
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    from compliance.cli import cli

    received: list[tuple[bytes, str | None]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append((body, self.headers.get("X-Compliance-Signature")))
            self.send_response(204)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        decision.save(tmp_path / "model")
        db = f"sqlite:///{tmp_path / 'run.db'}"
        runner = CliRunner()
        assert runner.invoke(cli, ["ingest", str(FIXTURES / "controls.txt"), "--database", db]).exit_code == 0
        out = runner.invoke(
            cli, ["laws", "add", str(FIXTURES / "mini_cookie_law.json"), "--no-alerts", "--database", db]
        )
        assert out.exit_code == 0, out.output
        url = f"http://127.0.0.1:{server.server_port}/hook"
        out = runner.invoke(
            cli,
            [
                "alerts",
                "run",
                "minicookie",
                "--model",
                str(tmp_path / "model"),
                "--bm25-only",
                "--webhook",
                url,
                "--webhook-secret",
                "k3y",
                "--background-weight",
                "0",
                "--json",
                "--database",
                db,
            ],
        )
        assert out.exit_code == 0, out.output
        data = json.loads(out.stdout)
        assert data["notification"]["webhook"] == "delivered"
        assert data["alerts"] >= 2 and data["items"][0]["rank"] == 1
        from compliance.store import Store

        stored = Store(db)
        assert stored.get_run(data["run_id"]).config["alerts"]["background_weight"] == 0.0
        assert all(i["evidence"]["scores"]["background"] is None for i in data["items"])
        stored.dispose()
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    body, signature = received[0]
    assert signature == "sha256=" + hmac.new(b"k3y", body, hashlib.sha256).hexdigest()
    payload = json.loads(body)
    assert payload["event"] == "alerts.created" and payload["law"] == "minicookie"
    alerted = [i for i in payload["items"] if i["decision"] == "alert"]
    assert {i["provision_key"].split("/")[0] for i in alerted} == {"art:1", "art:2"}
    assert all(i["provision_label"].startswith(("Art. 1(", "Art. 2(")) for i in alerted)


def test_hook_reports_a_failed_run(store: Any, tmp_path: Path) -> None:
    from compliance.app.alerts import alerts_after_law_stored
    from compliance.connectors import parse_path
    from compliance.rules import load_law_file

    store.save_law(load_law_file(FIXTURES / "mini_cookie_law.json"))
    store.save_document(parse_path(FIXTURES / "controls.txt"))
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").write_text('{"kind": "something-else"}')
    note = alerts_after_law_stored(store, "minicookie", model_path=tmp_path / "broken")
    assert note.status == "failed" and "C501" in str(note.reason)


def test_an_alert_matched_through_a_recital_names_the_article_the_recital_explains(
    store: Any, decision: Any, tmp_path: Path
) -> None:
    """Recitals explain, articles oblige (issue 13 item 5): a cookie control whose best passage is the recital on
    cookies gets an alert that names the article paragraph the recital is closest to, in the law itself, and
    keeps the recital as the explanation; with ``recital_articles=False`` it names the recital."""
    from compliance.connectors import parse_path
    from compliance.rules import load_law_file
    from compliance.search import LawSearch

    raw = json.loads((FIXTURES / "mini_cookie_law.json").read_text(encoding="utf-8"))
    raw["recitals"] = [
        {
            "number": "1",
            "text": "Websites set analytics and advertising cookies on a visitor's device; visitors should accept "
            "them in a cookie banner first, while strictly necessary cookies need no consent.",
        }
    ]
    path = tmp_path / "mini_cookie_law.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    store.save_document(parse_path(FIXTURES / "controls.txt"))
    law = load_law_file(path)
    store.save_law(law)
    cookie = next(p.id for p in store.iter_paragraphs() if p.ordinal == COOKIE)
    search = LawSearch(store, dense=False, index_dir=tmp_path / "idx")
    config = AlertConfig(recital_weight=1.0)

    result = run_alerts(store, "minicookie", config=config, decision=decision, search=search)
    named = {a.paragraph_id: a for a in result.alerts}
    ev = named[cookie].evidence
    assert ev["explained_by"]["key"] == "rec:1", ev
    assert named[cookie].provision_key.startswith("art:1/par:") and ev["article_key"] == "art:1"
    assert ev["provisions"][0]["key"] == ev["provision_key"]  # the article named first, with its own cosine
    assert ev["provisions"][0]["similarity"] < ev["explained_by"]["similarity"]
    assert "rec:1" in [p["key"] for p in ev["provisions"]]
    assert "terminal equipment" in ev["provision_snippet"]  # the article's text, not the recital's
    from compliance.cli.alerts import alert_run_summary

    items = [
        {**i, "evidence": a.evidence} for i, a in zip(result.payload()["items"], result.alerts, strict=True)
    ]
    summary = alert_run_summary(result.summary(), items)  # what `compliance alerts run` prints
    assert f"← {ev['provision_label']} (via Recital 1)" in summary, summary

    plain = run_alerts(
        store,
        "minicookie",
        config=replace(config, recital_articles=False),
        decision=decision,
        search=search,
    )
    before = {a.paragraph_id: a for a in plain.alerts}[cookie]
    assert before.provision_key == "rec:1" and before.evidence["explained_by"] is None
    assert before.score == pytest.approx(named[cookie].score)  # the naming changes, the score does not


def test_the_provision_an_alert_names_comes_from_the_article_its_whole_text_fits(tmp_path: Path) -> None:
    """An alert names the best passage of the article that fits best by its best passage *and* its whole text
    (``article_evidence``): a control whose single best passage is a paragraph of Art. 1, but which reads like
    Art. 2 as a whole and nearly as well as that paragraph, names Art. 2's best paragraph. With
    ``article_evidence=0`` it names the best passage's own article, as before. Only articles with paragraphs or
    points are embedded again as whole-article windows: not a recital, not an article of one paragraph."""
    import numpy as np

    from compliance.alerts.engine import _article_choice
    from compliance.errors import ConfigurationError
    from compliance.rules import load_law_file
    from compliance.rules.passages import provision_passages

    raw = json.loads((FIXTURES / "mini_cookie_law.json").read_text(encoding="utf-8"))
    raw["articles"].append(
        {"number": "4", "title": "Entry into force", "text": "This Directive enters into force."}
    )
    raw["recitals"] = [{"number": "1", "text": "Cookies are small files stored on a user's device."}]
    path = tmp_path / "mini_cookie_law.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    law = load_law_file(path)
    keys = [a.key for a in law.articles] + ["rec:1"]
    _, owners = provision_passages(law, keys, 120)
    assert {o.split("/", 1)[0] for o in owners} == {"art:1", "art:2", "art:3", "art:4", "rec:1"}
    sims = np.full((1, len(owners)), 0.1)
    sims[0, owners.index("art:1/par:1")] = 0.50  # the best single passage
    sims[0, owners.index("art:2/par:2")] = 0.45
    whole = {"Cookies and terminal equipment": 0.2, "Unsolicited electronic mail": 0.9}

    class Windows:
        """Stands in for the link decision's encoder: a whole-article window's vector says how close the control
        is to that article as a whole (its cosine with the control's vector [1, 0])."""

        seen: list[str] = []  # noqa: RUF012
        info: dict[str, Any] = {}  # noqa: RUF012  (names no encoder weights: nothing is cached)

        def encode(self, batch: list[str]) -> np.ndarray:
            self.seen.extend(batch)
            rows = [next((c for title, c in whole.items() if t.startswith(title)), 0.0) for t in batch]
            return np.asarray([[c, float(np.sqrt(1 - c * c))] for c in rows])

    control = np.asarray([[1.0, 0.0]])
    decision = Windows()
    named = _article_choice(law, sims, owners, control, decision, AlertConfig())  # type: ignore[arg-type]
    assert owners[int(named[0])] == "art:2/par:2"
    titles = (
        "Cookies and terminal equipment",
        "Unsolicited electronic mail",
        "Notification of personal data",
    )
    assert len(decision.seen) == 3
    assert {next(title for title in titles if t.startswith(title)) for t in decision.seen} == set(titles)
    before = _article_choice(law, sims, owners, control, decision, AlertConfig(article_evidence=0.0))  # type: ignore[arg-type]
    assert owners[int(before[0])] == "art:1/par:1"
    with pytest.raises(ConfigurationError, match="article_evidence"):
        AlertConfig(article_evidence=1.5)


def _sweep(
    store: Any, loaded: dict[str, Any], decision: Any, field: str, values: tuple[float, ...]
) -> dict[float, Any]:
    """One alert run for "minicookie" per value of the :class:`AlertConfig` field ``field``."""
    return {
        w: run_alerts(
            store, "minicookie", config=AlertConfig(**{field: w}), decision=decision, search=loaded["search"]
        )
        for w in values
    }


def test_the_article_evidence_changes_what_an_alert_names_not_its_score(
    store: Any, loaded: dict[str, Any], decision: Any
) -> None:
    """The same run with and without whole-article evidence: the same paragraphs, scores, decisions and ranks."""
    runs = list(_sweep(store, loaded, decision, "article_evidence", (0.0, 0.5)).values())
    plain, chosen = (
        [(a.paragraph_id, round(a.score, 6), a.decision, a.rank) for a in r.alerts] for r in runs
    )
    assert plain and plain == chosen


def test_a_laws_passages_are_embedded_once_per_encoder(
    store: Any, loaded: dict[str, Any], decision: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second alert run on the same law with a decision that names its encoder's weights (as the shipped one
    does) reads the law's passage and whole-article vectors from the cache under the index directory: it embeds
    only controls, and its alerts are the same."""
    from compliance.linking.decision import LinkDecisionModel
    from compliance.settings import get_settings

    named = LinkDecisionModel(
        decision.encoder,
        decision.threshold,
        decision.lower,
        {"encoder": {"source": "base", "base_model_sha256": "0" * 64}},
    )
    controls = {p.text for p in store.iter_paragraphs()}
    law_texts: list[str] = []
    real = LinkDecisionModel.encode

    def counting(self: Any, texts: Any, **kw: Any) -> Any:
        law_texts.extend(t for t in texts if t not in controls)
        return real(self, texts, **kw)

    monkeypatch.setattr(LinkDecisionModel, "encode", counting)
    first = run_alerts(store, "minicookie", decision=named, search=loaded["search"])
    embedded_first = len(law_texts)
    second = run_alerts(store, "minicookie", decision=named, search=loaded["search"])
    assert embedded_first > 0 and len(law_texts) == embedded_first  # the second run embedded no law text
    assert [(a.paragraph_id, a.provision_key, round(a.score, 6)) for a in first.alerts] == [
        (a.paragraph_id, a.provision_key, round(a.score, 6)) for a in second.alerts
    ]
    assert list((get_settings().resolved_index_dir / "provision-vectors").glob("*.npy"))


def test_the_background_is_law_of_other_fields_outside_personal_data(shared_data: Path) -> None:
    """The general legal language of the alert ranking: units of the named packs that do not mention personal data,
    never the act alerted on itself, at most ``limit`` evenly spaced; an act that cannot be read is named, not
    fatal."""
    from compliance.alerts.background import background_text
    from compliance.models.data import negative_candidates
    from compliance.rules import load_pack_law

    red = negative_candidates(load_pack_law("red"))
    text = background_text(("aifmd", "red", "no-such-pack"), exclude=("aifmd",), limit=None)
    assert text.acts == ("red",) and text.missing == ("no-such-pack",)
    assert list(text.texts) == list(dict.fromkeys(red)) and len(red) > 50
    assert not any("personal data" in t.lower() for t in text.texts)
    by_celex = background_text(("aifmd", "red"), exclude=("32011L0061",), limit=None)  # AIFMD by its CELEX
    assert by_celex.acts == ("red",)
    few = background_text(("red",), limit=10)
    step = len(text.texts) / 10
    assert list(few.texts) == [text.texts[int(i * step)] for i in range(10)]


def test_a_control_that_reads_like_any_law_ranks_lower_its_decision_unchanged(
    store: Any, loaded: dict[str, Any], decision: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ranking score is the fused score less ``background_weight`` × the control's best cosine with the
    background text; the decisions are the calibrated link's. With the marketing control's own wording as the
    background, it falls below the cookie control whatever their order was, and nothing else about it changes."""
    from compliance.alerts import background
    from compliance.errors import ConfigurationError

    marketing_text = next(p.text for p in store.iter_paragraphs() if p.id == loaded["para"][MARKETING])
    monkeypatch.setattr(
        background,
        "background_text",
        lambda acts, exclude=(), limit=None: background.BackgroundText((marketing_text,), ("stand-in",)),
    )
    runs = _sweep(store, loaded, decision, "background_weight", (0.0, 0.5))
    plain = {a.paragraph_id: a for a in runs[0.0].alerts}
    corrected = {a.paragraph_id: a for a in runs[0.5].alerts}
    assert set(plain) == set(corrected)
    para = loaded["para"]
    for pid, a in corrected.items():
        scores = a.evidence["scores"]
        assert a.decision == plain[pid].decision and a.provision_key == plain[pid].provision_key
        assert scores["fused"] == pytest.approx(plain[pid].score - 0.5 * scores["background"], abs=1e-5)
        assert a.evidence["background_acts"] == ["stand-in"]
        assert plain[pid].evidence["scores"]["background"] is None
    assert corrected[para[MARKETING]].evidence["scores"]["background"] == pytest.approx(1.0, abs=1e-3)
    assert corrected[para[MARKETING]].rank > corrected[para[COOKIE]].rank
    with pytest.raises(ConfigurationError, match="background_weight"):
        AlertConfig(background_weight=2.0)


COOKIE_TABLE = """# Cookie Register

## Cookies on our websites

| Cookie | What it stores on the visitor's device | Consent |
| --- | --- | --- |
| _ga | An analytics cookie stored on the visitor's terminal equipment | Set only after the visitor accepts cookies |
| _fbp | An advertising cookie stored on the visitor's terminal equipment | Set only after the visitor accepts cookies |
| _hjid | An analytics cookie stored on the visitor's terminal equipment | Set only after the visitor accepts cookies |

## Newsletter

Marketing e-mails are sent only to customers who opted in, and every newsletter carries an unsubscribe link.

## Other rules

Backups of the web servers are taken every night and restored once a quarter as a test.

Visitors to the office sign in at reception and are accompanied at all times.

Laptops are encrypted and lock their screens after five minutes without use.

New employees complete the security awareness course in their first week.

Supplier invoices are approved by the budget holder before they are paid.
"""


def test_a_table_raises_one_alert_its_other_rows_are_kept_for_review(
    store: Any, loaded: dict[str, Any], tmp_path: Path, decision: Any
) -> None:
    """The rows of a cookie register repeat their column labels and resemble the cookie rule together: by default
    the best row raises the table's alert and the others become review items that name it; with
    ``one_alert_per_table=False`` each row raises its own. Paragraphs outside tables are not affected."""
    from compliance.connectors import parse_bytes
    from compliance.search import LawSearch

    store.save_document(parse_bytes(COOKIE_TABLE.encode(), "cookie-register.md"))
    search = LawSearch(
        store, index_dir=tmp_path / "idx-with-table"
    )  # dense: BM25 denoises the rows' shared words
    rows = [p.id for p in store.iter_paragraphs() if p.kind == "table-row"]
    newsletter = next(
        p.id
        for p in store.iter_paragraphs()
        if p.text.startswith("Marketing e-mails are sent only to customers")
    )
    assert len(rows) == 3
    runs = {
        every: run_alerts(
            store,
            "minicookie",
            config=AlertConfig(one_alert_per_table=not every),
            decision=decision,
            search=search,
        )
        for every in (True, False)
    }
    each = {a.paragraph_id: a for a in runs[True].alerts}
    assert all(each[r].decision == "alert" for r in rows)  # alike enough that each row alone raises one
    grouped = {a.paragraph_id: a for a in runs[False].alerts}
    alerted = [r for r in rows if grouped[r].decision == "alert"]
    assert len(alerted) == 1
    for r in rows:
        assert grouped[r].score == pytest.approx(each[r].score)
        if r != alerted[0]:
            assert grouped[r].decision == "review"
            assert grouped[r].evidence["same_table_as"] == alerted[0]
            assert grouped[r].rank > grouped[alerted[0]].rank
    assert grouped[newsletter].decision == each[newsletter].decision == "alert"
    assert "same_table_as" not in grouped[newsletter].evidence

    from compliance.cli import cli

    kept = next(
        a
        for a in store.list_alerts(run_id=runs[False].run_id)
        if a.paragraph_id in rows and a.paragraph_id != alerted[0]
    )
    out = CliRunner().invoke(cli, ["alerts", "show", str(kept.id), "--database", store.url])
    assert out.exit_code == 0, out.output
    assert f"one alert per table: its best row, paragraph {alerted[0]}, stands for it" in out.output


def test_a_control_in_another_language_raises_no_alert(
    store: Any, loaded: dict[str, Any], decision: Any
) -> None:
    """The encoder reads English: a control paragraph written in another language is no candidate, as the audit
    does not map it. Read as if the encoder read German only, the English controls raise nothing."""
    english = run_alerts(store, "minicookie", decision=decision, search=loaded["search"])
    assert any(a.decision == "alert" for a in english.alerts)
    german_only = run_alerts(
        store, "minicookie", decision=decision, search=loaded["search"], config=AlertConfig(languages=("de",))
    )
    assert not german_only.alerts
    every = run_alerts(
        store, "minicookie", decision=decision, search=loaded["search"], config=AlertConfig(languages=())
    )
    assert [(a.paragraph_id, a.decision) for a in every.alerts] == [
        (a.paragraph_id, a.decision) for a in english.alerts
    ]


def test_an_alert_names_a_provision_the_organisation_can_act_on_its_score_unchanged(
    store: Any, decision: Any, tmp_path: Path
) -> None:
    """A cookie control is closest to a provision that obliges the authority alone ("The competent national
    authority shall monitor whether websites set … cookies …"): weighted by ``authority_weight`` (0.85) it still
    scores best, and with ``naming_weight=None`` the alert names it; by default (0.3) the alert names
    the entities' cookie rule of Art. 1 instead, and its score, decision and rank stay what they were."""
    from compliance.alerts.engine import NAMING_WEIGHT
    from compliance.connectors import parse_path
    from compliance.errors import ConfigurationError
    from compliance.rules import load_law_file
    from compliance.rules.addressees import obliges_public_bodies_only
    from compliance.search import LawSearch

    raw = json.loads((FIXTURES / "mini_cookie_law.json").read_text(encoding="utf-8"))
    raw["articles"].append(
        {
            "number": "4",
            "title": "Supervision",
            "text": "The competent national authority shall monitor whether websites set analytics and "
            "advertising cookies on a visitor's device only after the visitor has accepted them in a cookie "
            "banner.",
        }
    )
    path = tmp_path / "mini_cookie_law.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    law = load_law_file(path)
    assert obliges_public_bodies_only(law, "art:4") and not obliges_public_bodies_only(law, "art:1/par:1")
    store.save_document(parse_path(FIXTURES / "controls.txt"))
    store.save_law(law)
    cookie = next(p.id for p in store.iter_paragraphs() if p.ordinal == COOKIE)
    search = LawSearch(store, dense=False, index_dir=tmp_path / "idx")

    def run(config: AlertConfig) -> Any:
        result = run_alerts(store, "minicookie", config=config, decision=decision, search=search)
        return {a.paragraph_id: a for a in result.alerts}[cookie]

    as_scored = run(AlertConfig(naming_weight=None))
    named = run(AlertConfig())
    assert NAMING_WEIGHT is not None and AlertConfig().authority_weight > NAMING_WEIGHT
    assert as_scored.provision_key == "art:4", as_scored.evidence["provisions"]
    assert named.provision_key.startswith("art:1/par:"), named.evidence["provisions"]
    assert (named.score, named.decision, named.rank) == (as_scored.score, as_scored.decision, as_scored.rank)
    assert named.evidence["scores"]["link"] == as_scored.evidence["scores"]["link"]
    assert named.evidence["provisions"][0]["key"] == named.provision_key
    # the authority's article is not listed beside it as a better fit
    listed = {p["key"]: p["score"] for p in named.evidence["provisions"]}
    assert all(score <= listed[named.provision_key] for score in listed.values()), listed
    with pytest.raises(ConfigurationError, match="naming_weight"):
        AlertConfig(naming_weight=0.0)


SECTIONED = """# Website and Workplace Rules

## 1. Cookies on our websites

Our websites set analytics and advertising cookies on a visitor's device only after the visitor has accepted them in the cookie banner.

Strictly necessary cookies that keep the shopping basket working are exempt from consent and listed in the cookie register.

Each team confirms every quarter that these rules are followed and that consent is recorded where it is needed.

## 2. Clean desk

Employees keep their desks clear of papers at the end of each working day.

Printed documents are locked in the cabinets provided and shredded when no longer needed.

Each team confirms every quarter that these rules are followed and that consent is recorded where it is needed.

Loose notes found in the evening are handed to the office manager.
"""


def test_a_control_is_read_with_the_section_it_stands_in(store: Any, tmp_path: Path, decision: Any) -> None:
    """The same words come nearer to the cookie article in the cookie section than under the clean-desk rules:
    each candidate's vector is ``(1 − w) ×`` its own plus ``w ×`` its section's normalised mean (the control
    paragraphs under its top-level heading below the document's title), normalised; the evidence keeps its own
    cosine and names the section. With ``context_weight=0`` the two paragraphs score the same."""
    import numpy as np

    from compliance.connectors import parse_path
    from compliance.errors import ConfigurationError
    from compliance.rules import load_law_file
    from compliance.rules.passages import provision_passages
    from compliance.search import LawSearch

    path = tmp_path / "rules.md"
    path.write_text(SECTIONED, encoding="utf-8")
    store.save_document(parse_path(path))
    law = load_law_file(FIXTURES / "mini_cookie_law.json")
    store.save_law(law)
    paragraphs = [p for p in store.iter_paragraphs() if p.kind != "heading"]
    assert [p.heading_path[-1] for p in paragraphs] == ["1. Cookies on our websites"] * 3 + [
        "2. Clean desk"
    ] * 4
    twins = [p.id for p in paragraphs if p.text.startswith("Each team confirms")]
    relaxed = replace(decision, lower=-1.0)  # every candidate is kept (as a review item at least)
    search = LawSearch(store, index_dir=tmp_path / "idx")  # dense: every paragraph is a candidate
    runs = {
        w: run_alerts(
            store,
            "minicookie",
            config=AlertConfig(context_weight=w, alert_budget=None, review_budget=None, max_alerts=None),
            decision=relaxed,
            search=search,
        )
        for w in (0.0, 0.35)
    }
    alone = {a.paragraph_id: a for a in runs[0.0].alerts}
    read = {a.paragraph_id: a for a in runs[0.35].alerts}
    assert set(twins) <= set(alone) and set(twins) <= set(read)
    in_cookies, in_desk = twins

    def cookie_link(alerts: dict[int, Any], pid: int) -> float:
        return max(p["score"] for p in alerts[pid].evidence["provisions"] if p["key"].startswith("art:1"))

    assert alone[in_cookies].evidence["scores"]["link"] == pytest.approx(
        alone[in_desk].evidence["scores"]["link"]
    )
    assert alone[in_cookies].evidence["context"] is None
    assert read[in_cookies].evidence["scores"]["link"] > read[in_desk].evidence["scores"]["link"]
    assert read[in_cookies].provision_key.startswith("art:1")
    assert cookie_link(read, in_cookies) > cookie_link(read, in_desk)
    assert read[in_cookies].evidence["context"] == {
        "section": ["1. Cookies on our websites"],
        "paragraphs": 2,  # the pointer to the cookie register is no control, and no context either
        "weight": 0.35,
    }
    assert read[in_desk].evidence["context"]["paragraphs"] == 4

    # the blend, recomputed from the texts: the evidence's similarity is the blended vector's cosine with one of
    # the named provision's passages, and its own similarity the paragraph's alone with the same passage
    evidence = read[in_cookies].evidence
    texts, owners = provision_passages(law, [k.key for k in law.provisions if k.kind == "article"], 120)
    named = np.asarray(
        decision.encode([t for t, o in zip(texts, owners, strict=True) if o == evidence["provision_key"]])
    )
    assert [p.role for p in paragraphs[:3]] == ["statement", "reference", "statement"]
    section = np.asarray(decision.encode([paragraphs[0].text, paragraphs[2].text]))
    own = section[1]
    centroid = section.mean(axis=0) / np.linalg.norm(section.mean(axis=0))
    blend = 0.65 * own + 0.35 * centroid
    blend /= np.linalg.norm(blend)
    pairs = [(float(own @ v), float(blend @ v)) for v in named]
    assert any(
        o == pytest.approx(evidence["scores"]["own_similarity"], abs=1e-4)
        and b == pytest.approx(evidence["scores"]["similarity"], abs=1e-4)
        for o, b in pairs
    )
    with pytest.raises(ConfigurationError, match="context_weight"):
        AlertConfig(context_weight=1.0)


def test_a_paragraph_under_no_heading_is_read_alone(
    store: Any, loaded: dict[str, Any], decision: Any
) -> None:
    """controls.txt has no headings: nothing says which of its three topics a paragraph belongs with, so each is
    read alone (its similarity is its own) whatever the context weight."""
    result = run_alerts(store, "minicookie", decision=decision, search=loaded["search"])
    assert result.alerts
    for a in result.alerts:
        assert a.evidence["context"] is None
        if a.evidence["explained_by"] is None:
            assert a.evidence["scores"]["similarity"] == pytest.approx(a.evidence["scores"]["own_similarity"])


def test_a_section_is_read_below_the_headings_a_whole_document_shares() -> None:
    """A title every paragraph of a document shares is not a section; paragraphs straight under it are one; one
    level below it is the default; depth 0 is the whole document; a paragraph under no heading stands alone."""
    from compliance.alerts.engine import _sections

    rows = [
        (1, 7, ("Policy", "1. Scope")),
        (2, 7, ("Policy", "1. Scope", "1.1 Systems")),
        (3, 7, ("Policy", "2. Accounts")),
        (4, 7, ("Policy",)),
        (5, 8, ("3. Reviews",)),  # another document: its own headings
        (6, 8, ()),
        (7, 9, ("Only", "One")),  # one section only: the whole document
    ]
    one = _sections(rows, 1)
    assert one[1] == one[2] == (7, ("1. Scope",)) and one[3] == (7, ("2. Accounts",))
    assert one[4] == (7, ())  # the preamble under the title
    assert one[5] == (8, ()) and one[6] is None  # document 8 shares its only heading; no heading: alone
    assert one[7] == (9, ())
    two = _sections(rows, 2)
    assert two[2] == (7, ("1. Scope", "1.1 Systems")) != two[1]
    whole = _sections(rows, 0)
    assert whole[1] == whole[4] == (7, ()) and whole[6] == (8, ())
