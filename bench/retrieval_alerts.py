"""Benchmark: alert latency for one new EU act against 100,000 stored control paragraphs.

    python -m bench.retrieval_alerts                 # full size (100,000 paragraphs), JSON on stdout
    python -m bench.retrieval_alerts --paragraphs 20000 --threads 2

What is measured (wall clock, ``time.perf_counter``, torch and BLAS limited to ``--threads`` threads):

* **index build** of the BM25 stage over the synthetic paragraphs (tokenising with the seed-001 denoising,
  bm25s scoring matrix), and of **bm25s alone** (its own tokenizer, same corpus) for the overhead ratio;
* **dense index build**: measured on ``--embed-sample`` paragraphs and extrapolated linearly to the full
  corpus (embedding 100,000 paragraphs with a transformer on 2 CPU cores takes hours; the extrapolation is
  reported as such). The full-size dense matrix used for search is filled with those real vectors repeated
  and perturbed, so that search cost is that of a real 100,000-row float32 matrix;
* **alert latency** (the figure the target is about): every provision of the ePrivacy Directive (paragraph
  level) plus the whole act as queries, hybrid search (BM25 + dense, linear fusion) for the top 50 paragraphs
  each, evidence included — query encoding included, index already built;
* **incremental update**: adding 100 new paragraphs to each index, removing 100;
* **overheads**: our BM25 stage vs ``bm25s`` alone (same queries, top 50), our dense stage vs the bare
  encoder (``compliance.models.encoder``, truncating) plus one numpy matrix product.

``run()`` returns the figures as a dict (used by ``python -m bench``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

TARGET_SECONDS = 10.0


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def _sentence_pool() -> list[str]:
    """Sentences of the hand-written controls and of the sample policies' sources (the project's own texts)."""
    import re

    root = Path(__file__).resolve().parents[1]
    texts: list[str] = []
    controls = root / "compliance" / "evaluation" / "data" / "controls.jsonl"
    if controls.is_file():
        texts += [
            json.loads(line)["text"] for line in controls.read_text(encoding="utf-8").splitlines() if line
        ]
    for md in sorted((root / "examples" / "src").glob("*.md")):
        texts += [ln.strip("-|# ").strip() for ln in md.read_text(encoding="utf-8").splitlines()]
    sentences = [s.strip() for t in texts for s in re.split(r"(?<=[.;:])\s+", t) if len(s.split()) >= 6]
    if len(sentences) < 50:
        raise RuntimeError(
            "too few source sentences for synthetic paragraphs (controls.jsonl / examples/src)"
        )
    return sentences


def synthetic_paragraphs(n: int, seed: int = 0) -> list[str]:
    """``n`` control-like paragraphs: 1–4 sentences of the project's own policies and controls, shuffled, with
    a department/system name drawn from a list so that paragraphs differ."""
    rng = random.Random(seed)
    pool = _sentence_pool()
    units = [
        "Finance",
        "HR",
        "Logistics",
        "IT Operations",
        "Customer Service",
        "Marketing",
        "Legal",
        "Procurement",
        "Warehouse",
        "Fleet",
        "Security Office",
        "Data Office",
        "Sales",
        "Facilities",
        "Payroll",
        "Audit",
    ]
    systems = [
        "CRM",
        "ERP",
        "the data warehouse",
        "the HR portal",
        "the mobile app",
        "the website",
        "the TMS",
        "the ticketing system",
        "e-mail",
        "the VPN",
        "the backup service",
        "the cloud tenant",
    ]
    out = []
    for i in range(n):
        k = rng.randint(1, 4)
        body = " ".join(rng.sample(pool, k))
        out.append(f"{rng.choice(units)} ({rng.choice(systems)}, ref {i}): {body}")
    return out


def _eprivacy_queries() -> tuple[list[str], list[str]]:
    from compliance.retrieval.adapters import law_documents
    from experiments.retrieval_tasks import load_act

    law = load_act("eprivacy")
    provisions = law_documents(law, "paragraph")
    whole = law_documents(law, "law")[0]
    return [d.id for d in provisions] + [whole.id], [d.text for d in provisions] + [whole.text]


def run(
    paragraphs: int = 100_000, embed_sample: int = 300, threads: int = 2, k: int = 50, seed: int = 0
) -> dict[str, Any]:
    """Run the benchmark and return its figures (seconds unless stated)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    torch.set_num_threads(threads)
    from threadpoolctl import threadpool_limits

    limiter = threadpool_limits(limits=threads)

    import bm25s

    from compliance.models.encoder import load_encoder
    from compliance.retrieval.bm25 import BM25Index
    from compliance.retrieval.config import BM25Config, DenseConfig, FusionConfig, RetrievalConfig
    from compliance.retrieval.dense import DenseIndex
    from compliance.retrieval.encoding import TextEncoder
    from compliance.retrieval.hybrid import HybridRetriever
    from compliance.retrieval.types import Document

    logging_off()
    load_start = os.getloadavg()[0]
    texts = synthetic_paragraphs(paragraphs, seed)
    docs = [Document(f"p{i}", t) for i, t in enumerate(texts)]
    _qids, queries = _eprivacy_queries()
    figures: dict[str, Any] = {
        "load_average_1m_start": load_start,
        "paragraphs": paragraphs,
        "queries": len(queries),
        "k": k,
        "threads": threads,
        "query_set": "ePrivacy Directive: every numbered paragraph + the whole act",
    }

    # -- BM25 build: ours vs bm25s alone ------------------------------------------------------------------
    bm25_ours, figures["build_bm25_s"] = _timed(lambda: BM25Index.build(docs, BM25Config()))

    def bm25s_alone() -> Any:
        tokens = bm25s.tokenize(texts, stopwords="en", show_progress=False)
        model = bm25s.BM25()
        model.index(tokens, show_progress=False)
        return model

    bm25s_model, figures["build_bm25s_alone_s"] = _timed(bm25s_alone)

    # -- dense build: measured on a sample, extrapolated -------------------------------------------------
    encoder = TextEncoder(DenseConfig(max_length=256), device="cpu")
    sample = docs[:embed_sample]
    sample_index, t_sample = _timed(lambda: DenseIndex.build(sample, encoder.config, encoder=encoder))
    figures["build_dense_sample_s"] = t_sample
    figures["build_dense_extrapolated_s"] = t_sample * paragraphs / embed_sample
    rng = np.random.default_rng(seed)
    reps = int(np.ceil(paragraphs / len(sample)))
    base = np.tile(sample_index.vectors[: len(sample)], (reps, 1))[:paragraphs]
    noisy = base + rng.normal(0, 0.02, size=base.shape).astype(np.float32)
    noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
    dense = DenseIndex(encoder.config, encoder=encoder)
    dense.ids = [d.id for d in docs]
    dense.vectors = noisy.astype(np.float32)
    dense.owner = np.arange(paragraphs, dtype=np.int64)
    dense._hashes = {d.id: "synthetic" for d in docs}
    dense._pos = {d: i for i, d in enumerate(dense.ids)}

    config = RetrievalConfig(
        bm25=BM25Config(), dense=encoder.config, fusion=FusionConfig(method="linear", alpha=0.5)
    )
    hybrid = HybridRetriever(config, docs, bm25_ours, dense)

    # -- alert latency --------------------------------------------------------------------------------------
    hybrid.search_many(queries[:2], k=k)  # warm-up (first torch call)
    results, figures["alert_latency_s"] = _timed(lambda: hybrid.search_many(queries, k=k))
    figures["alert_latency_per_query_ms"] = 1000 * figures["alert_latency_s"] / len(queries)
    figures["alert_target_s"] = TARGET_SECONDS
    figures["alert_within_target"] = figures["alert_latency_s"] < TARGET_SECONDS
    figures["hits_returned"] = sum(len(r) for r in results)

    # -- stage overheads --------------------------------------------------------------------------------
    _, ours_bm25 = _timed(lambda: [bm25_ours.search(q, k) for q in queries])

    def bm25s_query() -> Any:
        qt = bm25s.tokenize(list(queries), stopwords="en", show_progress=False)
        return bm25s_model.retrieve(qt, k=k, show_progress=False, n_threads=1)

    _, alone_bm25 = _timed(bm25s_query)
    figures["query_bm25_ours_s"] = ours_bm25
    figures["query_bm25s_alone_s"] = alone_bm25
    figures["overhead_bm25_vs_bm25s"] = ours_bm25 / alone_bm25
    figures["build_overhead_bm25_vs_bm25s"] = figures["build_bm25_s"] / figures["build_bm25s_alone_s"]

    _, ours_dense = _timed(lambda: dense.search_many(queries, k=k))
    bare = load_encoder(encoder.source, device="cpu")
    matrix = dense.vectors

    def bare_dense() -> Any:
        q = bare.embed(list(queries), max_length=256, batch_size=32).numpy()
        sims = q @ matrix.T
        return np.argpartition(-sims, k, axis=1)[:, :k]

    _, bare_s = _timed(bare_dense)
    figures["query_dense_ours_s"] = ours_dense
    figures["query_dense_bare_encoder_s"] = bare_s
    figures["overhead_dense_vs_bare_encoder"] = ours_dense / bare_s
    figures["overhead_hybrid_vs_bm25s_plus_bare_encoder"] = figures["alert_latency_s"] / (alone_bm25 + bare_s)

    # -- incremental update -----------------------------------------------------------------------------
    new = [Document(f"new{i}", t) for i, t in enumerate(synthetic_paragraphs(100, seed + 1))]
    _, figures["update_bm25_add100_s"] = _timed(lambda: bm25_ours.add(new))
    _, figures["update_bm25_remove100_s"] = _timed(lambda: bm25_ours.remove([d.id for d in new]))
    _, figures["update_dense_add100_s"] = _timed(lambda: dense.add(new))
    _, figures["update_dense_remove100_s"] = _timed(lambda: dense.remove([d.id for d in new]))
    limiter.restore_original_limits()
    figures["cpu_count"] = os.cpu_count()
    figures["load_average_1m_end"] = os.getloadavg()[0]
    figures["torch_threads"] = torch.get_num_threads()
    return {key: (round(v, 4) if isinstance(v, float) else v) for key, v in figures.items()}


def logging_off() -> None:
    import logging

    for name in ("bm25s", "transformers", "sentence_transformers"):
        logging.getLogger(name).setLevel(logging.ERROR)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.retrieval_alerts", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--paragraphs", type=int, default=100_000)
    parser.add_argument("--embed-sample", type=int, default=300)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--k", type=int, default=50)
    args = parser.parse_args(argv)
    figures = run(args.paragraphs, args.embed_sample, args.threads, args.k)
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
