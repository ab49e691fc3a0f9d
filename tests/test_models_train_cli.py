"""`compliance train` on the real GDPR law pack with a tiny random base encoder (fast settings)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from compliance.cli import cli
from tests.fixtures.classifier.tiny import single_threaded
from tests.fixtures.tiny_bert import make_tiny_bert

pytest.importorskip("torch")


@pytest.mark.parametrize(
    "ensemble",
    ["default", pytest.param("encoder-only", marks=pytest.mark.slow)],  # 19 s each: one in `make test`
)
def test_train_cli_writes_a_loadable_model(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ensemble: str
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
    if ensemble == "encoder-only":
        args += ["--no-law-prior", "--no-umbrellas", "--no-consequences", "--lexical-weight", "0"]
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
    if ensemble == "default":
        assert cfg["recipe"]["law_prior"] and cfg["inference"]["lexical_weight"] == 1.0
        assert len(cfg["inference"]["label_prior"]) == 99 and (out / "lexical.json").is_file()
        # the law prior favours controller obligations over the Commission's reporting duty
        prior = dict(zip(cfg["labels"], cfg["inference"]["label_prior"], strict=True))
        assert prior[32] > 5 * prior[97]
        umbrellas = {a: set(m) for a, m in cfg["inference"]["umbrellas"]}
        from compliance.models.training import get_recipe

        umbrella = get_recipe("r").umbrella
        assert umbrella is not None and cfg["inference"]["umbrella_weight"] == umbrella.weight
        assert {6, 24, 25, 32} <= umbrellas[5]
        # Art. 83 (fines) passes mass down to the articles whose infringement it fines
        consequences = {a: set(m) for a, m in cfg["inference"]["consequences"]}
        assert set(consequences) == {83} and {5, 6, 12, 17, 32} <= consequences[83]
        consequence = get_recipe("r").consequence
        assert consequence is not None and cfg["inference"]["consequence_weight"] == consequence.weight
    else:
        assert cfg["recipe"]["law_prior"] is None and cfg["inference"]["label_prior"] is None
        assert cfg["inference"]["lexical_weight"] == 0.0 and not (out / "lexical.json").exists()
        assert cfg["inference"]["umbrellas"] is None and cfg["recipe"]["umbrella"] is None
        assert cfg["inference"]["consequences"] is None and cfg["recipe"]["consequence"] is None
    res = CliRunner().invoke(
        cli, ["map", "--model", str(out), "--text", "encryption of laptops", "--top-k", "99"]
    )
    assert res.exit_code == 0, res.output
    assert len(json.loads(res.stdout)["articles"]) == 99
