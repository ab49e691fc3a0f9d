"""Run all benchmarks: every module in this package with a ``run()`` function (or only those named)."""

from __future__ import annotations

import importlib
import json
import pkgutil
import sys
import time
from pathlib import Path


def discover() -> list[str]:
    """Names of the benchmark modules (``bench/*.py`` with a ``run`` callable), sorted."""
    names = []
    for info in pkgutil.iter_modules([str(Path(__file__).resolve().parent)]):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"bench.{info.name}")
        if callable(getattr(module, "run", None)):
            names.append(info.name)
    return sorted(names)


def main(argv: list[str]) -> int:
    wanted = argv or discover()
    failed = 0
    for name in wanted:
        t0 = time.perf_counter()
        try:
            result = importlib.import_module(f"bench.{name}").run()
        except Exception as e:  # one failing benchmark must not hide the others
            failed += 1
            result = {"error": f"{type(e).__name__}: {e}"}
        print(
            json.dumps({"benchmark": name, "seconds": round(time.perf_counter() - t0, 1), **result}, indent=2)
        )
        sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
