"""``compliance map``: free text → ranked GDPR articles, as JSONL on stdout.

Contract (external evaluation depends on it; keep it stable): input JSONL lines ``{"id": ..., "text": ...}``
from a file argument or stdin, or ``--text "..."``; output one JSONL line per input, in input order,
``{"id": ..., "articles": [{"article": 32, "title": "Security of processing", "score": 0.81}, ...]}`` ranked by
score. Nothing else is written to stdout.

Bad input (see :func:`compliance.app.classifier.read_map_inputs`): a line that is not UTF-8, not JSON, has no
string ``text``, a lone surrogate, or a ``NaN``/object id is skipped with one ``error [C101]: FILE:LINE: why``
line on stderr; every good line is still mapped, and the exit status is 1 at the end.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import click

from compliance.cli.options import classifier_options, echo_error, load_classifier


@click.command("map")
@click.argument("input_file", required=False, type=click.File("rb"))
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
    input_file: IO[bytes] | None,
    texts: tuple[str, ...],
    top_k: int,
    model_path: Path | None,
    batch_size: int,
    device: str | None,
    train_if_missing: bool,
) -> None:
    """Rank GDPR articles for texts: JSONL {"id","text"} in (FILE or stdin, or --text), JSONL out.

    A bad input line is reported on stderr and skipped; the good ones are all mapped; exit status 1 at the end
    when any line was skipped.
    """
    from compliance.app import map_texts
    from compliance.app.classifier import MapInputError, read_map_inputs

    classifier = load_classifier(model_path, device, train_if_missing)
    if texts:
        lines: Iterable[bytes | str] = [json.dumps({"id": i, "text": t}) for i, t in enumerate(texts, 1)]
        name = "--text"
    elif input_file is not None:
        lines = input_file
        name = str(getattr(input_file, "name", "input"))
    else:
        lines = sys.stdin.buffer
        name = "stdin"
    bad = 0

    def good_rows() -> Iterator[tuple[Any, str]]:
        nonlocal bad
        for item in read_map_inputs(lines, name):
            if isinstance(item, MapInputError):
                bad += 1
                echo_error(str(item), item.code)
            else:
                yield item

    for result in map_texts(classifier, good_rows(), top_k=top_k, batch_size=batch_size):
        click.echo(json.dumps(result, ensure_ascii=False, allow_nan=False))
    if bad:
        click.echo(f"{bad} input line(s) skipped", err=True)
        raise click.exceptions.Exit(1)
