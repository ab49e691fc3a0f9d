"""The `compliance map` stdout contract, with a tiny trained model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from compliance.cli import cli
from tests.fixtures.classifier.tiny import shared_tiny_classifier

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def model_dir() -> Path:
    return shared_tiny_classifier()


def _lines(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines()]


def test_jsonl_file_in_jsonl_out(model_dir: Path, tmp_path: Path) -> None:
    inp = tmp_path / "in.jsonl"
    rows = [
        {"id": "c1", "text": "Laptops use full disk encryption."},
        {"id": 7, "text": "Breaches are notified."},
    ]
    inp.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    res = CliRunner().invoke(cli, ["map", str(inp), "--model", str(model_dir), "--top-k", "3"])
    assert res.exit_code == 0, res.output
    out = _lines(res.stdout)
    assert [o["id"] for o in out] == ["c1", 7]
    for o in out:
        assert set(o) == {"id", "articles"}
        arts = o["articles"]
        assert len(arts) == 3
        assert all(set(a) == {"article", "title", "score"} for a in arts)
        assert {a["article"] for a in arts} <= {5, 15, 17, 32, 33}
        scores = [a["score"] for a in arts]
        assert scores == sorted(scores, reverse=True)
        assert all(0.0 <= s <= 1.0 for s in scores)
    titles = {a["article"]: a["title"] for o in out for a in o["articles"]}
    assert titles.get(32, "Security of processing") == "Security of processing"


def test_stdin_and_text_option(model_dir: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(
        cli, ["map", "--model", str(model_dir)], input='{"id": "a", "text": "access request"}\n'
    )
    assert res.exit_code == 0, res.output
    out = _lines(res.stdout)
    assert out[0]["id"] == "a" and len(out[0]["articles"]) == 5  # default top-k 10, capped by 5 labels
    res = runner.invoke(cli, ["map", "--model", str(model_dir), "--text", "erase my data", "--top-k", "99"])
    assert res.exit_code == 0, res.output
    out = _lines(res.stdout)
    assert out[0]["id"] == 1
    assert abs(sum(a["score"] for a in out[0]["articles"]) - 1.0) < 1e-3


def test_bad_input_and_missing_model(model_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(cli, ["map", "--model", str(model_dir)], input="not json\n")
    assert res.exit_code == 1
    assert "error [C101]" in res.stderr and res.stdout == ""
    res = runner.invoke(cli, ["map", "--model", str(tmp_path / "none"), "--text", "x"])
    assert res.exit_code == 1
    assert "compliance train" in res.stderr and res.stdout == ""
    res = runner.invoke(cli, ["map", "--model", str(model_dir), "--text", "x", "--top-k", "100"])
    assert res.exit_code == 2
