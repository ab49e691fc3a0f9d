"""Option decorators and output helpers shared by the subcommands."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def json_option(func: F) -> F:
    """``--json``: machine-readable output on stdout."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")(func)


def database_option(func: F) -> F:
    """``--database URL``: overrides COMPLIANCE_DATABASE_URL for this command."""
    return click.option(
        "--database",
        "database_url",
        envvar="COMPLIANCE_DATABASE_URL",
        default=None,
        help="SQLAlchemy database URL (default: COMPLIANCE_DATABASE_URL or SQLite in the data home).",
    )(func)


def device_option(func: F) -> F:
    """``--device``: where models run (default: ``COMPLIANCE_DEVICE``, else auto)."""
    return click.option(
        "--device", default=None, help="auto, cpu, cuda, cuda:N (default: COMPLIANCE_DEVICE or auto)."
    )(func)


def classifier_options(func: F) -> F:
    """``--model DIR``, ``--device`` and ``--train-if-missing``: which GDPR classifier a command uses."""
    from pathlib import Path

    func = click.option(
        "--train-if-missing",
        is_flag=True,
        help="Train the default classifier first when none exists (progress on stderr).",
    )(func)
    func = device_option(func)
    return click.option(
        "--model",
        "model_path",
        type=click.Path(path_type=Path),
        default=None,
        help="Classifier directory (default: <model dir>/gdpr-classifier if it exists, else the shipped one).",
    )(func)


def load_classifier(model_path: Any, device: str | None, train_if_missing: bool) -> Any:
    """The classifier for a command (:func:`compliance.app.load_classifier`), saying on stderr when it has to
    be trained first (that takes minutes) and showing the training's progress."""
    from compliance.app import load_classifier as load

    def on_train(path: Any) -> None:
        click.echo(f"no model at {path}: training the default recipe first (this takes minutes)", err=True)

    return load(model_path, device=device, train_if_missing=train_if_missing, on_train=on_train)


def open_store(database_url: str | None) -> Any:
    """The store for a command (:func:`compliance.app.open_store`)."""
    from compliance.app import open_store as open_

    return open_(database_url)


_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def printable(text: str) -> str:
    """``text`` safe to write on one terminal line: control characters (ESC sequences, newlines, carriage
    returns, C1 controls), bidirectional overrides, line separators and undecodable bytes of file names (lone
    surrogates) are shown as escapes (``\\x1b``, ``\\n``, ``\\udcff``) instead of acting on the terminal."""
    import unicodedata

    out: list[str] = []
    for ch in text:
        if ch in _BIDI or unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp"):
            code = ord(ch)
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(ch) or (
                f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"))  # fmt: skip
        else:
            out.append(ch)
    return "".join(out)


def echo_error(message: str, code: str | None = None) -> None:
    """One error line on stderr, ``error [C301]: …``, with the message made :func:`printable`."""
    prefix = f"error [{code}]" if code else "error"
    click.echo(f"{prefix}: {printable(message)}", err=True)


def allow_failures_option(func: F) -> F:
    """``--allow-failures``: exit 0 even when some files could not be read (they are still reported)."""
    return click.option(
        "--allow-failures",
        is_flag=True,
        help="Exit 0 even when some files could not be read (default: exit 1 after reporting them).",
    )(func)


def echo_json(data: Any) -> None:
    """Write ``data`` as indented JSON to stdout."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def echo_table(rows: list[dict[str, Any]], columns: list[str]) -> None:
    """Write rows as an aligned plain-text table to stdout."""
    if not rows:
        click.echo("(none)")
        return
    widths = {c: max(len(c), *(len(str(r.get(c, ""))) for r in rows)) for c in columns}
    click.echo("  ".join(c.upper().ljust(widths[c]) for c in columns))
    for r in rows:
        click.echo("  ".join(str(r.get(c, "")).ljust(widths[c]) for c in columns))
