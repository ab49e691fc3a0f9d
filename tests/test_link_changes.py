"""When the model or a law changes: audit --rescore (diff, decisions carried over, weakened accepted links flagged),
links diff, a new law version re-opening only the links to changed provisions, and links to other laws from the
document-to-law retriever (audit --laws) reviewed like the classifier's."""

from __future__ import annotations

import functools
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from compliance.app import audit_documents
from compliance.app.links import LinkQuery, list_links, review_links
from compliance.cli import cli
from compliance.linking.classifier_links import ClassifierLinkConfig
from compliance.rules.corpus import Law, Provision
from tests.fixtures.classifier.tiny import mini_gdpr, shared_tiny_classifier

pytest.importorskip("torch")

POLICY = """Information security policy

All laptops issued to staff use full disk encryption and the security measures are reviewed every year.

A personal data breach is notified to the supervisory authority within 72 hours by the security team.

A data subject may request a copy of the personal data we hold; the request is answered within one month.
"""


@pytest.fixture(scope="module")
def classifier() -> Any:
    from compliance.models.classifier import load

    return load(shared_tiny_classifier(), device="cpu", bf16=False)


@pytest.fixture
def policy(tmp_path: Path) -> Path:
    doc = tmp_path / "security.txt"
    doc.write_text(POLICY, encoding="utf-8")
    return doc


def by_rank(store: Any, run_id: int) -> dict[tuple[int, int], Any]:
    """(paragraph ordinal, rank) → link of a run (ordinal 0 is the policy's title, a heading)."""
    return {(x.paragraph_ordinal, x.rank): x for x in store.current_links(run_id=run_id, current_only=False)}


def test_rescore_carries_decisions_and_flags_weakened_links(
    store: Any, classifier: Any, policy: Path
) -> None:
    from compliance.app.rescore import SYSTEM_REVIEWER, rescore_documents

    store.save_law(mini_gdpr())
    first = audit_documents(
        store, [policy], classifier, config=ClassifierLinkConfig(top_k=3, review_band=(0.0, 0.5))
    )
    assert first.links == 9
    links = by_rank(store, first.run_id)
    kept, lost_accepted, lost_rejected = links[(1, 1)], links[(3, 3)], links[(2, 2)]
    review_links(store, [kept.link_id, lost_accepted.link_id], "accept", "alice")
    review_links(store, [lost_rejected.link_id], "reject", "bob")

    # the same model, one article per paragraph and a band whose upper edge is 0: nothing weakens
    second = rescore_documents(
        store, [policy], classifier, config=ClassifierLinkConfig(top_k=1, review_band=(0.0, 0.0))
    )
    assert second.audit.links == 3
    assert (len(second.diff.gained), len(second.diff.lost), len(second.diff.reranked)) == (0, 6, 0)
    assert second.carried_over == 1
    assert [f["previous_link_id"] for f in second.flagged] == [lost_accepted.link_id]
    assert "no longer proposes it" in second.flagged[0]["reason"]
    now = {
        (x.paragraph_ordinal, x.provision_key): x for x in list_links(store, LinkQuery(method="classifier"))
    }
    assert len(now) == 4  # three rank-1 links and the accepted link kept as needs-review
    carried = now[(1, kept.provision_key)]
    assert (carried.status, carried.reviewer, carried.run_id) == (
        "accepted",
        SYSTEM_REVIEWER,
        second.audit.run_id,
    )
    assert "carried over from link" in (carried.review_comment or "")
    flagged = now[(3, lost_accepted.provision_key)]
    assert (flagged.status, flagged.score, flagged.evidence["kept_from_link"]) == (
        "needs-review",
        pytest.approx(lost_accepted.score, abs=1e-6),
        lost_accepted.link_id,
    )
    # the rejected link is not suggested any more: it is simply not current
    assert (2, lost_rejected.provision_key) not in now

    # now the review band's upper edge is above every score: the accepted link weakens
    third = rescore_documents(
        store, [policy], classifier, config=ClassifierLinkConfig(top_k=1, review_band=(0.0, 0.99))
    )
    assert third.carried_over == 0
    assert len(third.flagged) == 1 and "below the review band (0.00–0.99)" in third.flagged[0]["reason"]
    after = {
        (x.paragraph_ordinal, x.provision_key): x for x in list_links(store, LinkQuery(method="classifier"))
    }
    assert after[(1, kept.provision_key)].status == "needs-review"
    audit = store.list_audit(action="link.review", target_id=after[(1, kept.provision_key)].link_id)
    assert audit[0].details["source"] == "rescore"
    assert audit[0].details["suggested_by"]["run_id"] == third.audit.run_id

    # links diff between the first two runs, from the command line
    res = CliRunner().invoke(
        cli, ["links", "diff", str(first.run_id), str(second.audit.run_id), "--json", "--database", store.url]
    )
    assert res.exit_code == 0, res.output
    diff = json.loads(res.stdout)
    assert diff["counts"] == {"gained": 0, "lost": 5, "reranked": 0, "weakened": 0}
    assert {c["provision"] for c in diff["lost"]} >= {lost_rejected.provision_key}


def test_rescore_and_diff_hold_link_states_not_whole_links(
    store: Any, classifier: Any, policy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rescore and a run diff read the links one at a time and keep what they compare (LinkState: no texts, no
    evidence); only an accepted link the new model no longer proposes is read whole again. The diff is the same
    from whole links, from a generator of them and from their states."""
    from compliance.app.links import LinkState, diff_links, diff_runs, link_states
    from compliance.app.rescore import rescore_documents

    store.save_law(mini_gdpr())
    first = audit_documents(
        store, [policy], classifier, config=ClassifierLinkConfig(top_k=3, review_band=(0.0, 0.5))
    )
    links = by_rank(store, first.run_id)
    lost_accepted = links[(3, 3)]
    review_links(store, [lost_accepted.link_id], "accept", "alice")
    whole_reads: list[dict[str, Any]] = []
    read_whole = store.current_links

    def counted(**filters: Any) -> Any:
        whole_reads.append(filters)
        return read_whole(**filters)

    monkeypatch.setattr(store, "current_links", counted)
    second = rescore_documents(
        store, [policy], classifier, config=ClassifierLinkConfig(top_k=1, review_band=(0.0, 0.0))
    )
    assert [f.get("link_ids") for f in whole_reads] == [[lost_accepted.link_id]]
    assert [f["previous_link_id"] for f in second.flagged] == [lost_accepted.link_id]
    diff = diff_runs(store, first.run_id, second.audit.run_id)
    assert len(whole_reads) == 1
    assert (len(diff.gained), len(diff.lost), len(diff.reranked)) == (0, 5, 0)

    a = read_whole(run_id=first.run_id, current_only=False)
    b = [
        x
        for x in read_whole(run_id=second.audit.run_id, current_only=False)
        if x.paragraph_id in {y.paragraph_id for y in a}
    ]
    kwargs: dict[str, Any] = {"run_a": first.run_id, "run_b": second.audit.run_id, "review_band": None}
    assert (
        diff_links(iter(a), iter(b), **kwargs)
        == diff_links(link_states(a).values(), link_states(b).values(), **kwargs)
        == diff
    )
    state = LinkState.of(lost_accepted)
    assert (state.document, state.paragraph, state.law, state.provision_key, state.score) == (
        lost_accepted.document_source,
        lost_accepted.paragraph_ordinal,
        lost_accepted.law_short_name,
        lost_accepted.provision_key,
        lost_accepted.score,
    )
    assert LinkState.of(state) is state


def test_audit_rescore_from_the_command_line(tmp_path: Path, policy: Path) -> None:
    from compliance.store import Store

    db = f"sqlite:///{tmp_path / 'r.db'}"
    s = Store(db)
    s.upgrade()
    s.save_law(mini_gdpr())
    s.dispose()
    model = str(shared_tiny_classifier())
    base = ["audit", str(policy), "--model", model, "--database", db, "--json"]
    first = json.loads(CliRunner().invoke(cli, base).stdout)
    res = CliRunner().invoke(cli, [*base, "--rescore"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    # same model and settings: every suggestion is already stored, so nothing is stored again and nothing changes
    assert first["links"] == 6 and data["links"] == 0
    assert data["rescore"]["counts"] == {"gained": 0, "lost": 0, "reranked": 0, "weakened": 0}
    text = CliRunner().invoke(cli, [*base[:-1], "--rescore"])
    assert "rescore: 0 link(s) gained, 0 lost, 0 re-ranked; 0 decision(s) carried over" in text.stdout


def test_a_new_law_version_reopens_only_links_to_changed_provisions(
    store: Any, classifier: Any, policy: Path
) -> None:
    from compliance.app.laws import store_law

    law = mini_gdpr()
    store_law(store, law, alerts=False)
    run = audit_documents(
        store, [policy], classifier, config=ClassifierLinkConfig(top_k=3, review_band=(0.0, 0.5))
    )
    every = store.current_links(run_id=run.run_id)
    review_links(store, [x.link_id for x in every], "accept", "alice")
    changed = tuple(
        replace(p, text=p.text + " Pseudonymisation is reviewed yearly.") if p.key == "art:32/par:2" else p
        for p in law.provisions
    )
    v2 = replace(law, provisions=changed, checksum="1" * 64)
    stored = store_law(store, v2, alerts=False)
    assert stored.saved.version == 2
    to_32 = sorted(x.link_id for x in every if x.provision_key == "art:32")
    assert sorted(r["link_id"] for r in stored.reopened) == to_32 and to_32
    assert all("changed in gdpr version 2" in r["reason"] for r in stored.reopened)
    statuses = {x.link_id: x.status for x in store.current_links(run_id=run.run_id)}
    assert {i for i, s in statuses.items() if s == "needs-review"} == set(to_32)
    assert {s for i, s in statuses.items() if i not in to_32} == {"accepted"}
    assert stored.to_dict()["reopened_links"] == stored.reopened


def mini_eprivacy() -> Law:
    """Three ePrivacy-like articles."""
    texts = {
        "4": ("Security of processing", "The provider of a publicly available electronic communications service shall take appropriate technical and organisational measures to safeguard security of its services. In the case of a personal data breach, the provider shall notify the breach to the competent national authority."),
        "5": ("Confidentiality of the communications", "Member States shall ensure the confidentiality of communications and the related traffic data by means of a public communications network."),
        "13": ("Unsolicited communications", "The use of electronic mail for the purposes of direct marketing may be allowed only in respect of subscribers who have given their prior consent."),
    }  # fmt: skip
    provisions = tuple(
        Provision("article", f"art:{n}", n, text, title=title, ordinal=i)
        for i, (n, (title, text)) in enumerate(texts.items())
    )
    return Law(
        "32002L0058-mini",
        "eprivacy",
        "Mini ePrivacy Directive",
        "EU",
        "directive",
        provisions,
        checksum="2" * 64,
    )


def test_links_to_other_laws_come_from_the_retriever(
    store: Any, classifier: Any, policy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import compliance.app.law_links as law_links

    monkeypatch.setattr(law_links, "LawLinkConfig", functools.partial(law_links.LawLinkConfig, dense=False))
    store.save_law(mini_gdpr())
    store.save_law(mini_eprivacy())
    report = audit_documents(store, [policy], classifier, laws=("gdpr", "eprivacy"))
    run = store.get_run(report.run_id)
    assert run.config["laws"] == ["gdpr", "eprivacy"]
    links = list_links(store, LinkQuery(law="eprivacy"))
    assert run.stats["law_links"] == len(links) > 0
    assert report.links == run.stats["links"] == len(store.current_links(run_id=report.run_id))
    assert {x.method for x in links} == {"retriever"}
    assert {x.status for x in links} == {"needs-review"}  # no link-decision model here: a person decides
    breach = [x for x in links if x.paragraph_text.startswith("A personal data breach")]
    assert breach and breach[0].provision_key == "art:4" and breach[0].rank == 1
    assert "breach" in breach[0].evidence["shared_terms"] and breach[0].evidence["retrieval"]["bm25"] > 0
    # reviewed like any other link, and not searched again on a re-audit
    review_links(store, [breach[0].link_id], "accept", "alice")
    again = audit_documents(store, [policy], classifier, laws=("eprivacy",))
    assert store.get_run(again.run_id).stats["law_links"] == 0
    assert list_links(store, LinkQuery(law="eprivacy", status=("accepted",)))[0].link_id == breach[0].link_id
    from compliance.errors import LawNotFoundError

    with pytest.raises(LawNotFoundError):
        audit_documents(store, [policy], classifier, laws=("nosuchlaw",))


def test_links_to_other_laws_only_for_the_roles_the_audit_maps(
    store: Any, classifier: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A document-control row that names the breach team is not linked to the ePrivacy Directive, as it is not
    mapped to the GDPR: the audit's roles decide both; with every role mapped (``roles=None``) it is."""
    import compliance.app.law_links as law_links

    monkeypatch.setattr(law_links, "LawLinkConfig", functools.partial(law_links.LawLinkConfig, dense=False))
    store.save_law(mini_gdpr())
    store.save_law(mini_eprivacy())
    doc = tmp_path / "breach.txt"
    doc.write_text(
        "Breach procedure\n\nDocument owner: Breach team; Version: 2.1; Approved by: Board; Next review: 2026\n\n"
        "A personal data breach is notified to the supervisory authority within 72 hours by the breach team.\n",
        encoding="utf-8",
    )
    report = audit_documents(store, [doc], classifier, laws=("eprivacy",))
    stored = {p.id: p for p in store.iter_paragraphs()}
    roles = {p.text[:14]: p.role for p in stored.values()}
    assert roles["Document owner"] == "metadata" and roles["A personal dat"] == "statement"
    linked = {stored[x.paragraph_id].text[:14] for x in list_links(store, LinkQuery(law="eprivacy"))}
    assert linked == {"A personal dat"}
    assert store.get_run(report.run_id).stats["law_links"] >= 1
    every = law_links.link_other_laws(
        store, report.run_id, [report.documents[0].document_id], ["eprivacy"], roles=None
    )
    assert every >= 1
    linked = {stored[x.paragraph_id].text[:14] for x in list_links(store, LinkQuery(law="eprivacy"))}
    assert linked == {"A personal dat", "Document owner"}


def test_links_to_other_laws_with_a_link_decision_read_like_any_law_last(
    store: Any, classifier: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a link decision, each candidate's score is the decision's cosine of the paragraph and the provision
    (each embedded once), and the budgets take paragraphs by that score less ``background_weight`` × their best
    cosine with legal text of other fields: with the best-scoring paragraph's own wording as that text, a review
    budget of one keeps another paragraph instead; scores and decisions stay as they were."""
    import compliance.app.law_links as law_links
    from compliance.alerts import background
    from compliance.linking.decision import LinkDecisionModel

    decision = LinkDecisionModel.from_base(None, threshold=0.99, lower=0.0)  # every candidate in review
    store.save_law(mini_gdpr())
    store.save_law(mini_eprivacy())
    law = store.get_law("eprivacy")

    def linked(name: str, config: Any) -> tuple[list[Any], dict[int, Any]]:
        """The policy as a new document ``name`` (its paragraphs not linked yet), linked to the mini ePrivacy."""
        doc = tmp_path / name
        doc.write_text(POLICY, encoding="utf-8")
        document_id = audit_documents(store, [doc], classifier).documents[0].document_id
        with store.run("audit", {"document": name}) as run:
            law_links.link_other_laws(
                store, run.id, [document_id], ["eprivacy"], config=config, decision=decision
            )
        links = [x for x in store.current_links(run_id=run.id) if x.method == "retriever"]
        return links, {p.id: p for p in store.iter_paragraphs(document_ids=[document_id])}

    links, paragraphs = linked(
        "all.txt", law_links.LawLinkConfig(dense=False, proposed_budget=None, review_budget=None)
    )
    assert len({x.paragraph_id for x in links}) > 1
    for x in links:
        text = f"{law.get(x.provision_key).title}\n{law.text_of(x.provision_key)}"
        expected = float(decision.score_pairs([paragraphs[x.paragraph_id].text], [text])[0])
        assert x.score == pytest.approx(expected, abs=1e-5) and x.status == "needs-review"
    top = paragraphs[max(links, key=lambda x: x.score).paragraph_id].text
    monkeypatch.setattr(
        background,
        "background_text",
        lambda acts, exclude=(), limit=None: background.BackgroundText((top,), ("stand-in",)),
    )
    one = law_links.LawLinkConfig(dense=False, proposed_budget=None, review_budget=1, min_budget=1)
    for weight, kept_top in ((0.0, True), (1.0, False)):
        links, paragraphs = linked(f"budget-{weight}.txt", replace(one, background_weight=weight))
        assert len({x.paragraph_id for x in links}) == 1
        assert (paragraphs[links[0].paragraph_id].text == top) is kept_top
        assert all((x.evidence["background"] is None) == (weight == 0.0) for x in links)


def test_links_to_other_laws_keep_within_a_budget_per_law() -> None:
    """As alert runs do: at most the budget of paragraphs get a proposed link (best link score first; the others'
    become needs-review, marked over budget), at most the review budget more keep needs-review links."""
    from compliance.app.law_links import LawLinkConfig, _apply_budget
    from compliance.errors import ConfigurationError
    from compliance.store import NewLink

    def link(pid: int, score: float, status: str, provision: int = 1) -> NewLink:
        return NewLink(pid, provision, "retriever", score, 1, {"decision": "propose"}, status)

    links = [
        link(1, 0.9, "proposed"),
        link(1, 0.5, "needs-review", provision=2),  # the same paragraph's second candidate stays with it
        link(2, 0.8, "proposed"),
        link(3, 0.7, "proposed"),
        link(4, 0.6, "needs-review"),
        link(5, 0.4, "needs-review"),
        link(6, 0.3, "needs-review"),
    ]
    kept = _apply_budget(links, 20, LawLinkConfig(proposed_budget=2, review_budget=2, min_budget=1))
    by = {(x.paragraph_id, x.provision_id): x for x in kept}
    assert {k for k, x in by.items() if x.status == "proposed"} == {(1, 1), (2, 1)}
    assert by[(1, 2)].status == "needs-review"
    assert by[(3, 1)].status == "needs-review" and by[(3, 1)].evidence["over_budget"] is True
    assert {pid for pid, _ in by} == {1, 2, 3, 4}  # paragraphs 5 and 6 are beyond the review budget
    share = _apply_budget(links, 20, LawLinkConfig(proposed_budget=0.1, review_budget=0.05, min_budget=1))
    assert {x.paragraph_id for x in share if x.status == "proposed"} == {1, 2}  # 0.1 × 20 paragraphs searched
    assert {x.paragraph_id for x in share} == {1, 2, 3}
    unbounded = _apply_budget(links, 20, LawLinkConfig(proposed_budget=None, review_budget=None))
    assert unbounded == links
    with pytest.raises(ConfigurationError):
        LawLinkConfig(proposed_budget=1.5)
