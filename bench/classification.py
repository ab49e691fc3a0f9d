"""Classification throughput: end-to-end ``ArticleClassifier.predict_proba`` vs the bare encoder forward on the
same paragraphs (same windows, batches and precision), fp32 vs bf16 on CPU, peak memory; CUDA when present.

Paragraphs: the GDPR recitals (realistic paragraph lengths, 173 texts), repeated to ``BENCH_N`` (default 256).
Model: the trained classifier at the default location, else the base encoder with a centroid-initialised head
(throughput does not depend on the head's training). ``ratio`` = end-to-end throughput / bare forward
throughput (target ≥ 0.9); each figure is the median of ``BENCH_REPEATS`` (default 3) alternating runs.
``lexical_expert_share``: the part of the end-to-end time spent in the BM25 lexical expert.
"""

from __future__ import annotations

import os
import resource
import time
from typing import Any


def _classifier(device: str) -> Any:
    from compliance.models.classifier import (
        ArticleClassifier,
        ClassifierConfig,
        CosineHead,
        load,
    )
    from compliance.models.encoder import load_encoder
    from compliance.runtime import classifier_dir

    path = classifier_dir()
    if (path / "config.json").is_file():
        return load(path, device=device), str(path)
    enc = load_encoder(None, device=device)
    head = CosineHead.create(99, enc.hidden_size).to(enc.device)
    return ArticleClassifier(
        enc, head, list(range(1, 100)), {}, ClassifierConfig()
    ), "base encoder + untrained head"


def _texts(n: int) -> list[str]:
    from compliance.rules import load_pack_law

    recitals = [r.text for r in load_pack_law("gdpr").recitals]
    return [recitals[i % len(recitals)] for i in range(n)]


def _bare_forward(clf: Any, texts: list[str]) -> float:
    """Seconds for the encoder forward alone on exactly the batches ``logits`` builds (pre-tokenised)."""
    import torch

    windows, _ = clf._windows(texts)
    batches = [{"input_ids": ids, "attention_mask": mask} for _, ids, mask in clf.window_batches(windows)]
    _sync(clf)
    t0 = time.perf_counter()
    with torch.inference_mode():
        for b in batches:
            clf.encoder.pooled(b)
    _sync(clf)
    return time.perf_counter() - t0


def _sync(clf: Any) -> None:
    import torch

    if clf.encoder.device.type == "cuda":
        torch.cuda.synchronize()


def _measure(clf: Any, texts: list[str], bf16: bool, repeats: int) -> dict[str, Any]:
    """Median of ``repeats`` alternating end-to-end / bare-forward timings (alternating cancels drift)."""
    import statistics

    clf.encoder.use_bf16 = bf16
    clf.predict_proba(texts[:8])  # warm-up
    e2e_runs: list[float] = []
    bare_runs: list[float] = []
    for _ in range(repeats):
        _sync(clf)
        t0 = time.perf_counter()
        clf.predict_proba(texts)
        _sync(clf)
        e2e_runs.append(time.perf_counter() - t0)
        bare_runs.append(_bare_forward(clf, texts))
    t0 = time.perf_counter()
    clf.lexical_log_probs(texts)
    lexical = time.perf_counter() - t0
    e2e, bare = statistics.median(e2e_runs), statistics.median(bare_runs)
    return {
        "precision": "bf16-autocast" if bf16 else "fp32",
        "end_to_end_texts_per_s": round(len(texts) / e2e, 1),
        "bare_forward_texts_per_s": round(len(texts) / bare, 1),
        "ratio": round(bare / e2e, 3),
        "lexical_expert_share": round(lexical / e2e, 3),
        "repeats": repeats,
    }


def run() -> dict[str, Any]:
    """The benchmark; returns its figures."""
    import torch

    from compliance.runtime import bf16_supported

    n = int(os.environ.get("BENCH_N", "256"))
    repeats = int(os.environ.get("BENCH_REPEATS", "3"))
    texts = _texts(n)
    out: dict[str, Any] = {"texts": n, "torch_threads": torch.get_num_threads(), "runs": []}
    clf, what = _classifier("cpu")
    out["model"] = what
    for bf16 in (False, True):
        out["runs"].append({"device": "cpu", **_measure(clf, texts, bf16, repeats)})
    out["cpu_bf16_native"] = bf16_supported(clf.encoder.device)
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    if torch.cuda.is_available():
        clf, _ = _classifier("cuda")
        torch.cuda.reset_peak_memory_stats()
        for bf16 in (False, True):
            out["runs"].append({"device": "cuda", **_measure(clf, texts * 4, bf16, repeats)})
        out["cuda_peak_memory_mb"] = round(torch.cuda.max_memory_allocated() / 2**20, 1)
    return out
