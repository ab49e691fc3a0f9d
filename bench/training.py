"""Training step time of the default recipe's fine-tuning: fp32 vs bf16 autocast, plain vs fused AdamW, in one run.

A step is what ``compliance train`` (recipe ``r``) does per batch: the whole all-MiniLM-L6-v2 forward and backward
on 32 GDPR sentences of at most 64 tokens, the cosine head, cross-entropy, gradient clipping and an AdamW step.
The four settings are run alternately (``BENCH_REPEATS`` rounds of ``BENCH_STEPS`` steps, default 3 × 8, after a
warm-up) and each figure is the median seconds per step, so that a machine's drift hits all of them alike;
``bf16_speedup`` = fp32 / bf16 and ``fused_speedup`` = plain / fused (fp32). The CPU capability torch detects and
whether the CPU has native bf16 are reported with the figures: bf16 autocast only pays off with AVX512-BF16/AMX.
``BENCH_THREADS`` sets torch's threads (default: torch's own choice).
"""

from __future__ import annotations

import os
import statistics
import time
from typing import Any


def _batch(enc: Any, n: int = 32) -> dict[str, Any]:
    from compliance.rules import load_pack_law

    law = load_pack_law("gdpr")
    texts = [p.text for p in law.provisions if getattr(p, "text", "")][: n * 4][::4][:n]
    return enc.tokenize(texts, max_length=64)


def run() -> dict[str, Any]:
    import torch

    from compliance.models.classifier import CosineHead
    from compliance.models.encoder import load_encoder
    from compliance.runtime import bf16_supported

    if os.environ.get("BENCH_THREADS"):
        torch.set_num_threads(int(os.environ["BENCH_THREADS"]))
    steps = int(os.environ.get("BENCH_STEPS", "8"))
    repeats = int(os.environ.get("BENCH_REPEATS", "3"))
    enc = load_encoder(None, device="cpu", bf16=False)
    batch = _batch(enc)
    head = CosineHead.create(99, enc.hidden_size)
    target = torch.randint(0, 99, (batch["input_ids"].shape[0],))
    params = [*enc.model.parameters(), *head.parameters()]
    optimisers = {
        "plain": torch.optim.AdamW(params, lr=1e-6),
        "fused": torch.optim.AdamW(params, lr=1e-6, fused=True),
    }

    def one_round(bf16: bool, opt_name: str) -> float:
        enc.use_bf16 = bf16
        opt = optimisers[opt_name]
        enc.model.train()
        t0 = time.perf_counter()
        for _ in range(steps):
            logits = head(enc.pooled(batch))
            loss = torch.nn.functional.cross_entropy(logits, target, label_smoothing=0.05)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
        return (time.perf_counter() - t0) / steps

    settings = [(False, "plain"), (False, "fused"), (True, "plain"), (True, "fused")]
    for bf16, name in settings:  # warm-up (one step each)
        steps_before = steps
        steps = 1
        one_round(bf16, name)
        steps = steps_before
    runs: dict[str, list[float]] = {f"{'bf16' if b else 'fp32'}_{n}": [] for b, n in settings}
    for _ in range(repeats):
        for bf16, name in settings:
            runs[f"{'bf16' if bf16 else 'fp32'}_{name}"].append(one_round(bf16, name))
    med = {k: round(statistics.median(v), 4) for k, v in runs.items()}
    return {
        "seconds_per_step": med,
        "bf16_speedup": round(med["fp32_fused"] / med["bf16_fused"], 2),
        "fused_speedup": round(med["fp32_plain"] / med["fp32_fused"], 2),
        "batch": list(batch["input_ids"].shape),
        "steps_per_round": steps,
        "rounds": repeats,
        "cpu_capability": str(torch.backends.cpu.get_cpu_capability()),
        "native_bf16": bf16_supported(torch.device("cpu")),
        "torch_threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "loadavg_1min": round(os.getloadavg()[0], 2),
    }
