"""Paragraph-role use cases: train the role model on a labelled role set, evaluate it, and the role filter the
audit and the alerts share."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["RoleTrainRequest", "evaluate_roles", "train_roles"]


@dataclass(frozen=True)
class RoleTrainRequest:
    """What ``compliance roles train`` asks for.

    Attributes:
        labels: the labelled role set (``labels.jsonl`` or its folder; ``tools/roles/build_role_set.py``).
        out: the model directory to write (default: ``<model dir>/paragraph-roles``).
        embedding: also fit the head over the all-MiniLM-L6-v2 sentence embedding (needs the ``ml`` extra).
        evaluate_splits: the held-out splits evaluated after training and written into the model card.
        device: where the encoder runs.
    """

    labels: Path
    out: Path | None = None
    embedding: bool = False
    evaluate_splits: tuple[str, ...] = ("test", "demo")
    device: str | None = None


def train_roles(
    request: RoleTrainRequest, *, on_progress: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """Train the paragraph role model, evaluate it on the held-out splits, and save it with its model card.

    Returns:
        ``{"path", "training_set", "evaluation"}`` (evaluation per split and head: :func:`evaluate_roles`).

    Raises:
        ConfigurationError: no labelled set, or no training documents in it.
        MissingDependencyError: ``embedding`` without the ``ml`` extra.
    """
    from compliance.connectors.roles import user_role_model_dir
    from compliance.models.roles import RoleTrainingConfig, load_role_set, minilm_embedder, train_role_model

    role_set = load_role_set(request.labels)
    embed = minilm_embedder(request.device) if request.embedding else None
    model, summary = train_role_model(
        role_set, RoleTrainingConfig(embedding=request.embedding), embed=embed, on_progress=on_progress
    )
    present = {d.split for d in role_set}
    splits = tuple(s for s in request.evaluate_splits if s in present)
    evaluation = _evaluate(role_set, model, embed, splits)
    model.meta["evaluation"] = {
        head: {s: _headline(m) for s, m in res.items()} for head, res in evaluation.items()
    }
    out = request.out or user_role_model_dir()
    model.save(out, card=_card(summary, evaluation))
    return {"path": str(out), "training_set": summary, "evaluation": evaluation}


def evaluate_roles(
    labels: Path,
    *,
    model_path: Path | None = None,
    splits: Sequence[str] = ("test",),
    embedding: bool = True,
    device: str | None = None,
) -> dict[str, Any]:
    """Evaluate a role model (default: the one in use) on splits of a labelled role set: precision and recall per
    role for each head (``structure``, and ``embedding`` when the model has it and ``embedding`` is on).

    Raises:
        ConfigurationError: no labelled set, or no documents in a split.
    """
    from compliance.connectors.roles import RoleModel, default_role_model
    from compliance.models.roles import load_role_set, minilm_embedder

    role_set = load_role_set(labels)
    model = RoleModel.load(model_path) if model_path is not None else default_role_model()
    embed = minilm_embedder(device) if embedding and model.has_embedding_head else None
    return _evaluate(role_set, model, embed, tuple(splits))


def _evaluate(role_set: Any, model: Any, embed: Any, splits: tuple[str, ...]) -> dict[str, Any]:
    from compliance.models.roles import evaluate_roles as run

    out: dict[str, Any] = {}
    if not splits:
        return out
    out["structure"] = run(role_set, model=model, embed=None, splits=splits)
    if embed is not None and model.has_embedding_head:
        out["embedding"] = run(role_set, model=model, embed=embed, splits=splits)
    return out


def _headline(metrics: dict[str, Any]) -> dict[str, Any]:
    return {
        "paragraphs": metrics["paragraphs"],
        "accuracy": round(metrics["accuracy"], 4),
        "macro_f1": round(metrics["macro_f1"], 4),
        "mapped_precision": round(metrics["mapped"]["precision"], 4),
        "mapped_recall": round(metrics["mapped"]["recall"], 4),
    }


def _card(summary: dict[str, Any], evaluation: dict[str, Any]) -> str:
    lines = [
        "# Paragraph role model",
        "",
        "Multinomial logistic regression that gives each paragraph its role (statement, definition, description,",
        "heading, metadata, form, furniture, reference) where the structural rules of",
        "`compliance.connectors.roles` are not certain. Trained by `compliance roles train` on the labelled role",
        "set built by `tools/roles/build_role_set.py` (documents written for the project; whole documents held",
        "out). See docs/roles.md.",
        "",
        f"Training set: {summary['documents']} documents, {summary['paragraphs']} paragraphs "
        f"({', '.join(f'{r} {n}' for r, n in summary['per_role'].items() if n)}).",
        "",
    ]
    for head, per_split in evaluation.items():
        for split, m in per_split.items():
            lines += [
                f"## {head} head, {split} split ({m['documents']} documents, {m['paragraphs']} paragraphs)",
                "",
                f"Accuracy {m['accuracy']:.3f}, macro F1 {m['macro_f1']:.3f}; mapped roles (statement, "
                f"definition): precision {m['mapped']['precision']:.3f}, recall {m['mapped']['recall']:.3f}.",
                "",
                "| role | precision | recall | support |",
                "| --- | --- | --- | --- |",
                *(
                    f"| {r} | {v['precision']:.2f} | {v['recall']:.2f} | {v['support']} |"
                    for r, v in m["per_role"].items()
                ),
                "",
            ]
    return "\n".join(lines)
