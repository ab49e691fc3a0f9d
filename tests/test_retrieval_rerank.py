"""Re-rankers on a tiny random BERT: cross-encoder training step, max over passage pairs, persistence; PLI
interaction max-pooling and aggregator training; the hybrid retriever's re-ranking stage."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from compliance.retrieval.bm25 import BM25Index
from compliance.retrieval.config import RerankConfig, RetrievalConfig
from compliance.retrieval.hybrid import HybridRetriever
from compliance.retrieval.rerank.cross_encoder import (
    CrossEncoderReranker,
    PairExample,
    build_pairs,
    train_cross_encoder,
)
from compliance.retrieval.rerank.pli import PLIReranker, interaction_features, train_pli
from compliance.retrieval.types import Document
from tests.fixtures.tiny_bert import make_tiny_bert

DOCS = [
    Document("cookies", "cookies stored in terminal equipment need consent of the user"),
    Document("breach", "personal data breach notification to the authority"),
    Document("marketing", "electronic marketing email needs consent of the subscriber"),
    Document("security", "security measures encryption access control backup"),
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_bert(tmp_path_factory.mktemp("tiny-ce"), layers=1)


def test_cross_encoder_training_step_reduces_loss(tiny: Path, tmp_path: Path) -> None:
    examples = [
        PairExample("cookies consent", "cookies stored in terminal equipment", 1.0),
        PairExample("cookies consent", "data breach notification", 0.0),
        PairExample("breach authority", "data breach notification", 1.0),
        PairExample("breach authority", "electronic marketing email", 0.0),
    ]
    ce, losses = train_cross_encoder(
        examples * 4,
        base_model=str(tiny),
        epochs=10,
        lr=3e-3,
        batch_size=8,
        max_length=32,
        device="cpu",
        out_dir=tmp_path / "ce",
    )
    assert np.mean(losses[-4:]) < np.mean(losses[:4])
    logits, _ = ce.pair_outputs([(e.query, e.passage) for e in examples])
    assert logits[0] > logits[1] and logits[2] > logits[3]
    loaded = CrossEncoderReranker.load(tmp_path / "ce", device="cpu")
    np.testing.assert_allclose(
        loaded.pair_outputs([(e.query, e.passage) for e in examples])[0], logits, atol=1e-5
    )


def test_cross_encoder_document_score_is_max_over_passage_pairs(tiny: Path) -> None:
    ce = CrossEncoderReranker.from_base(
        str(tiny), device="cpu", max_length=32, query_passages=2, doc_passages=3
    )
    long_doc = Document("long", " ".join(["security measures encryption"] * 50) + "\n\n" + "cookies consent")
    pairs, where = ce.passage_pairs("cookies consent", [DOCS[0], long_doc])
    assert {c for c, _, _ in where} == {0, 1}
    assert max(j for c, _, j in where if c == 1) == 2  # doc passages capped at 3
    logits, _ = ce.pair_outputs(pairs)
    scores = ce.score("cookies consent", [DOCS[0], long_doc])
    for c in (0, 1):
        assert scores[c] == pytest.approx(
            max(v for (cc, _, _), v in zip(where, logits, strict=True) if cc == c)
        )


def test_build_pairs_uses_gold_and_hard_negatives() -> None:
    bm25 = BM25Index.build(DOCS)
    docs = {d.id: d for d in DOCS}
    pairs = build_pairs({"q": "consent for cookies and email"}, {"q": {"cookies"}}, bm25, docs, negatives=1)
    assert sorted(p.label for p in pairs) == [0.0, 1.0]
    neg = next(p for p in pairs if p.label == 0.0)
    assert neg.passage == docs["marketing"].text  # the BM25 runner-up, not a random document


def test_pli_maxpool_and_training(tiny: Path, tmp_path: Path) -> None:
    ce = CrossEncoderReranker.from_base(
        str(tiny), device="cpu", max_length=32, query_passages=2, doc_passages=2
    )
    query = ("cookies consent " * 70).strip() + "\n\n" + "breach authority"
    feats = interaction_features(ce, query, DOCS[:2])
    pairs, where = ce.passage_pairs(query, DOCS[:2])
    _, vecs = ce.pair_outputs(pairs, hidden=True)
    n_q = max(i for _, i, _ in where) + 1
    assert feats[0].shape == (n_q, 32)
    rows = [v for (c, i, _), v in zip(where, vecs, strict=True) if c == 0 and i == 0]
    np.testing.assert_allclose(feats[0][0], np.max(rows, axis=0), atol=1e-6)
    examples = [
        ("cookies consent", DOCS[0], 1.0),
        ("cookies consent", DOCS[1], 0.0),
        ("breach authority", DOCS[1], 1.0),
        ("breach authority", DOCS[2], 0.0),
    ] * 2
    pli, history = train_pli(ce, examples, hidden=8, epochs=30, lr=1e-2, out_dir=tmp_path / "pli")
    assert history[-1] < history[0]
    loaded = PLIReranker.load(tmp_path / "pli")
    np.testing.assert_allclose(
        loaded.score("cookies consent", DOCS[:2]), pli.score("cookies consent", DOCS[:2]), atol=1e-5
    )


def test_hybrid_reranking_stage_reorders_head(tiny: Path, tmp_path: Path) -> None:
    ce = CrossEncoderReranker.from_base(str(tiny), device="cpu", max_length=32)
    ce.save(tmp_path / "ce")
    cfg = RetrievalConfig(reranker=RerankConfig(model=str(tmp_path / "ce"), top_n=2))
    r = HybridRetriever.build(DOCS, cfg)
    hits = r.search("consent for cookies and email marketing", k=3)
    head = [h for h in hits if "rerank" in h.evidence]
    assert len(head) == 2 and all(h.score >= 0 for h in head)
    assert head[0].evidence["rerank"] >= head[1].evidence["rerank"]
    assert all(h.score < 0 for h in hits[2:])


def test_cross_encoder_artifact_and_format_1_layout(tiny: Path, tmp_path: Path) -> None:
    """The current layout (config.json envelope, model/ sub-folder, card) and format 1 (Hugging Face files at the
    top, metadata in reranker.json), which still loads."""
    import json

    from compliance.artifacts import file_sha256

    ce = CrossEncoderReranker.from_base(str(tiny), device="cpu", max_length=24)
    ce.save(tmp_path / "ce", {"steps": 0})
    cfg = json.loads((tmp_path / "ce" / "config.json").read_text())
    assert (cfg["kind"], cfg["format_version"], cfg["model_subdir"], cfg["max_length"]) == (
        "cross-encoder",
        2,
        "model",
        24,
    )
    assert cfg["provenance"]["base_model_sha256"] == file_sha256(tiny / "model.safetensors")
    assert (tmp_path / "ce" / "MODEL_CARD.md").is_file() and (
        tmp_path / "ce" / "model" / "config.json"
    ).is_file()
    pairs = [("cookies consent", "cookies stored in terminal equipment"), ("breach", "marketing email")]
    logits, _ = ce.pair_outputs(pairs)

    old = tmp_path / "old"
    ce.model.save_pretrained(str(old))
    ce.tokenizer.save_pretrained(str(old))
    meta = {"kind": "cross-encoder", "base_model": str(tiny), "max_length": 24, "package_version": "0.1.0"}
    (old / "reranker.json").write_text(json.dumps({**meta, "training": {}}))
    loaded = CrossEncoderReranker.load(old, device="cpu")
    assert loaded.max_length == 24 and loaded.provenance == {"base_model": str(tiny)}
    np.testing.assert_allclose(loaded.pair_outputs(pairs)[0], logits, atol=1e-6)


def test_pli_format_1_loads_and_errors_say_how_to_retrain(tiny: Path, tmp_path: Path) -> None:
    import json

    from compliance.errors import ModelError, ModelNotFoundError

    ce = CrossEncoderReranker.from_base(str(tiny), device="cpu", max_length=32)
    pli, _ = train_pli(ce, [("cookies consent", DOCS[0], 1.0), ("cookies", DOCS[1], 0.0)], hidden=4, epochs=1)
    pli.save(tmp_path / "pli")
    cfg = json.loads((tmp_path / "pli" / "config.json").read_text())
    assert (cfg["kind"], cfg["format_version"]) == ("pli", 2) and len(
        cfg["provenance"]["aggregator_sha256"]
    ) == 64
    old = {k: v for k, v in cfg.items() if k not in {"format_version", "provenance"}}
    (tmp_path / "pli" / "config.json").write_text(json.dumps(old))
    loaded = PLIReranker.load(tmp_path / "pli")
    np.testing.assert_allclose(loaded.score("cookies", DOCS[:2]), pli.score("cookies", DOCS[:2]), atol=1e-6)
    (tmp_path / "pli" / "config.json").write_text(json.dumps({**cfg, "format_version": 3}))
    with pytest.raises(ModelError, match=r"newer version.*train_pli"):
        PLIReranker.load(tmp_path / "pli")
    with pytest.raises(ModelNotFoundError, match="train_cross_encoder"):
        CrossEncoderReranker.load(tmp_path / "nothing")
