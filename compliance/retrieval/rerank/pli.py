"""Paragraph-level interaction aggregator (seed 004, BERT-PLI, Shao et al. 2020).

For a (query, candidate) pair every (query paragraph, candidate paragraph) pair goes through the
cross-encoder; its [CLS] vector is the pair's relevance representation, giving an N × M × d interaction tensor.
Max-pooling over the candidate's paragraphs keeps the strongest signal per query paragraph (N × d); an
attention-RNN (GRU, additive attention over the N steps, linear layer) turns that sequence into one relevance
logit. The cross-encoder is frozen; only the aggregator is trained (binary cross-entropy on document labels).

A trained re-ranker is an artifact directory (:mod:`compliance.artifacts`): ``config.json`` (kind ``pli``,
format_version, package_version, provenance, ``hidden``, ``dim``, training parameters), ``pair_encoder/`` (the
frozen cross-encoder, itself an artifact), ``aggregator.pt`` and ``MODEL_CARD.md``. Format-1 directories (no
``format_version``) load as well.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from compliance.artifacts import (
    json_sha256,
    model_spec,
    read_config,
    text_hash,
    unversioned_upgrade,
    write_card,
    write_config,
)
from compliance.errors import ModelError
from compliance.retrieval.rerank.cross_encoder import CrossEncoderReranker
from compliance.retrieval.types import Document

__all__ = ["ARTIFACT", "AttentionRNN", "PLIReranker", "interaction_features", "train_pli"]

PAIR_ENCODER_SUBDIR = "pair_encoder"
AGGREGATOR_FILE = "aggregator.pt"


#: The PLI re-ranker's artifact kind (see :mod:`compliance.artifacts`).
ARTIFACT = model_spec(
    "pli",
    2,
    "PLI re-ranker",
    "train one with compliance.retrieval.rerank.pli.train_pli",
    upgrade=unversioned_upgrade("pli", 2),
)


def AttentionRNN(dim: int, hidden: int = 64) -> Any:
    """GRU over query-paragraph vectors → additive attention → linear relevance logit (a ``torch.nn.Module``)."""
    import torch
    from torch import nn

    class _AttentionRNN(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.gru = nn.GRU(dim, hidden, batch_first=True)
            self.attn = nn.Linear(hidden, 1)
            self.out = nn.Linear(hidden, 1)

        def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
            """x: (batch, N, dim); mask: (batch, N) 1 for real query paragraphs → logits (batch,)."""
            h, _ = self.gru(x)
            a = self.attn(torch.tanh(h)).squeeze(-1).masked_fill(mask == 0, float("-inf"))
            w = torch.softmax(a, dim=-1).unsqueeze(-1)
            return self.out((w * h).sum(1)).squeeze(-1)

    return _AttentionRNN()


def interaction_features(
    cross_encoder: CrossEncoderReranker, query: str, candidates: Sequence[Document]
) -> list[np.ndarray]:
    """For each candidate, the N × d matrix of max-pooled (over candidate paragraphs) pair [CLS] vectors."""
    pairs, where = cross_encoder.passage_pairs(query, candidates)
    _, vecs = cross_encoder.pair_outputs(pairs, hidden=True)
    n_q = max((i for _, i, _ in where), default=-1) + 1
    dim = vecs.shape[1]
    out = [np.full((n_q, dim), -np.inf, dtype=np.float32) for _ in candidates]
    for (c, i, _), v in zip(where, vecs, strict=True):
        np.maximum(out[c][i], v, out=out[c][i])
    return [np.where(np.isfinite(m), m, 0.0).astype(np.float32) for m in out]


def _batch(feats: Sequence[np.ndarray]) -> tuple[Any, Any]:
    import torch

    n = max(1, max(f.shape[0] for f in feats))
    dim = feats[0].shape[1]
    x = torch.zeros((len(feats), n, dim))
    mask = torch.zeros((len(feats), n))
    for b, f in enumerate(feats):
        if f.shape[0]:
            x[b, : f.shape[0]] = torch.from_numpy(f)
            mask[b, : f.shape[0]] = 1
        else:
            mask[b, 0] = 1
    return x, mask


class PLIReranker:
    """Cross-encoder interaction features + attention-RNN aggregator."""

    kind = "pli"

    def __init__(self, cross_encoder: CrossEncoderReranker, rnn: Any, hidden: int) -> None:
        self.cross_encoder = cross_encoder
        self.rnn = rnn
        self.hidden = hidden

    def score(self, query: str, candidates: Sequence[Document]) -> np.ndarray:
        import torch

        if not candidates:
            return np.zeros(0, dtype=np.float32)
        feats = interaction_features(self.cross_encoder, query, candidates)
        x, mask = _batch(feats)
        self.rnn.eval()
        with torch.inference_mode():
            return self.rnn(x, mask).numpy().astype(np.float32)

    def save(
        self,
        path: str | Path,
        training: dict[str, Any] | None = None,
        *,
        provenance: dict[str, Any] | None = None,
    ) -> Path:
        """Write the artifact directory (see the module docstring); ``provenance`` adds e.g. the training data's
        checksum."""
        import torch

        from compliance.artifacts import file_sha256

        path = Path(path)
        self.cross_encoder.save(path / PAIR_ENCODER_SUBDIR)
        torch.save(self.rnn.state_dict(), path / AGGREGATOR_FILE)
        training = dict(training or {})
        cfg = write_config(
            path,
            ARTIFACT,
            {
                "hidden": self.hidden,
                "dim": int(self.cross_encoder.model.config.hidden_size),
                "training": training,
            },
            provenance={
                "pair_encoder": dict(self.cross_encoder.provenance),
                "aggregator_sha256": file_sha256(path / AGGREGATOR_FILE),
                **(provenance or {}),
            },
        )
        write_card(
            path,
            "# BERT-PLI style re-ranker\n\n"
            f"Frozen cross-encoder in `{PAIR_ENCODER_SUBDIR}/` (fine-tuned from "
            f"`{self.cross_encoder.provenance.get('base_model')}`), attention-RNN aggregator (hidden {self.hidden}) "
            f"in `{AGGREGATOR_FILE}`.\n\n- training: `{json.dumps(training)}`\n"
            f"- built by compliance {cfg['package_version']}\n",
        )
        return path

    @classmethod
    def load(cls, path: str | Path, query_passages: int = 4, doc_passages: int = 4) -> PLIReranker:
        """Load a directory written by :meth:`save` (or of format 1).

        Raises:
            ModelNotFoundError: nothing at ``path``.
            ModelError: not a PLI re-ranker, of a newer format, or its files cannot be read.
        """
        import torch

        path = Path(path)
        cfg = read_config(path, ARTIFACT)
        ce = CrossEncoderReranker.load(
            path / PAIR_ENCODER_SUBDIR, query_passages=query_passages, doc_passages=doc_passages
        )
        rnn = AttentionRNN(int(cfg["dim"]), int(cfg["hidden"]))
        try:
            rnn.load_state_dict(torch.load(path / AGGREGATOR_FILE, weights_only=True))
        except (OSError, RuntimeError) as e:
            raise ModelError(f"{path}: cannot read the aggregator ({e}); {ARTIFACT.rebuild}") from e
        return cls(ce, rnn, int(cfg["hidden"]))


def train_pli(
    cross_encoder: CrossEncoderReranker,
    examples: Sequence[tuple[str, Document, float]],
    hidden: int = 64,
    epochs: int = 10,
    lr: float = 1e-3,
    batch_size: int = 16,
    seed: int = 0,
    out_dir: str | Path | None = None,
) -> tuple[PLIReranker, list[float]]:
    """Train the aggregator on (query, candidate document, 0/1 label) examples; the cross-encoder stays frozen
    (its features are computed once). Returns the re-ranker and the per-epoch mean losses."""
    import torch

    if not examples:
        raise ModelError("no training examples for the PLI aggregator")
    torch.manual_seed(seed)
    feats = [interaction_features(cross_encoder, q, [d])[0] for q, d, _ in examples]
    labels = torch.tensor([lab for _, _, lab in examples], dtype=torch.float32)
    rnn = AttentionRNN(feats[0].shape[1], hidden)
    optim = torch.optim.Adam(rnn.parameters(), lr=lr)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    rng = random.Random(seed)
    order = list(range(len(examples)))
    history: list[float] = []
    rnn.train()
    for _ in range(epochs):
        rng.shuffle(order)
        total = 0.0
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            x, mask = _batch([feats[i] for i in idx])
            loss = loss_fn(rnn(x, mask), labels[idx])
            optim.zero_grad()
            loss.backward()
            optim.step()
            total += float(loss.detach()) * len(idx)
        history.append(total / len(order))
    rnn.eval()
    reranker = PLIReranker(cross_encoder, rnn, hidden)
    if out_dir is not None:
        data_sha256 = json_sha256([[q, d.id, text_hash(d.text), lab] for q, d, lab in examples])
        reranker.save(
            out_dir,
            {"examples": len(examples), "epochs": epochs, "lr": lr, "seed": seed},
            provenance={"training_data_sha256": data_sha256},
        )
    return reranker, history
