"""LoRA adapters and the compact (distilled) classifier, on a tiny random BERT and the mini regulation."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.fixtures.classifier.tiny import RECITAL_MAP, mini_gdpr, single_threaded, train_tiny_classifier

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True, scope="module")
def _one_thread() -> Iterator[None]:
    with single_threaded():  # type: ignore[attr-defined]
        yield


@pytest.fixture(scope="module")
def teacher_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("teacher")
    return train_tiny_classifier(root / "gdpr-classifier", root / "base", epochs=3)


def test_merge_equals_the_wrapped_model() -> None:
    from compliance.models.adapter import LoRAConfig, add_lora, lora_state, merge_into

    torch.manual_seed(0)
    lin = torch.nn.Sequential()
    model = torch.nn.Module()
    model.encoder = torch.nn.Module()  # type: ignore[assignment]
    model.encoder.layer = torch.nn.ModuleList([torch.nn.Module()])  # type: ignore[assignment]
    model.encoder.layer[0].output = torch.nn.Module()  # type: ignore[index]
    model.encoder.layer[0].output.dense = torch.nn.Linear(8, 6)  # type: ignore[index]
    plain = torch.nn.Linear(8, 6)
    plain.load_state_dict(model.encoder.layer[0].output.dense.state_dict())  # type: ignore[index]
    cfg = LoRAConfig(rank=2, alpha=4.0, targets=("output.dense",))
    assert add_lora(model, cfg) == ["encoder.layer.0.output.dense"]
    wrapped = model.encoder.layer[0].output.dense  # type: ignore[index]
    with torch.no_grad():
        wrapped.lora_B.normal_()
        wrapped.base.bias.add_(1.0)
    state = lora_state(model, cfg)
    assert set(state) == {
        "encoder.layer.0.output.dense.lora_A",
        "encoder.layer.0.output.dense.lora_B",
        "encoder.layer.0.output.dense.bias",
    }
    target = torch.nn.Module()
    target.encoder = torch.nn.Module()  # type: ignore[assignment]
    target.encoder.layer = torch.nn.ModuleList([torch.nn.Module()])  # type: ignore[assignment]
    target.encoder.layer[0].output = torch.nn.Module()  # type: ignore[index]
    target.encoder.layer[0].output.dense = plain  # type: ignore[index]
    assert merge_into(target, state, cfg) == 1
    x = torch.randn(3, 8)
    assert torch.allclose(wrapped(x), plain(x), atol=1e-5)
    del lin


def test_svd_start_reproduces_a_low_rank_difference() -> None:
    from compliance.models.adapter import LoRAConfig, add_lora, init_from_delta, lora_modules

    torch.manual_seed(1)
    model = torch.nn.Module()
    model.encoder = torch.nn.Module()  # type: ignore[assignment]
    model.encoder.layer = torch.nn.ModuleList([torch.nn.Module()])  # type: ignore[assignment]
    model.encoder.layer[0].intermediate = torch.nn.Module()  # type: ignore[index]
    model.encoder.layer[0].intermediate.dense = torch.nn.Linear(10, 12)  # type: ignore[index]
    base = model.encoder.layer[0].intermediate.dense.weight.detach().clone()  # type: ignore[index]
    delta = torch.randn(12, 2) @ torch.randn(2, 10)  # rank 2
    cfg = LoRAConfig(rank=2, alpha=2.0, targets=("intermediate.dense",), train_vectors=False)
    add_lora(model, cfg)
    kept = init_from_delta(model, {"encoder.layer.0.intermediate.dense.weight": base + delta}, cfg)
    assert kept["encoder.layer.0.intermediate.dense"] == pytest.approx(1.0, abs=1e-5)
    m = lora_modules(model)["encoder.layer.0.intermediate.dense"]
    assert torch.allclose(m.lora_B @ m.lora_A * cfg.scaling, delta, atol=1e-4)


def test_merge_refuses_adapters_that_do_not_fit() -> None:
    from compliance.errors import ModelError
    from compliance.models.adapter import LoRAConfig, merge_into

    model = torch.nn.Module()
    model.dense = torch.nn.Linear(4, 4)  # type: ignore[assignment]
    cfg = LoRAConfig(rank=2, alpha=2.0)
    with pytest.raises(ModelError, match="does not fit"):
        merge_into(model, {"other.lora_A": torch.zeros(2, 4), "other.lora_B": torch.zeros(4, 2)}, cfg)
    with pytest.raises(ModelError, match="shapes"):
        merge_into(model, {"dense.lora_A": torch.zeros(3, 4), "dense.lora_B": torch.zeros(4, 3)}, cfg)


def test_distilled_adapter_saves_small_and_loads_the_same(teacher_dir: Path, tmp_path: Path) -> None:
    from compliance.models.adapter import LoRAConfig
    from compliance.models.classifier import load
    from compliance.models.compact import CompactConfig, distil, heldout_figures
    from compliance.models.data import DataConfig, build_training_data

    teacher = load(teacher_dir, device="cpu", bf16=False)
    data = build_training_data(mini_gdpr(), RECITAL_MAP, DataConfig(**teacher.meta["recipe"]["data"]))
    result = distil(
        teacher,
        data,
        CompactConfig(lora=LoRAConfig(rank=4, alpha=4.0), epochs=2, batch_size=8, max_length=40),
        device="cpu",
        bf16=False,
    )
    assert result.record["steps"] > 0 and result.record["curve"]
    assert 0 < result.record["svd_energy_kept"]["mean"] <= 1.0
    out = tmp_path / "compact"
    result.classifier.save(out, adapter=(result.description, result.tensors))
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["format_version"] == 4 and cfg["encoder_adapter"]["type"] == "lora"
    assert cfg["encoder_adapter"]["base_model_sha256"] == teacher.meta["provenance"]["base_model_sha256"]
    assert not (out / "encoder").exists() and (out / "adapter.safetensors").is_file()
    texts = ["personal data breach notification", "the right to erasure of personal data"]
    loaded = load(out, device="cpu", bf16=False)
    assert np.allclose(loaded.predict_proba(texts), result.classifier.predict_proba(texts), atol=1e-5)
    # distillation keeps the teacher's ranking on its own held-out sentences
    assert data.calibration
    student_fig = heldout_figures(loaded, {"cal": data.calibration})["cal"]
    teacher_fig = heldout_figures(teacher, {"cal": data.calibration})["cal"]
    assert student_fig["mrr"] >= teacher_fig["mrr"] - 0.25


def test_adapter_on_other_base_weights_is_refused(teacher_dir: Path, tmp_path: Path) -> None:
    import shutil

    from compliance.errors import ModelError
    from compliance.models.adapter import LoRAConfig
    from compliance.models.classifier import load
    from compliance.models.compact import CompactConfig, distil
    from compliance.models.data import DataConfig, build_training_data
    from tests.fixtures.tiny_bert import make_tiny_bert

    teacher = load(teacher_dir, device="cpu", bf16=False)
    data = build_training_data(mini_gdpr(), RECITAL_MAP, DataConfig(**teacher.meta["recipe"]["data"]))
    result = distil(
        teacher, data, CompactConfig(lora=LoRAConfig(rank=2, alpha=2.0), epochs=0), device="cpu", bf16=False
    )
    out = tmp_path / "compact"
    result.classifier.save(out, adapter=(result.description, result.tensors))
    other = make_tiny_bert(tmp_path / "other", seed=7)
    cfg = json.loads((out / "config.json").read_text())
    cfg["encoder_adapter"]["base_model"] = str(other)
    (out / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ModelError, match="base weights"):
        load(out, device="cpu", bf16=False)
    shutil.rmtree(other)
