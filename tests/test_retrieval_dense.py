"""Dense index with a tiny random BERT: chunking, pooling, exact search, add/remove, persistence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from compliance.errors import ConfigurationError, RetrievalError
from compliance.retrieval.config import DenseConfig
from compliance.retrieval.dense import DenseIndex
from compliance.retrieval.types import Document
from tests.fixtures.tiny_bert import make_tiny_bert

TEXTS = {
    "cookies": "cookies stored in terminal equipment need consent of the user",
    "breach": "a personal data breach notification to the authority",
    "marketing": "electronic marketing email needs consent of the subscriber",
    "long": " ".join(["security measures encryption access control backup network"] * 12),
    "retention": "retention period delete erase personal data",
}


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_bert(tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture(scope="module")
def encoder(tiny_bert: Path) -> object:
    from compliance.retrieval.encoding import TextEncoder

    return TextEncoder(DenseConfig(model=str(tiny_bert), max_length=16, stride=4, batch_size=4), device="cpu")


def docs(names: list[str]) -> list[Document]:
    return [Document(n, TEXTS[n]) for n in names]


def test_chunking_covers_long_texts_with_overlap(encoder: object) -> None:
    chunks, owner = encoder.chunk([TEXTS["long"], "data"])  # type: ignore[attr-defined]
    assert owner.tolist().count(0) > 3 and owner.tolist().count(1) == 1
    assert all(len(c) <= 16 for c in chunks)
    body = [c[1:-1] for c in chunks if True][: owner.tolist().count(0)]
    assert body[0][-4:] == body[1][:4]  # stride 4 shared between consecutive windows
    vecs, _ = encoder.encode_chunks(["cookies consent", TEXTS["long"]])  # type: ignore[attr-defined]
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, rtol=1e-5)


def test_pooling_and_layer_change_the_vectors(tiny_bert: Path) -> None:
    from compliance.retrieval.encoding import TextEncoder

    base = TextEncoder(DenseConfig(model=str(tiny_bert), max_length=16), device="cpu")
    cls = TextEncoder(DenseConfig(model=str(tiny_bert), max_length=16, pooling="cls"), device="cpu")
    emb = TextEncoder(DenseConfig(model=str(tiny_bert), max_length=16, layer=0), device="cpu")
    text = ["cookies need consent"]
    a, b, c = base.encode(text), cls.encode(text), emb.encode(text)
    assert not np.allclose(a, b) and not np.allclose(a, c)
    assert base.identity()["weights_sha256"] == cls.identity()["weights_sha256"] is not None
    assert base.identity() != cls.identity()
    with pytest.raises(ConfigurationError):
        TextEncoder(DenseConfig(model=str(tiny_bert), layer=9), device="cpu")


def test_search_is_exact_inner_product_with_max_pooling(encoder: object) -> None:
    index = DenseIndex.build(docs(list(TEXTS)), encoder.config, encoder=encoder)  # type: ignore[attr-defined]
    query = "consent for cookies"
    qv = encoder.encode([query])[0]  # type: ignore[attr-defined]
    scores = index.scores(query)
    for pos, _doc_id in enumerate(index.ids):
        rows = index.owner == pos
        assert scores[pos] == pytest.approx(float((index.vectors[rows] @ qv).max()), abs=1e-5)
    hits = index.search(query, k=3)
    assert [h.id for h in hits] == [index.ids[i] for i in np.argsort(-scores, kind="stable")[:3]]


def test_add_remove_without_reembedding(encoder: object) -> None:
    index = DenseIndex.build(docs(["cookies", "breach", "long"]), encoder.config, encoder=encoder)  # type: ignore[attr-defined]
    before = {d: index.vectors[index.owner == i].copy() for i, d in enumerate(index.ids)}
    calls: list[int] = []
    real = encoder.encode_chunks  # type: ignore[attr-defined]

    def counting(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        calls.append(len(texts))
        return real(texts)

    encoder.encode_chunks = counting  # type: ignore[attr-defined]
    try:
        index.add(docs(["marketing", "cookies"]))  # cookies unchanged: not re-embedded
        index.remove(["breach"])
    finally:
        del encoder.encode_chunks  # type: ignore[attr-defined]
    assert calls == [1]
    assert index.ids == ["cookies", "long", "marketing"]
    for i, d in enumerate(index.ids[:2]):
        np.testing.assert_array_equal(index.vectors[index.owner == i], before[d])
    fresh = DenseIndex.build(docs(["cookies", "long", "marketing"]), encoder.config, encoder=encoder)  # type: ignore[attr-defined]
    np.testing.assert_allclose(index.scores("email consent"), fresh.scores("email consent"), atol=1e-5)


def test_persist_round_trip_and_identity_check(encoder: object, tmp_path: Path, tiny_bert: Path) -> None:
    index = DenseIndex.build(docs(list(TEXTS)), encoder.config, encoder=encoder)  # type: ignore[attr-defined]
    index.save(tmp_path / "dense")
    loaded = DenseIndex.load(tmp_path / "dense")  # encoder loaded lazily from the stored config
    np.testing.assert_array_equal(loaded.vectors, index.vectors)
    np.testing.assert_allclose(loaded.scores("data breach"), index.scores("data breach"), atol=1e-5)
    loaded.add(docs(["retention"]))  # already there and unchanged: nothing happens
    assert loaded.ids == index.ids
    from compliance.retrieval.encoding import TextEncoder

    other = TextEncoder(
        DenseConfig(model=str(tiny_bert), max_length=16, stride=4, pooling="cls"), device="cpu"
    )
    with pytest.raises(RetrievalError, match="not the one"):
        DenseIndex.load(tmp_path / "dense", encoder=other)


def test_max_query_aggregation_scores_best_query_chunk(encoder: object, tiny_bert: Path) -> None:
    from compliance.retrieval.encoding import TextEncoder

    cfg = DenseConfig(model=str(tiny_bert), max_length=16, stride=0, query_aggregation="max")
    enc = TextEncoder(cfg, device="cpu")
    index = DenseIndex.build(docs(list(TEXTS)), cfg, encoder=enc)
    query = TEXTS["long"] + " " + TEXTS["cookies"]
    qv, _qowner = enc.encode_chunks([query])
    expected = max_over = qv @ index.vectors.T
    doc_scores = [max_over[:, index.owner == i].max() for i in range(len(index.ids))]
    np.testing.assert_allclose(index.scores(query), doc_scores, atol=1e-5)
    assert expected.shape[0] > 1


@pytest.mark.parametrize("aggregation", ["mean", "max"])
def test_a_union_query_pools_its_parts_chunks_without_encoding_its_text(
    tiny_bert: Path, aggregation: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A query made of other queries (a whole law of its articles) is scored from their chunk vectors: one
    encoder pass over the parts, and the union scores as the mean (or best) of exactly those chunks."""
    from compliance.retrieval.encoding import TextEncoder, aggregate_chunks

    cfg = DenseConfig(model=str(tiny_bert), max_length=16, stride=4, query_aggregation=aggregation)  # type: ignore[arg-type]
    enc = TextEncoder(cfg, device="cpu")
    index = DenseIndex.build(docs(list(TEXTS)), cfg, encoder=enc)
    parts = [TEXTS["long"], TEXTS["cookies"], TEXTS["breach"]]
    vecs, owner = enc.encode_chunks(parts)
    encoded: list[list[str]] = []
    original = TextEncoder.encode_chunks

    def counting(self: TextEncoder, texts: list[str]) -> object:
        encoded.append(list(texts))
        return original(self, texts)

    monkeypatch.setattr(TextEncoder, "encode_chunks", counting)
    scores = index.scores_many(parts, [[0, 1], [2]])
    assert encoded == [parts]  # the unions cost no encoder pass
    assert scores.shape == (5, len(index.ids))
    np.testing.assert_allclose(scores[:3], index.scores_many(parts), atol=1e-5)
    chunks = vecs[np.isin(owner, [0, 1])]
    if aggregation == "mean":
        pooled = aggregate_chunks(chunks, np.zeros(len(chunks), dtype=np.int64), 1)[0]
        doc = [max((index.vectors[index.owner == i] @ pooled).max(), -np.inf) for i in range(len(index.ids))]
    else:
        sims = chunks @ index.vectors.T
        doc = [sims[:, index.owner == i].max() for i in range(len(index.ids))]
    np.testing.assert_allclose(scores[3], doc, atol=1e-5)
    np.testing.assert_allclose(scores[4], scores[2], atol=1e-5)  # a union of one query is that query


def test_document_vectors_are_the_normalised_mean_of_each_documents_chunks(encoder: object) -> None:
    """A long document's several chunks give one vector, as a text's chunks do everywhere (aggregate_chunks): in
    the order asked, after a removal too; an unknown id is a KeyError."""
    from compliance.runtime import aggregate_chunks

    index = DenseIndex.build(
        docs(["cookies", "long", "breach", "retention"]), encoder.config, encoder=encoder
    )  # type: ignore[attr-defined]
    index.remove(["breach"])
    asked = ["retention", "long"]
    got = index.document_vectors(asked)
    vecs, owner = encoder.encode_chunks([TEXTS[n] for n in asked])  # type: ignore[attr-defined]
    assert owner.tolist().count(1) > 1  # the long text has several chunks
    np.testing.assert_allclose(got, aggregate_chunks(vecs, owner, 2), atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, rtol=1e-5)
    assert index.document_vectors([]).shape == (0, encoder.dim)  # type: ignore[attr-defined]
    with pytest.raises(KeyError):
        index.document_vectors(["breach"])
