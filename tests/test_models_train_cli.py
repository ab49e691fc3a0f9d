"""`compliance train` on the real GDPR law pack with a tiny random base encoder (fast settings)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from compliance.cli import cli
from tests.fixtures.classifier.tiny import make_tiny_bert, single_threaded

pytest.importorskip("torch")


def test_train_cli_writes_a_loadable_model(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compliance.settings import reset_settings

    monkeypatch.setenv("COMPLIANCE_LAW_MIRROR", str(shared_data / "laws"))
    reset_settings()
    base = make_tiny_bert(tmp_path / "base")
    out = tmp_path / "model"
    args = [
        "train",
        "--base-model",
        str(base),
        "--out",
        str(out),
        "--min-k",
        "2",
        "--freeze-layers",
        "1",
        "--device",
        "cpu",
        "--no-bf16",
        "--json",
    ]
    with single_threaded():  # type: ignore[attr-defined]
        res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert summary["path"] == str(out) and summary["recipe"] == "r"
    assert summary["examples"] >= 99 * 2
    cfg = json.loads((out / "config.json").read_text())
    assert len(cfg["labels"]) == 99 and cfg["titles"]["32"] == "Security of processing"
    assert cfg["provenance"]["law"]["articles"] == 99 and cfg["provenance"]["recital_pairs"] == 257
    assert cfg["recipe"]["data"]["min_k"] == 2 and cfg["recipe"]["freeze_layers"] == 1
    res = CliRunner().invoke(
        cli, ["map", "--model", str(out), "--text", "encryption of laptops", "--top-k", "99"]
    )
    assert res.exit_code == 0, res.output
    assert len(json.loads(res.stdout)["articles"]) == 99
