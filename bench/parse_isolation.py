"""The cost of reading documents in the worker process (per-file budgets) against reading them inline.

``python -m bench parse_isolation``: the sample documents of ``examples/`` parsed ``ROUNDS`` times inline, then
through one worker process (its start-up timed apart), in one run on one machine; reported as a ratio, since the
development machines are shared and absolute timings are noisy.
"""

from __future__ import annotations

import time
from pathlib import Path

ROUNDS = 3
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run() -> dict[str, object]:
    from compliance.connectors.sandbox import ParseBudget, ParseWorker, parse_file

    files = sorted(p for p in EXAMPLES.iterdir() if p.is_file())
    parse_file(
        files[0], isolation="inline"
    )  # imports the parsers in this process first (the worker does too)
    start = time.perf_counter()
    for _ in range(ROUNDS):
        for path in files:
            parse_file(path, isolation="inline")
    inline = time.perf_counter() - start
    with ParseWorker(ParseBudget()) as worker:
        start = time.perf_counter()
        parse_file(files[0], worker=worker)
        startup = time.perf_counter() - start
        start = time.perf_counter()
        for _ in range(ROUNDS):
            for path in files:
                parse_file(path, worker=worker)
        isolated = time.perf_counter() - start
    n = ROUNDS * len(files)
    return {
        "files_parsed": n,
        "inline_s": round(inline, 2),
        "worker_s": round(isolated, 2),
        "worker_over_inline": round(isolated / inline, 3),
        "worker_start_s": round(startup, 2),
        "per_file_overhead_ms": round(1000 * (isolated - inline) / n, 1),
    }
