"""Link decision: F1-optimal threshold (hand-checked), abstain band, graded pairs, tiny-BERT training round trip."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from compliance.errors import ConfigurationError, ModelError, ModelNotFoundError
from compliance.linking.decision import (
    LinkDecisionConfig,
    LinkDecisionModel,
    abstain_band,
    decide,
    f1_optimal_threshold,
    train_link_decision,
)
from compliance.linking.pairs import grade_of, law_passages, make_graded_pairs
from compliance.rules.corpus import Law, Provision


# -- threshold logic -------------------------------------------------------------------------------------------
def test_seed_002_example() -> None:
    # seed 002 §V-B: labels {1, 0, 1}, cosines {0.95, 0.25, 0.57} -> best threshold 0.57
    choice = f1_optimal_threshold([0.95, 0.25, 0.57], [1, 0, 1])
    assert choice.threshold == pytest.approx(0.57)
    assert choice.f1 == pytest.approx(1.0)
    assert (choice.precision, choice.recall) == (1.0, 1.0)


def test_hand_checked_threshold() -> None:
    # t=.9: P1 R1/3 F.5 | t=.8: P.5 R1/3 F.4 | t=.7: P2/3 R2/3 F2/3 | t=.6: P3/4 R1 F6/7 | t=.5: P.6 R1 F.75
    choice = f1_optimal_threshold([0.9, 0.8, 0.7, 0.6, 0.5, 0.4], [1, 0, 1, 1, 0, 0])
    assert choice.threshold == pytest.approx(0.6)
    assert choice.f1 == pytest.approx(6 / 7)
    assert choice.precision == pytest.approx(0.75)
    assert choice.recall == pytest.approx(1.0)
    assert (choice.positives, choice.total) == (3, 6)


def test_tied_scores_are_one_threshold() -> None:
    # both 0.5s are predicted together: t=.5 -> P.5 R.5 F.5 ; t=.2 -> P2/3 R1 F.8
    choice = f1_optimal_threshold([0.5, 0.5, 0.2], [1, 0, 1])
    assert choice.threshold == pytest.approx(0.2)
    assert choice.f1 == pytest.approx(0.8)


def test_equal_f1_prefers_higher_threshold() -> None:
    # t=.9: P1 R.5 F2/3 ; t=.3: TP2 of 4 -> P.5 R1 F2/3 -> tie, keep .9
    choice = f1_optimal_threshold([0.9, 0.8, 0.5, 0.3], [1, 0, 0, 1])
    assert choice.f1 == pytest.approx(2 / 3)
    assert choice.threshold == pytest.approx(0.9)


def test_threshold_matches_brute_force_on_random_scores() -> None:
    rng = np.random.default_rng(0)
    scores = np.round(rng.random(200), 2)
    labels = (rng.random(200) < scores).astype(int)

    def f1_at(t: float) -> float:
        pred = scores >= t
        tp = int((pred & (labels == 1)).sum())
        return 0.0 if tp == 0 else 2 * tp / (pred.sum() + labels.sum())

    best = max(f1_at(t) for t in scores)
    choice = f1_optimal_threshold(scores, labels)
    assert choice.f1 == pytest.approx(best)
    assert f1_at(choice.threshold) == pytest.approx(best)


def test_threshold_input_errors() -> None:
    with pytest.raises(ConfigurationError):
        f1_optimal_threshold([0.1, 0.2], [0, 0])
    with pytest.raises(ConfigurationError):
        f1_optimal_threshold([], [])
    with pytest.raises(ConfigurationError):
        f1_optimal_threshold([0.1], [1, 0])


def test_abstain_band_and_decide() -> None:
    scores = [0.9, 0.8, 0.6, 0.3, 0.7, 0.1]
    labels = [1, 1, 1, 1, 0, 0]
    # 75% recall needs the 3rd best positive (0.6); clipped at threshold - max_band
    assert abstain_band(scores, labels, 0.8, review_recall=0.75, max_band=0.5) == pytest.approx(0.6)
    assert abstain_band(scores, labels, 0.8, review_recall=0.75, max_band=0.15) == pytest.approx(0.65)
    # recall already reached above the threshold: empty band
    assert abstain_band(scores, labels, 0.6, review_recall=0.5) == pytest.approx(0.6)
    assert decide(0.8, 0.8, 0.65) == "propose"
    assert decide(0.7, 0.8, 0.65) == "review"
    assert decide(0.65, 0.8, 0.65) == "review"
    assert decide(0.64, 0.8, 0.65) == "drop"


# -- graded pairs ----------------------------------------------------------------------------------------------
TOPICS = {
    "alpha": ["cookie", "consent", "terminal", "browser", "storage", "tracking", "device", "information"],
    "beta": ["payment", "transfer", "account", "bank", "fund", "fee", "transaction", "provider"],
    "gamma": ["breach", "notify", "authority", "incident", "security", "risk", "hours", "report"],
    "delta": ["employee", "badge", "desk", "office", "visitor", "access", "door", "key"],
}


def make_law(name: str, topics: list[str], seed: int) -> Law:
    """A law with 2 chapters × 3 articles × 3 paragraphs; each chapter has its own vocabulary."""
    rng = random.Random(seed)
    provs: list[Provision] = []
    art_no = 0
    for c, topic in enumerate(topics, start=1):
        chapter = f"chp:{c}"
        provs.append(Provision("chapter", chapter, str(c), "", f"Chapter {c}"))
        for _ in range(3):
            art_no += 1
            art = f"art:{art_no}"
            provs.append(Provision("article", art, str(art_no), "", f"Article {art_no}", chapter))
            own = rng.sample(TOPICS[topic], 3)
            for p in range(1, 4):
                words = [rng.choice(own if rng.random() < 0.6 else TOPICS[topic]) for _ in range(30)]
                provs.append(Provision("paragraph", f"{art}/par:{p}", str(p), " ".join(words), None, art))
    return Law(f"ID-{name}", name, f"The {name} act", "EU", "directive", tuple(provs))


def test_law_passages_and_grades() -> None:
    law = make_law("one", ["alpha", "beta"], 1)
    passages = law_passages(law)
    assert len(passages) == 18
    p = {x.key: x for x in passages}
    assert grade_of(p["art:1/par:1"], p["art:1/par:2"]) == 3
    assert grade_of(p["art:1/par:1"], p["art:2/par:1"]) == 2
    assert grade_of(p["art:1/par:1"], p["art:4/par:1"]) == 1
    other = law_passages(make_law("two", ["gamma", "delta"], 2))[0]
    assert grade_of(p["art:1/par:1"], other) == 0


def test_fallback_blocks_for_articles_without_paragraphs() -> None:
    text = "\n\n".join(f"Block {i} " + "word " * 20 for i in range(4)) + "\n\n▼M2 end"
    law = Law("X", "x", "X", "EU", "directive", (Provision("article", "art:1", "1", text),))
    passages = law_passages(law, min_words=20)
    assert len(passages) == 4
    assert all(ps.article == "art:1" and ps.chapter is None for ps in passages)
    assert "▼" not in " ".join(ps.text for ps in passages)


def test_make_graded_pairs_split_by_article() -> None:
    laws = [make_law("one", ["alpha", "beta"], 1), make_law("two", ["gamma", "delta"], 2)]
    pairs = make_graded_pairs(laws, train_per_grade=10, heldout_per_grade=5, heldout_fraction=0.3, seed=3)
    counts = pairs.counts()
    assert set(counts["train"]) == {"0", "1", "2", "3"}
    train_articles = {(p.law, p.article) for pair in pairs.train for p in (pair.a, pair.b)}
    held_articles = {(p.law, p.article) for pair in pairs.heldout for p in (pair.a, pair.b)}
    assert train_articles and held_articles
    assert not train_articles & held_articles  # no leakage
    for pair in (*pairs.train, *pairs.heldout):
        assert pair.grade == grade_of(pair.a, pair.b)
        assert pair.target == pytest.approx(pair.grade / 3)
    assert pairs.provenance["laws"][0]["short_name"] == "one"


# -- training round trip on a tiny random BERT -----------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_st(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised 2-layer BERT wrapped as a sentence-transformers model (mean pooling)."""
    import torch
    from sentence_transformers import SentenceTransformer, models
    from transformers import BertConfig, BertModel, BertTokenizerFast

    torch.manual_seed(0)
    root = tmp_path_factory.mktemp("tiny")
    from compliance.runtime import default_base_model_path

    hf = root / "hf"
    tokenizer = BertTokenizerFast.from_pretrained(str(default_base_model_path()))  # real vocabulary
    tokenizer.save_pretrained(str(hf))
    cfg = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    BertModel(cfg).save_pretrained(str(hf))
    word = models.Transformer(str(hf), max_seq_length=48)
    pool = models.Pooling(word.get_embedding_dimension(), pooling_mode="mean")
    path = root / "st"
    SentenceTransformer(modules=[word, pool], device="cpu").save(str(path))
    return path


def test_train_save_load_round_trip(tiny_st: Path, tmp_path: Path) -> None:
    import torch

    laws = [make_law("one", ["alpha", "beta"], 1), make_law("two", ["gamma", "delta"], 2)]
    pairs = make_graded_pairs(laws, train_per_grade=16, heldout_per_grade=8, heldout_fraction=0.3, seed=3)
    cfg = LinkDecisionConfig(
        base_model=str(tiny_st),
        batch_size=8,
        max_steps=4,
        learning_rate=1e-3,
        max_seq_length=48,
        keep_best=False,
    )
    before = LinkDecisionModel.from_base(str(tiny_st), threshold=0.5, lower=0.4)
    w0 = next(before.encoder.parameters()).detach().clone()
    model = train_link_decision(pairs=pairs, config=cfg, out_dir=tmp_path / "dec")
    assert not torch.equal(w0, next(model.encoder.parameters()).detach())  # training changed the weights
    assert model.info["training"]["steps"] == 4

    config = json.loads((tmp_path / "dec" / "config.json").read_text())
    assert config["kind"] == "link-decision" and config["format_version"] == 3
    assert config["grading_scheme"]["3"] == "same article"
    assert config["band"]["upper"] == config["threshold"]
    assert config["band"]["lower"] <= config["threshold"]
    assert config["data"]["laws"][1]["short_name"] == "two"
    assert set(config["metrics"]) == {"heldout", "heldout_before_fine_tuning"}
    assert "package_version" in config
    provenance = config["provenance"]
    assert len(provenance["training_data_sha256"]) == 64
    assert provenance["laws"] == {"one": "", "two": ""}  # these test laws have no source checksum
    assert len(provenance["base_model_sha256"]) == 64  # the tiny model's weights
    assert "Grading scheme" in (tmp_path / "dec" / "MODEL_CARD.md").read_text()
    assert not (tmp_path / "dec" / "README.md").exists()

    loaded = LinkDecisionModel.load(tmp_path / "dec")
    assert loaded.threshold == pytest.approx(model.threshold)
    # the stored threshold is the F1-optimal one on the held-out pairs, recomputed from the loaded model
    scores = loaded.score_pairs([p.a.text for p in pairs.heldout], [p.b.text for p in pairs.heldout])
    labels = [int(p.grade >= cfg.relevant_grade) for p in pairs.heldout]
    assert f1_optimal_threshold(scores, labels).threshold == pytest.approx(loaded.threshold, abs=1e-5)
    assert loaded.decide(loaded.threshold) == "propose"
    assert loaded.score_matrix(["cookie consent"], ["cookie consent", "bank fee"]).shape == (1, 2)
    assert model.info["training"]["kept"] == "fine-tuned"

    # keep_best: the kept weights are never worse on the held-out pairs than the base model
    best = train_link_decision(pairs=pairs, config=replace(cfg, keep_best=True, learning_rate=5e-2))
    metrics = best.info["metrics"]
    assert metrics["heldout"]["f1"] >= metrics["heldout_before_fine_tuning"]["f1"]
    assert best.info["training"]["kept"] in {"fine-tuned", "base (fine-tuning lowered held-out F1)"}


def test_calibration_only_refers_to_the_base_encoder(tiny_st: Path, tmp_path: Path) -> None:
    """max_steps=0 keeps the base weights: the artifact names the base encoder and its sha256 instead of a copy."""
    from compliance.artifacts import weights_sha256

    laws = [make_law("one", ["alpha", "beta"], 1), make_law("two", ["gamma", "delta"], 2)]
    pairs = make_graded_pairs(laws, train_per_grade=8, heldout_per_grade=8, heldout_fraction=0.3, seed=3)
    cfg = LinkDecisionConfig(base_model=str(tiny_st), max_steps=0, max_seq_length=48)
    model = train_link_decision(pairs=pairs, config=cfg, out_dir=tmp_path / "dec")
    config = json.loads((tmp_path / "dec" / "config.json").read_text())
    assert not (tmp_path / "dec" / "model").exists()
    assert config["encoder"]["source"] == "base"
    assert weights_sha256(tiny_st) and config["encoder"]["base_model_sha256"] == weights_sha256(tiny_st)
    loaded = LinkDecisionModel.load(tmp_path / "dec")
    assert loaded.threshold == pytest.approx(model.threshold)
    a, b = [p.a.text for p in pairs.heldout], [p.b.text for p in pairs.heldout]
    assert np.allclose(loaded.score_pairs(a, b), model.score_pairs(a, b), atol=1e-5)
    config["encoder"]["base_model_sha256"] = "0" * 64
    (tmp_path / "dec" / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match="base weights"):
        LinkDecisionModel.load(tmp_path / "dec")


def test_load_missing_artifact(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match="train-decision"):
        LinkDecisionModel.load(tmp_path / "nothing")


def _as_format_1(directory: Path) -> None:
    """Rewrite a saved decision directory the way format 1 wrote it: no format_version, no provenance, the card in
    README.md."""
    config = json.loads((directory / "config.json").read_text())
    del config["format_version"], config["provenance"]
    (directory / "config.json").write_text(json.dumps(config, indent=2))
    (directory / "MODEL_CARD.md").rename(directory / "README.md")


def test_format_1_directory_loads_and_is_replaced_on_save(tiny_st: Path, tmp_path: Path) -> None:
    model = LinkDecisionModel.from_base(str(tiny_st), threshold=0.61, lower=0.5)
    model.save(tmp_path / "dec")
    _as_format_1(tmp_path / "dec")
    old = LinkDecisionModel.load(tmp_path / "dec")
    assert (old.threshold, old.lower) == (0.61, 0.5)
    texts = ["cookie consent", "bank fee"]
    np.testing.assert_array_equal(old.encode(texts), model.encode(texts))
    old.save(tmp_path / "dec")  # saving again writes the current format and drops the old card
    config = json.loads((tmp_path / "dec" / "config.json").read_text())
    assert config["format_version"] == 3 and config["threshold"] == 0.61
    assert (tmp_path / "dec" / "MODEL_CARD.md").is_file() and not (tmp_path / "dec" / "README.md").exists()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"format_version": 99}, "newer version of compliance"),
        ({"kind": "gdpr-classifier"}, "'gdpr-classifier' artifact, not a link-decision model"),
    ],
)
def test_foreign_or_newer_directory_says_how_to_rebuild(
    tiny_st: Path, tmp_path: Path, change: dict[str, object], message: str
) -> None:
    LinkDecisionModel.from_base(str(tiny_st), threshold=0.6, lower=0.5).save(tmp_path / "dec")
    config = json.loads((tmp_path / "dec" / "config.json").read_text())
    (tmp_path / "dec" / "config.json").write_text(json.dumps({**config, **change}))
    with pytest.raises(ModelError, match=message) as info:
        LinkDecisionModel.load(tmp_path / "dec")
    assert "compliance alerts train-decision" in str(info.value)


def test_config_validation() -> None:
    with pytest.raises(ConfigurationError):
        LinkDecisionConfig(loss="mse")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError):
        LinkDecisionConfig(relevant_grade=0)


def test_freeze_layers_keeps_lower_weights(tiny_st: Path) -> None:
    import torch

    laws = [make_law("one", ["alpha", "beta"], 1), make_law("two", ["gamma", "delta"], 2)]
    pairs = make_graded_pairs(laws, train_per_grade=8, heldout_per_grade=6, heldout_fraction=0.3, seed=5)
    base = LinkDecisionModel.from_base(str(tiny_st), threshold=0.5, lower=0.4).encoder[0].auto_model
    emb0 = base.embeddings.word_embeddings.weight.detach().clone()
    low0 = next(base.encoder.layer[0].parameters()).detach().clone()
    top0 = next(base.encoder.layer[1].parameters()).detach().clone()
    cfg = LinkDecisionConfig(
        base_model=str(tiny_st),
        batch_size=8,
        max_steps=2,
        learning_rate=1e-2,
        max_seq_length=48,
        freeze_layers=1,
    )
    auto = train_link_decision(pairs=pairs, config=cfg).encoder[0].auto_model
    assert torch.equal(emb0, auto.embeddings.word_embeddings.weight)
    assert torch.equal(low0, next(auto.encoder.layer[0].parameters()))
    assert not torch.equal(top0, next(auto.encoder.layer[1].parameters()))


# -- the GDPR classifier's encoder as the bi-encoder ----------------------------------------------------------
@pytest.mark.usefixtures("shipped_models")
def test_classifier_encoder_is_the_bi_encoder(tmp_path: Path) -> None:
    """``shipped:gdpr-classifier`` (and ``gdpr-classifier``, the classifier in use) loads the classifier's
    fine-tuned encoder — adapters merged into the base — with mean pooling: the same vectors as the classifier's
    own encoder; a calibration-only artifact refers to it by name and adapter checksum and loads from that."""
    import torch

    from compliance.artifacts import weights_sha256
    from compliance.linking.decision import (
        CLASSIFIER_ENCODER,
        SHIPPED_CLASSIFIER,
        _load_sentence_transformer,
        base_weights_sha256,
        canonical_base_model,
        classifier_encoder_dir,
    )
    from compliance.models.classifier import load_encoder_of
    from compliance.runtime import CLASSIFIER_DIR_NAME, default_base_model_path, shipped_model_dir

    shipped = shipped_model_dir(CLASSIFIER_DIR_NAME)
    assert shipped is not None
    assert classifier_encoder_dir(SHIPPED_CLASSIFIER) == shipped
    assert classifier_encoder_dir(str(shipped)) == shipped  # a classifier directory by path
    assert classifier_encoder_dir(str(default_base_model_path())) is None  # a plain encoder
    assert canonical_base_model(CLASSIFIER_ENCODER) == SHIPPED_CLASSIFIER  # no classifier in the home
    assert base_weights_sha256(SHIPPED_CLASSIFIER) == weights_sha256(shipped)  # the adapter file
    assert base_weights_sha256(SHIPPED_CLASSIFIER) != weights_sha256(default_base_model_path())

    texts = ["Laptops are encrypted with BitLocker.", "Access rights are reviewed every quarter."]
    st = _load_sentence_transformer(SHIPPED_CLASSIFIER, "cpu")
    encoder = load_encoder_of(shipped, device="cpu", bf16=False)
    with torch.inference_mode():
        own = torch.nn.functional.normalize(encoder.embed(texts), dim=1).numpy()
    assert np.allclose(st.encode(texts, normalize_embeddings=True), own, atol=1e-5)
    base = _load_sentence_transformer(None, "cpu").encode(texts, normalize_embeddings=True)
    assert not np.allclose(base, own, atol=1e-3)  # not the packaged sentence encoder

    laws = [make_law("one", ["alpha", "beta"], 1), make_law("two", ["gamma", "delta"], 2)]
    pairs = make_graded_pairs(laws, train_per_grade=8, heldout_per_grade=8, heldout_fraction=0.3, seed=3)
    model = train_link_decision(pairs=pairs, config=LinkDecisionConfig(max_steps=0), out_dir=tmp_path / "dec")
    config = json.loads((tmp_path / "dec" / "config.json").read_text())
    assert config["encoder"]["base_model"] == SHIPPED_CLASSIFIER == config["base_model"]
    assert config["encoder"]["base_model_sha256"] == weights_sha256(shipped)
    loaded = LinkDecisionModel.load(tmp_path / "dec")
    a, b = [p.a.text for p in pairs.heldout], [p.b.text for p in pairs.heldout]
    assert np.allclose(loaded.score_pairs(a, b), model.score_pairs(a, b), atol=1e-5)


def test_classifier_encoder_without_a_classifier_falls_back(tmp_path: Path) -> None:
    """No classifier installed (shipped models off, empty home): ``compliance alerts train-decision`` calibrates
    the packaged sentence encoder instead of failing, and says so in the artifact."""
    from compliance.linking.decision import CLASSIFIER_ENCODER, classifier_encoder_dir
    from compliance.runtime import DEFAULT_BASE_MODEL

    with pytest.raises(ModelNotFoundError, match="compliance train"):
        classifier_encoder_dir(CLASSIFIER_ENCODER)
    laws = [make_law("one", ["alpha", "beta"], 1), make_law("two", ["gamma", "delta"], 2)]
    pairs = make_graded_pairs(laws, train_per_grade=8, heldout_per_grade=8, heldout_fraction=0.3, seed=3)
    train_link_decision(pairs=pairs, config=LinkDecisionConfig(max_steps=0), out_dir=tmp_path / "dec")
    config = json.loads((tmp_path / "dec" / "config.json").read_text())
    assert config["encoder"]["base_model"] == DEFAULT_BASE_MODEL


def test_a_trained_classifier_in_the_home_is_the_default_bi_encoder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A classifier trained into the model directory (a full ``encoder/`` copy) is what ``gdpr-classifier``
    means: the artifact records its absolute path and encoder checksum, loads over it, and refuses to load once
    those weights change (retrained: the calibration no longer holds)."""
    import shutil

    from compliance.artifacts import weights_sha256
    from compliance.linking.decision import (
        _load_sentence_transformer,
        canonical_base_model,
        classifier_encoder_dir,
    )
    from compliance.settings import reset_settings
    from tests.fixtures.classifier.tiny import shared_tiny_classifier

    models = tmp_path / "models"
    home_classifier = models / "gdpr-classifier"
    shutil.copytree(shared_tiny_classifier(), home_classifier)
    monkeypatch.setenv("COMPLIANCE_MODEL_DIR", str(models))
    reset_settings()
    assert classifier_encoder_dir("gdpr-classifier") == home_classifier
    assert canonical_base_model("gdpr-classifier") == str(home_classifier.resolve())
    st = _load_sentence_transformer("gdpr-classifier", "cpu")
    assert st.get_embedding_dimension() == 32  # the tiny classifier's encoder, not the packaged MiniLM (384)

    laws = [make_law("one", ["alpha", "beta"], 1), make_law("two", ["gamma", "delta"], 2)]
    pairs = make_graded_pairs(laws, train_per_grade=8, heldout_per_grade=8, heldout_fraction=0.3, seed=3)
    train_link_decision(pairs=pairs, config=LinkDecisionConfig(max_steps=0), out_dir=tmp_path / "dec")
    config = json.loads((tmp_path / "dec" / "config.json").read_text())
    assert config["encoder"]["base_model"] == str(home_classifier.resolve())
    assert config["encoder"]["base_model_sha256"] == weights_sha256(home_classifier / "encoder")
    assert LinkDecisionModel.load(tmp_path / "dec").encode(["alpha"]).shape == (1, 32)
    weights = next(p for p in (home_classifier / "encoder").iterdir() if p.name.endswith(".safetensors"))
    weights.write_bytes(weights.read_bytes() + b"\0")  # the classifier was retrained in place
    with pytest.raises(ModelError, match="base weights"):
        LinkDecisionModel.load(tmp_path / "dec")
