"""Task-adaptive pre-training stages of seed 000 §3, run on the encoder body before fine-tuning.

* **Related Sentence Prediction (RSP)**: a pair ``(unit of article A_i, other text)`` is *related* when the other
  text is a unit of the same article (article level) or a recital associated with A_i (recital level), and
  *unrelated* when it comes from another, uniformly drawn article (or from a recital not associated with A_i).
  Positives and negatives are balanced per article. The encoder reads the pair as one sequence
  (``[CLS] a [SEP] b [SEP]``) and a binary head on the mean-pooled output predicts relatedness.
* **Multiple Choice Answering (MCA)**: for a unit ``p`` of A_i, ``k`` choices (one unit of A_i or one associated
  recital, ``k - 1`` from other articles/recitals) in shuffled order; every ``(p, choice)`` pair is scored by a
  linear head and a softmax over the ``k`` choices is trained to pick the related one.

Only the held-out-free training units and training recitals are used, so no QA/QR query leaks in.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from compliance.errors import ConfigurationError
from compliance.progress import bar

if TYPE_CHECKING:  # pragma: no cover
    from compliance.models.encoder import Encoder

__all__ = ["McaInstance", "RspPair", "TaptConfig", "build_mca", "build_rsp", "run_tapt"]


@dataclass(frozen=True)
class TaptConfig:
    """One task-adaptive pre-training stage.

    Attributes:
        task: ``rsp`` or ``mca``.
        level: ``article``, ``recital`` or ``both``.
        max_per_article: cap on positive pairs (RSP) or instances (MCA) per article and level (CPU budget).
        k: number of choices (MCA).
        epochs: passes over the stage's instances.
        lr: learning rate of the encoder and the stage head.
        batch_size: pairs (RSP) or instances (MCA) per step.
        max_length: tokens per pair.
        seed: sampling and shuffling seed.
    """

    task: str = "rsp"
    level: str = "both"
    max_per_article: int = 8
    k: int = 4
    epochs: int = 1
    lr: float = 3e-5
    batch_size: int = 16
    max_length: int = 128
    seed: int = 7

    def __post_init__(self) -> None:
        if self.task not in {"rsp", "mca"}:
            raise ConfigurationError(f"unknown task-adaptive pre-training task {self.task!r} (rsp, mca)")
        if self.level not in {"article", "recital", "both"}:
            raise ConfigurationError(f"unknown level {self.level!r} (article, recital, both)")
        if self.k < 2:
            raise ConfigurationError("MCA needs k >= 2 choices")


@dataclass(frozen=True)
class RspPair:
    a: str
    b: str
    related: bool


@dataclass(frozen=True)
class McaInstance:
    query: str
    choices: tuple[str, ...]
    answer: int


def _levels(level: str) -> list[str]:
    return ["article", "recital"] if level == "both" else [level]


def build_rsp(
    units: Mapping[int, Sequence[str]],
    recitals: Mapping[int, Sequence[str]],
    config: TaptConfig,
) -> list[RspPair]:
    """Balanced RSP pairs. ``units``: article → its training units; ``recitals``: article → texts of its
    training recitals (whole recitals, as in the seed)."""
    rng = random.Random(config.seed)
    arts = sorted(a for a in units if units[a])
    all_recitals = sorted({r for rs in recitals.values() for r in rs})
    pairs: list[RspPair] = []
    for level in _levels(config.level):
        for a in arts:
            us = list(units[a])
            if level == "article":
                if len(us) < 2:
                    continue
                pos = [(x, y) for i, x in enumerate(us) for y in us[i + 1 :]]
            else:
                recs = list(recitals.get(a, ()))
                pos = [(x, r) for x in us for r in recs]
            rng.shuffle(pos)
            pos = pos[: config.max_per_article]
            for x, y in pos:
                pairs.append(RspPair(x, y, True))
                if level == "article":
                    other = rng.choice([b for b in arts if b != a])
                    neg = rng.choice(list(units[other]))
                else:
                    own = set(recitals.get(a, ()))
                    candidates = [r for r in all_recitals if r not in own]
                    if not candidates:
                        continue
                    neg = rng.choice(candidates)
                pairs.append(RspPair(x, neg, False))
    rng.shuffle(pairs)
    return pairs


def build_mca(
    units: Mapping[int, Sequence[str]],
    recitals: Mapping[int, Sequence[str]],
    config: TaptConfig,
) -> list[McaInstance]:
    """MCA instances with ``k`` shuffled choices, exactly one related."""
    rng = random.Random(config.seed)
    arts = sorted(a for a in units if units[a])
    all_recitals = sorted({r for rs in recitals.values() for r in rs})
    out: list[McaInstance] = []
    for level in _levels(config.level):
        for a in arts:
            us = list(units[a])
            rng.shuffle(us)
            for p in us[: config.max_per_article]:
                if level == "article":
                    same = [u for u in units[a] if u != p]
                    if not same:
                        continue
                    correct = rng.choice(same)
                    others = rng.sample([b for b in arts if b != a], config.k - 1)
                    wrong = [rng.choice(list(units[b])) for b in others]
                else:
                    own = list(recitals.get(a, ()))
                    candidates = [r for r in all_recitals if r not in set(own)]
                    if not own or len(candidates) < config.k - 1:
                        continue
                    correct = rng.choice(own)
                    wrong = rng.sample(candidates, config.k - 1)
                choices = [correct, *wrong]
                rng.shuffle(choices)
                out.append(McaInstance(p, tuple(choices), choices.index(correct)))
    rng.shuffle(out)
    return out


def run_tapt(
    encoder: Encoder, instances: Sequence[RspPair] | Sequence[McaInstance], config: TaptConfig
) -> list[dict[str, float]]:
    """Train the encoder body on RSP pairs or MCA instances in place; returns the loss/accuracy curve."""
    import torch

    torch.manual_seed(config.seed)
    dev = encoder.device
    n_out = 2 if config.task == "rsp" else 1
    head = torch.nn.Linear(encoder.hidden_size, n_out).to(dev)
    params = [p for p in encoder.model.parameters() if p.requires_grad] + list(head.parameters())
    opt = torch.optim.AdamW(params, lr=config.lr, weight_decay=0.01)
    bs = config.batch_size
    steps = config.epochs * ((len(instances) + bs - 1) // bs)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / max(1, steps // 10)) * max(0.0, 1 - s / max(1, steps))
    )
    curve: list[dict[str, float]] = []
    encoder.model.train()
    step = 0
    with bar(steps, desc=f"{config.task.upper()} pre-training", unit="step") as progress:
        for _ in range(config.epochs):
            for start in range(0, len(instances), bs):
                chunk = instances[start : start + bs]
                if config.task == "rsp":
                    firsts = [c.a for c in chunk]  # type: ignore[union-attr]
                    seconds = [c.b for c in chunk]  # type: ignore[union-attr]
                    target = torch.tensor([int(c.related) for c in chunk], device=dev)  # type: ignore[union-attr]
                else:
                    firsts = [c.query for c in chunk for _ in c.choices]  # type: ignore[union-attr]
                    seconds = [ch for c in chunk for ch in c.choices]  # type: ignore[union-attr]
                    target = torch.tensor([c.answer for c in chunk], device=dev)  # type: ignore[union-attr]
                batch = encoder.tokenizer(
                    firsts,
                    seconds,
                    padding=True,
                    truncation=True,
                    max_length=config.max_length,
                    return_tensors="pt",
                )
                batch = {k: v.to(dev) for k, v in batch.items()}
                pooled = encoder.pooled(batch)
                logits = head(pooled.float())
                if config.task == "mca":
                    logits = logits.view(len(chunk), -1)
                loss = torch.nn.functional.cross_entropy(logits, target)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, 1.0)
                opt.step()
                sched.step()
                opt.zero_grad(set_to_none=True)
                acc = float((logits.argmax(-1) == target).float().mean())
                loss_value = float(loss.detach())
                curve.append({"step": step, "loss": loss_value, "acc": acc})
                step += 1
                progress.update(1)
                progress.set_postfix(loss=f"{loss_value:.3f}", acc=f"{acc:.2f}")
    encoder.model.eval()
    return curve


def summarise(curve: Sequence[dict[str, float]], window: int = 20) -> dict[str, Any]:
    """First and last ``window``-step averages of a curve (to show that a stage learned something)."""
    if not curve:
        return {"steps": 0}
    head, tail = curve[:window], curve[-window:]
    return {
        "steps": len(curve),
        "loss_first": sum(c["loss"] for c in head) / len(head),
        "loss_last": sum(c["loss"] for c in tail) / len(tail),
        "acc_first": sum(c["acc"] for c in head) / len(head),
        "acc_last": sum(c["acc"] for c in tail) / len(tail),
    }
