"""A text longer than one window: its windows' distributions are averaged (``window_pooling="probabilities"``, the
default recipe's), so that the window that speaks of an article is not cancelled by windows that say nothing of it;
a text of one window is scored exactly as before."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from compliance.errors import ModelError
from compliance.models.calibration import softmax
from compliance.models.classifier import pool_windows


def test_pooled_probabilities_are_the_mean_of_the_windows_distributions() -> None:
    rng = np.random.default_rng(0)
    window_logits = rng.normal(size=(6, 5)) * 3
    owners = [0, 1, 1, 1, 2, 2]
    t = 0.8
    pooled = pool_windows(window_logits, owners, 3, "probabilities", t)
    np.testing.assert_array_equal(pooled[0], window_logits[0])  # one window: its raw logits, bit for bit
    for text, rows in ((1, [1, 2, 3]), (2, [4, 5])):
        expected = softmax(window_logits[rows], t).mean(axis=0)
        np.testing.assert_allclose(softmax(pooled[text : text + 1], t)[0], expected, rtol=1e-9)
    by_logits = pool_windows(window_logits, owners, 3, "logits", t)
    np.testing.assert_allclose(by_logits[1], window_logits[[1, 2, 3]].mean(axis=0))
    np.testing.assert_array_equal(by_logits[0], pooled[0])
    # the two readings differ where a text has several windows that disagree
    assert not np.allclose(softmax(by_logits[1:2], t), softmax(pooled[1:2], t))


def test_one_clear_window_is_not_cancelled_by_windows_that_say_nothing() -> None:
    """Three windows: one puts its mass on article 0, two are flat. Averaging logits keeps article 0 first but
    flattens it towards uniform by the same factor as the windows' count; averaging distributions keeps a third
    of the clear window's mass on it."""
    clear = np.array([[9.0, 0.0, 0.0, 0.0]])
    flat = np.zeros((2, 4))
    logits = np.vstack([clear, flat])
    p_logits = softmax(pool_windows(logits, [0, 0, 0], 1, "logits", 1.0))[0]
    p_probs = softmax(pool_windows(logits, [0, 0, 0], 1, "probabilities", 1.0))[0]
    expected = (softmax(clear)[0] + 2 * np.full(4, 0.25)) / 3
    np.testing.assert_allclose(p_probs, expected, rtol=1e-9)
    assert p_probs[0] < p_logits[0]  # honest about the two windows that do not speak of it ...
    assert p_probs[1] > p_logits[1]


def test_an_unknown_pooling_is_a_model_error() -> None:
    with pytest.raises(ModelError, match="window pooling"):
        pool_windows(np.zeros((1, 2)), [0], 1, "max", 1.0)


pytest.importorskip("torch")

LONG = " ".join(
    f"the controller keeps records of processing number {i} and reviews the security of processing every year"
    for i in range(30)
)
SHORT = [
    "A personal data breach is notified to the supervisory authority within 72 hours.",
    "Data subjects may ask for a copy of their personal data.",
]


def test_the_classifier_pools_a_long_texts_windows_as_its_config_says(tmp_path: Path) -> None:
    from compliance.models.classifier import load
    from tests.fixtures.classifier.tiny import shared_tiny_classifier

    clf = load(shared_tiny_classifier(), device="cpu", bf16=False)
    assert clf.config.window_pooling == "probabilities"  # what the default recipe trains
    probs = clf.forward([*SHORT, LONG]).logits
    clf.config = replace(clf.config, window_pooling="logits")
    logits = clf.forward([*SHORT, LONG]).logits
    np.testing.assert_array_equal(probs[:2], logits[:2])  # one window each: unchanged
    windows, _ = clf._windows([LONG])
    assert len(windows) > 1
    assert not np.allclose(probs[2], logits[2])


def test_a_config_with_an_unknown_pooling_does_not_load(tmp_path: Path) -> None:
    import shutil

    from compliance.models.classifier import load
    from tests.fixtures.classifier.tiny import shared_tiny_classifier

    copy = tmp_path / "gdpr-classifier"
    shutil.copytree(shared_tiny_classifier(), copy)
    cfg = json.loads((copy / "config.json").read_text())
    cfg["inference"]["window_pooling"] = "max"
    (copy / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ModelError, match="window_pooling"):
        load(copy, device="cpu")


def test_a_config_without_the_setting_pools_logits_as_older_models_did(tmp_path: Path) -> None:
    import shutil

    from compliance.models.classifier import load
    from tests.fixtures.classifier.tiny import shared_tiny_classifier

    copy = tmp_path / "gdpr-classifier"
    shutil.copytree(shared_tiny_classifier(), copy)
    cfg = json.loads((copy / "config.json").read_text())
    del cfg["inference"]["window_pooling"]
    (copy / "config.json").write_text(json.dumps(cfg))
    assert load(copy, device="cpu").config.window_pooling == "logits"
