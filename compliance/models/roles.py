"""Training and evaluating the paragraph role model (:class:`compliance.connectors.roles.RoleModel`).

The labelled role set is a folder with documents and ``labels.jsonl`` (written by
``tools/roles/build_role_set.py``): one line per document with its ``file`` (relative to the folder, or
absolute), its ``split`` (``train``, ``test`` or ``demo``; whole documents are held out) and its labelled
``pieces`` (``{"role", "text"}``: every block of the source, every table cell with its row's role, the page
header and footer). Labels belong to the source text, not to what a parser makes of it: :func:`align_roles` gives
each parsed paragraph the role of the pieces that cover most of its characters, so the set stays valid when the
parser changes.

The model is multinomial logistic regression fitted by full-batch gradient descent (Adam, L2 penalty, classes
weighted by the inverse square root of their frequency) on standardised :data:`~compliance.connectors.roles.
FEATURE_NAMES`, once on those features alone (the ``structure`` head) and once with the paragraph's
all-MiniLM-L6-v2 sentence embedding appended (the ``embedding`` head). :func:`evaluate_roles` runs the whole
assignment — the certain rules, then the model — and reports precision and recall per role, beside the share of
mapped paragraphs (statements and definitions) that are truly mapped roles.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from compliance.connectors.document import PARAGRAPH_ROLES, ParsedDocument
from compliance.connectors.roles import (
    FEATURE_NAMES,
    MAPPED_ROLES,
    Embedder,
    RoleContext,
    RoleModel,
    assign_roles,
    document_features,
)
from compliance.errors import ConfigurationError

__all__ = [
    "LabelledDocument",
    "RoleTrainingConfig",
    "align_roles",
    "evaluate_roles",
    "fit_logistic",
    "load_role_set",
    "minilm_embedder",
    "role_metrics",
    "train_role_model",
]

_ALNUM_RE = re.compile(r"[^0-9a-z]+")


@dataclass(frozen=True)
class LabelledDocument:
    """One document of the labelled role set."""

    path: Path
    split: str
    style: str
    pieces: tuple[tuple[str, str], ...]  # (role, text)


@dataclass(frozen=True)
class RoleTrainingConfig:
    """How the role model is fitted (recorded in its config.json).

    Attributes:
        l2: L2 penalty on the weights (not the bias); 0.03 was chosen by grouped 5-fold cross-validation over
            the training documents (``python -m experiments.role_regularisation``).
        steps: gradient steps (full batch, Adam).
        learning_rate: Adam step size.
        seed: initialisation seed (the optimum is unique; the seed only matters for early stopping).
        embedding: also fit the head over the MiniLM sentence embedding (off by default: on the labelled set
            it did not improve the held-out figures, and the structure head needs no encoder at ingest time).
    """

    l2: float = 0.03
    steps: int = 600
    learning_rate: float = 0.05
    seed: int = 0
    embedding: bool = False


def load_role_set(labels: str | Path) -> list[LabelledDocument]:
    """Read ``labels.jsonl`` (see the module docstring); relative files are resolved against its folder.

    Raises:
        ConfigurationError: the file is missing or a line is malformed.
    """
    path = Path(labels)
    if path.is_dir():
        path = path / "labels.jsonl"
    if not path.is_file():
        raise ConfigurationError(
            f"no labelled role set at {path}; build one with `python tools/roles/build_role_set.py`"
        )
    out: list[LabelledDocument] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            file = Path(row["file"])
            pieces = tuple((str(p["role"]), str(p["text"])) for p in row["pieces"])
            bad = {r for r, _ in pieces} - set(PARAGRAPH_ROLES)
            if bad:
                raise ValueError(f"unknown roles {sorted(bad)}")
            out.append(
                LabelledDocument(
                    file if file.is_absolute() else path.parent / file,
                    str(row.get("split", "train")),
                    str(row.get("style", "")),
                    pieces,
                )
            )
        except (KeyError, TypeError, ValueError) as e:
            raise ConfigurationError(f"{path}:{number}: not a labelled document line ({e})") from e
    return out


def _squash(text: str) -> str:
    return _ALNUM_RE.sub("", text.lower())


def align_roles(doc: ParsedDocument, pieces: Sequence[tuple[str, str]]) -> list[str | None]:
    """The gold role of each paragraph of ``doc``: the role whose pieces cover most of its characters.

    Texts are compared with everything but letters and digits removed (so re-flowed lines, de-hyphenation, list
    markers and the ``"Header: value; "`` shape of table rows do not matter). A piece of at least four characters
    found inside the paragraph counts its length; a paragraph of at least twelve characters found inside a
    longer piece (a split paragraph) counts its own; a shorter fragment takes the role of the pieces holding it
    when they all have one role. None when nothing matches.
    """
    squashed = [(role, _squash(text)) for role, text in pieces]
    out: list[str | None] = []
    for para in doc.paragraphs:
        target = _squash(para.text)
        score: Counter[str] = Counter()
        for role, piece in squashed:
            if len(piece) >= 4 and piece in target:
                score[role] += len(piece)
            elif len(target) >= 12 and target in piece:
                score[role] += len(target)
        if not score and len(target) >= 4:  # a fragment (a blank line of a form): the pieces holding it agree
            holders = {role for role, piece in squashed if target in piece}
            if len(holders) == 1:
                score[holders.pop()] = 1
        out.append(score.most_common(1)[0][0] if score else None)
    return out


@lru_cache(maxsize=2)
def _encoder(device: str | None) -> Any:
    from compliance.models.encoder import load_encoder

    return load_encoder(None, device=device)


def minilm_embedder(device: str | None = None) -> Embedder:
    """Sentence embeddings from the packaged all-MiniLM-L6-v2 (loaded once per process).

    Raises:
        MissingDependencyError: the ``ml`` extra is not installed.
    """
    encoder = _encoder(device)

    def embed(texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, encoder.hidden_size), dtype=np.float32)
        return np.asarray(encoder.embed(list(texts), max_length=128).numpy(), dtype=np.float32)

    return embed


@dataclass
class _Examples:
    features: np.ndarray
    labels: np.ndarray
    texts: list[str]
    unaligned: int = 0
    documents: int = 0
    per_document: list[tuple[ParsedDocument, list[str | None]]] = field(default_factory=list)


def _parse(docs: Sequence[LabelledDocument]) -> list[tuple[ParsedDocument, LabelledDocument]]:
    from compliance.connectors import parse_path

    return [(parse_path(d.path), d) for d in docs]


def _examples(parsed: Sequence[tuple[ParsedDocument, LabelledDocument]]) -> _Examples:
    context = RoleContext.from_documents([doc for doc, _ in parsed])
    rows: list[list[float]] = []
    labels: list[int] = []
    texts: list[str] = []
    unaligned = 0
    per_document = []
    for doc, labelled in parsed:
        gold = align_roles(doc, labelled.pieces)
        per_document.append((doc, gold))
        for para, feats, role in zip(doc.paragraphs, document_features(doc, context), gold, strict=True):
            if role is None:
                unaligned += 1
                continue
            rows.append(feats)
            labels.append(PARAGRAPH_ROLES.index(role))  # type: ignore[arg-type]
            texts.append(para.text)
    return _Examples(
        np.asarray(rows, dtype=np.float64).reshape(-1, len(FEATURE_NAMES)),
        np.asarray(labels, dtype=np.int64),
        texts,
        unaligned,
        len(parsed),
        per_document,
    )


def fit_logistic(
    x: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    *,
    l2: float = 1e-3,
    steps: int = 600,
    learning_rate: float = 0.05,
    class_weight: np.ndarray | None = None,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Multinomial logistic regression: weights (features × classes) and bias minimising the weighted mean
    cross-entropy plus ``l2`` × ‖W‖², by full-batch Adam.

    Args:
        x: inputs (examples × features), already scaled.
        y: class indexes.
        n_classes: number of classes (classes without examples get a low bias).
        l2: L2 penalty on the weights.
        steps: gradient steps.
        learning_rate: Adam step size.
        class_weight: weight per class (default 1).
        seed: initialisation seed.
    """
    rng = np.random.default_rng(seed)
    n, d = x.shape
    w = rng.normal(0.0, 0.01, size=(d, n_classes))
    b = np.zeros(n_classes)
    onehot = np.zeros((n, n_classes))
    onehot[np.arange(n), y] = 1.0
    cw = np.ones(n_classes) if class_weight is None else np.asarray(class_weight, dtype=np.float64)
    sample_w = cw[y]
    sample_w = sample_w / sample_w.sum()
    m_w, v_w = np.zeros_like(w), np.zeros_like(w)
    m_b, v_b = np.zeros_like(b), np.zeros_like(b)
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    for t in range(1, steps + 1):
        logits = x @ w + b
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        err = (p - onehot) * sample_w[:, None]
        g_w = x.T @ err + 2 * l2 * w
        g_b = err.sum(axis=0)
        for g, m, v, param in ((g_w, m_w, v_w, w), (g_b, m_b, v_b, b)):
            m *= beta1
            m += (1 - beta1) * g
            v *= beta2
            v += (1 - beta2) * g * g
            param -= learning_rate * (m / (1 - beta1**t)) / (np.sqrt(v / (1 - beta2**t)) + eps)
    return w, b


def _standardise(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-6] = 1.0
    mean[FEATURE_NAMES.index("bias_one")] = 0.0
    return mean, scale


def train_role_model(
    role_set: Sequence[LabelledDocument],
    config: RoleTrainingConfig | None = None,
    *,
    embed: Embedder | None = None,
    on_progress: Callable[[str], None] | None = None,
) -> tuple[RoleModel, dict[str, Any]]:
    """Fit the role model on the ``train`` documents of the role set.

    Args:
        role_set: the labelled documents (:func:`load_role_set`); only ``split == "train"`` ones are used.
        config: fitting parameters.
        embed: sentence embeddings (required when ``config.embedding``).
        on_progress: called with a line of text at each stage.

    Returns:
        The model (both heads, or the structure head alone) and a training summary (documents, paragraphs per
        role, unaligned paragraphs).

    Raises:
        ConfigurationError: no training documents, or ``config.embedding`` without ``embed``.
    """
    from compliance.artifacts import json_sha256

    config = config or RoleTrainingConfig()
    say = on_progress or (lambda _msg: None)
    train_docs = [d for d in role_set if d.split == "train"]
    if not train_docs:
        raise ConfigurationError("the role set has no documents in the train split")
    if config.embedding and embed is None:
        raise ConfigurationError("training the embedding head needs an embedder (the ml extra)")
    say(f"parsing {len(train_docs)} training documents")
    examples = _examples(_parse(train_docs))
    counts = np.bincount(examples.labels, minlength=len(PARAGRAPH_ROLES))
    class_weight = np.where(counts > 0, 1.0 / np.sqrt(np.maximum(counts, 1)), 0.0)
    class_weight = class_weight / class_weight[counts > 0].mean()
    mean, scale = _standardise(examples.features)
    x = (examples.features - mean) / scale
    say(f"fitting the structure head on {len(x)} paragraphs")
    fit = {
        "l2": config.l2,
        "steps": config.steps,
        "learning_rate": config.learning_rate,
        "class_weight": class_weight,
        "seed": config.seed,
    }
    w, b = fit_logistic(x, examples.labels, len(PARAGRAPH_ROLES), **fit)  # type: ignore[arg-type]
    heads: dict[str, dict[str, np.ndarray]] = {
        "structure": {"mean": mean, "scale": scale, "weights": w, "bias": b}
    }
    if config.embedding and embed is not None:
        say("embedding the training paragraphs")
        e = np.asarray(embed(examples.texts), dtype=np.float64)
        emb_mean = e.mean(axis=0)
        emb_scale = np.maximum(e.std(axis=0), 1e-6)
        say("fitting the embedding head")
        we, be = fit_logistic(
            np.hstack([x, (e - emb_mean) / emb_scale]),
            examples.labels,
            len(PARAGRAPH_ROLES),
            **fit,  # type: ignore[arg-type]
        )
        heads["embedding"] = {
            "mean": mean,
            "scale": scale,
            "emb_mean": emb_mean,
            "emb_scale": emb_scale,
            "weights": we,
            "bias": be,
        }
    summary = {
        "documents": examples.documents,
        "paragraphs": len(examples.labels),
        "unaligned": examples.unaligned,
        "per_role": {r: int(c) for r, c in zip(PARAGRAPH_ROLES, counts, strict=True)},
    }
    params = {
        "training": {k: v for k, v in config.__dict__.items()},
        "training_set": summary,
        "provenance": {
            "role_set_sha256": json_sha256(
                [[str(d.path.name), d.split, list(map(list, d.pieces))] for d in train_docs]
            )
        },
    }
    model = RoleModel(
        tuple(PARAGRAPH_ROLES),
        FEATURE_NAMES,
        heads,
        "all-MiniLM-L6-v2" if "embedding" in heads else None,
        params,
    )
    return model, summary


def role_metrics(gold: Sequence[str], predicted: Sequence[str]) -> dict[str, Any]:
    """Precision, recall, F1 and support per role, accuracy, macro F1 over the roles present, the confusion
    matrix, and the mapped-role view: precision and recall of "mapped" (statement or definition) paragraphs."""
    if len(gold) != len(predicted):
        raise ValueError("gold and predicted differ in length")
    per_role: dict[str, dict[str, float]] = {}
    for role in PARAGRAPH_ROLES:
        tp = sum(g == role and p == role for g, p in zip(gold, predicted, strict=True))
        n_pred = sum(p == role for p in predicted)
        n_gold = sum(g == role for g in gold)
        if not n_gold and not n_pred:
            continue
        precision = tp / n_pred if n_pred else 0.0
        recall = tp / n_gold if n_gold else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        per_role[role] = {
            "precision": precision,
            "recall": recall,
            "f1": f1,
            "support": n_gold,
            "predicted": n_pred,
        }
    present = [m for m in per_role.values() if m["support"]]
    mapped_gold = [g in MAPPED_ROLES for g in gold]
    mapped_pred = [p in MAPPED_ROLES for p in predicted]
    tp_m = sum(g and p for g, p in zip(mapped_gold, mapped_pred, strict=True))
    confusion: dict[str, dict[str, int]] = {}
    for g, p in zip(gold, predicted, strict=True):
        confusion.setdefault(g, {}).setdefault(p, 0)
        confusion[g][p] += 1
    return {
        "paragraphs": len(gold),
        "accuracy": sum(g == p for g, p in zip(gold, predicted, strict=True)) / len(gold) if gold else 0.0,
        "macro_f1": sum(m["f1"] for m in present) / len(present) if present else 0.0,
        "per_role": per_role,
        "mapped": {
            "precision": tp_m / sum(mapped_pred) if sum(mapped_pred) else 0.0,
            "recall": tp_m / sum(mapped_gold) if sum(mapped_gold) else 0.0,
            "mapped_but_not_statement_or_definition": sum(
                p and not g for g, p in zip(mapped_gold, mapped_pred, strict=True)
            ),
        },
        "confusion": confusion,
    }


def evaluate_roles(
    role_set: Sequence[LabelledDocument],
    *,
    model: RoleModel | None = None,
    embed: Embedder | None = None,
    splits: Sequence[str] = ("test",),
) -> dict[str, Any]:
    """The whole role assignment (:func:`~compliance.connectors.roles.assign_roles`: rules, then the model) on
    the documents of ``splits``, each split one batch; figures per split (:func:`role_metrics`) and the
    paragraphs it got wrong.

    Raises:
        ConfigurationError: no documents in those splits.
    """
    out: dict[str, Any] = {}
    for split in splits:
        docs = [d for d in role_set if d.split == split]
        if not docs:
            raise ConfigurationError(f"the role set has no documents in the {split!r} split")
        parsed = _parse(docs)
        assigned = assign_roles([doc for doc, _ in parsed], model=model, embed=embed)
        gold: list[str] = []
        predicted: list[str] = []
        errors: list[dict[str, Any]] = []
        unaligned = 0
        for doc, (_, labelled) in zip(assigned, parsed, strict=True):
            for para, role in zip(doc.paragraphs, align_roles(doc, labelled.pieces), strict=True):
                if role is None:
                    unaligned += 1
                    continue
                guess = para.role or "unassigned"
                gold.append(role)
                predicted.append(guess)
                if guess != role:
                    errors.append(
                        {
                            "file": labelled.path.name,
                            "ordinal": para.ordinal,
                            "gold": role,
                            "predicted": guess,
                            "text": para.text[:160],
                        }
                    )
        metrics = role_metrics(gold, predicted)
        metrics.update({"documents": len(docs), "unaligned": unaligned, "errors": errors})
        out[split] = metrics
    return out
