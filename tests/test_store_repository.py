"""The repository API on SQLite and PostgreSQL: laws, documents, runs, links, reviews, alerts, audit log."""

from __future__ import annotations

import dataclasses
from datetime import UTC, date
from typing import Any

import pytest
from sqlalchemy import func, select

from compliance.connectors.document import Paragraph, ParsedDocument
from compliance.errors import LawNotFoundError, NotFoundError, StoreError
from compliance.rules.corpus import Law, Provision
from compliance.store import NewAlert, NewLink, Store
from compliance.store.orm import (
    AuditLogRow,
    Base,
    Document,
    DocumentVersion,
    LawRow,
    LinkRow,
    ParagraphRow,
    ProvisionRow,
    ReviewRow,
)


def mini_law(checksum: str = "a" * 64, *, extra_text: str = "") -> Law:
    # The point comes before its paragraph on purpose: parents are resolved whatever the order.
    provisions = (
        Provision("recital", "rec:1", "1", "Whereas personal data should be protected.", ordinal=1),
        Provision("chapter", "chp:I", "I", "", title="General provisions", ordinal=1),
        Provision("article", "art:1", "1", "", title="Subject-matter", parent_key="chp:I", ordinal=1),
        Provision("point", "art:1/par:1/pt:a", "a", "(a) names;", parent_key="art:1/par:1", ordinal=1),
        Provision(
            "paragraph",
            "art:1/par:1",
            "1",
            "1. This Regulation protects data: (a) names;" + extra_text,
            parent_key="art:1",
            ordinal=1,
        ),
        Provision(
            "article",
            "art:2",
            "2",
            "Security of processing shall be ensured.",
            title="Security",
            parent_key="chp:I",
            ordinal=2,
        ),
    )
    return Law(
        identifier="32099R0001",
        short_name="mini",
        title="Mini Regulation on test data",
        jurisdiction="EU",
        law_type="regulation",
        provisions=provisions,
        date_adopted=date(2099, 1, 2),
        date_in_force=date(2099, 2, 3),
        version_date=None,
        source="tests/mini.xml",
        source_format="formex4",
        checksum=checksum,
        metadata={"celex": "32099R0001", "oj": "L 1"},
    )


def policy(
    checksum: str = "1" * 64, texts: tuple[str, ...] = ("First control.", "Second control.")
) -> ParsedDocument:
    text = "\n\n".join(texts)
    paragraphs = []
    pos = 0
    for i, t in enumerate(texts):
        paragraphs.append(
            Paragraph(i, t, pos, pos + len(t), heading_path=("Policy", f"Part {i}"), page=i + 1)
        )
        pos += len(t) + 2
    return ParsedDocument(
        source="policies/security.docx",
        media_type="application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        checksum=checksum,
        title="Security policy",
        text=text,
        paragraphs=tuple(paragraphs),
        size_bytes=1234,
        pages=len(texts),
        metadata={"parser": "docx"},
    )


def count(store: Store, model: Any) -> int:
    with store.session() as s:
        return int(s.scalar(select(func.count()).select_from(model)) or 0)


# -- laws --------------------------------------------------------------------------------------------------------
def test_law_round_trip(store: Store) -> None:
    law = mini_law()
    saved = store.save_law(law)
    assert saved.created and saved.version == 1 and saved.provision_count == 6
    assert store.get_law("mini") == law
    assert store.get_law("32099R0001") == law
    assert store.get_law(saved.id) == law
    ids = store.provision_id_map(saved.id)
    assert set(ids) == {p.key for p in law.provisions}
    stored = store.list_provisions(saved.id, kinds=["point"])
    assert [(p.key, p.parent_key) for p in stored] == [("art:1/par:1/pt:a", "art:1/par:1")]
    assert [p.key for p in store.get_provisions([ids["art:2"], ids["rec:1"]])] == ["art:2", "rec:1"]
    record = store.law_record("mini")
    assert record.counts == {
        "article": 2,
        "chapter": 1,
        "paragraph": 1,
        "point": 1,
        "recital": 1,
        "provisions": 6,
    }
    assert record.metadata == {"celex": "32099R0001", "oj": "L 1"}
    assert record.installed_at.tzinfo is not None
    assert record.is_latest


def test_law_same_text_is_a_no_op_and_new_text_a_new_version(store: Store) -> None:
    first = store.save_law(mini_law())
    again = store.save_law(mini_law())
    assert not again.created and again.id == first.id and again.version == 1
    assert count(store, LawRow) == 1 and count(store, ProvisionRow) == 6

    changed = mini_law("b" * 64, extra_text=" (b) addresses;")
    second = store.save_law(changed)
    assert second.created and second.version == 2 and second.id != first.id
    assert count(store, LawRow) == 2 and count(store, ProvisionRow) == 12
    assert store.get_law("mini") == changed
    assert store.get_law("mini", version=1) == mini_law()
    assert [(r.version, r.is_latest) for r in store.list_laws(all_versions=True)] == [(1, False), (2, True)]
    assert [r.version for r in store.list_laws()] == [2]
    with pytest.raises(LawNotFoundError):
        store.get_law("mini", version=3)
    with pytest.raises(LawNotFoundError):
        store.get_law("nosuchlaw")


def test_law_short_name_belongs_to_one_identifier(store: Store) -> None:
    store.save_law(mini_law())
    other = dataclasses.replace(mini_law("c" * 64), identifier="32099R0002")
    with pytest.raises(StoreError, match="already belongs"):
        store.save_law(other)
    assert count(store, LawRow) == 1


def test_malformed_law_is_rejected_without_storing(store: Store) -> None:
    law = mini_law()
    dup = dataclasses.replace(law, provisions=(*law.provisions, law.provisions[0]))
    with pytest.raises(StoreError, match="duplicate"):
        store.save_law(dup)
    orphan = dataclasses.replace(law, provisions=(Provision("point", "x", "a", "t", parent_key="missing"),))
    with pytest.raises(StoreError, match="unknown parents"):
        store.save_law(orphan)
    assert count(store, LawRow) == 0 and count(store, AuditLogRow) == 0


# -- documents ---------------------------------------------------------------------------------------------------
def test_document_versioning(store: Store) -> None:
    first = store.save_document(policy())
    assert (first.created, first.new_document, first.version, first.paragraph_count) == (True, True, 1, 2)
    audit_before = count(store, AuditLogRow)

    same = store.save_document(policy())
    assert not same.created and same.version_id == first.version_id
    assert count(store, DocumentVersion) == 1 and count(store, ParagraphRow) == 2
    assert count(store, AuditLogRow) == audit_before

    changed = store.save_document(policy("2" * 64, ("First control, revised.", "Second control.", "Third.")))
    assert (changed.created, changed.new_document, changed.version) == (True, False, 2)
    assert changed.document_id == first.document_id
    assert (
        count(store, Document) == 1 and count(store, DocumentVersion) == 2 and count(store, ParagraphRow) == 5
    )

    record = store.get_document(first.document_id)
    assert [v.version for v in record.versions] == [1, 2]
    assert record.latest.checksum == "2" * 64 and record.latest_version == 2
    assert store.get_document("policies/security.docx") == record
    assert store.get_document(str(first.document_id)) == record

    latest = list(store.iter_paragraphs())
    assert [p.text for p in latest] == ["First control, revised.", "Second control.", "Third."]
    assert {p.version for p in latest} == {2}
    everything = list(store.iter_paragraphs(latest_only=False))
    assert [(p.version, p.ordinal) for p in everything] == [(1, 0), (1, 1), (2, 0), (2, 1), (2, 2)]
    assert everything[0].heading_path == ("Policy", "Part 0") and everything[1].page == 2
    assert everything[1].char_start == len("First control.") + 2


def test_paragraph_order_and_lookup(store: Store) -> None:
    texts = tuple(f"Control number {i}." for i in range(12))
    saved = store.save_document(policy(texts=texts))
    other = store.save_document(dataclasses.replace(policy("3" * 64), source="other.txt"))
    paras = list(store.iter_paragraphs(document_ids=[saved.document_id]))
    assert [p.ordinal for p in paras] == list(range(12))
    assert [p.text for p in paras] == list(texts)
    assert all(p.source == "policies/security.docx" for p in paras)
    wanted = [paras[5].id, paras[0].id, paras[11].id]
    assert [p.text for p in store.get_paragraphs(wanted)] == [texts[5], texts[0], texts[11]]
    with pytest.raises(NotFoundError):
        store.get_paragraphs([paras[0].id, 999_999])
    assert [d.source for d in store.list_documents()] == ["policies/security.docx", "other.txt"]
    assert list(store.iter_paragraphs(document_ids=[])) == []
    assert len(list(store.iter_paragraphs(document_ids=[other.document_id]))) == 2
    with pytest.raises(NotFoundError):
        store.get_document("nope.docx")


def test_failed_document_save_stores_nothing(store: Store) -> None:
    doc = policy()
    broken = dataclasses.replace(doc, paragraphs=(doc.paragraphs[0], doc.paragraphs[0]))  # duplicate ordinal
    with pytest.raises(StoreError):
        store.save_document(broken)
    assert (
        count(store, Document) == 0 and count(store, DocumentVersion) == 0 and count(store, ParagraphRow) == 0
    )
    assert count(store, AuditLogRow) == 0
    assert store.save_document(doc).created  # the store is still usable


# -- runs --------------------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class _Config:
    threshold: float = 0.5
    methods: tuple[str, ...] = ("bm25", "dense")


def test_runs(store: Store) -> None:
    with store.run("map", _Config(), model={"name": "tiny", "revision": "abc"}) as run:
        run.stats["links"] = 3
    record = store.get_run(run.id)
    assert record.status == "succeeded" and record.stats == {"links": 3}
    assert record.config == {"threshold": 0.5, "methods": ["bm25", "dense"]}
    assert record.model == {"name": "tiny", "revision": "abc"}
    assert record.finished_at is not None and record.finished_at >= record.started_at
    assert record.started_at.tzinfo == UTC and record.duration_s is not None

    with pytest.raises(RuntimeError, match="boom"), store.run("train", {"epochs": 1}) as failing:
        raise RuntimeError("boom")
    failed = store.get_run(failing.id)
    assert failed.status == "failed" and failed.error == "RuntimeError: boom"

    run_id = store.start_run("audit", {"k": 1})
    assert store.get_run(run_id).status == "running"
    store.finish_run(run_id, "succeeded", {"n": 1})
    with pytest.raises(StoreError, match="already finished"):
        store.finish_run(run_id, "failed")
    with pytest.raises(StoreError):
        store.finish_run(store.start_run("audit"), "done")
    with pytest.raises(NotFoundError):
        store.get_run(987_654)
    assert [r.kind for r in store.list_runs(kind="map")] == ["map"]
    assert [r.id for r in store.list_runs(limit=2)] == sorted(
        (r.id for r in store.list_runs()), reverse=True
    )[:2]


# -- links and reviews -------------------------------------------------------------------------------------------
def _linked(store: Store) -> tuple[int, list[int], dict[str, int]]:
    law = store.save_law(mini_law())
    ids = store.provision_id_map(law.id)
    store.save_document(policy())
    paras = [p.id for p in store.iter_paragraphs()]
    run_id = store.start_run("map", {"method": "test"}, model={"name": "tiny"})
    return run_id, paras, ids


def test_links_and_reviews_are_append_only(store: Store) -> None:
    run_id, paras, ids = _linked(store)
    n = store.add_links(
        run_id,
        [
            NewLink(paras[0], ids["art:2"], "classifier", 0.91, rank=1, evidence={"terms": ["security"]}),
            NewLink(paras[0], ids["art:1"], "classifier", 0.40, rank=2),
            NewLink(paras[1], ids["art:1"], "bm25", 12.5, rank=1, status="needs-review"),
        ],
    )
    assert n == 3
    links = store.list_links(run_id=run_id)
    assert [(link.provision_key, link.status) for link in links] == [
        ("art:2", "proposed"),
        ("art:1", "proposed"),
        ("art:1", "needs-review"),
    ]
    assert links[0].evidence == {"terms": ["security"]} and links[0].law_short_name == "mini"

    first = links[0].id
    store.add_review(first, "accepted", "alice", "implements Art. 2")
    store.add_review(first, "rejected", "bob", "too generic")
    assert store.get_link(first).status == "rejected"
    assert store.get_link(first).proposed_status == "proposed"
    assert [(r.decision, r.reviewer) for r in store.list_reviews(first)] == [
        ("accepted", "alice"),
        ("rejected", "bob"),
    ]
    assert count(store, ReviewRow) == 2 and count(store, LinkRow) == 3

    assert [link.id for link in store.list_links(status="rejected")] == [first]
    assert len(store.list_links(status="proposed")) == 1
    assert len(store.list_links(paragraph_id=paras[0])) == 2
    assert [link.id for link in store.list_links(limit=1, offset=1)] == [links[1].id]
    assert len(store.list_links(provision_id=ids["art:1"])) == 2
    assert len(store.list_links(law="mini")) == 3 and store.list_links(law="other") == []
    assert len(store.list_links(document_id=store.list_documents()[0].id)) == 3

    with pytest.raises(StoreError):
        store.add_review(first, "maybe", "alice")
    with pytest.raises(NotFoundError):
        store.add_review(999_999, "accepted", "alice")

    rows = store.export_links(run_id)
    assert len(rows) == 3
    top = rows[0]
    assert top["document_source"] == "policies/security.docx" and top["paragraph_ordinal"] == 0
    assert top["law_short_name"] == "mini" and top["provision_key"] == "art:2"
    assert top["provision_title"] == "Security" and top["provision_number"] == "2"
    assert top["status"] == "rejected" and top["reviewer"] == "bob" and top["model"] == {"name": "tiny"}
    assert top["score"] == pytest.approx(0.91) and top["paragraph_text"] == "First control."


def test_add_links_is_all_or_nothing(store: Store) -> None:
    run_id, paras, ids = _linked(store)
    with pytest.raises(StoreError, match="unknown paragraph"):
        store.add_links(
            run_id, [NewLink(paras[0], ids["art:1"], "x", 1.0), NewLink(424_242, ids["art:1"], "x", 1.0)]
        )
    with pytest.raises(StoreError, match="invalid link status"):
        store.add_links(run_id, [NewLink(paras[0], ids["art:1"], "x", 1.0, status="maybe")])
    with pytest.raises(NotFoundError):
        store.add_links(999_999, [NewLink(paras[0], ids["art:1"], "x", 1.0)])
    assert count(store, LinkRow) == 0


# -- alerts ------------------------------------------------------------------------------------------------------
def test_alerts_and_acknowledgements(store: Store) -> None:
    law = store.save_law(mini_law())
    ids = store.provision_id_map(law.id)
    store.save_document(policy())
    paras = list(store.iter_paragraphs())
    run_id = store.start_run("alert", {"law": "mini"})
    added = store.add_alerts(
        run_id,
        [
            NewAlert(
                law.id, paras[0].id, 0.8, provision_id=ids["art:2"], rank=1, evidence={"why": "security"}
            ),
            NewAlert(law.id, paras[1].id, 0.3, rank=2),
        ],
    )
    assert added == 2
    open_alerts = store.list_alerts(status="open")
    assert [(a.paragraph_text, a.provision_key) for a in open_alerts] == [
        ("First control.", "art:2"),
        ("Second control.", None),
    ]
    assert (
        open_alerts[0].law_short_name == "mini" and open_alerts[0].document_source == "policies/security.docx"
    )

    acked = store.acknowledge_alert(open_alerts[0].id, "carol", "policy already covers it")
    assert acked.status == "acknowledged"
    assert [(a.by, a.comment) for a in acked.acknowledgements] == [("carol", "policy already covers it")]
    store.acknowledge_alert(open_alerts[0].id, "dave")
    assert len(store.get_alert(open_alerts[0].id).acknowledgements) == 2
    assert [a.id for a in store.list_alerts(status="open")] == [open_alerts[1].id]
    assert len(store.list_alerts(law="mini")) == 2 and store.list_alerts(law="gdpr") == []
    assert len(store.list_alerts(law=law.id, run_id=run_id)) == 2
    with pytest.raises(NotFoundError):
        store.get_alert(123_456)
    with pytest.raises(StoreError):
        store.list_alerts(status="closed")
    with pytest.raises(StoreError, match="unknown law"):
        store.add_alerts(run_id, [NewAlert(999, paras[0].id, 0.1)])
    assert len(store.list_alerts()) == 2


# -- audit log ---------------------------------------------------------------------------------------------------
def test_audit_log(store: Store) -> None:
    run_id, paras, ids = _linked(store)
    store.add_links(run_id, [NewLink(paras[0], ids["art:1"], "x", 1.0)])
    link_id = store.list_links()[0].id
    store.add_review(link_id, "accepted", "erin")
    store.log("export", actor="frank", target_type="run", target_id=run_id, details={"format": "csv"})
    actions = [e.action for e in reversed(store.list_audit())]
    assert actions == ["law.save", "document.save", "run.start", "links.add", "link.review", "export"]
    review = store.list_audit(action="link.review")[0]
    assert review.actor == "erin" and review.target_type == "link" and review.target_id == str(link_id)
    assert review.details["decision"] == "accepted"
    law_entry = store.list_audit(action="law.save")[0]
    assert law_entry.actor == "test" and law_entry.details["short_name"] == "mini"
    assert [e.action for e in store.list_audit(target_type="run", target_id=run_id)] == [
        "export",
        "links.add",
        "run.start",
    ]
    assert len(store.list_audit(limit=2)) == 2
    assert [e.action for e in store.list_audit(limit=2, offset=1)] == ["link.review", "links.add"]
    assert all(e.at.tzinfo is not None for e in store.list_audit())


def test_records_serialise_to_json(store: Store) -> None:
    import json

    saved = store.save_law(mini_law())
    record = store.law_record("mini").to_dict()
    assert json.loads(json.dumps(record))["date_adopted"] == "2099-01-02"
    assert saved.to_dict()["created"] is True


def test_document_text_and_counts(store: Store) -> None:
    saved = store.save_document(policy())
    store.save_document(policy("9" * 64, ("Only one control now.",)))
    latest = store.get_document_text(saved.document_id)
    assert latest == "Only one control now."
    first = store.get_document_text(saved.document_id, version=1)
    para = next(iter(store.iter_paragraphs(latest_only=False)))
    assert first[para.char_start : para.char_end] == para.text == "First control."
    with pytest.raises(NotFoundError):
        store.get_document_text(saved.document_id, version=3)
    counts = store.counts()
    assert counts["documents"] == 1 and counts["document_versions"] == 2 and counts["paragraphs"] == 3
    assert counts["laws"] == 0 and set(counts) == set(Base.metadata.tables)


def test_run_with_unstorable_stats_is_marked_failed(store: Store) -> None:
    with pytest.raises(TypeError), store.run("map") as run:
        run.stats["model"] = object()
    record = store.get_run(run.id)
    assert record.status == "failed" and "could not store" in (record.error or "")


def test_iter_paragraphs_reads_in_batches_in_order(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    import compliance.store.documents as documents_module

    monkeypatch.setattr(documents_module, "_VERSIONS_PER_READ", 2)
    for i in range(5):
        texts = tuple(f"Doc {i} paragraph {j}." for j in range(3))
        store.save_document(dataclasses.replace(policy(f"{i}" * 64, texts), source=f"doc{i}.txt"))
    store.save_document(dataclasses.replace(policy("f" * 64, ("Doc 1 changed.",)), source="doc1.txt"))
    got = [p.text for p in store.iter_paragraphs()]
    expected = [f"Doc {i} paragraph {j}." for i in range(5) for j in range(3) if i != 1]
    expected[3:3] = ["Doc 1 changed."]
    assert got == expected
    assert len(list(store.iter_paragraphs(latest_only=False))) == 16


def test_to_jsonable_gives_json_data_for_plain_and_typed_values() -> None:
    """Evidence dicts of plain values (most of what an audit stores) and the typed values of configs alike become
    JSON data: tuples as lists, keys as strings, enums by value, numpy scalars as Python numbers, sets sorted."""
    import enum
    import json
    from pathlib import PurePosixPath

    import numpy as np

    from compliance.store.records import to_jsonable

    class Colour(enum.Enum):
        RED = "red"

    value = {
        "model": "m@1",
        "article": 32,
        "abstain": False,
        "score": 0.5,
        "none": None,
        1: ("a", 2),
        "nested": [{"terms": ("encrypt", "laptop")}, {Colour.RED, Colour.RED}],
        "enum": Colour.RED,
        "numpy": [np.float32(0.25), np.int64(3)],
        "path": PurePosixPath("/a/b"),
        "when": date(2026, 11, 25),
    }
    got = to_jsonable(value)
    assert got == {
        "model": "m@1",
        "article": 32,
        "abstain": False,
        "score": 0.5,
        "none": None,
        "1": ["a", 2],
        "nested": [{"terms": ["encrypt", "laptop"]}, ["red"]],
        "enum": "red",
        "numpy": [0.25, 3],
        "path": "/a/b",
        "when": "2026-11-25",
    }
    assert type(got["numpy"][1]) is int
    json.dumps(got)
    with pytest.raises(TypeError):
        to_jsonable({"x": object()})


def test_current_links_are_read_one_paragraph_at_a_time_in_order(store: Store) -> None:
    """``iter_current_links`` gives what ``current_links`` documents, page by page: per paragraph the newest run's
    links (a reviewer's own links always), of the documents' latest versions, ordered by document, paragraph,
    law, rank and id — however small the page; with ``current_only=False`` every version's links at a position
    come together; the status filter applies to the current (reviewed) status; it is an iterator (an export of a
    large audit never holds every link)."""
    import inspect

    law = store.save_law(mini_law())
    ids = store.provision_id_map(law.id)
    store.save_document(dataclasses.replace(policy("a" * 64), source="a.docx"))
    store.save_document(dataclasses.replace(policy("b" * 64), source="b.docx"))

    def paragraphs() -> dict[tuple[str, int, int], int]:
        with store.session() as s:
            rows = s.execute(
                select(Document.source, DocumentVersion.version, ParagraphRow.ordinal, ParagraphRow.id)
                .join(DocumentVersion, DocumentVersion.document_id == Document.id)
                .join(ParagraphRow, ParagraphRow.version_id == DocumentVersion.id)
            ).all()
        return {(source, version, ordinal): pid for source, version, ordinal, pid in rows}

    p = paragraphs()
    first = store.start_run("audit", {}, model={"identity": "m1"})

    def link(run: int, para: int, key: str, rank: int) -> int:
        version = "m1" if run == first else "m2"  # a link is stored once per model version
        assert (
            store.add_links(
                run, [NewLink(para, ids[key], "classifier", 0.5, rank=rank, model_version=version)]
            )
            == 1
        )
        with store.session() as s:
            return int(s.scalar(select(func.max(LinkRow.id))) or 0)

    l1 = link(first, p[("a.docx", 1, 0)], "art:2", 1)
    l2 = link(first, p[("a.docx", 1, 0)], "art:1", 2)
    l3 = link(first, p[("a.docx", 1, 1)], "art:1", 1)
    l4 = link(first, p[("b.docx", 1, 0)], "art:2", 1)
    l5 = link(first, p[("b.docx", 1, 0)], "art:1", 2)
    second = store.start_run("audit", {}, model={"identity": "m2"})
    l6 = link(second, p[("a.docx", 1, 0)], "art:1", 1)  # supersedes l1 and l2
    l7 = store.add_manual_link(p[("a.docx", 1, 1)], ids["art:2"], "alice")
    store.save_document(dataclasses.replace(policy("c" * 64), source="b.docx"))  # b.docx version 2
    p = paragraphs()
    l8 = link(second, p[("b.docx", 2, 0)], "art:1", 1)
    store.add_review(l3, "rejected", "bob")

    assert inspect.isgenerator(store.iter_current_links())
    for page in (1, 2, 1000):
        assert [x.link_id for x in store.iter_current_links(page=page)] == [l6, l3, l7, l8]
        every = [x.link_id for x in store.iter_current_links(current_only=False, page=page)]
        assert every == [l1, l6, l2, l3, l7, l4, l8, l5]
        assert [x.link_id for x in store.iter_current_links(status="rejected", page=page)] == [l3]
        assert [x.link_id for x in store.iter_current_links(law="mini", page=page)] == [l6, l3, l7, l8]
    assert [x.link_id for x in store.current_links()] == [l6, l3, l7, l8]
    asked = [x.link_id for x in store.current_links(link_ids=[l1, l8])]
    assert asked == [l1, l8]  # links asked for by id: none dropped as superseded
    # a page of the listing reads until it is full (the API's and the CLI's `links list`)
    from compliance.app.links import LinkQuery, page_links
    from compliance.errors import ConfigurationError

    assert [x.link_id for x in page_links(store, None, offset=1, limit=2)] == [l3, l7]
    assert [x.link_id for x in page_links(store, LinkQuery(status=("rejected",)))] == [l3]
    assert page_links(store, None, offset=10, limit=5) == [] and page_links(store, None, limit=0) == []
    with pytest.raises(ConfigurationError):
        page_links(store, None, offset=-1)


def test_a_review_sheet_is_checked_row_by_row_and_applied_whole(store: Store, tmp_path: Any) -> None:
    """The import reads the sheet row by row; every row is checked — a link id that is not a number, repeated
    or unknown is a bad row with or without a decision — and one bad row applies nothing; a good sheet records
    its decisions and counts the rows without one."""
    import csv

    from compliance.app.links import import_reviews
    from compliance.errors import ReviewImportError

    run_id, paras, ids = _linked(store)
    store.add_links(
        run_id,
        [
            NewLink(paras[0], ids["art:2"], "classifier", 0.9, rank=1),
            NewLink(paras[1], ids["art:1"], "x", 0.4),
        ],
    )
    first, second = (x.link_id for x in store.current_links())

    def sheet(name: str, rows: list[tuple[Any, str]]) -> Any:
        path = tmp_path / name
        with path.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(["link_id", "decision", "comment"])
            for link_id, decision in rows:
                writer.writerow([link_id, decision, ""])
        return path

    bad = sheet("bad.csv", [(first, "accept"), (first, ""), ("x", ""), (999_999, ""), (second, "")])
    with pytest.raises(ReviewImportError) as caught:
        import_reviews(store, bad, "carol")
    assert [(row, link) for row, link, _ in caught.value.problems] == [(3, first), (4, None), (5, 999_999)]
    assert "appears again (first on row 2)" in caught.value.problems[0][2]
    assert count(store, ReviewRow) == 0
    good = import_reviews(store, sheet("good.csv", [(first, "accept"), (second, "")]), "carol")
    assert (good.rows, good.applied, good.empty, good.decisions) == (2, 1, 1, {"accepted": 1})
    assert store.get_link(first).status == "accepted" and store.get_link(second).status == "proposed"
