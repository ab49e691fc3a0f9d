"""The link decision: a bi-encoder fine-tuned on graded law-passage pairs, with an F1-optimal threshold.

Seed 002 (JurisBERT) fine-tunes a sentence-BERT on pairs graded 0–3 with a cosine-similarity loss, then picks
the decision threshold that maximises F1 on held-out pairs by trying every observed score as the threshold. We do
the same on pairs built from the law corpus (:mod:`compliance.linking.pairs`) and add an abstain band:

* ``score >= threshold`` → ``"propose"`` (a link is proposed / an alert is raised),
* ``lower <= score < threshold`` → ``"review"`` (needs a human),
* ``score < lower`` → ``"drop"``.

``lower`` is the highest score at which held-out recall of relevant pairs reaches ``review_recall``, but never
more than ``max_band`` below the threshold.

The trained artifact is a directory (the contract of :mod:`compliance.artifacts`)::

    config.json     kind "link-decision", format_version, package_version, provenance (training pairs' and base
                    model weights' sha256, law checksums), threshold, band, grading scheme, relevant grade,
                    training config, data description, held-out metrics (before/after fine-tuning)
    model/          the sentence-transformers model; absent when the kept weights are the base encoder's
                    (``max_steps=0``, or fine-tuning lowered held-out F1): config.json's ``encoder`` then names the
                    base encoder and its weights' sha256, and the artifact is a few kilobytes (the package ships
                    one, ``compliance/shipped/link-decision``)
    MODEL_CARD.md   model card

Format 1 (no ``format_version``, the card in ``README.md``) and format 2 (always ``model/``) load as well.
"""

from __future__ import annotations

import json
import logging
import math
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from compliance.artifacts import (
    model_spec,
    read_config,
    share_as_umask_allows,
    unversioned_upgrade,
    write_card,
    write_config,
)
from compliance.errors import ConfigurationError, ModelError, ModelNotFoundError
from compliance.linking.pairs import GRADE_SCHEME, GradedPair, PairSet
from compliance.runtime import DEFAULT_BASE_MODEL, resolve_device, resolve_model_path

if TYPE_CHECKING:  # pragma: no cover
    from sentence_transformers import SentenceTransformer

    from compliance.rules.corpus import Law

__all__ = [
    "ARTIFACT",
    "CLASSIFIER_ENCODER",
    "SHIPPED_CLASSIFIER",
    "Decision",
    "LinkDecisionConfig",
    "LinkDecisionModel",
    "ThresholdChoice",
    "abstain_band",
    "base_weights_sha256",
    "canonical_base_model",
    "classifier_encoder_dir",
    "decide",
    "f1_optimal_threshold",
    "train_link_decision",
]

logger = logging.getLogger(__name__)

Decision = Literal["propose", "review", "drop"]
MODEL_SUBDIR = "model"
#: ``base_model`` naming the encoder of the GDPR classifier in use (the default: fine-tuned on legal text by
#: article, it tells same-article passages apart far better than the packaged sentence encoder, docs/alerts.md)
CLASSIFIER_ENCODER = "gdpr-classifier"
#: ``base_model`` naming the encoder of the classifier shipped with the package (how the shipped link decision
#: records what it was calibrated on)
SHIPPED_CLASSIFIER = "shipped:gdpr-classifier"
_LEGACY_CARD = "README.md"  # format 1 named its card so


#: The link decision's artifact kind (see :mod:`compliance.artifacts`).
def _upgrade(cfg: dict[str, Any], path: Path) -> dict[str, Any]:
    """Formats 1 and 2 in the current shape: format 3 adds the optional base-encoder reference."""
    cfg = unversioned_upgrade("link-decision", 2)(cfg, path)
    if cfg.get("kind") == "link-decision" and cfg.get("format_version") == 2:
        return {**cfg, "format_version": 3}
    return cfg


ARTIFACT = model_spec(
    "link-decision",
    3,
    "link-decision model",
    "train one with `compliance alerts train-decision`",
    upgrade=_upgrade,
)


# -- threshold logic (pure) -------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ThresholdChoice:
    """The F1-optimal threshold and the figures at it (predict relevant iff ``score >= threshold``)."""

    threshold: float
    f1: float
    precision: float
    recall: float
    positives: int
    total: int


def f1_optimal_threshold(
    scores: Sequence[float] | np.ndarray, labels: Sequence[int] | np.ndarray
) -> ThresholdChoice:
    """Try every observed score as the threshold and keep the one with the best F1 (seed 002 §V-B).

    Ties in F1 are broken towards the higher threshold (fewer proposals for the same F1).

    Args:
        scores: similarity per pair.
        labels: 1 for relevant pairs, 0 otherwise.

    Raises:
        ConfigurationError: empty input, mismatched lengths or no relevant pair.
    """
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=np.int64)
    if s.ndim != 1 or s.shape != y.shape or s.size == 0:
        raise ConfigurationError("scores and labels must be non-empty 1-d sequences of the same length")
    positives = int(y.sum())
    if positives == 0:
        raise ConfigurationError("no relevant pair among the labels: cannot choose an F1-optimal threshold")
    order = np.argsort(-s, kind="stable")
    s_sorted, y_sorted = s[order], y[order]
    tp = np.cumsum(y_sorted)
    predicted = np.arange(1, s.size + 1)
    # a threshold equal to a score predicts every pair with that score or more: use the last index of each run
    last_of_run = np.r_[s_sorted[1:] != s_sorted[:-1], True]
    tp, predicted, cand = tp[last_of_run], predicted[last_of_run], s_sorted[last_of_run]
    precision = tp / predicted
    recall = tp / positives
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.where(tp > 0, 2 * precision * recall / (precision + recall), 0.0)
    best = int(np.argmax(f1))  # cand is descending, so argmax's first hit is the highest threshold
    return ThresholdChoice(
        threshold=float(cand[best]),
        f1=float(f1[best]),
        precision=float(precision[best]),
        recall=float(recall[best]),
        positives=positives,
        total=int(s.size),
    )


def abstain_band(
    scores: Sequence[float] | np.ndarray,
    labels: Sequence[int] | np.ndarray,
    threshold: float,
    *,
    review_recall: float = 0.9,
    max_band: float = 0.15,
) -> float:
    """The lower edge of the review band below ``threshold``.

    The highest score ``L <= threshold`` such that pairs with ``score >= L`` contain ``review_recall`` of the
    relevant pairs, clipped to ``[threshold - max_band, threshold]``.
    """
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=np.int64)
    pos = np.sort(s[y == 1])[::-1]
    if pos.size == 0:
        return threshold
    need = max(1, math.ceil(review_recall * pos.size))
    lower = float(pos[need - 1])
    return float(min(threshold, max(threshold - max_band, lower)))


def decide(score: float, threshold: float, lower: float) -> Decision:
    """``propose`` at or above the threshold, ``review`` in ``[lower, threshold)``, else ``drop``."""
    if score >= threshold:
        return "propose"
    if score >= lower:
        return "review"
    return "drop"


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman rank correlation (average ranks for ties)."""
    from scipy.stats import spearmanr

    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return 0.0
    value = spearmanr(a, b).statistic
    return float(value) if np.isfinite(value) else 0.0


# -- configuration ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class LinkDecisionConfig:
    """How the link-decision model is trained and calibrated (stored in its ``config.json``).

    The defaults train in about five minutes on two CPU cores: 640 training pairs (40 steps), one epoch,
    128 tokens; ``max_steps=0`` only calibrates the base model.
    ``freeze_layers`` > 0 freezes the token embeddings and that many lower transformer layers (cheaper steps).
    ``relevant_grade``: pairs of at least this grade count as relevant when the threshold is calibrated; 3 (same
    article) is stricter than 2 (same chapter) and gave no false alerts on the ePrivacy expectations where 2 gave
    one (docs/alerts.md).
    ``keep_best`` keeps the base weights when fine-tuning lowers the held-out F1 (seed 002 keeps the best
    checkpoint); the artifact records which was kept.
    """

    base_model: str = CLASSIFIER_ENCODER
    loss: Literal["cosent", "cosine"] = "cosine"
    epochs: int = 1
    batch_size: int = 16
    learning_rate: float = 2e-5
    warmup_ratio: float = 0.1
    max_seq_length: int = 128
    max_steps: int | None = None
    freeze_layers: int = 0
    train_per_grade: int = 160
    heldout_per_grade: int = 100
    heldout_fraction: float = 0.2
    relevant_grade: int = 3
    keep_best: bool = True
    review_recall: float = 0.9
    max_band: float = 0.15
    seed: int = 13
    device: str | None = None

    def __post_init__(self) -> None:
        if self.loss not in ("cosent", "cosine"):
            raise ConfigurationError(f"loss must be 'cosent' or 'cosine', got {self.loss!r}")
        if not 1 <= self.relevant_grade <= 3:
            raise ConfigurationError("relevant_grade must be 1, 2 or 3")
        if self.epochs < 1 or self.batch_size < 2:
            raise ConfigurationError("epochs must be >= 1 and batch_size >= 2")


# -- the model -------------------------------------------------------------------------------------------------
@dataclass
class LinkDecisionModel:
    """A bi-encoder plus its calibrated threshold and review band.

    Attributes:
        encoder: the sentence-transformers model (cosine similarity of its embeddings is the score).
        threshold: propose at or above this cosine similarity.
        lower: review band lower edge.
        info: the rest of ``config.json`` (config, grading scheme, provenance, metrics).
    """

    encoder: SentenceTransformer
    threshold: float
    lower: float
    info: dict[str, Any] = field(default_factory=dict)

    def encode(self, texts: Sequence[str], *, batch_size: int = 32) -> np.ndarray:
        """L2-normalised embeddings, one row per text."""
        if not texts:
            getter = (
                getattr(type(self.encoder), "get_embedding_dimension", None)
                or type(self.encoder).get_sentence_embedding_dimension
            )
            return np.zeros((0, getter(self.encoder) or 0), dtype=np.float32)
        vectors = self.encoder.encode(
            list(texts),
            batch_size=batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    def score_pairs(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """Cosine similarity of each ``(a[i], b[i])``."""
        if len(a) != len(b):
            raise ConfigurationError("score_pairs needs two sequences of the same length")
        ea, eb = self.encode(a), self.encode(b)
        return np.einsum("ij,ij->i", ea, eb) if len(a) else np.zeros(0, dtype=np.float32)

    def score_matrix(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """Cosine similarity of every ``a[i]`` with every ``b[j]`` (shape ``len(a) × len(b)``)."""
        return self.encode(a) @ self.encode(b).T

    def decide(self, score: float) -> Decision:
        """See :func:`decide`."""
        return decide(score, self.threshold, self.lower)

    # -- persistence ---------------------------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Write the self-describing artifact directory (see the module docstring)."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        base_only = self.info.get("training", {}).get("kept", "").startswith("base")
        if base_only:
            base = self.info.get("base_model") or DEFAULT_BASE_MODEL
            encoder_ref: dict[str, Any] = {
                "encoder": {
                    "source": "base",
                    "base_model": base,
                    "base_model_sha256": base_weights_sha256(base),
                    "max_seq_length": int(getattr(self.encoder, "max_seq_length", 0) or 0) or None,
                }
            }
        else:
            self.encoder.save(str(path / MODEL_SUBDIR))
            encoder_ref = {}
        skip = {
            "encoder",
            "threshold",
            "band",
            "decision_rule",
            "kind",
            "format_version",
            "package_version",
            "provenance",
        }
        config = write_config(
            path,
            ARTIFACT,
            {
                "threshold": self.threshold,
                "band": {"lower": self.lower, "upper": self.threshold},
                "decision_rule": "propose if score >= threshold; review if band.lower <= score < threshold; "
                "else drop (score = cosine similarity of the bi-encoder's embeddings)",
                **{k: v for k, v in self.info.items() if k not in skip},
                **encoder_ref,
            },
            provenance=self.info.get("provenance", {}),
        )
        write_card(path, _model_card(config))
        old_card = path / _LEGACY_CARD
        if old_card.is_file() and old_card.read_text(errors="ignore").startswith(
            "# Link-decision bi-encoder"
        ):
            old_card.unlink()  # format 1's card, replaced by MODEL_CARD.md
        share_as_umask_allows(path)  # safetensors writes 0600: other accounts could not load the model
        return path

    @classmethod
    def load(cls, path: str | Path, *, device: str | None = None) -> LinkDecisionModel:
        """Load an artifact written by :meth:`save` (or of format 1).

        Raises:
            ModelNotFoundError: no artifact at ``path``.
            ModelError: the directory is not a link-decision artifact, is of a newer format, or is incomplete.
        """
        path = Path(path)
        config = read_config(path, ARTIFACT)
        try:
            threshold, lower = float(config["threshold"]), float(config["band"]["lower"])
        except (KeyError, TypeError, ValueError) as e:
            raise ModelError(
                f"{path}: config.json has no threshold and band ({e}); {ARTIFACT.rebuild}"
            ) from e
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        ref = config.get("encoder")
        if isinstance(ref, dict) and ref.get("source") == "base" and not (path / MODEL_SUBDIR).is_dir():
            source = ref.get("base_model") or DEFAULT_BASE_MODEL
            expected, found = ref.get("base_model_sha256"), base_weights_sha256(source)
            if expected and found and expected != found:
                raise ModelError(
                    f"{path}: calibrated on base weights sha256 {str(expected)[:12]}…, but {source} has "
                    f"{found[:12]}…; {ARTIFACT.rebuild}"
                )
            encoder = _load_sentence_transformer(ref.get("base_model"), device)
            if ref.get("max_seq_length"):
                encoder.max_seq_length = int(ref["max_seq_length"])
            return cls(encoder, threshold, lower, config)
        try:
            encoder = SentenceTransformer(str(path / MODEL_SUBDIR), device=str(resolve_device(device)))
        except OSError as e:
            raise ModelError(f"{path}: cannot read the bi-encoder ({e}); {ARTIFACT.rebuild}") from e
        return cls(encoder, threshold, lower, config)

    @classmethod
    def from_base(
        cls, base_model: str | None = None, *, threshold: float, lower: float, device: str | None = None
    ) -> LinkDecisionModel:
        """An un-tuned encoder with a given threshold and band (for experiments and fallbacks)."""
        encoder = _load_sentence_transformer(base_model, device)
        return cls(
            encoder, threshold, lower, {"base_model": base_model or DEFAULT_BASE_MODEL, "tuned": False}
        )


def classifier_encoder_dir(name: str | None) -> Path | None:
    """The GDPR classifier directory whose encoder ``name`` means, or None when ``name`` is a plain encoder:
    :data:`CLASSIFIER_ENCODER` is the classifier in use (:func:`compliance.runtime.classifier_dir`),
    :data:`SHIPPED_CLASSIFIER` the one shipped with the package, and a directory holding a classifier artifact is
    that classifier.

    Raises:
        ModelNotFoundError: ``name`` names the classifier in use or the shipped one and there is none.
    """
    from compliance.runtime import CLASSIFIER_DIR_NAME, classifier_dir, shipped_model_dir

    if name is None:
        return None
    if name == SHIPPED_CLASSIFIER:
        shipped = shipped_model_dir(CLASSIFIER_DIR_NAME)
        if shipped is None:
            raise ModelNotFoundError(
                "the link decision is calibrated on the shipped GDPR classifier's encoder, but the package carries "
                "none (or the shipped_models setting is off); run `compliance alerts train-decision`"
            )
        return shipped
    path = classifier_dir() if name == CLASSIFIER_ENCODER else Path(name).expanduser()
    config = path / "config.json"
    if not config.is_file():
        if name == CLASSIFIER_ENCODER:
            raise ModelNotFoundError(f"no GDPR classifier at {path}: train one with `compliance train`")
        return None
    try:
        meta = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    kind = (meta.get("kind") or meta.get("format")) if isinstance(meta, dict) else None
    return path if kind in ("gdpr-classifier", "compliance.gdpr-classifier") else None


def canonical_base_model(name: str) -> str:
    """How ``name`` is recorded in an artifact: the classifier in use becomes :data:`SHIPPED_CLASSIFIER` when it
    is the shipped one, else its absolute path (the calibration belongs to those weights, not to whichever
    classifier is installed later); other names are kept."""
    from compliance.runtime import CLASSIFIER_DIR_NAME, shipped_model_dir

    if name != CLASSIFIER_ENCODER:
        return name
    found = classifier_encoder_dir(name)
    shipped = shipped_model_dir(CLASSIFIER_DIR_NAME)
    if found is not None and shipped is not None and found.resolve() == shipped.resolve():
        return SHIPPED_CLASSIFIER
    return str(found.resolve()) if found is not None else name


def corroboration_level(encoder_weights_sha256: str | None, path: Path | None = None) -> float | None:
    """The link decision's ``drop`` edge (its band's lower edge) when it was calibrated on the encoder with these
    weights — its config refers to base weights with that sha256 and keeps no tuned copy — so that a cosine in
    that encoder's space can be read against it; None otherwise (another or a fine-tuned encoder, no link decision,
    an unreadable config). Reads ``config.json`` only: no model is loaded. ``path``: the link-decision directory
    (default :func:`compliance.runtime.decision_dir`)."""
    from compliance.runtime import decision_dir

    if not encoder_weights_sha256:
        return None
    path = path or decision_dir()
    try:
        config = read_config(path, ARTIFACT)
        ref = config.get("encoder")
        if not isinstance(ref, dict) or ref.get("source") != "base" or (path / MODEL_SUBDIR).is_dir():
            return None
        if ref.get("base_model_sha256") != encoder_weights_sha256:
            return None
        return float(config["band"]["lower"])
    except (ModelError, KeyError, TypeError, ValueError):
        return None


def base_weights_sha256(name: str) -> str | None:
    """sha256 of the weights ``name`` stands for: a classifier's adapter file or its ``encoder/`` weights, or a
    plain encoder directory's weights (None for a hub id)."""
    from compliance.artifacts import weights_sha256

    found = classifier_encoder_dir(name)
    if found is None:
        return weights_sha256(resolve_model_path(name))
    return weights_sha256(found) or weights_sha256(found / "encoder")


def _load_sentence_transformer(base_model: str | None, device: str | None) -> SentenceTransformer:
    """A sentence-transformers model of ``base_model``: a plain encoder (packaged name, directory or Hugging Face
    id), or a GDPR classifier's fine-tuned encoder (:func:`classifier_encoder_dir`) with mean pooling — seed 001:
    the encoder fine-tuned to classify legal text by article gives the better representations for matching it."""
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # its weight-loading bar is a line of carriage returns in every log

    classifier = classifier_encoder_dir(base_model)
    target = str(resolve_device(device))
    try:
        if classifier is None:
            return SentenceTransformer(resolve_model_path(base_model), device=target)
        from compliance.models.classifier import ARTIFACT as CLASSIFIER_ARTIFACT
        from compliance.models.classifier import load_encoder_of

        spec = read_config(classifier, CLASSIFIER_ARTIFACT)
        adapter = spec.get("encoder_adapter")
        if adapter is None:  # a full encoder/ copy: a Hugging Face directory (mean pooling by default)
            return SentenceTransformer(str(classifier / spec.get("encoder_subdir", "encoder")), device=target)
        # adapters over a base encoder: its sentence-transformers modules, the merged weights
        model = SentenceTransformer(resolve_model_path(adapter.get("base_model")), device="cpu")
        merged = load_encoder_of(classifier, device="cpu", bf16=False)
        transformer: Any = model[0]
        transformer.auto_model.load_state_dict(merged.model.state_dict())
        return model.to(target)
    except OSError as exc:
        raise ModelError(f"cannot load base model {base_model!r}: {exc}") from exc


# -- training --------------------------------------------------------------------------------------------------
def _fine_tune(
    encoder: SentenceTransformer, pairs: Sequence[GradedPair], config: LinkDecisionConfig
) -> dict[str, Any]:
    """A plain PyTorch loop over the sentence-transformers loss (no Trainer, no ``datasets`` dependency)."""
    import torch

    try:  # sentence-transformers >= 6
        from sentence_transformers.sentence_transformer import losses
    except ImportError:  # pragma: no cover - older releases
        from sentence_transformers import losses  # type: ignore[no-redef,attr-defined]

    from compliance.progress import bar

    torch.manual_seed(config.seed)
    rng = random.Random(config.seed)
    if config.freeze_layers:
        _freeze(encoder, config.freeze_layers)
    loss_fn = losses.CoSENTLoss(encoder) if config.loss == "cosent" else losses.CosineSimilarityLoss(encoder)
    optimizer = torch.optim.AdamW(
        [p for p in encoder.parameters() if p.requires_grad], lr=config.learning_rate
    )
    steps_per_epoch = math.ceil(len(pairs) / config.batch_size)
    total = steps_per_epoch * config.epochs
    if config.max_steps is not None:
        total = min(total, config.max_steps)
    warmup = max(1, int(total * config.warmup_ratio))

    def schedule(step: int) -> float:  # linear warm-up, then linear decay to 0
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (total - step) / max(1, total - warmup))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    encoder.train()
    device = encoder.device
    losses_seen: list[float] = []
    step = 0
    started = time.perf_counter()
    with bar(total, desc="fine-tuning link decision", unit="step") as progress:
        for _ in range(config.epochs):
            order = list(pairs)
            rng.shuffle(order)
            for i in range(0, len(order), config.batch_size):
                if step >= total:
                    break
                batch = order[i : i + config.batch_size]
                features = []
                for side in ("a", "b"):
                    texts = [getattr(p, side).text for p in batch]
                    prepare = getattr(encoder, "preprocess", None) or encoder.tokenize
                    feats = prepare(texts)
                    features.append({k: v.to(device) if hasattr(v, "to") else v for k, v in feats.items()})
                labels = torch.tensor([p.target for p in batch], dtype=torch.float32, device=device)
                loss = loss_fn(features, labels)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(encoder.parameters(), 1.0)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
                losses_seen.append(float(loss.detach()))
                step += 1
                progress.update(1)
                progress.set_postfix(loss=f"{losses_seen[-1]:.3f}")
    encoder.eval()
    return {
        "steps": step,
        "seconds": round(time.perf_counter() - started, 1),
        "first_loss": losses_seen[0] if losses_seen else None,
        "last_loss": float(np.mean(losses_seen[-10:])) if losses_seen else None,
    }


def _freeze(encoder: SentenceTransformer, layers: int) -> None:
    """Freeze the embeddings and the first ``layers`` transformer layers of a BERT-like encoder."""
    auto = getattr(encoder[0], "auto_model", None)
    embeddings = getattr(auto, "embeddings", None)
    blocks = getattr(getattr(auto, "encoder", None), "layer", None)
    if embeddings is None or blocks is None:
        raise ConfigurationError("freeze_layers needs a BERT-like encoder (embeddings + encoder.layer)")
    for module in [embeddings, *list(blocks)[:layers]]:
        for param in module.parameters():
            param.requires_grad = False


def evaluate_pairs(
    model: LinkDecisionModel, pairs: Sequence[GradedPair], relevant_grade: int
) -> tuple[dict[str, float], np.ndarray, np.ndarray]:
    """Scores, binary labels and metrics (F1-optimal threshold, Spearman with the grades) on ``pairs``."""
    scores = model.score_pairs([p.a.text for p in pairs], [p.b.text for p in pairs])
    grades = np.array([p.grade for p in pairs])
    labels = (grades >= relevant_grade).astype(np.int64)
    choice = f1_optimal_threshold(scores, labels)
    metrics = {
        "f1": choice.f1,
        "precision": choice.precision,
        "recall": choice.recall,
        "threshold": choice.threshold,
        "spearman_grade": spearman(scores, grades),
        "pairs": len(pairs),
        "relevant": choice.positives,
    }
    return metrics, scores, labels


def train_link_decision(
    laws: Sequence[Law] | None = None,
    config: LinkDecisionConfig | None = None,
    *,
    pairs: PairSet | None = None,
    out_dir: str | Path | None = None,
) -> LinkDecisionModel:
    """Build graded pairs, fine-tune the bi-encoder, calibrate threshold and band on held-out pairs, save.

    Args:
        laws: the corpus to build pairs from (ignored when ``pairs`` is given).
        config: training and calibration parameters.
        pairs: pre-built pairs (tests, experiments).
        out_dir: where to save the artifact; not saved when ``None``.

    Raises:
        ConfigurationError: neither laws nor pairs given, or no held-out relevant pair.
    """
    from compliance.linking.pairs import make_graded_pairs

    config = config or LinkDecisionConfig()
    if pairs is None:
        if not laws:
            raise ConfigurationError("train_link_decision needs laws or pre-built pairs")
        pairs = make_graded_pairs(
            laws,
            train_per_grade=config.train_per_grade,
            heldout_per_grade=config.heldout_per_grade,
            heldout_fraction=config.heldout_fraction,
            seed=config.seed,
        )
    if not pairs.train or not pairs.heldout:
        raise ConfigurationError(f"not enough pairs to train and calibrate: {pairs.counts()}")
    try:
        config = replace(config, base_model=canonical_base_model(config.base_model))
    except ModelNotFoundError as e:  # no classifier installed: the packaged sentence encoder
        logger.warning("%s; calibrating the packaged %s instead", e, DEFAULT_BASE_MODEL)
        config = replace(config, base_model=DEFAULT_BASE_MODEL)
    encoder = _load_sentence_transformer(config.base_model, config.device)
    encoder.max_seq_length = config.max_seq_length
    model = LinkDecisionModel(encoder, 0.0, 0.0)
    before, base_scores, base_labels = evaluate_pairs(model, pairs.heldout, config.relevant_grade)
    base_state = (
        {k: v.detach().clone() for k, v in encoder.state_dict().items()} if config.keep_best else None
    )
    if config.max_steps == 0:  # calibration only
        training: dict[str, Any] = {"steps": 0, "seconds": 0.0, "first_loss": None, "last_loss": None}
        after, scores, labels = dict(before), base_scores, base_labels
    else:
        training = _fine_tune(encoder, pairs.train, config)
        after, scores, labels = evaluate_pairs(model, pairs.heldout, config.relevant_grade)
    training["kept"] = "fine-tuned" if training["steps"] else "base (no fine-tuning steps)"
    if base_state is not None and after["f1"] < before["f1"]:
        # seed 002 keeps the best checkpoint on held-out pairs; here the base weights were better
        encoder.load_state_dict(base_state)
        after, scores, labels = dict(before), base_scores, base_labels
        training["kept"] = "base (fine-tuning lowered held-out F1)"
    model.threshold = after["threshold"]
    model.lower = abstain_band(
        scores, labels, model.threshold, review_recall=config.review_recall, max_band=config.max_band
    )
    in_band = (scores >= model.lower) & (scores < model.threshold)
    after["review_share"] = float(in_band.mean())
    after["review_relevant_share"] = float(labels[in_band].mean()) if in_band.any() else 0.0
    model.info = {
        "config": asdict(config),
        "grading_scheme": GRADE_SCHEME,
        "relevant_grade": config.relevant_grade,
        "data": pairs.provenance,
        "training": training,
        "metrics": {"heldout_before_fine_tuning": before, "heldout": after},
        "base_model": config.base_model,
        "tuned": True,
        "provenance": _provenance(pairs, config.base_model),
    }
    if out_dir is not None:
        model.save(out_dir)
    logger.info("link decision: F1 %.3f → %.3f, threshold %.3f", before["f1"], after["f1"], model.threshold)
    return model


def _provenance(pairs: PairSet, base_model: str) -> dict[str, Any]:
    """Checksums of the graded pairs, of the laws they come from and of the base model's weights."""
    from compliance.artifacts import json_sha256

    def rows(items: Sequence[GradedPair]) -> list[list[Any]]:
        return [[p.a.law, p.a.key, p.a.text, p.b.law, p.b.key, p.b.text, p.grade] for p in items]

    return {
        "training_data_sha256": json_sha256({"train": rows(pairs.train), "heldout": rows(pairs.heldout)}),
        "laws": {law["short_name"]: law.get("checksum") for law in pairs.provenance.get("laws", [])},
        "base_model": base_model,
        "base_model_sha256": base_weights_sha256(base_model),
    }


def _model_card(config: dict[str, Any]) -> str:
    metrics = config.get("metrics", {})
    after = metrics.get("heldout", {})
    before = metrics.get("heldout_before_fine_tuning", {})
    data = config.get("data", {})
    laws = ", ".join(f"{law['short_name']} ({law.get('identifier', '')})" for law in data.get("laws", []))
    rows = "\n".join(f"| {g} | {d} |" for g, d in config.get("grading_scheme", GRADE_SCHEME).items())

    def fmt(m: dict[str, Any], key: str) -> str:
        value = m.get(key)
        return f"{value:.3f}" if isinstance(value, int | float) else "–"

    return f"""# Link-decision bi-encoder

Decides whether a control paragraph and a law provision are linked: cosine similarity of this bi-encoder's
embeddings, then **propose** if score ≥ {config["threshold"]:.4f}, **review** if
{config["band"]["lower"]:.4f} ≤ score < {config["threshold"]:.4f}, else **drop**.

- Base model: `{config.get("base_model")}`; weights kept: {config.get("training", {}).get("kept", "unknown")}
- Package version: {config.get("package_version")}
- Training data: graded passage pairs from {laws or "unknown"}; split {data.get("split", "–")};
  pairs {json.dumps(data.get("pairs", {}))}
- Training: {json.dumps(config.get("training", {}))}
- Provenance: {json.dumps(config.get("provenance", {}))}

## Grading scheme (seed 002)

| grade | relation |
| --- | --- |
{rows}

Relevant (binary) = grade ≥ {config.get("relevant_grade")}.

## Held-out metrics (pairs of held-out articles)

| | F1 | precision | recall | threshold | Spearman vs grade |
| --- | --- | --- | --- | --- | --- |
| before fine-tuning | {fmt(before, "f1")} | {fmt(before, "precision")} | {fmt(before, "recall")} | {fmt(before, "threshold")} | {fmt(before, "spearman_grade")} |
| after fine-tuning | {fmt(after, "f1")} | {fmt(after, "precision")} | {fmt(after, "recall")} | {fmt(after, "threshold")} | {fmt(after, "spearman_grade")} |

## Limits

The pairs are law-to-law passages; the model is applied to control-paragraph ↔ provision pairs, a shift of
domain. Calibrate the threshold on reviewed links when they exist.
"""


def training_laws(
    shared_data: str | Path | None = None, *, exclude: Sequence[str] = ("eprivacy",)
) -> list[Law]:
    """The default training corpus: every shipped law pack whose official text can be had, parsed by the
    project's own importers (the GDPR from its Formex XML, the EU acts from their JSON).

    Texts come through the law packs (``--from``-less install: the local mirror ``COMPLIANCE_LAW_MIRROR``, else
    the official download, checksum-verified); ``shared_data``, when given, is a folder holding ``laws/`` used as
    that mirror. Packs whose text cannot be had (no mirror copy, no download URL) are skipped. ``exclude`` keeps
    laws out of training (by short name); the ePrivacy Directive is excluded by default because it is the "new
    law" of the alert acceptance test.

    Raises:
        ConfigurationError: not even the GDPR could be loaded.
    """
    from compliance.errors import ComplianceError
    from compliance.rules import install_pack, list_packs, load_pack_law

    mirror = Path(shared_data) / "laws" if shared_data is not None else None
    laws: list[Law] = []
    # the GDPR first, then the other packs by name (a stable order keeps the sampled pairs reproducible)
    for pack in sorted(list_packs(), key=lambda p: (p.name != "gdpr", p.name)):
        if pack.name in set(exclude):
            continue
        try:
            law = install_pack(pack.name, mirror=mirror) if mirror is not None else load_pack_law(pack.name)
        except ComplianceError as exc:
            logger.warning("link decision: law pack %s skipped (%s)", pack.name, exc)
            continue
        laws.append(law)
    if not any(law.short_name == "gdpr" for law in laws):
        raise ConfigurationError(
            "no law corpus to train on: the GDPR law pack could not be loaded; set COMPLIANCE_LAW_MIRROR to a "
            "folder mirroring the official texts or allow the download"
        )
    return laws
