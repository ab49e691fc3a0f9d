"""The GDPR article classifier: a transformer encoder, mean pooling and a cosine-similarity head over the 99
articles, with a fitted temperature and a needs-review band. Saved as a self-describing directory::

    gdpr-classifier/
      config.json         kind "gdpr-classifier", format_version, package_version, provenance (training data and
                          base-model weight checksums), recipe, parameters, label map (article -> index,
                          titles), temperature, band (the artifact contract of :mod:`compliance.artifacts`)
      encoder/            Hugging Face save_pretrained() of the fine-tuned encoder and its tokenizer
                          (AutoModel.from_pretrained("gdpr-classifier/encoder") works: reuse it for dense retrieval
                          with mean pooling + L2 normalisation)
      head.safetensors    the article prototype matrix (99 x hidden) and the logit scale
      adapter.safetensors instead of encoder/: low-rank adapters over the base encoder named in config.json
                          (``encoder_adapter``: rank, scale, targets, the base weights' sha256), merged into it
                          at load (:mod:`compliance.models.adapter`); how the classifier shipped with the
                          package stays under 2 MB
      passages.json       with a passage expert (``passage_weight`` > 0): the law's paragraphs and points it reads
      passages.npy        and their vectors by this encoder (:mod:`compliance.models.passages`)
      metrics.json        training curves, calibration and evaluation figures
      MODEL_CARD.md       what it is, how it was trained, how well it does

Texts longer than the model's window are split into overlapping token windows and the window logits averaged:
nothing is silently truncated.

Formats: 1 stored the label prior as raw article counts; 2 as probabilities, with ``"format":
"compliance.gdpr-classifier"`` instead of ``kind``; 3 has the artifact envelope; 4 may carry an adapter over a base
encoder instead of ``encoder/`` (a format-3 reader would not find the encoder, hence the new number). Directories of
formats 1 to 3 load unchanged (:func:`upgrade_config`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from compliance.artifacts import (
    ADAPTER_WEIGHTS,
    ENVELOPE_KEYS,
    model_spec,
    read_config,
    write_card,
    write_config,
)
from compliance.errors import ModelError
from compliance.models.calibration import softmax
from compliance.models.citations import apply_citations, citation_matrix
from compliance.models.lexical import LEXICAL_FILE, LexicalArticleScorer
from compliance.models.passages import PASSAGE_VECTORS_FILE, PASSAGES_FILE, PassageExpert
from compliance.models.umbrella import apply_consequences, apply_umbrellas
from compliance.runtime import autocast, classifier_dir, length_sorted_batches

if TYPE_CHECKING:  # pragma: no cover
    import torch

    from compliance.models.encoder import Encoder
    from compliance.rules.references import Citation
    from compliance.runtime import EmbeddingSpace

__all__ = [
    "ARTIFACT",
    "WINDOW_POOLINGS",
    "ArticleClassifier",
    "ArticleScore",
    "ClassifierConfig",
    "CosineHead",
    "ForwardPass",
    "load",
    "pool_windows",
    "upgrade_config",
]

ENCODER_SUBDIR = "encoder"
HEAD_FILE = "head.safetensors"
ADAPTER_FILE = ADAPTER_WEIGHTS
_LEGACY_FORMAT = "compliance.gdpr-classifier"  # formats 1 and 2 named themselves so instead of a kind


def upgrade_config(cfg: dict[str, Any], path: Path) -> dict[str, Any]:
    """A format-1, 2 or 3 classifier config in the current shape (format 4); other configs unchanged.

    Format 1 stored the label prior as raw article counts: they become the add-one smoothed probabilities that
    format 1 used at load time. Format 3 is format 4 without adapters.
    """
    if cfg.get("kind") == "gdpr-classifier" and cfg.get("format_version") == 3:
        return {**cfg, "format_version": ARTIFACT.format_version}
    if cfg.get("format") != _LEGACY_FORMAT or "kind" in cfg:
        return cfg
    version = int(cfg.get("format_version", 1))
    out = {k: v for k, v in cfg.items() if k != "format"}
    inference = dict(out.get("inference", {}))
    if version < 2 and inference.get("label_prior") is not None:
        counts = np.asarray([float(x) for x in inference["label_prior"]])
        inference["label_prior"] = [float(x) for x in (counts + 1.0) / (counts + 1.0).sum()]
        out["inference"] = inference
    out["kind"] = ARTIFACT.kind
    out["format_version"] = ARTIFACT.format_version
    out.setdefault("provenance", {})
    return out


#: The classifier's artifact kind (see :mod:`compliance.artifacts`).
ARTIFACT = model_spec(
    "gdpr-classifier",
    4,
    "GDPR classifier",
    "train one with `compliance train` (or pass --model PATH / set COMPLIANCE_MODEL_DIR)",
    upgrade=upgrade_config,
)


@dataclass(frozen=True)
class ClassifierConfig:
    """Inference parameters stored with the model.

    Attributes:
        max_length: tokens per window at inference (and training).
        stride: token overlap between consecutive windows of a long text.
        max_windows: at most this many windows per text (evenly spread over a longer text).
        batch_size: texts (windows) per forward pass.
        temperature: fitted on held-out data; scores are ``softmax(logits / temperature)``.
        review_band: ``(low, high)``: top scores in ``[low, high)`` need review, below ``low`` the model abstains.
        label_prior: optional article prior (probabilities in label order): the article-applicability prior read
            from the law (:mod:`compliance.models.law_prior`), times the article frequencies of extra supervision
            when there was any. The model is trained on balanced data (a uniform prior), so
            ``prior_weight * log(prior)`` is added to its log-probabilities.
        prior_weight: weight of the label prior (0 = none).
        lexical_weight: weight of the lexical expert's log-probabilities (BM25 over the articles' training text,
            :mod:`compliance.models.lexical`) in the log-linear ensemble (0 = encoder only).
        umbrellas: principle umbrellas ``((article, (member, …)), …)`` (:mod:`compliance.models.umbrella`).
        umbrella_weight: share of the members' probability mass each umbrella receives (0 = none).
        consequences: consequence articles ``((article, (member, …)), …)`` — Art. 83, fines, over the articles
            whose infringement it sanctions (:mod:`compliance.models.umbrella`).
        consequence_weight: share of a consequence article's probability passed down to its members (0 = none).
        citation_names: the names a text cites the act by (``General Data Protection Regulation``, ``GDPR``,
            ``2016/679``; :func:`compliance.rules.references.act_names`); None = citations are not read.
        citation_weight: share of a citing text's distribution given to the articles it cites
            (:mod:`compliance.models.citations`; 0 = none).
        window_pooling: how a text longer than one window pools its windows: ``"logits"`` averages their raw
            logits (what every model before format 4's pooling setting did), ``"probabilities"`` averages their
            temperature-scaled distributions, so that one window that speaks clearly of an article is not
            cancelled by windows that say nothing of it. A text of one window is scored the same either way.
        consequence_clauses: a text about a sanction (``consequence_top_k``; a text about a fine) is scored
            as the mean of its own logits and its clauses' (:meth:`ArticleClassifier.read_sanctions`), so that
            what the fine was for is read apart from the fine; needs ``consequences``.
        consequence_top_k: a text is *about a sanction* when a consequence article ranks among the first
            ``consequence_top_k`` of its logits (1: only when it ranks first, what every model before this setting
            did): such a text is read clause by clause (``consequence_clauses``, decided on its own logits) and its
            umbrellas get ``sanction_umbrella_weight`` (decided on the logits it is scored with, its clauses read:
            a text whose fine no longer ranks high once its clauses are read is scored as any other).
        sanction_umbrella_weight: the principle umbrellas' weight in a text about a sanction (None: the
            ``umbrella_weight`` of every text). A fine is most often for an infringed principle (Art. 5) beside, or
            instead of, the specific duty the text describes; a policy statement is rarely about a sanction.
        abbreviations: the encoder and the lexical expert read a text with the first use of each abbreviation of
            :data:`compliance.abbreviations.ABBREVIATIONS` followed by its words in brackets ("A DPIA (data
            protection impact assessment) is …", :meth:`ArticleClassifier.reading`); the vectors a forward gives an
            embedding space stay the text's as written. False: every text as written (every model before this
            setting).
        passage_weight: weight of the passage expert (:mod:`compliance.models.passages`): ``passage_weight ×`` the
            text's cosine with each article's closest paragraph or point, in the encoder's own space, is added to
            the text's logits scaled by the temperature, so that each article's probability is multiplied by
            ``exp(passage_weight × cosine)`` (0 = none, every model before 28 November 2026).
    """

    max_length: int = 128
    stride: int = 32
    max_windows: int = 16
    batch_size: int = 32
    temperature: float = 1.0
    review_band: tuple[float, float] = (0.2, 0.6)
    label_prior: tuple[float, ...] | None = None
    prior_weight: float = 0.0
    lexical_weight: float = 0.0
    umbrellas: tuple[tuple[int, tuple[int, ...]], ...] | None = None
    umbrella_weight: float = 0.0
    consequences: tuple[tuple[int, tuple[int, ...]], ...] | None = None
    consequence_weight: float = 0.0
    citation_names: tuple[str, ...] | None = None
    citation_weight: float = 0.0
    window_pooling: str = "logits"
    consequence_clauses: bool = False
    consequence_top_k: int = 1
    sanction_umbrella_weight: float | None = None
    abbreviations: bool = False
    passage_weight: float = 0.0


#: the ways a text's windows may be pooled (:attr:`ClassifierConfig.window_pooling`).
WINDOW_POOLINGS = ("logits", "probabilities")


class _Scored(NamedTuple):
    """:meth:`ArticleClassifier._score`'s result: the scores and, per article, where they came from."""

    probs: np.ndarray
    from_members: np.ndarray  # share from umbrella members
    passed_down: np.ndarray  # share passed down from consequence articles
    before: np.ndarray  # the scores before the umbrellas
    cited: np.ndarray  # share from the text's citation of the article


@dataclass(frozen=True)
class ArticleScore:
    """One ranked article for one text.

    ``components`` and ``terms`` are filled by ``rank(..., explain=True)``: the experts' own probabilities for
    this article (``encoder``, ``lexical``, ``prior``; for a principle umbrella also ``umbrella``, the share of its
    score that came from its member articles, and ``own``, its score before the umbrellas were applied; for an
    article a consequence article refers to, ``consequence``, the share of its score passed down from, e.g., Art.
    83; for an article the text cites by name, ``cited``, the share of its score that came from the citation) and
    the stemmed terms the text shares with the article's indexed text — what a reviewer reads to see why the
    article was suggested. ``citation`` is how the text cites the article (``Art. 30 GDPR``), whether or not
    ``explain`` was asked for; empty when it does not; ``cited_keys`` the provisions those citations name, in the
    order cited (``art:6/par:1/pt:f``; :attr:`compliance.rules.references.Citation.key`).
    """

    article: int
    title: str
    score: float
    rank: int
    components: dict[str, float] | None = None
    terms: tuple[str, ...] = ()
    citation: str = ""
    cited_keys: tuple[str, ...] = ()


def _special_wrapping(tokenizer: Any) -> tuple[list[int], list[int]]:
    """The special token ids a tokenizer puts before and after a single sequence (e.g. [CLS] … [SEP])."""
    bare = tokenizer("probe", add_special_tokens=False)["input_ids"]
    full = tokenizer("probe", add_special_tokens=True)["input_ids"]
    for start in range(len(full) - len(bare) + 1):
        if full[start : start + len(bare)] == bare:
            return list(full[:start]), list(full[start + len(bare) :])
    return [], []  # pragma: no cover - a tokenizer that rewrites the text when adding specials


class CosineHead:
    """Factory for the head module (kept out of import time so that importing this module needs no torch)."""

    @staticmethod
    def create(n_labels: int, hidden: int, scale: float = 20.0) -> torch.nn.Module:
        import torch

        class _Head(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.prototypes = torch.nn.Parameter(torch.randn(n_labels, hidden) * 0.02)
                self.log_scale = torch.nn.Parameter(torch.tensor(float(np.log(scale))))

            def forward(self, pooled: torch.Tensor) -> torch.Tensor:
                x = torch.nn.functional.normalize(pooled.float(), dim=-1)
                w = torch.nn.functional.normalize(self.prototypes.float(), dim=-1)
                return self.log_scale.exp() * (x @ w.T)

        return _Head()


@dataclass(frozen=True)
class ForwardPass:
    """What one encoder pass over some texts gave (:meth:`ArticleClassifier.forward`).

    Attributes:
        logits: raw article logits (texts × labels); a long text's windows pooled as the model's
            ``window_pooling`` says (:func:`pool_windows`).
        vectors: per text, its L2-normalised chunk vectors (chunks × dim, float32) in the embedding space asked
            for; None when none was asked for.
        embeddings: per text, the L2-normalised mean of its windows' mean-pooled vectors (texts × dim, float32):
            the text's embedding by this encoder (for a text of one window, exactly ``Encoder.embed`` at the
            classifier's window length), what the head scored; None when not computed.
    """

    logits: np.ndarray
    vectors: list[np.ndarray] | None = None
    embeddings: np.ndarray | None = None


def pool_windows(
    window_logits: np.ndarray, owners: Sequence[int] | np.ndarray, n: int, pooling: str, temperature: float
) -> np.ndarray:
    """Each of ``n`` texts' logits from its windows' raw logits (``owners[w]``: the text of window ``w``).

    ``"logits"`` averages a text's window logits. ``"probabilities"`` averages its windows' distributions
    ``softmax(logits / temperature)`` and returns ``temperature · log`` of that mean, so that
    ``softmax(pooled / temperature)`` is the mean distribution; a text of one window keeps its raw logits.

    Raises:
        ModelError: an unknown pooling.
    """
    if pooling not in WINDOW_POOLINGS:
        raise ModelError(f"unknown window pooling {pooling!r}; expected one of {', '.join(WINDOW_POOLINGS)}")
    idx = np.asarray(owners, dtype=np.int64)
    counts = np.maximum(np.bincount(idx, minlength=n), 1)[:, None].astype(np.float64)
    out = np.zeros((n, window_logits.shape[1]), dtype=np.float64)
    np.add.at(out, idx, window_logits)
    out /= counts
    many = counts[:, 0] > 1
    if pooling == "probabilities" and many.any():
        mean = np.zeros_like(out)
        np.add.at(mean, idx, softmax(window_logits, temperature))
        mean /= counts
        out[many] = temperature * np.log(np.clip(mean[many], 1e-300, None))
    return out


@dataclass
class ArticleClassifier:
    """Encoder + cosine head + label map. Use :func:`load` to read one from disk.

    Attributes:
        encoder: the (fine-tuned) encoder.
        head: the cosine head module.
        labels: article numbers, in head row order.
        titles: article number → title.
        config: inference parameters, temperature and review band.
        meta: everything else stored in config.json (recipe, provenance, base model, versions).
        lexical: the lexical expert (None: encoder only).
        passages: the passage expert (None: none; used when :attr:`ClassifierConfig.passage_weight` > 0).
    """

    encoder: Encoder
    head: Any
    labels: list[int]
    titles: dict[int, str]
    config: ClassifierConfig
    meta: dict[str, Any] = field(default_factory=dict)
    lexical: LexicalArticleScorer | None = None
    passages: PassageExpert | None = None

    # -- inference ----------------------------------------------------------------------------------------------
    def reading(self, texts: Sequence[str]) -> list[str]:
        """``texts`` as the model reads them: with the abbreviations it knows written out after their first use
        when it reads abbreviations (:attr:`ClassifierConfig.abbreviations`), else as they are."""
        if not self.config.abbreviations:
            return list(texts)
        from compliance.abbreviations import write_out

        return [write_out(t) for t in texts]

    def _windows(self, texts: Sequence[str]) -> tuple[list[list[int]], list[int]]:
        """Token-id windows (with special tokens) for every text, and the owning text index of each."""
        return self._windows_of(self._token_ids(texts))

    def _token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        tok = self.encoder.tokenizer
        with self.encoder.lock:
            return list(
                tok(list(texts), add_special_tokens=False, truncation=False, verbose=False)["input_ids"]
            )

    def _windows_of(self, encoded: Sequence[Sequence[int]]) -> tuple[list[list[int]], list[int]]:
        with self.encoder.lock:
            prefix, suffix = _special_wrapping(self.encoder.tokenizer)
        inner = self.config.max_length - len(prefix) - len(suffix)
        step = max(1, inner - self.config.stride)
        windows: list[list[int]] = []
        owners: list[int] = []
        for i, ids in enumerate(encoded):
            starts = list(range(0, max(1, len(ids) - self.config.stride), step)) if len(ids) > inner else [0]
            if len(starts) > self.config.max_windows:
                picks = np.linspace(0, len(starts) - 1, self.config.max_windows).round().astype(int)
                starts = [starts[p] for p in picks]
            for s in starts:
                windows.append([*prefix, *ids[s : s + inner], *suffix])
                owners.append(i)
        return windows, owners

    def window_batches(self, windows: Sequence[Sequence[int]]) -> Iterator[tuple[list[int], Any, Any]]:
        """The length-sorted, padded batches :meth:`logits` runs (``(indices, input_ids, attention_mask)``)."""
        pad = self.encoder.tokenizer.pad_token_id or 0
        return length_sorted_batches(windows, self.config.batch_size, pad, self.encoder.device)

    def logits(self, texts: Sequence[str]) -> np.ndarray:
        """Raw (uncalibrated) article logits, shape (len(texts), n_labels); long texts average their windows."""
        return self.forward(texts).logits

    def forward(
        self, texts: Sequence[str], space: EmbeddingSpace | None = None, also: Sequence[str] = ()
    ) -> ForwardPass:
        """One encoder pass over ``texts`` (:meth:`_forward`), and, when the model reads a sanction's clauses
        (:attr:`ClassifierConfig.consequence_clauses`), a second pass over the clauses of the texts about a sanction
        (:meth:`about_sanction`, :meth:`read_sanctions`): only those texts' logits change. Safe to call from several
        threads at once: the tokenizer is used under the encoder's lock (:attr:`Encoder.lock`).

        ``also``: more texts whose vectors in ``space`` are wanted from the same pass (their windows run in the
        same length-sorted batches instead of a small call of their own): their vectors follow those of
        ``texts`` in ``vectors``; ``logits`` and ``embeddings`` are ``texts``' only."""
        if also and space is not None:
            n = len(texts)
            joint = self._forward([*texts, *also], space)
            embeddings = None if joint.embeddings is None else joint.embeddings[:n]
            result = ForwardPass(joint.logits[:n], joint.vectors, embeddings)
        else:
            result = self._forward(texts, space)
        logits = self.read_sanctions(texts, result.logits)
        return replace(result, logits=self.with_passages(logits, result.embeddings))

    @property
    def uses_passages(self) -> bool:
        return self.passages is not None and self.config.passage_weight > 0

    def with_passages(self, logits: np.ndarray, embeddings: np.ndarray | None) -> np.ndarray:
        """``logits`` with the passage expert's term added (:attr:`ClassifierConfig.passage_weight`), scaled by
        the temperature so that the text's distribution is multiplied by ``exp(weight × cosine)``; ``logits`` as
        they are for a model without passages."""
        if not self.uses_passages or embeddings is None or not len(logits):
            return logits
        assert self.passages is not None
        term = self.config.temperature * self.config.passage_weight
        return logits + term * self.passages.cosines(embeddings, self.labels)

    def read_sanctions(self, texts: Sequence[str], logits: np.ndarray) -> np.ndarray:
        """``logits`` (``texts``' pooled logits) with the rows of the texts about a sanction read again clause by
        clause, when the model reads a sanction's clauses (:attr:`ClassifierConfig.consequence_clauses`); otherwise
        ``logits`` as they are.

        A text about a fine ("The DPA fined a controller €3,000 for failing to inform the data subjects") reads to
        the encoder as a text about the consequence article (Art. 83, fines) whatever the fine was for; the
        consequence step passes that article's score down to the articles it sanctions in proportion to theirs,
        but the encoder has little left for them. For every text about a sanction (:meth:`about_sanction`: a
        consequence article among its first ``consequence_top_k`` articles), the text and each of its clauses
        (:func:`compliance.text.split_clauses`, at least three words) are scored and their logits averaged: the clause "for failing to inform the data subjects" speaks of Art. 13
        without the sanction. A text of one clause, and every other text, keeps its logits."""
        from compliance.text import split_clauses

        if not self.config.consequence_clauses or not len(texts):
            return logits
        sanction = self.about_sanction(logits)
        if not sanction.any():
            return logits
        units: list[str] = []
        owners: list[int] = []
        for i, text in enumerate(texts):
            if not sanction[i]:
                continue
            clauses = split_clauses(text)
            if len(clauses) > 1:
                units.extend(clauses)
                owners.extend([i] * len(clauses))
        if not units:
            return logits
        # the mean of each text's own logits and its clauses' (a text without clauses: its own, unchanged)
        every = np.concatenate([logits, self._forward(units).logits])
        return pool_windows(
            every, [*range(len(texts)), *owners], len(texts), "logits", self.config.temperature
        )

    def about_sanction(self, logits: np.ndarray) -> np.ndarray:
        """Per row of ``logits``, whether the text is about a sanction: a consequence article (Art. 83, fines)
        ranks among its first :attr:`ClassifierConfig.consequence_top_k` articles (all False for a model without
        consequence articles)."""
        columns = [self.labels.index(a) for a, _ in self.config.consequences or () if a in self.labels]
        if not columns or not len(logits):
            return np.zeros(len(logits), dtype=bool)
        k = max(1, self.config.consequence_top_k)
        # articles scoring strictly above the consequence article: fewer than k means it is among the first k
        above = (logits[:, None, :] > logits[:, columns][:, :, None]).sum(axis=2)
        return np.asarray((above < k).any(axis=1))

    def _forward(self, texts: Sequence[str], space: EmbeddingSpace | None = None) -> ForwardPass:
        """One encoder pass over ``texts`` that gives the raw article logits and, when ``space`` is given, each
        text's dense chunk vectors in that embedding space: what a dense index of ``space``
        (:class:`~compliance.retrieval.encoding.TextEncoder`) computes for the text, from the same forward.

        The classifier's windows and the space's chunks are the same token windows for every text shorter than
        both window lengths; a window both need runs once, and the few that only the space needs (chunks of a
        longer text cut differently) run in the same batches. ``space`` must describe this classifier's encoder
        (its weights' sha256): the caller checks that. Spaces with another pooling or layer than mean pooling of
        the last layer give no vectors (``vectors`` None).
        """
        import torch

        from compliance.runtime import aggregate_chunks, mean_pool

        n = len(texts)
        out = np.zeros((n, len(self.labels)), dtype=np.float64)
        if space is not None and (space.pooling != "mean" or space.layer != -1):
            space = None
        if n == 0:
            return ForwardPass(out, [] if space is not None else None)
        read = self.reading(texts)
        encoded = self._token_ids(read)
        windows, owners = self._windows_of(encoded)
        rows: dict[tuple[int, ...], int] = {}
        unique: list[list[int]] = []

        def row_of(ids: list[int]) -> int:
            key = tuple(ids)
            at = rows.get(key)
            if at is None:
                at = rows[key] = len(unique)
                unique.append(ids)
            return at

        window_rows = [row_of(w) for w in windows]
        chunk_rows: list[int] = []
        chunk_owner: list[int] = []
        if space is not None:
            with self.encoder.lock:
                specials = list(self.encoder.tokenizer("", add_special_tokens=True)["input_ids"])
            # the space's vectors are the text as the space reads it (as written, or with its abbreviations
            # written out): a text the classifier reads otherwise is tokenised again, as the space reads it
            embedded = space.read(texts)
            changed = [i for i in range(n) if read[i] != embedded[i]]
            ids_of_space = list(encoded)
            if changed:
                for i, ids in zip(changed, self._token_ids([embedded[i] for i in changed]), strict=True):
                    ids_of_space[i] = ids
            chunks, chunk_owner = space.chunks(ids_of_space, specials)
            chunk_rows = [row_of(c) for c in chunks]
        row_logits = np.zeros((len(unique), len(self.labels)), dtype=np.float64)
        row_vecs = np.zeros((len(unique), self.encoder.hidden_size), dtype=np.float32)
        enc = self.encoder
        enc.model.eval()
        self.head.eval()
        with torch.inference_mode():
            for idx, ids, mask in self.window_batches(unique):
                with autocast(enc.device, enc.use_bf16):
                    hidden = enc.model(input_ids=ids, attention_mask=mask).last_hidden_state
                row_logits[idx] = self.head(mean_pool(hidden, mask)).float().cpu().numpy()
                vec = torch.nn.functional.normalize(mean_pool(hidden.float(), mask), dim=-1)
                row_vecs[idx] = vec.cpu().numpy()
        out = pool_windows(
            row_logits[window_rows], owners, n, self.config.window_pooling, self.config.temperature
        )
        embeddings = aggregate_chunks(row_vecs[window_rows], np.asarray(owners, dtype=np.int64), n)
        vectors: list[np.ndarray] | None = None
        if space is not None:
            per_text: list[list[int]] = [[] for _ in range(n)]
            for r, i in zip(chunk_rows, chunk_owner, strict=True):
                per_text[i].append(r)
            vectors = [row_vecs[r] for r in per_text]
        return ForwardPass(out, vectors, embeddings)

    @property
    def uses_lexical(self) -> bool:
        return self.lexical is not None and self.config.lexical_weight > 0

    @property
    def uses_prior(self) -> bool:
        return self.config.label_prior is not None and self.config.prior_weight > 0

    @property
    def uses_umbrellas(self) -> bool:
        return bool(self.config.umbrellas) and self.config.umbrella_weight > 0

    @property
    def uses_consequences(self) -> bool:
        return bool(self.config.consequences) and self.config.consequence_weight > 0

    @property
    def uses_citations(self) -> bool:
        return bool(self.config.citation_names) and self.config.citation_weight > 0

    def citations(self, texts: Sequence[str]) -> list[list[Citation]] | None:
        """Per text, the articles it cites by the act's name (None when the model reads no citations)."""
        if not self.uses_citations:
            return None
        from compliance.rules.references import cited_provisions

        names = self.config.citation_names or ()
        return [cited_provisions(t, names, self.labels) for t in texts]

    def lexical_log_probs(self, texts: Sequence[str]) -> np.ndarray | None:
        """The lexical expert's log-probabilities in :attr:`labels` order (None when the model has none)."""
        return self._lexical_log_probs_read(self.reading(texts)) if self.uses_lexical else None

    def _lexical_log_probs_read(self, read: Sequence[str]) -> np.ndarray | None:
        """:meth:`lexical_log_probs` of texts already as the model reads them (:meth:`reading`)."""
        if not self.uses_lexical:
            return None
        assert self.lexical is not None
        lp = self.lexical.log_probs(read)
        if self.lexical.labels != self.labels:
            col = {a: j for j, a in enumerate(self.lexical.labels)}
            uniform = -np.log(len(self.lexical.labels))
            lp = np.stack(
                [lp[:, col[a]] if a in col else np.full(len(read), uniform) for a in self.labels], axis=1
            )
        return lp

    def predict_proba(
        self,
        texts: Sequence[str],
        *,
        prior: bool = True,
        lexical: bool = True,
        umbrella: bool = True,
        consequence: bool = True,
        citation: bool = True,
    ) -> np.ndarray:
        """Calibrated article probabilities, shape (len(texts), n_labels), columns in :attr:`labels` order.

        ``prior=False`` leaves out the label prior, ``lexical=False`` the lexical expert, ``umbrella=False``
        the principle umbrellas, ``consequence=False`` the consequence articles and ``citation=False`` the
        explicit citations (for ablations).
        """
        lex = self.lexical_log_probs(texts) if lexical else None
        return self.calibrate(
            self.logits(texts),
            prior=prior,
            lexical_log_probs=lex,
            umbrella=umbrella,
            consequence=consequence,
            citations=self.citations(texts) if citation else None,
        )

    def calibrate(
        self,
        logits: np.ndarray,
        *,
        prior: bool = True,
        lexical_log_probs: np.ndarray | None = None,
        umbrella: bool = True,
        consequence: bool = True,
        citations: Sequence[Sequence[Citation]] | None = None,
    ) -> np.ndarray:
        """Scores from raw logits: the temperature-scaled encoder distribution, times the label prior (if the
        model has one and ``prior``), times the lexical expert's distribution to the power ``lexical_weight``
        (if given), renormalised; then the consequence articles pass mass down to the articles they sanction (if
        the model has them and ``consequence``), then the principle umbrellas (if the model has them and
        ``umbrella``), then the articles each text cites (``citations``, per text, :meth:`citations`; if the
        model reads citations)."""
        return self._score(
            logits,
            prior=prior,
            lexical_log_probs=lexical_log_probs,
            umbrella=umbrella,
            consequence=consequence,
            citations=citations,
        ).probs

    def _score(
        self,
        logits: np.ndarray,
        *,
        prior: bool = True,
        lexical_log_probs: np.ndarray | None = None,
        umbrella: bool = True,
        consequence: bool = True,
        citations: Sequence[Sequence[Citation]] | None = None,
    ) -> _Scored:
        """:meth:`calibrate`'s scores and, per article, the share of its score that came from umbrella members, the
        share passed down from consequence articles, the scores before the umbrellas (each article's own
        evidence) and the share that came from the text's citation of it."""
        probs = self._ensemble(logits, prior=prior, lexical_log_probs=lexical_log_probs)
        passed_down = np.zeros_like(probs)
        if consequence and self.uses_consequences:
            assert self.config.consequences is not None
            probs, received = apply_consequences(
                probs, self.labels, dict(self.config.consequences), self.config.consequence_weight
            )
            passed_down = np.divide(received, probs, out=np.zeros_like(received), where=received > 0)
        from_members = np.zeros_like(probs)
        before = probs
        if umbrella and self.uses_umbrellas:
            assert self.config.umbrellas is not None
            probs, added = apply_umbrellas(
                probs, self.labels, dict(self.config.umbrellas), self._umbrella_weights(logits)
            )
            from_members = np.divide(added, before + added, out=np.zeros_like(added), where=added > 0)
        cited = np.zeros_like(probs)
        if citations is not None and self.uses_citations:
            probs, cited = apply_citations(
                probs, citation_matrix(citations, self.labels), self.config.citation_weight
            )
        return _Scored(probs, from_members, passed_down, before, cited)

    def _umbrella_weights(self, logits: np.ndarray) -> float | np.ndarray:
        """The umbrellas' weight: :attr:`ClassifierConfig.umbrella_weight`, or per text
        :attr:`ClassifierConfig.sanction_umbrella_weight` for the texts about a sanction (:meth:`about_sanction`)."""
        special = self.config.sanction_umbrella_weight
        if special is None or special == self.config.umbrella_weight:
            return self.config.umbrella_weight
        return np.where(self.about_sanction(logits), special, self.config.umbrella_weight)

    def _prior_distribution(self) -> np.ndarray:
        """The stored label prior as a distribution in :attr:`labels` order (floored at 1e-12, renormalised)."""
        assert self.config.label_prior is not None
        p = np.clip(np.asarray(self.config.label_prior, dtype=np.float64), 1e-12, None)
        return p / p.sum()

    def _ensemble(
        self, logits: np.ndarray, *, prior: bool = True, lexical_log_probs: np.ndarray | None = None
    ) -> np.ndarray:
        """The log-linear part of the ensemble: encoder × prior × lexical expert, renormalised."""
        probs = softmax(logits, self.config.temperature)
        z = np.log(np.clip(probs, 1e-12, None))
        changed = False
        if prior and self.uses_prior:
            z = z + self.config.prior_weight * np.log(self._prior_distribution())
            changed = True
        if lexical_log_probs is not None and self.config.lexical_weight:
            z = z + self.config.lexical_weight * lexical_log_probs
            changed = True
        return softmax(z) if changed else probs

    def rank(
        self,
        texts: Sequence[str],
        top_k: int = 10,
        *,
        explain: bool = False,
        logits: np.ndarray | None = None,
    ) -> list[list[ArticleScore]]:
        """The ``top_k`` articles of every text, best first, with calibrated scores (``explain``: with each
        expert's probability and the shared terms). ``logits``: the texts' raw logits when a :meth:`forward`
        already computed them."""
        if logits is None:
            logits = self.logits(texts)
        read = self.reading(texts)  # once: for the lexical expert and the shared terms
        lexical = self._lexical_log_probs_read(read)
        citations = self.citations(texts)
        probs, from_members, passed_down, before, cited = self._score(
            logits, lexical_log_probs=lexical, citations=citations
        )
        k = max(1, min(top_k, len(self.labels)))
        encoder = softmax(logits, self.config.temperature) if explain else None
        prior = self._prior_distribution() if explain and self.uses_prior else None
        result: list[list[ArticleScore]] = []
        for i, row in enumerate(probs):
            top = np.argsort(-row, kind="stable")[:k]
            scores: list[ArticleScore] = []
            for r, j in enumerate(top):
                article = self.labels[j]
                components: dict[str, float] | None = None
                terms: tuple[str, ...] = ()
                if encoder is not None:
                    components = {"encoder": round(float(encoder[i, j]), 6)}
                    if lexical is not None:
                        components["lexical"] = round(float(np.exp(lexical[i, j])), 6)
                    if prior is not None:
                        components["prior"] = round(float(prior[j]), 6)
                    if from_members[i, j] > 0:
                        components["umbrella"] = round(float(from_members[i, j]), 6)
                        # its score before the umbrellas: what the text says of the umbrella itself
                        components["own"] = round(float(before[i, j]), 6)
                    if passed_down[i, j] > 0:
                        components["consequence"] = round(float(passed_down[i, j]), 6)
                    if cited[i, j] > 0:
                        components["cited"] = round(float(cited[i, j]), 6)
                    if self.lexical is not None and article in self.lexical.documents:
                        terms = self.lexical.shared_terms(read[i], article)
                own = [c for c in (citations[i] if citations else ()) if c.article == article]
                scores.append(
                    ArticleScore(
                        article,
                        self.titles.get(article, ""),
                        float(row[j]),
                        r + 1,
                        components,
                        terms,
                        "; ".join(dict.fromkeys(c.text for c in own)),
                        tuple(c.key for c in own),
                    )
                )
            result.append(scores)
        return result

    def status_of(self, score: float) -> str:
        """``suggested`` (score ≥ band high), ``needs-review`` (in the band) or ``abstain`` (below it)."""
        low, high = self.config.review_band
        if score >= high:
            return "suggested"
        if score >= low:
            return "needs-review"
        return "abstain"

    @property
    def identity(self) -> str:
        """A short stable identity for stored links: ``name@version:checksum-prefix``."""
        return (
            f"{self.meta.get('name', 'gdpr-classifier')}@{self.meta.get('package_version', '?')}:"
            + str(self.meta.get("weights_checksum", ""))[:12]
        )

    # -- persistence --------------------------------------------------------------------------------------------
    def save(
        self,
        path: Path,
        *,
        metrics: dict[str, Any] | None = None,
        card: str | None = None,
        adapter: tuple[dict[str, Any], dict[str, Any]] | None = None,
    ) -> Path:
        """Write the model directory (see the module docstring); ``card`` defaults to
        :func:`~compliance.models.card.model_card`. Returns ``path``.

        ``adapter``: ``(description, tensors)`` — write the encoder as these adapter tensors over the base encoder
        that ``description`` names (``base_model``, ``base_model_sha256``, ``lora``: a
        :class:`~compliance.models.adapter.LoRAConfig` as a dict) instead of a full ``encoder/`` copy.
        """
        import hashlib

        from safetensors.torch import save_file

        import compliance

        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        encoder_keys: dict[str, Any]
        if adapter is None:
            enc_dir = path / ENCODER_SUBDIR
            self.encoder.model.save_pretrained(enc_dir)
            self.encoder.tokenizer.save_pretrained(enc_dir)
            (enc_dir / "pooling.json").write_text(
                json.dumps(
                    {"pooling": "mean", "normalize": True, "max_length": self.config.max_length}, indent=2
                )
            )
            encoder_keys = {"encoder_subdir": ENCODER_SUBDIR}
        else:
            description, tensors = adapter
            save_file({k: v.contiguous() for k, v in tensors.items()}, str(path / ADAPTER_FILE))
            encoder_keys = {"encoder_adapter": {**description, "file": ADAPTER_FILE}}
        head_state = {k: v.detach().float().cpu().contiguous() for k, v in self.head.state_dict().items()}
        save_file(head_state, str(path / HEAD_FILE))
        digest = hashlib.sha256()
        for f in sorted(p for p in path.rglob("*.safetensors")):
            digest.update(f.read_bytes())
        self.meta["weights_checksum"] = digest.hexdigest()
        self.meta.setdefault("package_version", compliance.__version__)
        params = {
            **{
                k: v
                for k, v in self.meta.items()
                if k not in ENVELOPE_KEYS and k not in {"path", "encoder_subdir", "encoder_adapter"}
            },
            "labels": self.labels,
            "label_to_index": {str(a): i for i, a in enumerate(self.labels)},
            "titles": {str(a): t for a, t in self.titles.items()},
            "hidden_size": self.encoder.hidden_size,
            **encoder_keys,
            "inference": {
                **asdict(self.config),
                "review_band": list(self.config.review_band),
                "label_prior": list(self.config.label_prior) if self.config.label_prior is not None else None,
                "umbrellas": (
                    [[a, list(m)] for a, m in self.config.umbrellas]
                    if self.config.umbrellas is not None
                    else None
                ),
            },
        }
        write_config(
            path,
            ARTIFACT,
            params,
            provenance=self.meta.get("provenance", {}),
            package_version=str(self.meta["package_version"]),
        )
        if metrics is not None:
            (path / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
        if card is None:
            from compliance.models.card import model_card

            card = model_card(self, metrics or {})
        write_card(path, card)
        if self.lexical is not None:
            self.lexical.save(path)
        for stale in (PASSAGES_FILE, PASSAGE_VECTORS_FILE):
            (path / stale).unlink(missing_ok=True)
        if self.uses_passages:
            assert self.passages is not None
            # embedded again by the encoder being saved: vectors of another encoder state are never kept
            self.passages = self.passages.embedded_by(self.encoder)
            self.passages.save(path)
        from compliance.artifacts import share_as_umask_allows

        share_as_umask_allows(path)  # safetensors writes 0600: other accounts could not load the model
        return path


def load(
    path: Path | str | None = None, *, device: str | None = None, bf16: bool | None = None
) -> ArticleClassifier:
    """Load a saved classifier directory (default: ``<model_dir>/gdpr-classifier``, else the one shipped with the
    package, :func:`compliance.runtime.classifier_dir`); directories of older formats load the same
    (:func:`upgrade_config`).

    Raises:
        ModelNotFoundError: no model there (train one with ``compliance train``).
        ModelError: the directory is not a classifier, is of a newer format, or its files are inconsistent.
    """
    from safetensors.torch import load_file

    from compliance.models.encoder import load_encoder

    model_dir = Path(path) if path is not None else classifier_dir()
    cfg = read_config(model_dir, ARTIFACT)
    try:
        labels = [int(a) for a in cfg["labels"]]
    except (KeyError, TypeError, ValueError) as e:
        raise ModelError(f"{model_dir}: config.json has no valid label map ({e}); {ARTIFACT.rebuild}") from e
    titles = {int(a): t for a, t in cfg.get("titles", {}).items()}
    inf = dict(cfg.get("inference", {}))
    if "review_band" in inf:
        inf["review_band"] = tuple(inf["review_band"])
    if inf.get("label_prior") is not None:
        inf["label_prior"] = tuple(float(x) for x in inf["label_prior"])
    for key in ("umbrellas", "consequences"):  # [[article, [member, …]], …] in JSON
        if inf.get(key) is not None:
            inf[key] = tuple((int(a), tuple(int(m) for m in members)) for a, members in inf[key])
    if inf.get("citation_names") is not None:
        inf["citation_names"] = tuple(str(n) for n in inf["citation_names"])
    config = ClassifierConfig(**inf)
    if config.window_pooling not in WINDOW_POOLINGS:
        raise ModelError(
            f"{model_dir}: config.json has window_pooling {config.window_pooling!r}, expected one of "
            f"{', '.join(WINDOW_POOLINGS)}; {ARTIFACT.rebuild}"
        )
    if cfg.get("encoder_adapter") is not None:
        encoder = _load_adapted_encoder(model_dir, cfg["encoder_adapter"], device=device, bf16=bf16)
    else:
        encoder = load_encoder(
            model_dir / cfg.get("encoder_subdir", ENCODER_SUBDIR), device=device, bf16=bf16
        )
    head = CosineHead.create(len(labels), encoder.hidden_size)
    state = load_file(str(model_dir / HEAD_FILE))
    try:
        head.load_state_dict(state)
    except RuntimeError as e:
        raise ModelError(f"{model_dir}: head weights do not match the label map: {e}") from e
    head.to(encoder.device)
    meta = {
        k: v
        for k, v in cfg.items()
        if k not in {"labels", "label_to_index", "titles", "inference", "kind", "format_version"}
    }
    meta["path"] = str(model_dir)
    lexical = None
    if config.lexical_weight > 0:
        if not (model_dir / LEXICAL_FILE).is_file():
            raise ModelError(f"{model_dir}: config asks for a lexical expert but {LEXICAL_FILE} is missing")
        lexical = LexicalArticleScorer.load(model_dir)
    passages = PassageExpert.load(model_dir) if config.passage_weight > 0 else None
    return ArticleClassifier(encoder, head, labels, titles, config, meta, lexical, passages)


def _load_adapted_encoder(
    model_dir: Path, spec: dict[str, Any], *, device: str | None, bf16: bool | None
) -> Encoder:
    """The base encoder named by ``spec`` with the directory's adapters merged into its weights.

    Raises:
        ModelError: the adapter file is missing or does not fit, or the installed base encoder's weights are not
            the ones the adapters were trained on.
    """
    from safetensors.torch import load_file

    from compliance.artifacts import weights_sha256
    from compliance.models.adapter import LoRAConfig, merge_into
    from compliance.models.encoder import load_encoder
    from compliance.runtime import resolve_model_path

    if not isinstance(spec, dict):
        raise ModelError(f"{model_dir}: config.json has an invalid encoder_adapter; {ARTIFACT.rebuild}")
    file = model_dir / str(spec.get("file", ADAPTER_FILE))
    if not file.is_file():
        raise ModelError(
            f"{model_dir}: config asks for adapters but {file.name} is missing; {ARTIFACT.rebuild}"
        )
    source = resolve_model_path(spec.get("base_model"))
    expected = spec.get("base_model_sha256")
    found = weights_sha256(source)
    if expected and found and expected != found:
        raise ModelError(
            f"{model_dir}: its adapters were trained on base weights sha256 {expected[:12]}…, but {source} has "
            f"{found[:12]}… (another version of the base encoder package?); {ARTIFACT.rebuild}"
        )
    encoder = load_encoder(source, device=device, bf16=bf16)
    merge_into(encoder.model, load_file(str(file)), LoRAConfig.from_dict(spec.get("lora", {})))
    encoder.model.eval()
    # the merged weights are this directory's, not the base encoder's: name it so, so that whatever identifies
    # an encoder by its source (the controls index's embedding space, model identities) tells the two apart
    encoder.name = str(model_dir)
    return encoder


def load_encoder_of(model_dir: Path, *, device: str | None = None, bf16: bool | None = None) -> Encoder:
    """The encoder of the classifier directory ``model_dir`` alone (no head): its ``encoder/`` copy, or the base
    encoder with its adapters merged in — what the retrieval indexes embed with when they use the classifier's
    encoder.

    Raises:
        ModelError: the directory is not a classifier or its adapters do not fit.
    """
    from compliance.models.encoder import load_encoder

    cfg = read_config(model_dir, ARTIFACT)
    if cfg.get("encoder_adapter") is not None:
        return _load_adapted_encoder(model_dir, cfg["encoder_adapter"], device=device, bf16=bf16)
    return load_encoder(model_dir / cfg.get("encoder_subdir", ENCODER_SUBDIR), device=device, bf16=bf16)
