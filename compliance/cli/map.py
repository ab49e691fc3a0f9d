"""``compliance map``: free text → ranked GDPR articles, as JSONL on stdout.

Contract (external evaluation depends on it; keep it stable): input JSONL lines ``{"id": ..., "text": ...}``
from a file argument or stdin, or ``--text "..."``; output one JSONL line per input, in input order,
``{"id": ..., "articles": [{"article": 32, "title": "Security of processing", "score": 0.81}, ...]}`` ranked by
score. Nothing else is written to stdout.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import click

from compliance.cli.options import classifier_options, load_classifier
from compliance.errors import ConfigurationError


def _read_inputs(source: IO[str], name: str) -> Iterator[tuple[object, str]]:
    for n, line in enumerate(source, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as e:
            raise ConfigurationError(f"{name}:{n}: not a JSON line: {e}") from e
        if not isinstance(row, dict) or not isinstance(row.get("text"), str):
            raise ConfigurationError(f"{name}:{n}: expected an object with a string 'text'")
        yield row.get("id", n), row["text"]


@click.command("map")
@click.argument("input_file", required=False, type=click.File("r", encoding="utf-8"))
@click.option("--text", "texts", multiple=True, help="Map this text (repeatable); ids are 1, 2, …")
@click.option("--top-k", type=click.IntRange(1, 99), default=10, show_default=True, help="Articles per text.")
@classifier_options
@click.option(
    "--batch-size",
    type=click.IntRange(1, 10_000),
    default=64,
    show_default=True,
    help="Texts classified per batch.",
)
def map_command(
    input_file: IO[str] | None,
    texts: tuple[str, ...],
    top_k: int,
    model_path: Path | None,
    batch_size: int,
    device: str | None,
    train_if_missing: bool,
) -> None:
    """Rank GDPR articles for texts: JSONL {"id","text"} in (FILE or stdin, or --text), JSONL out."""
    from compliance.app import map_texts

    classifier = load_classifier(model_path, device, train_if_missing)
    if texts:
        rows: Iterator[tuple[object, str]] = iter(list(enumerate(texts, 1)))
    elif input_file is not None:
        rows = _read_inputs(input_file, getattr(input_file, "name", "input"))
    else:
        rows = _read_inputs(sys.stdin, "stdin")
    for result in map_texts(classifier, rows, top_k=top_k, batch_size=batch_size):
        click.echo(json.dumps(result, ensure_ascii=False))
