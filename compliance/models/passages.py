"""The law's own paragraphs and points as an expert of the scoring ensemble (seed 003: passages max-pooled to their
document).

The classifier's head scores a text against one prototype per article, learned from the article's sentences. An
article of several paragraphs and points (Art. 28's contract terms, Art. 15's rights, Art. 32(1)'s measures) is
then one point in the encoder's space for very different duties, and a text that restates one of them closely can
still sit nearer another article's prototype. The passage expert reads the text against every paragraph and point
of the law instead: its cosine with each passage, in the classifier encoder's own space (the text's embedding from
the same forward pass that gives its logits), max-pooled to the passage's article. ``weight × cosine`` is added to
the text's log-probabilities before the experts are multiplied (:attr:`ClassifierConfig.passage_weight
<compliance.models.classifier.ClassifierConfig.passage_weight>`); since a softmax does not change under a shift,
the article that carries the text's closest passage gains ``exp(weight × Δcos)`` against the others.

The passages are the provision picker's (:func:`compliance.rules.passages.provision_passages`, 120-word windows of
each paragraph and point with the article title), embedded by the classifier's encoder and stored in the model
directory (``passages.json``: their provision keys, texts and source; ``passages.npy``: their vectors), so that a
model directory scores alone. They are embedded again whenever the model is saved (:meth:`PassageExpert.embedded_by`):
vectors of another encoder state are never kept. The law's held-out sentences are among the passages, so a
model's held-out QA and QR figures are computed without this expert.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from compliance.errors import ModelError

if TYPE_CHECKING:  # pragma: no cover
    from compliance.models.encoder import Encoder
    from compliance.rules.corpus import Law

__all__ = ["PASSAGES_FILE", "PASSAGE_VECTORS_FILE", "PASSAGE_WORDS", "PassageExpert", "build_passage_expert"]

#: the words of one passage: the provision picker's (an article's paragraph or point is rarely longer)
PASSAGE_WORDS = 120
PASSAGES_FILE = "passages.json"
PASSAGE_VECTORS_FILE = "passages.npy"


@dataclass
class PassageExpert:
    """The passages of one law and their vectors by one encoder.

    Attributes:
        keys: each passage's provision key (``art:28/par:3/pt:a``).
        texts: each passage's text.
        vectors: L2-normalised vectors (passages × dim, float32) by the classifier's encoder; None before
            :meth:`embedded_by`.
        source: where the passages come from (``law``, ``law_checksum``, ``passage_words``).
    """

    keys: tuple[str, ...]
    texts: tuple[str, ...]
    vectors: np.ndarray | None = None
    source: dict[str, Any] = field(default_factory=dict)
    #: per label order: the passages' vectors grouped by article, the articles' columns and where each group starts
    _plans: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray, np.ndarray]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def articles(self) -> list[int]:
        """Each passage's article number."""
        return [int(k.split("/", 1)[0].removeprefix("art:")) for k in self.keys]

    def embedded_by(self, encoder: Encoder, known: PassageExpert | None = None) -> PassageExpert:
        """The same passages with their vectors by ``encoder`` (in full precision, whatever the encoder's autocast
        setting, so that the stored vectors do not depend on the machine that saved them).

        ``known``: an expert whose vectors the same encoder gave (the model directory's, when only the law-derived
        scoring is refreshed): a passage whose text it holds takes its stored vector, so that a refresh embeds only
        the passages that changed and leaves the stored vectors exactly as they were."""
        rows: list[int | None] = [None] * len(
            self.texts
        )  # each passage's row of known, when it holds the text
        if known is not None and known.vectors is not None:
            by_text = {t: i for i, t in enumerate(known.texts)}
            # the row of the same provision first: a recital's windows repeat under each article it explains
            by_key = {(k, t): i for i, (k, t) in enumerate(zip(known.keys, known.texts, strict=True))}
            rows = [by_key.get((k, t), by_text.get(t)) for k, t in zip(self.keys, self.texts, strict=True)]
        todo = [i for i, r in enumerate(rows) if r is None]
        fresh = _embed_in_full_precision(encoder, [self.texts[i] for i in todo])
        if len(todo) == len(self.texts):
            return PassageExpert(self.keys, self.texts, fresh, dict(self.source))
        assert known is not None and known.vectors is not None
        dim = known.vectors.shape[1]
        if todo and fresh.shape[1] != dim:
            raise ModelError(f"known passage vectors have {dim} dimensions, not {fresh.shape[1]}")
        vectors = np.zeros((len(self.texts), dim), dtype=np.float32)
        vectors[todo] = fresh
        reused = [(i, r) for i, r in enumerate(rows) if r is not None]
        vectors[[i for i, _ in reused]] = known.vectors[[r for _, r in reused]]
        return PassageExpert(self.keys, self.texts, vectors, dict(self.source))

    def vectors_of(self, texts: Sequence[str], law_checksum: str | None) -> np.ndarray | None:
        """The stored vectors of ``texts`` (one row per text, in their order) when every one of them is a passage
        of this expert and the expert's passages come from the law version ``law_checksum``; None otherwise.

        The provision picker's passages are the expert's article passages (the same :func:`provision_passages`
        texts), so an audit reads them from the model directory instead of embedding them again: the same
        encoder's vectors, in full precision (:meth:`embedded_by`)."""
        if self.vectors is None or not law_checksum or self.source.get("law_checksum") != law_checksum:
            return None
        row = {t: i for i, t in enumerate(self.texts)}
        rows = [row.get(t) for t in texts]
        if any(r is None for r in rows):
            return None
        return np.asarray(self.vectors[np.asarray(rows, dtype=np.int64)], dtype=np.float32)

    def cosines(self, embeddings: np.ndarray, labels: Sequence[int]) -> np.ndarray:
        """Per text (rows of L2-normalised ``embeddings``) and article of ``labels``: the cosine of the text with the
        article's closest passage; an article without passages gets the text's lowest cosine with any passage."""
        if self.vectors is None:
            raise ModelError("the passage expert has no vectors: embed its passages first (embedded_by)")
        emb = np.asarray(embeddings, dtype=np.float32)
        out = np.zeros((len(emb), len(labels)), dtype=np.float64)
        if not len(emb) or not len(self.keys):
            return out
        grouped, present, starts = self._plan(tuple(labels))
        if not len(present):
            return out
        sims = (emb @ grouped.T).astype(np.float64)  # texts × passages, grouped by article
        out[:] = sims.min(axis=1, keepdims=True)
        out[:, present] = np.maximum.reduceat(sims, starts, axis=1)
        return out

    def _plan(self, labels: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The vectors of the passages of ``labels``' articles grouped by article, the column of each group and
        where each group starts (computed once per label order: the audit asks for every batch)."""
        plan = self._plans.get(labels)
        if plan is None:
            assert self.vectors is not None
            column = {a: j for j, a in enumerate(labels)}
            cols = np.asarray([column.get(a, -1) for a in self.articles()], dtype=np.int64)
            keep = np.flatnonzero(cols >= 0)
            order = keep[np.argsort(cols[keep], kind="stable")]
            present, starts = np.unique(cols[order], return_index=True)
            plan = self._plans[labels] = (np.ascontiguousarray(self.vectors[order]), present, starts)
        return plan

    def save(self, path: Path) -> None:
        """Write ``passages.json`` and ``passages.npy`` into the model directory ``path``."""
        if self.vectors is None:
            raise ModelError("the passage expert has no vectors: embed its passages before saving")
        doc = {
            "source": self.source,
            "passages": [{"key": k, "text": t} for k, t in zip(self.keys, self.texts, strict=True)],
        }
        (path / PASSAGES_FILE).write_text(json.dumps(doc, ensure_ascii=False) + "\n", encoding="utf-8")
        with (path / PASSAGE_VECTORS_FILE).open("wb") as fh:
            np.save(fh, self.vectors, allow_pickle=False)

    @classmethod
    def load(cls, path: Path) -> PassageExpert:
        """Read the passages of the model directory ``path``.

        Raises:
            ModelError: the files are missing or do not fit each other.
        """
        try:
            doc = json.loads((path / PASSAGES_FILE).read_text(encoding="utf-8"))
            vectors = np.load(path / PASSAGE_VECTORS_FILE, allow_pickle=False)
            rows: list[Mapping[str, Any]] = doc["passages"]
            keys = tuple(str(r["key"]) for r in rows)
            texts = tuple(str(r["text"]) for r in rows)
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ModelError(f"{path}: the passage expert's files are missing or unreadable ({e})") from e
        if vectors.ndim != 2 or len(vectors) != len(keys):
            raise ModelError(f"{path}: {len(keys)} passages but vectors of shape {vectors.shape}")
        return cls(keys, texts, np.asarray(vectors, dtype=np.float32), dict(doc.get("source", {})))


def _embed_in_full_precision(encoder: Encoder, texts: list[str]) -> np.ndarray:
    """``texts``' vectors by ``encoder`` without its autocast (float32; an empty (0, 1) array for no texts)."""
    if not texts:
        return np.zeros((0, 1), dtype=np.float32)
    with encoder.lock:  # the autocast setting is the encoder's: no other thread embeds meanwhile
        bf16 = encoder.use_bf16
        try:
            encoder.use_bf16 = False
            return np.asarray(encoder.embed(texts).numpy(), dtype=np.float32)
        finally:
            encoder.use_bf16 = bf16


def build_passage_expert(
    law: Law,
    encoder: Encoder,
    *,
    recital_map: Mapping[int, Sequence[int]] | None = None,
    words: int = PASSAGE_WORDS,
    known: PassageExpert | None = None,
) -> PassageExpert:
    """The passages of every article of ``law`` (its paragraphs and points, :func:`provision_passages`) and, with a
    ``recital_map`` (article → recitals), the recitals that explain each article, as passages of that article
    (``art:32/rec:83``: a recital explaining several articles is a passage of each), with their vectors by
    ``encoder`` (those ``known`` holds reused: :meth:`PassageExpert.embedded_by`)."""
    from compliance.rules.passages import provision_passages, windows_of

    texts, owners = provision_passages(law, [a.key for a in law.articles], words)
    recitals = 0
    provisions = {p.key for p in law.provisions}
    for article, numbers in sorted((recital_map or {}).items()):
        for number in numbers:
            key = f"rec:{number}"
            if key in provisions:
                windows_of(law.text_of(key), f"art:{article}/{key}", words, texts, owners)
                recitals += 1
    source = {
        "law": law.short_name,
        "law_checksum": law.checksum,
        "passage_words": words,
        "recitals": recitals,
    }
    return PassageExpert(tuple(owners), tuple(texts), None, source).embedded_by(encoder, known)
