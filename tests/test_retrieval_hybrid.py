"""The composed retriever: stages from the config, date filter, persistence, incremental updates, evidence."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import pytest

from compliance.errors import RetrievalError
from compliance.retrieval.config import (
    BM25Config,
    DateFilterConfig,
    DenseConfig,
    FusionConfig,
    RetrievalConfig,
    TokenizerConfig,
)
from compliance.retrieval.fusion import linear_fusion
from compliance.retrieval.hybrid import HybridRetriever
from compliance.retrieval.types import Document, Hit, Retriever
from tests.fixtures.tiny_bert import make_tiny_bert

LAWS = [
    Document(
        "eprivacy/art:5",
        "Confidentiality of the communications. Cookies stored in terminal equipment "
        "need consent of the user.",
        {"law": "eprivacy"},
        date(2002, 7, 31),
    ),
    Document(
        "eprivacy/art:13",
        "Unsolicited communications. Electronic mail for direct marketing needs prior "
        "consent of subscribers.",
        {"law": "eprivacy"},
        date(2002, 7, 31),
    ),
    Document(
        "gdpr/art:33",
        "Notification of a personal data breach to the supervisory authority within 72 hours.",
        {"law": "gdpr"},
        date(2018, 5, 25),
    ),
    Document(
        "gdpr/art:32",
        "Security of processing: encryption, pseudonymisation, access control and backup.",
        {"law": "gdpr"},
        date(2018, 5, 25),
    ),
    Document(
        "nis2/art:23",
        "Reporting obligations: significant incidents are notified to the authority without undue delay.",
        {"law": "nis2"},
        date(2023, 1, 16),
    ),
    Document("undated/x", "Breach notification duties for providers.", {}, None),
]
BM25_ONLY = RetrievalConfig(tokenizer=TokenizerConfig(idf_denoise=False))


def test_bm25_only_search_and_protocol() -> None:
    r = HybridRetriever.build(LAWS, BM25_ONLY)
    assert isinstance(r, Retriever)
    hits = r.search("cookies and consent of the user", k=3)
    assert hits[0].id == "eprivacy/art:5"
    assert isinstance(hits[0], Hit) and hits[0].evidence["rank_bm25"] == 1
    assert hits[0].score == pytest.approx(hits[0].evidence["bm25"])
    assert all(h.score > 0 for h in hits)
    many = r.search_many(["cookies", "breach notification"], k=2)
    assert [h.id for h in many[0]] == [h.id for h in r.search("cookies", k=2)]
    excluded = [h.id for h in r.search("consent", k=5, exclude=["eprivacy/art:5"])]
    assert excluded == ["eprivacy/art:13"]


def test_date_filter_pre_and_post() -> None:
    query = "breach notification to the authority"
    for mode in ("pre", "post"):
        cfg = BM25_ONLY.model_copy(update={"date_filter": DateFilterConfig(mode=mode, max_years=3)})
        r = HybridRetriever.build(LAWS, cfg)
        ids = [h.id for h in r.search(query, k=10, query_date=date(2017, 1, 1))]
        assert "nis2/art:23" not in ids  # 6 years away
        assert "gdpr/art:33" in ids and "undated/x" in ids
        assert [h.id for h in r.search(query, k=10)] == [
            h.id for h in HybridRetriever.build(LAWS, BM25_ONLY).search(query, k=10)
        ]  # undated query: no filtering
    strict = BM25_ONLY.model_copy(
        update={"date_filter": DateFilterConfig(mode="pre", max_years=3, keep_undated=False)}
    )
    ids = [h.id for h in HybridRetriever.build(LAWS, strict).search(query, k=10, query_date=date(2017, 1, 1))]
    assert "undated/x" not in ids


@pytest.fixture(scope="module")
def dense_config(tmp_path_factory: pytest.TempPathFactory) -> DenseConfig:
    return DenseConfig(model=str(make_tiny_bert(tmp_path_factory.mktemp("tiny"))), max_length=32, stride=8)


def test_linear_fusion_scores_follow_eq_4(dense_config: DenseConfig) -> None:
    cfg = RetrievalConfig(
        tokenizer=TokenizerConfig(idf_denoise=False),
        dense=dense_config,
        fusion=FusionConfig(method="linear", alpha=0.3),
    )
    r = HybridRetriever.build(LAWS, cfg)
    query = "electronic mail marketing consent"
    stage = r.stage_scores([query])
    expected = linear_fusion(stage["dense"][0], stage["bm25"][0], 0.3)
    hits = r.search(query, k=len(LAWS))
    assert [h.id for h in hits] == [r.ids[i] for i in np.lexsort((np.arange(len(LAWS)), -expected))]
    for h in hits:
        assert h.score == pytest.approx(expected[r.ids.index(h.id)])
        assert {"bm25", "dense", "fused", "rank_bm25", "rank_dense"} <= set(h.evidence)


def test_rrf_and_dense_only(dense_config: DenseConfig) -> None:
    rrf = HybridRetriever.build(
        LAWS, RetrievalConfig(dense=dense_config, fusion=FusionConfig(method="rrf", rrf_k=10))
    )
    hits = rrf.search("cookies consent", k=3)
    top = hits[0]
    assert top.score == pytest.approx(
        1 / (10 + top.evidence["rank_bm25"]) + 1 / (10 + top.evidence["rank_dense"])
    )
    dense_only = HybridRetriever.build(
        LAWS, RetrievalConfig(dense=dense_config, fusion=FusionConfig(method="dense"))
    )
    assert dense_only.bm25 is None and len(dense_only.search("cookies", k=10)) == len(LAWS)


def test_save_load_add_remove(dense_config: DenseConfig, tmp_path: Path) -> None:
    cfg = RetrievalConfig(
        dense=dense_config,
        fusion=FusionConfig(method="linear", alpha=0.5),
        bm25=BM25Config(mode="passage", passage_words=8, passage_overlap=2),
    )
    r = HybridRetriever.build(LAWS[:4], cfg)
    r.save(tmp_path / "idx")
    assert {"config.json", "docs.jsonl", "bm25", "dense", "MODEL_CARD.md"} <= {
        p.name for p in (tmp_path / "idx").iterdir()
    }
    loaded = HybridRetriever.load(tmp_path / "idx")
    assert loaded.config == cfg
    query = "personal data breach authority"
    assert [(h.id, round(h.score, 5)) for h in loaded.search(query)] == [
        (h.id, round(h.score, 5)) for h in r.search(query)
    ]
    loaded.add(LAWS[4:])
    loaded.remove(["gdpr/art:32"])
    assert loaded.ids == [d.id for d in LAWS if d.id != "gdpr/art:32"]
    assert loaded.documents["nis2/art:23"].date == date(2023, 1, 16)
    assert "nis2/art:23" in [h.id for h in loaded.search("incidents notified to the authority", k=3)]
    loaded.save(tmp_path / "idx2")
    again = HybridRetriever.load(tmp_path / "idx2")
    assert again.ids == loaded.ids
    (tmp_path / "idx2" / "docs.jsonl").write_text("")
    with pytest.raises(RetrievalError):
        HybridRetriever.load(tmp_path / "idx2")


def test_salient_terms_and_best_passage() -> None:
    r = HybridRetriever.build(LAWS, BM25_ONLY)
    terms = r.salient_terms("Do cookies in the terminal equipment need consent?", "eprivacy/art:5", n=10)
    assert {t for t, _ in terms} == {"cookies", "terminal", "equipment", "need", "consent"}
    assert all(w > 0 for _, w in terms) and [w for _, w in terms] == sorted(
        (w for _, w in terms), reverse=True
    )
    assert (
        len(r.salient_terms("Do cookies in the terminal equipment need consent?", "eprivacy/art:5", n=2)) == 2
    )
    assert "cookies" in {t for t, _ in r.salient_terms("cookies cookies", "eprivacy/art:5")}
    long = Document("long", "alpha beta gamma. " * 60 + "\n\n" + "cookies need consent in terminal equipment")
    r.add([long])
    assert "cookies" in r.best_passage("cookies consent", "long")


def test_law_documents_adapter() -> None:
    from compliance.retrieval.adapters import law_documents
    from compliance.rules.corpus import Law, Provision

    law = Law(
        identifier="32002L0058",
        short_name="eprivacy",
        title="ePrivacy Directive",
        jurisdiction="EU",
        law_type="directive",
        date_in_force=date(2002, 7, 31),
        provisions=(
            Provision("article", "art:5", "5", "", "Confidentiality"),
            Provision(
                "paragraph", "art:5/par:1", "1", "Member States shall ensure confidentiality.", None, "art:5"
            ),
            Provision(
                "paragraph", "art:5/par:3", "3", "Storing of information needs consent.", None, "art:5"
            ),
            Provision("article", "art:6", "6", "Traffic data shall be erased.", "Traffic data"),
            Provision("recital", "rec:1", "1", "Directive 95/46/EC requires..."),
        ),
    )
    arts = law_documents(law)
    assert [d.id for d in arts] == ["eprivacy/art:5", "eprivacy/art:6"]
    assert arts[0].text.startswith("Confidentiality") and "needs consent" in arts[0].text
    assert arts[0].date == date(2002, 7, 31) and arts[0].metadata["kind"] == "article"
    paras = law_documents(law, level="paragraph", include_recitals=True)
    assert [d.id for d in paras] == [
        "eprivacy/art:5/par:1",
        "eprivacy/art:5/par:3",
        "eprivacy/art:6",
        "eprivacy/rec:1",
    ]
    whole = law_documents(law, level="law")
    assert len(whole) == 1 and whole[0].id == "eprivacy" and "Traffic data shall be erased." in whole[0].text


def test_product_indexes_build_open_update(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from compliance.retrieval.indexes import (
        CONTROL_INDEX,
        PROVISION_INDEX,
        build_control_index,
        build_law_index,
        documents_from_rows,
        index_config,
        open_index,
    )
    from compliance.rules.corpus import Law, Provision
    from compliance.settings import reset_settings

    monkeypatch.setenv("COMPLIANCE_INDEX_DIR", str(tmp_path / "indexes"))
    reset_settings()
    rows = [
        (
            1,
            "Cookies are set only after consent in the banner.",
            {"document": "marketing", "date": "2025-03-01"},
        ),
        (2, "Backups are encrypted and tested monthly.", None),
        (3, "Marketing e-mails are sent only to subscribers who opted in.", {"date": date(2024, 1, 1)}),
    ]
    docs = documents_from_rows(rows)
    assert [d.id for d in docs] == ["1", "2", "3"] and docs[0].date == date(2025, 3, 1)
    assert docs[2].metadata["date"] == "2024-01-01"
    controls = build_control_index(rows, index_config(CONTROL_INDEX, dense=False))
    assert (tmp_path / "indexes" / CONTROL_INDEX / "config.json").is_file()
    reopened = open_index(CONTROL_INDEX)
    assert reopened.search("consent for cookies", k=1)[0].id == "1"
    reopened.add(documents_from_rows([(4, "Cookie consent records are kept for two years.", None)]))
    assert {h.id for h in reopened.search("cookie consent", k=5)} >= {"1", "4"}
    assert controls.config == reopened.config
    law = Law(
        identifier="x",
        short_name="mini",
        title="Mini",
        jurisdiction="EU",
        law_type="directive",
        provisions=(
            Provision("article", "art:1", "1", "Consent is required for cookies.", "Cookies"),
            Provision("article", "art:2", "2", "Backups shall be encrypted.", "Security"),
        ),
    )
    laws = build_law_index([law], index_config(PROVISION_INDEX, dense=False), path=tmp_path / "laws")
    assert laws.search("encrypted backups", k=1)[0].id == "mini/art:2"
    assert open_index(tmp_path / "laws").ids == ["mini/art:1", "mini/art:2"]
    build_law_index([law], index_config(PROVISION_INDEX, dense=False))  # default place: the product's index
    assert open_index(PROVISION_INDEX).config.bm25.k1 == 7.87


def test_one_index_api_carries_the_tuned_configuration() -> None:
    from compliance.errors import ConfigurationError
    from compliance.retrieval.indexes import IndexConfigs, index_config, index_configs

    tuned = index_configs()
    assert (tuned.provisions.bm25.k1, tuned.provisions.bm25.b, tuned.provisions.fusion.alpha) == (
        7.87,
        0.53,
        0.55,
    )
    assert (tuned.controls.bm25.k1, tuned.controls.bm25.b, tuned.controls.fusion.alpha) == (1.2, 0.75, 0.5)
    assert tuned.provisions.fusion.method == tuned.controls.fusion.method == "linear"
    # the controls index reads abbreviations as the shipped classifier does (its vectors come from its forward)
    assert tuned.controls.dense == DenseConfig(abbreviations=True) and tuned.provisions.dense == DenseConfig()
    assert tuned.for_index("provisions") is tuned.provisions
    # what alerts searched with before the indexes got one API (k1 1.2, b 0.75, alpha 0.5): unchanged
    assert tuned.controls == RetrievalConfig(
        dense=DenseConfig(abbreviations=True), fusion=FusionConfig(method="linear", alpha=0.5)
    )
    bm25_only = index_configs(dense=False)
    assert bm25_only.provisions.dense is None and bm25_only.provisions.fusion.method == "bm25"
    assert bm25_only.provisions.bm25 == tuned.provisions.bm25 and bm25_only.controls == RetrievalConfig()
    assert index_config("provisions", dense_model="x").dense == DenseConfig(model="x")
    assert IndexConfigs.uniform(RetrievalConfig()).to_dict()["controls"] == RetrievalConfig().to_dict()
    with pytest.raises(ConfigurationError, match="provisions, controls"):
        index_config("laws")  # type: ignore[arg-type]


def test_format_1_hybrid_index_loads(dense_config: DenseConfig, tmp_path: Path) -> None:
    """An index written before the artifact contract (format 1: corpus checksum and encoder identity beside the
    parameters, in the top directory and in bm25/ and dense/) loads and ranks the same."""
    import json

    cfg = RetrievalConfig(dense=dense_config, fusion=FusionConfig(method="linear", alpha=0.5))
    r = HybridRetriever.build(LAWS, cfg)
    r.save(tmp_path / "idx")
    for sub in ("", "bm25", "dense"):
        path = tmp_path / "idx" / sub / "config.json"
        new = json.loads(path.read_text())
        assert new["format_version"] == 2 and new["provenance"]["corpus_checksum"]
        old = {k: v for k, v in new.items() if k != "provenance"}
        old.update(format_version=1, **new["provenance"])
        path.write_text(json.dumps(old))
    loaded = HybridRetriever.load(tmp_path / "idx")
    assert loaded.dense is not None and loaded.dense.identity == r.dense.identity  # type: ignore[union-attr]
    query = "personal data breach authority"
    assert [(h.id, h.score) for h in loaded.search(query, k=5)] == [
        (h.id, h.score) for h in r.search(query, k=5)
    ]


def test_rrf_leaves_documents_without_shared_terms_out_of_the_bm25_ranking(dense_config: DenseConfig) -> None:
    cfg = RetrievalConfig(dense=dense_config, fusion=FusionConfig(method="rrf", rrf_k=10))
    r = HybridRetriever.build(LAWS, cfg)
    query = "cookies"  # only eprivacy/art:5 contains it
    hits = {h.id: h for h in r.search(query, k=len(LAWS))}
    for doc_id, hit in hits.items():
        dense_part = 1 / (10 + hit.evidence["rank_dense"])
        expected = dense_part + (1 / 11 if doc_id == "eprivacy/art:5" else 0.0)
        assert hit.score == pytest.approx(expected)
