"""Dense text encoding for retrieval: any Hugging Face encoder, long texts chunked into overlapping token
windows, [CLS] or mean pooling over a chosen layer, L2-normalised float32 vectors.

Model loading goes through :func:`compliance.models.encoder.load_encoder` (offline-first, packaged
all-MiniLM-L6-v2 as the fallback); batching, autocast and pooling come from :mod:`compliance.runtime`. The default
model is the classifier-fine-tuned encoder when one has been trained (seed 001: in-domain classification
fine-tuning gives the best retrieval representations).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from compliance.artifacts import ADAPTER_WEIGHTS, WEIGHT_FILES, weights_sha256
from compliance.retrieval.config import DenseConfig
from compliance.runtime import (
    EmbeddingSpace,
    aggregate_chunks,
    autocast,
    chunk_token_ids,
    classifier_dir,
    default_base_model_path,
    length_sorted_batches,
    mean_pool,
    resolve_model_path,
)

__all__ = ["TextEncoder", "aggregate_chunks", "default_dense_model", "model_identity"]


def default_dense_model() -> str:
    """The fine-tuned classifier's encoder if there is one — the home's (``<model_dir>/gdpr-classifier``, or its
    ``encoder/`` subfolder), else the classifier shipped with the package (a directory of adapters over the base
    encoder) — else the packaged all-MiniLM-L6-v2 directory."""
    root = classifier_dir()
    for candidate in (root, root / "encoder"):
        if (candidate / "config.json").is_file() and any((candidate / w).is_file() for w in WEIGHT_FILES):
            return str(candidate.resolve())
    if (root / "config.json").is_file() and (root / ADAPTER_WEIGHTS).is_file():
        return str(root.resolve())
    return str(default_base_model_path())


def _load(source: str, device: str | None) -> Any:
    """The encoder at ``source``: a compact classifier directory (adapters merged into its base encoder) or any
    Hugging Face model directory or id."""
    if (Path(source) / ADAPTER_WEIGHTS).is_file():
        from compliance.models.classifier import load_encoder_of

        return load_encoder_of(Path(source), device=device)
    from compliance.models.encoder import load_encoder

    return load_encoder(source, device=device)


def model_identity(source: str) -> dict[str, Any]:
    """What identifies an encoder: where it came from and, for a local directory, its weights' sha256."""
    return {"model": source, "weights_sha256": weights_sha256(Path(source))}


class TextEncoder:
    """Chunking encoder.

    Args:
        config: model, pooling, layer, chunk size and stride.
        device: ``auto``/``cpu``/``cuda``; default from settings.
    """

    def __init__(self, config: DenseConfig | None = None, device: str | None = None) -> None:
        self.config = config or DenseConfig()
        self.source = resolve_model_path(self.config.model) if self.config.model else default_dense_model()
        self._enc = _load(self.source, device)
        n_layers = int(getattr(self._enc.model.config, "num_hidden_layers", 0))
        if not -n_layers - 1 <= self.config.layer <= n_layers:
            from compliance.errors import ConfigurationError

            raise ConfigurationError(f"layer {self.config.layer} out of range for a {n_layers}-layer encoder")

    @property
    def dim(self) -> int:
        return int(self._enc.hidden_size)

    @property
    def tokenizer(self) -> Any:
        return self._enc.tokenizer

    @property
    def model(self) -> Any:
        return self._enc.model

    def identity(self) -> dict[str, Any]:
        """Encoder identity plus the encoding parameters (stored in index configs)."""
        return {**model_identity(self.source), **self.config.model_dump(exclude={"batch_size"})}

    def space(self) -> EmbeddingSpace | None:
        """The embedding space of this encoder's vectors (None for a hub model: no weight file to identify it)."""
        weights = weights_sha256(Path(self.source))
        if weights is None:
            return None
        cfg = self.config
        return EmbeddingSpace(
            weights, cfg.pooling, cfg.layer, cfg.max_length, cfg.stride, cfg.max_chunks, cfg.abbreviations
        )

    def chunk(self, texts: Sequence[str]) -> tuple[list[list[int]], np.ndarray]:
        """Token-id windows of ``max_length`` (special tokens included) with ``stride`` overlap, and the owner
        text of each window (:func:`compliance.runtime.chunk_token_ids`). An empty text still gets one window.
        With ``abbreviations``, each text is chunked with its known abbreviations written out."""
        cfg = self.config
        if cfg.abbreviations:
            from compliance.abbreviations import write_out

            texts = [write_out(t) for t in texts]
        tok = self.tokenizer
        with self._enc.lock:  # the tokenizer's settings are shared state (Encoder.lock)
            specials = list(tok("", add_special_tokens=True)["input_ids"])
            encoded = tok(list(texts), add_special_tokens=False, truncation=False, verbose=False)["input_ids"]
        chunks, owner = chunk_token_ids(encoded, specials, cfg.max_length, cfg.stride, cfg.max_chunks)
        return chunks, np.asarray(owner, dtype=np.int64)

    def encode_chunks(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """L2-normalised vectors of every chunk (float32, (n_chunks, dim)) and each chunk's text index."""
        import torch

        chunks, owner = self.chunk(texts)
        out = np.zeros((len(chunks), self.dim), dtype=np.float32)
        if not chunks:
            return out, owner
        enc = self._enc
        model = enc.model
        model.eval()
        pad_id = self.tokenizer.pad_token_id or 0
        layer = self.config.layer
        want_hidden = layer != -1
        with torch.inference_mode():
            for idx, ids, mask in length_sorted_batches(chunks, self.config.batch_size, pad_id, enc.device):
                with autocast(enc.device, enc.use_bf16):
                    result = model(input_ids=ids, attention_mask=mask, output_hidden_states=want_hidden)
                hidden = result.hidden_states[layer] if want_hidden else result.last_hidden_state
                hidden = hidden.float()
                vec = hidden[:, 0] if self.config.pooling == "cls" else mean_pool(hidden, mask)
                vec = torch.nn.functional.normalize(vec, dim=-1)
                out[idx] = vec.cpu().numpy()
        return out, owner

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised vector per text: the normalised mean of its chunk vectors (seed 001's centroid)."""
        vecs, owner = self.encode_chunks(texts)
        return aggregate_chunks(vecs, owner, len(texts))
