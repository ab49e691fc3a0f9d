"""Package-level guarantees: light imports, a complete CLI, stable error codes."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

import compliance.errors as errors_module
from compliance.cli import COMMANDS, cli


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        check=True,
        capture_output=True,
        text=True,
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    "code",
    [
        "import compliance",
        "from compliance.cli import cli\ntry:\n    cli(['--help'], standalone_mode=False)\nexcept SystemExit:\n    pass",
    ],
)
def test_import_and_help_stay_light(code: str) -> None:
    loaded = _modules_after(code)
    for heavy in ("torch", "transformers", "sentence_transformers", "fastapi", "langchain_core", "psycopg"):
        assert heavy not in loaded, f"{heavy} imported by: {code!r}"
    # no database engine: no SQLAlchemy dialect (they load when an engine is created)
    assert not [m for m in loaded if m.startswith("sqlalchemy.dialects")]


def test_every_registered_command_has_help() -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["--help"])
    assert result.exit_code == 0
    for name in COMMANDS:
        assert name in result.output
        sub = runner.invoke(cli, [name, "--help"])
        assert sub.exit_code == 0, (name, sub.output)
        assert "Usage:" in sub.output


def test_error_codes_are_unique_and_well_formed() -> None:
    classes = [
        obj
        for _, obj in inspect.getmembers(errors_module, inspect.isclass)
        if issubclass(obj, errors_module.ComplianceError)
    ]
    codes = [c.code for c in classes]
    assert len(codes) == len(set(codes)), codes
    for c in classes:
        assert c.code.startswith("C") and c.code[1:].isdigit()
        if c is not errors_module.ComplianceError:
            # every error also inherits a matching built-in exception
            assert any(b.__module__ == "builtins" and b is not object for b in c.__mro__[1:]), c


def test_unknown_command_fails_cleanly() -> None:
    result = CliRunner().invoke(cli, ["no-such-command"])
    assert result.exit_code != 0
    assert "No such command" in result.output
