"""Okapi BM25 over documents or passages (bm25s), with seed-001 denoising, persistence and incremental
updates.

Score (Robertson et al. 1995; bm25s ``method``/``idf_method`` pick the variant, Kamphuis et al. 2020)::

    score(q, d) = Σ_{t ∈ q} idf(t) · tf(t, d)·(k1 + 1) / (tf(t, d) + k1·(1 − b + b·|d| / avgdl))

Repeated query terms count once per occurrence (as in rank_bm25 and Elasticsearch match queries), which lets a
long query weigh its frequent informative words.

In ``passage`` mode each document is split into passages (:func:`split_passages`), the passages are indexed
and a document's score is the maximum of its passages' scores (seed 003 §5.2).

Incremental updates keep the tokenised units, so :meth:`BM25Index.add` / :meth:`BM25Index.remove` only
tokenise the new documents and rebuild the (fast) bm25s score matrix; idf statistics follow the new corpus while
the analyzer's fitted noise list stays as it was at build time (call :meth:`BM25Index.refit` to recompute it).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from compliance.artifacts import corpus_checksum, index_spec, read_config, text_hash, write_card, write_config
from compliance.errors import RetrievalError
from compliance.retrieval.analysis import Analyzer
from compliance.retrieval.config import BM25Config, TokenizerConfig
from compliance.retrieval.passages import max_pool
from compliance.retrieval.types import Document, Hit
from compliance.text import split_passages

__all__ = ["ARTIFACT", "BM25Index"]

#: The BM25 index's artifact kind (see :mod:`compliance.artifacts`).
ARTIFACT = index_spec("bm25", "BM25 index")


class BM25Index:
    """A BM25 index over documents (document- or passage-wise).

    Build with :meth:`build`; query with :meth:`scores`, :meth:`search`, :meth:`search_many`; persist with
    :meth:`save` / :meth:`load`.
    """

    def __init__(self, config: BM25Config, analyzer: Analyzer) -> None:
        self.config = config
        self.analyzer = analyzer
        self.ids: list[str] = []
        self._hashes: dict[str, str] = {}
        self._unit_list: list[list[str]] | None = []  # terms per indexed unit (document or passage)
        #: a loaded index keeps its units as saved (token ids, unit bounds, vocabulary) until they are needed
        #: whole (adding, removing, re-indexing, saving): a search needs the bm25s model only
        self._unit_source: tuple[np.ndarray, np.ndarray, list[str]] | None = None
        self._owner = np.zeros(0, dtype=np.int64)  # unit -> document position
        self._model: Any = None
        self._pos: dict[str, int] = {}

    @property
    def _units(self) -> list[list[str]]:
        if self._unit_list is None:
            assert self._unit_source is not None
            tokens, bounds, vocab = self._unit_source
            self._unit_list = [[vocab[t] for t in tokens[a:b]] for a, b in itertools.pairwise(bounds)]
            self._unit_source = None
        return self._unit_list

    @_units.setter
    def _units(self, units: list[list[str]]) -> None:
        self._unit_list, self._unit_source = units, None

    def _unit_terms(self, unit: int) -> set[str]:
        if self._unit_list is None and self._unit_source is not None:
            tokens, bounds, vocab = self._unit_source
            return {vocab[t] for t in tokens[bounds[unit] : bounds[unit + 1]]}
        return set(self._units[unit])

    # -- building -------------------------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        docs: Sequence[Document],
        config: BM25Config | None = None,
        tokenizer: TokenizerConfig | None = None,
        analyzer: Analyzer | None = None,
    ) -> BM25Index:
        """Fit the analyzer on the indexed units (unless one is given) and index ``docs``."""
        config = config or BM25Config()
        _check_unique([d.id for d in docs])
        unit_texts, owner = _units(docs, config)
        if analyzer is None:
            analyzer = Analyzer(tokenizer)
            units = analyzer.fit_transform(unit_texts)
        else:
            units = analyzer.tokenize_many(unit_texts)
        index = cls(config, analyzer)
        index.ids = [d.id for d in docs]
        index._hashes = {d.id: text_hash(d.text) for d in docs}
        index._units = units
        index._owner = owner
        index._reindex()
        return index

    def _units_of(self, docs: Sequence[Document]) -> tuple[list[list[str]], np.ndarray]:
        texts, owner = _units(docs, self.config)
        return self.analyzer.tokenize_many(texts), owner

    def _reindex(self) -> None:
        import bm25s

        self._pos = {d: i for i, d in enumerate(self.ids)}
        model = bm25s.BM25(
            k1=self.config.k1, b=self.config.b, method=self.config.method, idf_method=self.config.idf_method
        )
        if self._units:
            model.index(self._units, show_progress=False)
        self._model = model

    def with_params(self, **changes: Any) -> BM25Index:
        """A copy with other BM25 parameters (``k1``, ``b``, ``method``, ``idf_method``) over the same tokenised
        units — no re-tokenisation (used by tuning). Changing ``mode`` or passage sizes needs :meth:`build`."""
        if {"mode", "passage_words", "passage_overlap"} & set(changes):
            raise RetrievalError("with_params cannot change the indexing unit; build a new index")
        other = BM25Index(self.config.model_copy(update=changes), self.analyzer)
        other.ids = list(self.ids)
        other._hashes = dict(self._hashes)
        other._units = self._units
        other._owner = self._owner
        other._reindex()
        return other

    def refit(self, texts_by_id: dict[str, str]) -> None:
        """Recompute the denoising noise list on the current corpus (texts must be given again) and re-index."""
        docs = [Document(i, texts_by_id[i]) for i in self.ids]
        unit_texts, owner = _units(docs, self.config)
        self.analyzer = Analyzer(self.analyzer.config)
        self._units = self.analyzer.fit_transform(unit_texts)
        self._owner = owner
        self._reindex()

    # -- incremental ----------------------------------------------------------------------------------------
    def add(self, docs: Sequence[Document]) -> None:
        """Add documents (a known id with a changed text is replaced; an unchanged one is skipped)."""
        changed = [d for d in docs if self._hashes.get(d.id) != text_hash(d.text)]
        _check_unique([d.id for d in changed])
        replaced = [d.id for d in changed if d.id in self._pos]
        if replaced:
            self._drop(replaced)
        if not changed:
            return
        units, owner = self._units_of(changed)
        offset = len(self.ids)
        self.ids.extend(d.id for d in changed)
        self._hashes.update({d.id: text_hash(d.text) for d in changed})
        self._units.extend(units)
        self._owner = np.concatenate([self._owner, owner + offset])
        self._reindex()

    def remove(self, ids: Sequence[str]) -> None:
        """Remove documents by id (unknown ids are ignored)."""
        known = [i for i in ids if i in self._pos]
        if known:
            self._drop(known)
            self._reindex()

    def _drop(self, ids: Sequence[str]) -> None:
        gone = {self._pos[i] for i in ids}
        keep_doc = np.array([i not in gone for i in range(len(self.ids))], dtype=bool)
        new_pos = np.cumsum(keep_doc) - 1
        keep_unit = keep_doc[self._owner]
        self._units = [u for u, k in zip(self._units, keep_unit, strict=True) if k]
        self._owner = new_pos[self._owner[keep_unit]]
        for i in ids:
            self._hashes.pop(i, None)
        self.ids = [d for d, k in zip(self.ids, keep_doc, strict=True) if k]
        self._pos = {d: i for i, d in enumerate(self.ids)}

    # -- querying -------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.ids)

    @property
    def checksum(self) -> str:
        return corpus_checksum(self._hashes)

    def unit_scores(self, query: str | list[str]) -> np.ndarray:
        """BM25 score of every indexed unit (document or passage), float32.

        ``query`` is a text, or a list of already analysed terms (:meth:`Analyzer.tokenize`)."""
        n_units = len(self._owner)
        if n_units == 0:
            return np.zeros(0, dtype=np.float32)
        terms = self.analyzer.tokenize(query) if isinstance(query, str) else query
        vocab = self._model.vocab_dict
        qids = [vocab[t] for t in terms if t in vocab]
        if not qids:
            return np.zeros(n_units, dtype=np.float32)
        return np.asarray(self._model.get_scores_from_ids(qids), dtype=np.float32)

    def scores(self, query: str | list[str]) -> np.ndarray:
        """BM25 score of every document, in :attr:`ids` order (passage scores max-pooled); ``query`` is a text
        or a list of analysed terms."""
        unit = self.unit_scores(query)
        if self.config.mode == "document":
            return unit
        return max_pool(unit, self._owner, len(self.ids), fill=0.0)

    def best_unit(self, query: str, doc_id: str) -> tuple[int, float]:
        """The best-scoring unit of ``doc_id`` for ``query`` (its position among the document's units, score)."""
        unit = self.unit_scores(query)
        mine = np.flatnonzero(self._owner == self._pos[doc_id])
        best = int(np.argmax(unit[mine])) if mine.size else 0
        return best, float(unit[mine][best]) if mine.size else 0.0

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """Top ``k`` documents with their BM25 score (documents scoring 0 are left out)."""
        return _top_hits(self.ids, self.scores(query), k, "bm25")

    def search_many(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        return [self.search(q, k) for q in queries]

    def term_contributions(self, query: str, doc_id: str, n: int = 10) -> list[tuple[str, float]]:
        """Shared terms of ``query`` and ``doc_id`` ranked by their exact BM25 contribution to the score.

        In passage mode the contributions are those in the document's best passage. Terms are analyzer terms
        (stemmed when stemming is on).
        """
        if doc_id not in self._pos or not len(self._owner):
            return []
        mine = np.flatnonzero(self._owner == self._pos[doc_id])
        if self.config.mode == "passage" and mine.size > 1:
            unit_idx = int(mine[self.best_unit(query, doc_id)[0]])
        else:
            unit_idx = int(mine[0])
        vocab = self._model.vocab_dict
        counts: dict[str, int] = {}
        for t in self.analyzer.tokenize(query):
            if t in vocab:
                counts[t] = counts.get(t, 0) + 1
        unit_terms = self._unit_terms(unit_idx)
        data, indices, indptr = (self._model.scores[key] for key in ("data", "indices", "indptr"))
        out: list[tuple[str, float]] = []
        for term, qtf in counts.items():
            if term not in unit_terms:
                continue
            tid = vocab[term]
            lo, hi = int(indptr[tid]), int(indptr[tid + 1])
            where = np.searchsorted(indices[lo:hi], unit_idx)
            if where < hi - lo and indices[lo + where] == unit_idx:
                out.append((term, float(data[lo + where]) * qtf))
        out.sort(key=lambda x: (-x[1], x[0]))
        return out[:n]

    # -- persistence ----------------------------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Write the index directory: ``config.json``, ``units.npz`` (tokenised units), ``bm25s/``,
        ``MODEL_CARD.md``."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        import bm25s

        vocab: dict[str, int] = {}
        flat: list[int] = []
        lengths = []
        for unit in self._units:
            lengths.append(len(unit))
            flat.extend(vocab.setdefault(t, len(vocab)) for t in unit)
        np.savez(
            path / "units.npz",
            tokens=np.asarray(flat, dtype=np.int32),
            lengths=np.asarray(lengths, dtype=np.int32),
            owner=self._owner.astype(np.int64),
        )
        (path / "vocab.json").write_text(json.dumps(list(vocab)), encoding="utf-8")
        (path / "ids.json").write_text(json.dumps(self.ids), encoding="utf-8")
        (path / "hashes.json").write_text(json.dumps(self._hashes), encoding="utf-8")
        if self._units:
            self._model.save(str(path / "bm25s"), show_progress=False)
        cfg = write_config(
            path,
            ARTIFACT,
            {
                "bm25": self.config.to_dict(),
                "analyzer": self.analyzer.state(),
                "documents": len(self.ids),
                "units": len(self._units),
                "bm25s_version": getattr(bm25s, "__version__", "unknown"),
            },
            provenance={"corpus_checksum": self.checksum},
            sort_keys=True,
        )
        write_card(
            path,
            "# BM25 index\n\n"
            f"- documents: {len(self.ids)}, indexed units: {len(self._units)} ({self.config.mode} mode)\n"
            f"- BM25: k1={self.config.k1}, b={self.config.b}, method={self.config.method}\n"
            f"- corpus checksum: {self.checksum}\n"
            f"- built by compliance {cfg['package_version']} with bm25s {cfg['bm25s_version']}; "
            "parameters in config.json\n",
        )
        return path

    @classmethod
    def load(cls, path: str | Path) -> BM25Index:
        """Load a directory written by :meth:`save` (nothing else needed)."""
        import bm25s

        path = Path(path)
        cfg = read_config(path, ARTIFACT)
        index = cls(BM25Config.model_validate(cfg["bm25"]), Analyzer.from_state(cfg["analyzer"]))
        try:
            arrays = np.load(path / "units.npz")
            vocab = json.loads((path / "vocab.json").read_text(encoding="utf-8"))
            index.ids = json.loads((path / "ids.json").read_text(encoding="utf-8"))
            index._hashes = json.loads((path / "hashes.json").read_text(encoding="utf-8"))
        except (OSError, ValueError, KeyError) as e:
            raise RetrievalError(f"{path}: incomplete BM25 index ({e}); rebuild it") from e
        tokens = arrays["tokens"]
        bounds = np.concatenate([[0], np.cumsum(arrays["lengths"])])
        index._unit_list, index._unit_source = None, (tokens, bounds, vocab)
        index._owner = arrays["owner"].astype(np.int64)
        index._pos = {d: i for i, d in enumerate(index.ids)}
        if index.checksum != cfg["provenance"].get("corpus_checksum"):
            raise RetrievalError(f"{path}: corpus checksum does not match the stored documents; rebuild it")
        if len(index._owner):
            index._model = bm25s.BM25.load(str(path / "bm25s"), show_progress=False)
        else:
            index._reindex()
        return index


def _check_unique(ids: Sequence[str]) -> None:
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        dupes = sorted({i for i in ids if i in seen or seen.add(i)})  # type: ignore[func-returns-value]
        raise RetrievalError(f"duplicate document ids: {dupes[:5]}")


def _units(docs: Sequence[Document], config: BM25Config) -> tuple[list[str], np.ndarray]:
    """Texts of the indexed units and, for each unit, its document's position."""
    if config.mode == "document":
        return [d.text for d in docs], np.arange(len(docs), dtype=np.int64)
    texts: list[str] = []
    owner: list[int] = []
    for i, d in enumerate(docs):
        parts = split_passages(d.text, config.passage_words, config.passage_overlap)
        texts.extend(parts)
        owner.extend([i] * len(parts))
    return texts, np.asarray(owner, dtype=np.int64)


def _top_hits(ids: Sequence[str], scores: np.ndarray, k: int, stage: str) -> list[Hit]:
    if scores.size == 0 or k <= 0:
        return []
    k = min(k, scores.size)
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.lexsort((top, -scores[top]))]
    return [Hit(ids[i], float(scores[i]), {stage: float(scores[i])}) for i in top if scores[i] > 0]
