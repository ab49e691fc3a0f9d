"""One loaded model shared by threads (the API's request threads and the in-process job threads do so). The
classifier tokenises without truncation (its own windows), the encoder's ``embed`` truncates; a fast tokenizer
keeps those settings on the object, so without ``Encoder.lock`` a call on one thread changed them under a running
call on another ("Unable to create tensor …", two failures in every run of this hammer without the lock)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from tests.fixtures.classifier.tiny import shared_tiny_classifier

pytest.importorskip("torch")

TEXTS = [
    "Personal data is encrypted at rest and in transit, and the keys are rotated every year. " * k
    for k in range(1, 17)
]


def _on_threads(calls: list[Callable[[], Any]], rounds: int) -> tuple[list[str], list[list[Any]]]:
    """Each call ``rounds`` times on a thread of its own, all at once: the errors and each thread's results."""
    errors: list[str] = []
    results: list[list[Any]] = [[] for _ in calls]

    def run(i: int) -> None:
        try:
            for _ in range(rounds):
                results[i].append(calls[i]())
        except Exception as e:  # what a thread raised is the finding
            errors.append(repr(e))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors, results


@pytest.fixture(scope="module")
def clf() -> Any:
    from compliance.models.classifier import load

    return load(shared_tiny_classifier(), device="cpu")


def test_untruncated_and_truncated_tokenising_on_threads_at_once(clf: Any) -> None:
    windows = clf._token_ids(TEXTS)
    batch = clf.encoder.tokenize(TEXTS, 8)["input_ids"].tolist()
    ids = lambda: clf._token_ids(TEXTS)  # noqa: E731
    cut = lambda: clf.encoder.tokenize(TEXTS, 8)["input_ids"].tolist()  # noqa: E731
    errors, results = _on_threads([ids, cut, ids, cut], rounds=200)
    assert errors == []
    assert all(got == windows for got in results[0] + results[2])
    assert all(got == batch for got in results[1] + results[3])


def test_forward_and_embed_on_threads_at_once(clf: Any) -> None:
    logits = clf.forward(TEXTS).logits
    vectors = clf.encoder.embed(TEXTS, max_length=8, batch_size=4).numpy()
    forward = lambda: clf.forward(TEXTS).logits  # noqa: E731
    embed = lambda: clf.encoder.embed(TEXTS, max_length=8, batch_size=4).numpy()  # noqa: E731
    errors, results = _on_threads([forward, embed, forward, embed], rounds=5)
    assert errors == []
    for got in results[0] + results[2]:
        np.testing.assert_allclose(got, logits, rtol=1e-5, atol=1e-5)
    for got in results[1] + results[3]:
        np.testing.assert_allclose(got, vectors, rtol=1e-5, atol=1e-5)
