"""Two layout rules of the package, checked on the syntax tree (docstrings and comments do not count):

1. Library code returns data; only the command line talks to people. No module under ``compliance/`` outside
   ``compliance/cli/`` imports click or argparse, calls ``print``, ``sys.exit`` or ``logging.basicConfig``, or
   raises ``SystemExit``.
2. No repository paths in the package: no module under ``compliance/`` mentions ``__file__`` (bundled data comes
   through :mod:`importlib.resources`; research code that reads the repository lives in ``experiments/``).
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "compliance"

FRONT_END_MODULES = {"click", "argparse"}
#: dotted call targets reserved for the command line, and the names ``from X import Y`` would bind them to
FRONT_END_CALLS = {"print", "sys.exit", "logging.basicConfig", "exit", "quit"}
FRONT_END_FROM_IMPORTS = {("sys", "exit"), ("logging", "basicConfig")}


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def front_end_violations(source: str) -> list[str]:
    """Where ``source`` talks to people or parses a command line (``line: what``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.partition(".")[0] in FRONT_END_MODULES:
                    found.append(f"{node.lineno}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.partition(".")[0] in FRONT_END_MODULES:
                found.append(f"{node.lineno}: from {node.module} import ...")
            for alias in node.names:
                if (node.module, alias.name) in FRONT_END_FROM_IMPORTS:
                    found.append(f"{node.lineno}: from {node.module} import {alias.name}")
        elif isinstance(node, ast.Call):
            target = _dotted(node.func)
            if target in FRONT_END_CALLS or (target or "").endswith(".basicConfig"):
                found.append(f"{node.lineno}: {target}(...)")
        elif isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if _dotted(exc) == "SystemExit":
                found.append(f"{node.lineno}: raise SystemExit")
    return found


def file_mentions(source: str) -> list[str]:
    """Where ``source`` uses ``__file__`` (as a name or an attribute; strings do not count)."""
    return [
        f"{node.lineno}: __file__"
        for node in ast.walk(ast.parse(source))
        if (isinstance(node, ast.Name) and node.id == "__file__")
        or (isinstance(node, ast.Attribute) and node.attr == "__file__")
    ]


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_only_the_command_line_talks_to_people() -> None:
    cli = PACKAGE / "cli"
    problems = [
        f"{path.relative_to(PACKAGE.parent)}:{where}"
        for path in _modules()
        if cli not in path.parents
        for where in front_end_violations(path.read_text(encoding="utf-8"))
    ]
    assert not problems, "library code must return data (move this to compliance/cli):\n" + "\n".join(
        problems
    )


def test_no_module_builds_a_path_from_its_own_file() -> None:
    problems = [
        f"{path.relative_to(PACKAGE.parent)}:{where}"
        for path in _modules()
        for where in file_mentions(path.read_text(encoding="utf-8"))
    ]
    assert not problems, "use importlib.resources for bundled data:\n" + "\n".join(problems)


def test_the_rules_cover_the_whole_package() -> None:
    modules = {p.relative_to(PACKAGE).as_posix() for p in _modules()}
    assert {"__init__.py", "cli/__init__.py", "store/schema.py", "evaluation/queries.py"} <= modules
    assert len(modules) > 50


BAD = '''
"""Docstrings may say print(x), sys.exit(1), __file__ and import click: only code counts."""
import argparse
import click.testing
import logging as log
import sys
from click import echo
from logging import basicConfig
from sys import exit as leave

HERE = __file__
ALSO = sys.modules[__name__].__file__


def main() -> None:
    print("hello")
    sys.exit(2)
    logging.basicConfig(level=10)
    raise SystemExit(1)
    log.basicConfig()
'''


@pytest.mark.parametrize(
    ("checker", "expected"),
    [
        (
            front_end_violations,
            [
                "3: import argparse",
                "4: import click.testing",
                "7: from click import ...",
                "8: from logging import basicConfig",
                "9: from sys import exit",
                "16: print(...)",
                "17: sys.exit(...)",
                "18: logging.basicConfig(...)",
                "19: raise SystemExit",
                "20: log.basicConfig(...)",
            ],
        ),
        (file_mentions, ["11: __file__", "12: __file__"]),
    ],
)
def test_the_checkers_find_code_not_docstrings(checker, expected) -> None:  # type: ignore[no-untyped-def]
    assert sorted(checker(BAD), key=lambda s: int(s.split(":")[0])) == expected
    assert checker(textwrap.dedent('"""print(__file__); import click"""\nx = "sys.exit(1)"\n')) == []
