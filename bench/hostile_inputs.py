"""What each hostile input of issue 14 costs now: outcome (error code), seconds and peak RSS of the reading process.

``python -m bench hostile_inputs``: every input of ``tests/fixtures/hostile.py`` is read in a fresh interpreter
(inline mode with the default limits and a 20 s time budget), so that its peak RSS is its own (``ru_maxrss`` of
that process, which includes the interpreter and the parsers, about 100-150 MB).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CASES = {
    "pdf /Length reference loop": ("pdf_length_loop()", "x.pdf"),
    "pdf /MediaBox reference loop": ("pdf_mediabox_loop()", "x.pdf"),
    "pdf FlateDecode bomb (0.3 MB -> 300 MiB)": ("pdf_flate_bomb(300)", "x.pdf"),
    "pdf with 100,000 pages": ("pdf_many_pages(100_000)", "x.pdf"),
    "docx with understated zip sizes (-> 200 MiB)": ("docx_lying_sizes(200)", "x.docx"),
    "billion-laughs.html": ("BILLION_LAUGHS_HTML", "billion-laughs.html"),
    "xxe.xhtml": ("XXE_XHTML", "xxe.xhtml"),
    "text of 460,000 short paragraphs (6 MB)": (
        "b'\\n\\n'.join(b'Para %d.' % i for i in range(460_000))",
        "x.txt",
    ),
}

_CODE = """
import json, resource, sys, time
from tests.fixtures import hostile as h
from tests.fixtures.hostile import *
from compliance.connectors.sandbox import ParseBudget, parse_file
from compliance.connectors import SplitConfig
data = eval(sys.argv[1])
start = time.perf_counter()
try:
    doc = parse_file(data, sys.argv[2], isolation="inline", budget=ParseBudget(timeout_s=20),
                     config=SplitConfig(max_bytes=100 * 1024 * 1024))
    outcome = f"parsed ({len(doc.paragraphs)} paragraphs)"
except Exception as e:
    outcome = f"{type(e).__name__} {getattr(e, 'code', '')}".strip()
print(json.dumps({"outcome": outcome, "seconds": round(time.perf_counter() - start, 2),
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}))
"""


def run() -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out: dict[str, object] = {}
    for label, (expr, name) in CASES.items():
        proc = subprocess.run(
            [sys.executable, "-c", _CODE, expr, name],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        lines = proc.stdout.strip().splitlines()
        out[label] = json.loads(lines[-1]) if lines else {"error": proc.stderr[-500:]}
    return out
