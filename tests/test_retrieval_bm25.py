"""BM25: oracle against rank_bm25, denoising, passage max-pooling, persistence, incremental updates."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from compliance.errors import RetrievalError
from compliance.retrieval.analysis import Analyzer, english_stopwords
from compliance.retrieval.bm25 import BM25Index
from compliance.retrieval.config import BM25Config, TokenizerConfig
from compliance.retrieval.passages import max_pool
from compliance.retrieval.types import Document
from compliance.text import split_passages

RAW = TokenizerConfig(stopwords=False, idf_denoise=False, stem=False, digits=False, min_length=1)

# No term occurs in more than half of the documents, so Robertson's idf is positive everywhere and rank_bm25's
# epsilon floor for negative idf never applies.
ORACLE_CORPUS = [
    "cookies stored in terminal equipment need consent",
    "traffic data must be erased or made anonymous",
    "location data other than traffic data processed only when anonymous",
    "unsolicited communications for direct marketing need prior consent",
    "a personal data breach is notified to the competent national authority",
    "security of processing appropriate technical and organisational measures",
    "the subscriber may object to itemised billing",
    "directories of subscribers require information to subscribers",
    "calling line identification can be prevented by the calling user",
    "automatic call forwarding can be stopped by the subscriber",
]
ORACLE_QUERIES = [
    "consent for cookies and direct marketing",
    "traffic data anonymous traffic",
    "breach notified to authority",
    "subscriber subscriber calling",
    "nothing matches here",
]


def docs_of(texts: list[str]) -> list[Document]:
    return [Document(str(i), t) for i, t in enumerate(texts)]


@pytest.mark.parametrize(("k1", "b"), [(1.5, 0.75), (1.2, 0.3), (2.0, 1.0), (0.5, 0.0)])
def test_oracle_matches_rank_bm25_okapi(k1: float, b: float) -> None:
    from rank_bm25 import BM25Okapi

    tokenized = [t.split() for t in ORACLE_CORPUS]
    df: dict[str, int] = {}
    for toks in tokenized:
        for w in set(toks):
            df[w] = df.get(w, 0) + 1
    assert max(df.values()) < len(ORACLE_CORPUS) / 2  # the oracle's precondition
    reference = BM25Okapi(tokenized, k1=k1, b=b)
    index = BM25Index.build(
        docs_of(ORACLE_CORPUS), BM25Config(k1=k1, b=b, method="atire", idf_method="robertson"), RAW
    )
    for query in ORACLE_QUERIES:
        ours = index.scores(query)
        theirs = reference.get_scores(query.split())
        np.testing.assert_allclose(ours, theirs, atol=1e-6, rtol=0)
    # ranking API agrees with the scores
    query = "traffic data anonymous traffic"
    expected = np.argsort(-reference.get_scores(query.split()), kind="stable")[:3]
    assert [h.id for h in index.search(query, k=3)] == [str(i) for i in expected]
    assert index.search("nothing matches here", k=3) == []  # documents without a shared term are left out


def test_other_variants_differ_from_okapi() -> None:
    """The lucene variant (bm25s' default) is *not* BM25Okapi: it must not pass the oracle by accident."""
    from rank_bm25 import BM25Okapi

    reference = BM25Okapi([t.split() for t in ORACLE_CORPUS])
    lucene = BM25Index.build(docs_of(ORACLE_CORPUS), BM25Config(k1=1.5, b=0.75, method="lucene"), RAW)
    assert (
        np.abs(lucene.scores(ORACLE_QUERIES[0]) - reference.get_scores(ORACLE_QUERIES[0].split())).max()
        > 1e-3
    )


def test_frequent_terms_get_zero_idf_not_epsilon() -> None:
    """Documented divergence: bm25s' Robertson idf clamps at 0 where rank_bm25 floors at ε·mean idf."""
    corpus = ["the cat", "the dog", "the bird", "a fish"]
    index = BM25Index.build(docs_of(corpus), BM25Config(method="atire", idf_method="robertson"), RAW)
    assert index.scores("the").max() == 0.0


def test_tokenizer_filters() -> None:
    analyzer = Analyzer(TokenizerConfig(idf_denoise=False, stem=False))
    toks = analyzer.tokenize("The Controller shall, within 72 hours (Art. 33(1)), notify the authority!")
    assert toks == ["controller", "shall", "within", "hours", "art", "notify", "authority"]
    assert "the" in english_stopwords()
    stemmed = Analyzer(TokenizerConfig(idf_denoise=False)).tokenize("cookies notifications processing")
    assert stemmed == ["cooki", "notif", "process"]


def test_word_filters_equal_a_token_by_token_reading() -> None:
    """The analyzer filters its words as whole lists; the result is what reading them one token at a time gives:
    curly apostrophes made straight, tokens with a digit dropped (Unicode digits too), short words dropped, no
    token without a letter or digit, and the filters off when the configuration says so."""
    import re

    word = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")

    def one_by_one(cfg: TokenizerConfig, text: str) -> list[str]:
        text = text.lower() if cfg.lowercase else text
        out = []
        for m in word.finditer(text):
            w = m.group(0).replace("’", "'")
            if cfg.digits and re.search(r"\d", w):
                continue
            if len(w) >= cfg.min_length and re.search(r"[^\W_]", w):
                out.append(w)
        return out

    texts = [
        "Don’t store 3rd-party data_x in log’s; ٣٤ rows, ²squared, l'été 2024 — Art. 33(1)!",
        "___ --- ... ’’ 12 a b",
        "",
        "The Controller shall, within 72 hours, notify the authority.",
    ]
    configs = [
        TokenizerConfig(),
        TokenizerConfig(digits=False),
        TokenizerConfig(lowercase=False, min_length=3),
        TokenizerConfig(punctuation=False),
    ]
    for cfg in configs:
        for text in texts:
            assert Analyzer(cfg).words(text) == one_by_one(cfg, text), (cfg, text)
    assert Analyzer(TokenizerConfig()).words("Don’t keep 3rd copies")[0] == "don't"


def test_idf_denoising_drops_words_rarer_than_no_stop_word() -> None:
    # "shall" is in every document, as frequent as "the": its idf is below the stop words' mean idf
    corpus = [
        "the controller shall notify the authority of a breach",
        "the processor shall keep a record of processing",
        "member states shall lay down rules on penalties",
        "the data subject shall have the right to erasure of data",
        "cookies shall require consent of the user",
        "the provider shall take security measures",
    ]
    analyzer = Analyzer(TokenizerConfig(stem=False)).fit(corpus)
    assert analyzer.stopword_idf is not None
    assert "shall" in analyzer.noise_terms
    assert "cookies" not in analyzer.noise_terms
    assert "shall" not in analyzer.tokenize("the controller shall notify")
    # state survives a round trip
    again = Analyzer.from_state(analyzer.state())
    assert again.noise_terms == analyzer.noise_terms
    assert again.tokenize("the controller shall notify") == analyzer.tokenize("the controller shall notify")
    # without stop words in the corpus nothing is removed
    assert (
        Analyzer(TokenizerConfig(stem=False)).fit(["cookies consent", "consent marketing"]).noise_terms
        == set()
    )


def test_split_passages_keeps_every_word_and_respects_size() -> None:
    text = "\n\n".join(" ".join(f"w{p}_{i}" for i in range(n)) for p, n in enumerate([5, 7, 30, 3]))
    passages = split_passages(text, size=12, overlap=4)
    assert all(len(p.split()) <= 12 for p in passages)
    words = {w for p in passages for w in p.split()}
    assert words == set(text.split())
    assert passages[0].split() == [f"w0_{i}" for i in range(5)] + [f"w1_{i}" for i in range(7)]
    # the long paragraph is windowed with overlap 4 (step 8)
    assert passages[1].split()[8:12] == passages[2].split()[:4]
    assert split_passages("") == [""]


def test_max_pool_1d_and_2d() -> None:
    scores = np.array([0.1, 0.9, 0.3, 0.5, 0.2], dtype=np.float32)
    owner = np.array([0, 0, 1, 1, 3])
    np.testing.assert_allclose(max_pool(scores, owner, 4, fill=0.0), [0.9, 0.5, 0.0, 0.2])
    two = np.vstack([scores, scores[::-1]])
    np.testing.assert_allclose(
        max_pool(two, owner, 4, fill=0.0), [[0.9, 0.5, 0.0, 0.2], [0.5, 0.9, 0.0, 0.1]]
    )
    unsorted = np.array([1, 0, 1, 0, 3])
    np.testing.assert_allclose(max_pool(two, unsorted, 4, fill=0.0)[0], [0.9, 0.3, 0.0, 0.2])


def test_passage_mode_scores_are_max_over_passages() -> None:
    long_doc = ("security measures encryption backup " * 10) + "\n\n" + ("cookies consent terminal " * 10)
    docs = [
        Document("long", long_doc),
        Document("short", "cookies need consent"),
        Document("x", "traffic data"),
    ]
    cfg = BM25Config(mode="passage", passage_words=20, passage_overlap=0)
    index = BM25Index.build(docs, cfg, RAW)
    unit = index.unit_scores("cookies consent")
    doc = index.scores("cookies consent")
    owner = index._owner
    for pos in range(3):
        assert doc[pos] == pytest.approx(unit[owner == pos].max())
    assert (owner == 0).sum() > 1


def test_term_contributions_sum_to_the_score() -> None:
    index = BM25Index.build(docs_of(ORACLE_CORPUS), BM25Config(), TokenizerConfig(idf_denoise=False))
    query = "consent for cookies stored in terminal equipment"
    terms = index.term_contributions(query, "0", n=20)
    assert {t for t, _ in terms} == {"consent", "cooki", "store", "termin", "equip"}
    assert sum(w for _, w in terms) == pytest.approx(float(index.scores(query)[0]), rel=1e-5)
    assert terms == sorted(terms, key=lambda x: -x[1])


def test_save_load_round_trip(tmp_path: Path) -> None:
    index = BM25Index.build(
        docs_of(ORACLE_CORPUS), BM25Config(mode="passage", passage_words=8, passage_overlap=2)
    )
    index.save(tmp_path / "idx")
    loaded = BM25Index.load(tmp_path / "idx")
    assert loaded.ids == index.ids
    assert loaded.config == index.config
    assert loaded.analyzer.noise_terms == index.analyzer.noise_terms
    for q in ORACLE_QUERIES:
        np.testing.assert_allclose(loaded.scores(q), index.scores(q), atol=1e-6)
    import json

    cfg = json.loads((tmp_path / "idx" / "config.json").read_text())
    assert (cfg["kind"], cfg["format_version"]) == ("bm25", 2) and "package_version" in cfg
    assert cfg["provenance"] == {"corpus_checksum": index.checksum}
    assert "k1=1.2" in (tmp_path / "idx" / "MODEL_CARD.md").read_text()


def test_format_1_index_loads(tmp_path: Path) -> None:
    """Format 1 kept the corpus checksum beside the parameters and had no provenance."""
    import json

    index = BM25Index.build(docs_of(ORACLE_CORPUS))
    index.save(tmp_path / "idx")
    cfg = json.loads((tmp_path / "idx" / "config.json").read_text())
    old = {k: v for k, v in cfg.items() if k != "provenance"}
    old.update(format_version=1, corpus_checksum=cfg["provenance"]["corpus_checksum"])
    (tmp_path / "idx" / "config.json").write_text(json.dumps(old))
    loaded = BM25Index.load(tmp_path / "idx")
    for q in ORACLE_QUERIES:
        np.testing.assert_array_equal(loaded.scores(q), index.scores(q))
    old["corpus_checksum"] = "0" * 64
    (tmp_path / "idx" / "config.json").write_text(json.dumps(old))
    with pytest.raises(RetrievalError, match="checksum"):
        BM25Index.load(tmp_path / "idx")


@pytest.mark.parametrize(
    ("change", "message"),
    [({"format_version": 3}, "newer version of compliance"), ({"kind": "dense"}, "'dense' artifact")],
)
def test_newer_or_foreign_index_says_rebuild(tmp_path: Path, change: dict[str, object], message: str) -> None:
    import json

    BM25Index.build(docs_of(ORACLE_CORPUS)).save(tmp_path / "idx")
    cfg = json.loads((tmp_path / "idx" / "config.json").read_text())
    (tmp_path / "idx" / "config.json").write_text(json.dumps({**cfg, **change}))
    with pytest.raises(RetrievalError, match=message) as info:
        BM25Index.load(tmp_path / "idx")
    assert "rebuild the index" in str(info.value)


def test_load_rejects_tampered_or_foreign_directories(tmp_path: Path) -> None:
    index = BM25Index.build(docs_of(ORACLE_CORPUS))
    index.save(tmp_path / "idx")
    (tmp_path / "idx" / "hashes.json").write_text('{"0": "deadbeef"}')
    with pytest.raises(RetrievalError, match="checksum"):
        BM25Index.load(tmp_path / "idx")
    with pytest.raises(RetrievalError):
        BM25Index.load(tmp_path / "nowhere")


def test_incremental_add_remove_equals_fresh_build() -> None:
    analyzer = Analyzer(TokenizerConfig(idf_denoise=False))
    cfg = BM25Config(mode="passage", passage_words=8, passage_overlap=1)
    docs = docs_of(ORACLE_CORPUS)
    index = BM25Index.build(docs[:6], cfg, analyzer=analyzer)
    index.add(docs[6:])
    index.remove(["2", "4", "missing"])
    index.add([Document("0", "cookies changed text about consent")])  # replaced: moves to the end
    expected_docs = [d for d in docs if d.id not in {"0", "2", "4"}] + [
        Document("0", "cookies changed text about consent")
    ]
    fresh = BM25Index.build(expected_docs, cfg, analyzer=analyzer)
    assert index.ids == fresh.ids
    for q in ORACLE_QUERIES:
        np.testing.assert_allclose(index.scores(q), fresh.scores(q), atol=1e-6)
    with pytest.raises(RetrievalError, match="duplicate"):
        BM25Index.build([Document("a", "x"), Document("a", "y")])


def test_fit_transform_equals_fit_then_tokenize() -> None:
    a = Analyzer(TokenizerConfig())
    units = a.fit_transform(ORACLE_CORPUS + ["the the of and data data data"] * 3)
    b = Analyzer(TokenizerConfig()).fit(ORACLE_CORPUS + ["the the of and data data data"] * 3)
    assert a.noise_terms == b.noise_terms
    assert units == b.tokenize_many(ORACLE_CORPUS + ["the the of and data data data"] * 3)


def test_a_loaded_index_reads_its_units_only_when_it_changes(tmp_path: Path) -> None:
    """Loading keeps the saved token arrays (a search needs the bm25s model only); term contributions read one
    unit from them; adding a document after loading gives the index a fresh build would give."""
    corpus = docs_of(ORACLE_CORPUS)
    config = BM25Config(mode="passage", passage_words=8, passage_overlap=2)
    index = BM25Index.build(corpus[:-1], config)
    index.save(tmp_path / "idx")
    loaded = BM25Index.load(tmp_path / "idx")
    assert loaded._unit_list is None
    for q in ORACLE_QUERIES:
        np.testing.assert_allclose(loaded.scores(q), index.scores(q), atol=1e-6)
        assert loaded.term_contributions(q, "0") == index.term_contributions(q, "0")
    assert loaded._unit_list is None  # searching did not unpack the units
    loaded.add(corpus[-1:])
    index.add(corpus[-1:])
    assert loaded._units == index._units
    for q in ORACLE_QUERIES:
        np.testing.assert_allclose(loaded.scores(q), index.scores(q), atol=1e-6)
