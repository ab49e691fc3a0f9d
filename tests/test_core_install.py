"""The core install (sqlite-utils' CI idea): the package without its extras still imports and starts.

``make test-core`` runs ``tests/core_install.py`` in a fresh virtualenv holding only ``pip install -e .``; here the
same check runs with the optional packages hidden by an import hook, and the check itself is shown to fail on
the mistakes it exists to catch.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.core_install import NEEDS_EXTRA, NOT_IMPORTED, OPTIONAL, package_modules

REPO_ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=REPO_ROOT, capture_output=True, text=True, check=False, timeout=300
    )


def test_every_module_imports_without_the_optional_packages() -> None:
    run = _run("-m", "tests.core_install", "--block")
    assert run.returncode == 0, run.stdout + run.stderr
    modules = len(package_modules(REPO_ROOT / "compliance"))
    assert f"{modules} modules, 0 problem(s)" in run.stdout


def test_the_module_list_covers_the_package() -> None:
    modules = package_modules(REPO_ROOT / "compliance")
    assert {"compliance", "compliance.cli", "compliance.store.schema", "compliance.errors"} <= set(modules)
    assert "compliance.migrations.versions.0001_initial" in modules
    assert set(NEEDS_EXTRA) | set(NOT_IMPORTED) <= set(modules)
    assert set(OPTIONAL.values()) <= {"ml", "langchain", "postgres", "api", "workers", "tune", "dev"}


def test_the_check_fails_on_an_unguarded_import_and_on_a_wrong_extra(tmp_path: Path) -> None:
    probe = tmp_path / "core_probe"
    probe.mkdir()
    (probe / "__init__.py").write_text("")
    (probe / "unguarded.py").write_text("import torch\n")
    (probe / "guarded.py").write_text(
        textwrap.dedent(
            """
            from compliance.errors import MissingDependencyError
            try:
                import fastapi
            except ImportError as e:
                raise MissingDependencyError.for_extra("api", "fastapi") from e
            """
        )
    )
    (probe / "wrong_extra.py").write_text(
        textwrap.dedent(
            """
            from compliance.errors import MissingDependencyError
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as e:
                raise MissingDependencyError.for_extra("langchain", "sentence-transformers") from e
            """
        )
    )
    code = textwrap.dedent(
        f"""
        import json, sys
        sys.path.insert(0, {str(tmp_path)!r})
        from tests.core_install import BlockOptional, check_imports
        sys.meta_path.insert(0, BlockOptional())
        names = ["core_probe.guarded", "core_probe.unguarded", "core_probe.wrong_extra"]
        print(json.dumps(check_imports(names)))
        """
    )
    run = _run("-c", code)
    assert run.returncode == 0, run.stderr
    problems = json.loads(run.stdout.strip().splitlines()[-1])
    assert len(problems) == 2, problems
    assert problems[0].startswith("core_probe.unguarded: ModuleNotFoundError") and "torch" in problems[0]
    assert problems[1].startswith(
        "core_probe.wrong_extra: MissingDependencyError does not name the extra 'ml'"
    )
