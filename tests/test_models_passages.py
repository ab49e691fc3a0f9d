"""The passage expert: each article's closest paragraph or point, in the classifier encoder's space, as a term of
the scoring ensemble (compliance.models.passages)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from compliance.errors import ModelError
from compliance.models.classifier import ArticleClassifier, ClassifierConfig
from compliance.models.passages import PASSAGE_VECTORS_FILE, PASSAGES_FILE, PassageExpert


def _unit(*rows: list[float]) -> np.ndarray:
    m = np.asarray(rows, dtype=np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _expert() -> PassageExpert:
    # Art. 5 has two passages, Art. 32 one, Art. 6 none; Art. 99 is not among the classifier's labels
    keys = ("art:5/par:1/pt:a", "art:5/par:2", "art:32/par:1/pt:a", "art:99")
    vectors = _unit([1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1])
    return PassageExpert(keys, ("a", "b", "c", "d"), vectors, {"law": "gdpr"})


def test_cosines_take_each_articles_closest_passage() -> None:
    texts = _unit([0.2, 0.9, 0.1], [0.0, 0.1, 1.0])
    cos = _expert().cosines(texts, [5, 6, 32])
    sims = texts @ _expert().vectors[:3].T  # type: ignore[index]
    np.testing.assert_allclose(cos[:, 0], np.maximum(sims[:, 0], sims[:, 1]), rtol=1e-6)
    np.testing.assert_allclose(cos[:, 2], sims[:, 2], rtol=1e-6)
    # an article without passages gets the text's lowest cosine with any passage of the labels
    np.testing.assert_allclose(cos[:, 1], sims.min(axis=1), rtol=1e-6)


def test_the_ensemble_multiplies_each_article_by_exp_weight_times_cosine() -> None:
    labels = [5, 6, 32]
    cfg = ClassifierConfig(temperature=0.7, passage_weight=4.0, label_prior=(0.5, 0.3, 0.2), prior_weight=1.0)
    clf = ArticleClassifier(None, None, labels, {}, cfg, passages=_expert())  # type: ignore[arg-type]
    assert clf.uses_passages
    logits = np.array([[1.0, 0.5, 0.2], [0.1, 0.3, 0.9]])
    emb = _unit([0.2, 0.9, 0.1], [0.0, 0.1, 1.0])
    with_passages = clf.calibrate(clf.with_passages(logits, emb))
    plain = clf.calibrate(logits)
    ratio = with_passages / plain
    expected = np.exp(4.0 * _expert().cosines(emb, labels))
    np.testing.assert_allclose(
        ratio / ratio.sum(axis=1, keepdims=True), expected / expected.sum(1, keepdims=True)
    )
    # without a weight, or without embeddings, the logits are left alone
    off = ArticleClassifier(None, None, labels, {}, ClassifierConfig(), passages=_expert())  # type: ignore[arg-type]
    assert not off.uses_passages
    assert off.with_passages(logits, emb) is logits
    assert clf.with_passages(logits, None) is logits


def test_saved_and_loaded_alike(tmp_path: Path) -> None:
    expert = _expert()
    expert.save(tmp_path)
    back = PassageExpert.load(tmp_path)
    assert back.keys == expert.keys and back.texts == expert.texts and back.source == {"law": "gdpr"}
    np.testing.assert_array_equal(back.vectors, expert.vectors)  # type: ignore[arg-type]
    np.save(tmp_path / PASSAGE_VECTORS_FILE, np.zeros((2, 3), dtype=np.float32))
    with pytest.raises(ModelError, match="4 passages"):
        PassageExpert.load(tmp_path)
    (tmp_path / PASSAGES_FILE).unlink()
    with pytest.raises(ModelError, match="missing or unreadable"):
        PassageExpert.load(tmp_path)
    with pytest.raises(ModelError, match="no vectors"):
        PassageExpert(("art:5",), ("a",)).save(tmp_path)


class _Encoder:
    """Records the autocast setting each embedding ran under."""

    def __init__(self) -> None:
        self.use_bf16 = True
        self.lock = threading.RLock()
        self.seen: list[bool] = []

    def embed(self, texts: list[str]) -> Any:
        import torch

        self.seen.append(self.use_bf16)
        return torch.nn.functional.normalize(torch.ones((len(texts), 3)), dim=-1)


def test_passages_are_embedded_in_full_precision() -> None:
    pytest.importorskip("torch")
    encoder = _Encoder()
    fresh = PassageExpert(("art:5", "art:6"), ("a", "b")).embedded_by(encoder)  # type: ignore[arg-type]
    assert encoder.seen == [False] and encoder.use_bf16 is True
    assert fresh.vectors is not None and fresh.vectors.shape == (2, 3) and fresh.vectors.dtype == np.float32


def test_vectors_of_gives_the_stored_vectors_of_passages_of_its_law_version() -> None:
    expert = PassageExpert(_expert().keys, _expert().texts, _expert().vectors, {"law_checksum": "v1"})
    assert expert.vectors is not None
    got = expert.vectors_of(["c", "a"], "v1")
    assert got is not None and got.dtype == np.float32
    np.testing.assert_array_equal(got, expert.vectors[[2, 0]])
    # another version of the law, a text that is not a passage, no checksum, no vectors: nothing
    assert expert.vectors_of(["c", "a"], "v2") is None
    assert expert.vectors_of(["c", "not a passage"], "v1") is None
    assert expert.vectors_of(["c"], None) is None
    assert PassageExpert(("art:5",), ("a",), None, {"law_checksum": "v1"}).vectors_of(["a"], "v1") is None


def test_known_vectors_are_reused_and_only_new_passages_embedded() -> None:
    pytest.importorskip("torch")

    class _Counting(_Encoder):
        def __init__(self) -> None:
            super().__init__()
            self.texts: list[str] = []

        def embed(self, texts: list[str]) -> Any:
            self.texts += texts
            return super().embed(texts)

    known = _expert()  # texts a, b, c, d with their own vectors
    encoder = _Counting()
    again = PassageExpert(("art:5", "art:7", "art:32"), ("c", "new", "a"), None, {"law": "gdpr"})
    got = again.embedded_by(encoder, known)  # type: ignore[arg-type]
    assert encoder.texts == ["new"] and encoder.seen == [False]  # only the new text, in full precision
    assert known.vectors is not None and got.vectors is not None and got.vectors.dtype == np.float32
    np.testing.assert_array_equal(got.vectors[0], known.vectors[2])
    np.testing.assert_array_equal(got.vectors[2], known.vectors[0])
    np.testing.assert_allclose(got.vectors[1], np.full(3, 3**-0.5), rtol=1e-6)
    # every text known: nothing embedded at all
    encoder.texts.clear()
    same = PassageExpert(known.keys, known.texts).embedded_by(encoder, known)  # type: ignore[arg-type]
    assert encoder.texts == [] and same.vectors is not None
    np.testing.assert_array_equal(same.vectors, known.vectors)
    # a text under two provisions (a recital's window under each article it explains) keeps each one's own row
    twice = PassageExpert(("art:5/rec:1", "art:6/rec:1"), ("r", "r"), _unit([1, 0, 0], [1, 1e-3, 0]))
    assert twice.vectors is not None
    back = PassageExpert(("art:6/rec:1", "art:5/rec:1"), ("r", "r")).embedded_by(encoder, twice)  # type: ignore[arg-type]
    assert back.vectors is not None and encoder.texts == []
    np.testing.assert_array_equal(back.vectors, twice.vectors[[1, 0]])
    # vectors of another width cannot be mixed with the encoder's
    narrow = PassageExpert(("art:5",), ("a",), np.ones((1, 2), dtype=np.float32))
    with pytest.raises(ModelError, match="2 dimensions"):
        PassageExpert(("art:5", "art:6"), ("a", "z")).embedded_by(encoder, narrow)  # type: ignore[arg-type]
