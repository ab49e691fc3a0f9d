"""Cross-encoder re-ranker over (query passage, candidate passage) pairs (seed 003 §4.3, Nogueira & Cho 2019),
with the document score the maximum over passage pairs, and a small trainer.

No pretrained cross-encoder is available offline, so :func:`train_cross_encoder` fine-tunes one from any
encoder (by default the packaged all-MiniLM-L6-v2) on pairs built from the data by :func:`build_pairs`:
the query's passage against the best BM25 passage of each relevant document (label 1) and of BM25 hard
negatives (label 0), with a pointwise binary cross-entropy loss.

A trained re-ranker is an artifact directory (:mod:`compliance.artifacts`)::

    config.json     kind "cross-encoder", format_version, package_version, provenance (base model and its weights'
                    sha256, training pairs' sha256), max_length, model_subdir, training parameters
    model/          the Hugging Face sequence-classification model and its tokenizer
    MODEL_CARD.md

Format 1 directories (the model at the top, its ``config.json`` Hugging Face's, the metadata in ``reranker.json``)
and bare Hugging Face sequence-classification directories load as well.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from compliance.artifacts import (
    json_sha256,
    model_spec,
    read_config,
    text_hash,
    weights_sha256,
    write_card,
    write_config,
)
from compliance.errors import ModelError, ModelNotFoundError
from compliance.retrieval.types import Document
from compliance.runtime import resolve_device, resolve_model_path
from compliance.text import split_passages

if TYPE_CHECKING:  # pragma: no cover
    from compliance.retrieval.bm25 import BM25Index

__all__ = ["ARTIFACT", "CrossEncoderReranker", "PairExample", "build_pairs", "train_cross_encoder"]

PASSAGE_WORDS = 120
PASSAGE_OVERLAP = 20
MODEL_SUBDIR = "model"


def _upgrade_config(cfg: dict[str, Any], path: Path) -> dict[str, Any]:
    """Format 1 (Hugging Face files at the top, metadata in ``reranker.json``) or a bare Hugging Face directory →
    the current shape, with ``model_subdir`` ``"."``."""
    if "kind" in cfg or not ("model_type" in cfg or "architectures" in cfg):
        return cfg
    meta_file = path / "reranker.json"
    meta: dict[str, Any] = {}
    if meta_file.is_file():
        try:
            meta = json.loads(meta_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ModelError(f"{meta_file}: unreadable ({e}); {ARTIFACT.rebuild}") from e
    return {
        "kind": ARTIFACT.kind,
        "format_version": ARTIFACT.format_version,
        "package_version": meta.get("package_version"),
        "max_length": meta.get("max_length", 256),
        "model_subdir": ".",
        "training": meta.get("training", {}),
        "provenance": {"base_model": meta.get("base_model")},
    }


#: The cross-encoder's artifact kind (see :mod:`compliance.artifacts`).
ARTIFACT = model_spec(
    "cross-encoder",
    2,
    "cross-encoder re-ranker",
    "train one with compliance.retrieval.rerank.cross_encoder.train_cross_encoder",
    upgrade=_upgrade_config,
)


@dataclass(frozen=True)
class PairExample:
    """One training pair: a query passage, a candidate passage and a 0/1 label."""

    query: str
    passage: str
    label: float


def passages_of(text: str, limit: int) -> list[str]:
    return split_passages(text, PASSAGE_WORDS, PASSAGE_OVERLAP)[:limit]


class CrossEncoderReranker:
    """A sequence-pair model with one relevance logit.

    Args:
        model: a ``AutoModelForSequenceClassification`` with ``num_labels=1``.
        tokenizer: its tokenizer.
        query_passages: at most this many passages of the query are used.
        doc_passages: at most this many passages per candidate.
        max_length: tokens per pair.
        batch_size: pairs per forward pass.
    """

    kind = "cross-encoder"

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        query_passages: int = 4,
        doc_passages: int = 4,
        max_length: int = 256,
        batch_size: int = 32,
        source: str = "",
        provenance: Mapping[str, Any] | None = None,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.query_passages = query_passages
        self.doc_passages = doc_passages
        self.max_length = max_length
        self.batch_size = batch_size
        self.source = source
        #: what it was made from (base model and its weights' checksum, training pairs' checksum)
        self.provenance: dict[str, Any] = dict(provenance or {"base_model": source})
        self._cache: dict[tuple[str, str, str], float] = {}

    @property
    def device(self) -> Any:
        return next(self.model.parameters()).device

    @classmethod
    def from_base(
        cls, base_model: str | None = None, device: str | None = None, **kwargs: Any
    ) -> CrossEncoderReranker:
        """A fresh (untrained head) cross-encoder on top of an encoder: HF id, local path, or the packaged
        all-MiniLM-L6-v2."""
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        source = resolve_model_path(base_model)
        local = Path(source).exists()
        try:
            tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local)
            model = AutoModelForSequenceClassification.from_pretrained(
                source, num_labels=1, local_files_only=local
            )
        except OSError as e:
            raise ModelNotFoundError(f"cannot load {source!r} for a cross-encoder: {e}") from e
        model.to(resolve_device(device))
        provenance = {"base_model": source, "base_model_sha256": weights_sha256(source)}
        return cls(model, tokenizer, source=source, provenance=provenance, **kwargs)

    @classmethod
    def load(cls, path: str | Path, device: str | None = None, **kwargs: Any) -> CrossEncoderReranker:
        """Load a directory written by :meth:`save` (or of format 1); ``kwargs`` override the stored options.

        Raises:
            ModelNotFoundError: nothing at ``path``.
            ModelError: not a cross-encoder, of a newer format, or its model files cannot be read.
        """
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        path = Path(path)
        cfg = read_config(path, ARTIFACT)
        model_dir = path / str(cfg.get("model_subdir", MODEL_SUBDIR))
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
            model = AutoModelForSequenceClassification.from_pretrained(str(model_dir), local_files_only=True)
        except OSError as e:
            raise ModelError(
                f"{path}: cannot read the cross-encoder's model ({e}); {ARTIFACT.rebuild}"
            ) from e
        model.to(resolve_device(device))
        opts = {"max_length": int(cfg.get("max_length", 256)), **kwargs}
        return cls(model, tokenizer, source=str(path), provenance=cfg["provenance"], **opts)

    def save(
        self,
        path: str | Path,
        training: Mapping[str, Any] | None = None,
        *,
        provenance: Mapping[str, Any] | None = None,
    ) -> Path:
        """Write the artifact directory (see the module docstring); ``provenance`` adds to :attr:`provenance`."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(str(path / MODEL_SUBDIR))
        self.tokenizer.save_pretrained(str(path / MODEL_SUBDIR))
        self.provenance.update(provenance or {})
        training = dict(training or {})
        cfg = write_config(
            path,
            ARTIFACT,
            {"max_length": self.max_length, "model_subdir": MODEL_SUBDIR, "training": training},
            provenance=self.provenance,
        )
        write_card(
            path,
            "# Cross-encoder re-ranker\n\n"
            "Scores (query passage, candidate passage) pairs with one relevance logit; a candidate's score is the\n"
            "maximum over its passage pairs.\n\n"
            f"- fine-tuned from `{self.provenance.get('base_model')}` (weights sha256 "
            f"`{self.provenance.get('base_model_sha256')}`)\n"
            f"- training pairs sha256: `{self.provenance.get('training_data_sha256')}`\n"
            f"- training: `{json.dumps(training)}`\n"
            f"- max length {self.max_length} tokens; built by compliance {cfg['package_version']}\n",
        )
        return path

    # -- inference ------------------------------------------------------------------------------------------
    def pair_outputs(
        self, pairs: Sequence[tuple[str, str]], hidden: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """Logits (n,) and, if ``hidden``, the last-layer [CLS] vectors (n, dim) of sequence pairs."""
        import torch

        self.model.eval()
        logits = np.zeros(len(pairs), dtype=np.float32)
        dim = int(self.model.config.hidden_size)
        vecs = np.zeros((len(pairs), dim if hidden else 0), dtype=np.float32)
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                idx = order[start : start + self.batch_size]
                batch = self.tokenizer(
                    [pairs[i][0] for i in idx],
                    [pairs[i][1] for i in idx],
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                )
                batch = {k: v.to(self.device) for k, v in batch.items()}
                out = self.model(**batch, output_hidden_states=hidden)
                logits[idx] = out.logits[:, 0].float().cpu().numpy()
                if hidden:
                    vecs[idx] = out.hidden_states[-1][:, 0].float().cpu().numpy()
        return logits, vecs

    def passage_pairs(
        self, query: str, candidates: Sequence[Document]
    ) -> tuple[list[tuple[str, str]], list[tuple[int, int, int]]]:
        """All (query passage, candidate passage) pairs and their (candidate, query passage, doc passage) index."""
        qp = passages_of(query, self.query_passages)
        pairs: list[tuple[str, str]] = []
        where: list[tuple[int, int, int]] = []
        for c, doc in enumerate(candidates):
            for j, dp in enumerate(passages_of(doc.text, self.doc_passages)):
                for i, q in enumerate(qp):
                    pairs.append((q, dp))
                    where.append((c, i, j))
        return pairs, where

    def score(self, query: str, candidates: Sequence[Document]) -> np.ndarray:
        """Document scores: the maximum logit over passage pairs (memoised per query and candidate text, so
        variants re-ranking the same candidates cost nothing; the memo holds at most 50,000 entries)."""
        qh = text_hash(query)
        keys = [(qh, d.id, text_hash(d.text)) for d in candidates]
        todo = [i for i, key in enumerate(keys) if key not in self._cache]
        if todo:
            pairs, where = self.passage_pairs(query, [candidates[i] for i in todo])
            logits, _ = self.pair_outputs(pairs)
            best = np.full(len(todo), -np.inf, dtype=np.float32)
            for (c, _, _), v in zip(where, logits, strict=True):
                best[c] = max(best[c], v)
            if len(self._cache) > 50_000:
                self._cache.clear()
            for j, i in enumerate(todo):
                self._cache[keys[i]] = float(best[j])
        return np.array([self._cache[key] for key in keys], dtype=np.float32)


def build_pairs(
    queries: Mapping[str, str],
    gold: Mapping[str, set[str]],
    bm25: BM25Index,
    documents: Mapping[str, Document],
    negatives: int = 3,
    seed: int = 0,
) -> list[PairExample]:
    """Training pairs: query's first passage × best-BM25 passage of each gold document (1) and of the top BM25
    non-gold documents (0, hard negatives)."""

    rng = random.Random(seed)
    analyzer = bm25.analyzer
    examples: list[PairExample] = []

    def best_passage(q_terms: set[str], text: str) -> str:
        parts = passages_of(text, 1000)
        return max(parts, key=lambda p: (len(q_terms & set(analyzer.tokenize(p))), -parts.index(p)))

    for qid, text in queries.items():
        q_passage = passages_of(text, 1)[0]
        q_terms = set(analyzer.tokenize(q_passage))
        for d in sorted(gold.get(qid, ())):
            if d in documents:
                examples.append(PairExample(q_passage, best_passage(q_terms, documents[d].text), 1.0))
        ranked = [h.id for h in bm25.search(text, k=negatives + len(gold.get(qid, ())) + 5)]
        negs = [d for d in ranked if d not in gold.get(qid, set())][:negatives]
        for d in negs:
            examples.append(PairExample(q_passage, best_passage(q_terms, documents[d].text), 0.0))
    rng.shuffle(examples)
    return examples


def train_cross_encoder(
    examples: Sequence[PairExample],
    base_model: str | None = None,
    out_dir: str | Path | None = None,
    epochs: int = 1,
    lr: float = 3e-5,
    batch_size: int = 16,
    max_length: int = 256,
    seed: int = 0,
    device: str | None = None,
    max_steps: int | None = None,
) -> tuple[CrossEncoderReranker, list[float]]:
    """Fine-tune a cross-encoder with binary cross-entropy; returns it (saved to ``out_dir`` if given) and the
    per-step losses."""
    import torch

    from compliance.progress import bar

    if not examples:
        raise ModelError("no training pairs for the cross-encoder")
    torch.manual_seed(seed)
    reranker = CrossEncoderReranker.from_base(base_model, device=device, max_length=max_length)
    model = reranker.model
    model.train()
    optim = torch.optim.AdamW(model.parameters(), lr=lr)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    rng = random.Random(seed)
    losses: list[float] = []
    order = list(range(len(examples)))
    steps_per_epoch = (len(order) + batch_size - 1) // batch_size
    total = steps_per_epoch * epochs if max_steps is None else min(max_steps, steps_per_epoch * epochs)
    with bar(total, desc="cross-encoder", unit="step") as progress:
        for _ in range(epochs):
            rng.shuffle(order)
            for start in range(0, len(order), batch_size):
                if len(losses) >= total:
                    break
                idx = order[start : start + batch_size]
                batch = reranker.tokenizer(
                    [examples[i].query for i in idx],
                    [examples[i].passage for i in idx],
                    padding=True,
                    truncation=True,
                    max_length=max_length,
                    return_tensors="pt",
                )
                batch = {k: v.to(reranker.device) for k, v in batch.items()}
                labels = torch.tensor(
                    [examples[i].label for i in idx], dtype=torch.float32, device=reranker.device
                )
                logits = model(**batch).logits[:, 0]
                loss = loss_fn(logits, labels)
                optim.zero_grad()
                loss.backward()
                optim.step()
                losses.append(float(loss.detach()))
                progress.update(1)
    model.eval()
    if out_dir is not None:
        reranker.save(
            out_dir,
            {
                "pairs": len(examples),
                "epochs": epochs,
                "lr": lr,
                "batch_size": batch_size,
                "steps": len(losses),
                "seed": seed,
                "loss": "bce",
            },
            provenance={
                "training_data_sha256": json_sha256([[e.query, e.passage, e.label] for e in examples])
            },
        )
    return reranker, losses
