"""The composed retriever: BM25 and/or dense pre-fetching, fusion, date filter and optional re-ranking, built
from one frozen :class:`~compliance.retrieval.config.RetrievalConfig` that is saved with the index.

Stages, per query::

    BM25 scores ─┐                         (pre date filter: out-of-range candidates removed here)
                 ├─ fusion (linear | rrf | bm25 | dense) ─ top prefetch_k ─ re-ranker (top_n) ─ post filter ─ top k
    dense scores ┘
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from compliance.artifacts import corpus_checksum, index_spec, read_config, text_hash, write_card, write_config
from compliance.errors import RetrievalError
from compliance.retrieval.bm25 import BM25Index
from compliance.retrieval.config import DenseConfig, RetrievalConfig
from compliance.retrieval.datefilter import date_mask
from compliance.retrieval.dense import DenseIndex, StoredVectors
from compliance.retrieval.fusion import linear_fusion, minmax, rrf_fusion
from compliance.retrieval.types import Document, Hit
from compliance.text import split_passages

__all__ = ["ARTIFACT", "HybridRetriever"]

#: The composed index's artifact kind (see :mod:`compliance.artifacts`).
ARTIFACT = index_spec("hybrid", "retrieval index")


class HybridRetriever:
    """BM25 + dense + fusion + date filter + re-ranking over one document collection.

    Use :meth:`build` or :meth:`load`; then :meth:`search` / :meth:`search_many`; keep it current with
    :meth:`add` / :meth:`remove`; persist with :meth:`save`.
    """

    def __init__(
        self,
        config: RetrievalConfig,
        docs: Sequence[Document],
        bm25: BM25Index | None,
        dense: DenseIndex | None,
        reranker: Any = None,
    ) -> None:
        self.config = config
        self.documents: dict[str, Document] = {d.id: d for d in docs}
        self.bm25 = bm25
        self.dense = dense
        self._reranker = reranker
        self._rerankers: dict[Any, Any] = {}
        self._sync()

    # -- construction ---------------------------------------------------------------------------------------
    @staticmethod
    def needs_bm25(config: RetrievalConfig) -> bool:
        return config.fusion.method in ("bm25", "linear", "rrf")

    @staticmethod
    def needs_dense(config: RetrievalConfig) -> bool:
        return config.fusion.method in ("dense", "linear", "rrf")

    @classmethod
    def build(
        cls,
        docs: Sequence[Document],
        config: RetrievalConfig | None = None,
        encoder: Any = None,
        reranker: Any = None,
        stored: StoredVectors | None = None,
    ) -> HybridRetriever:
        """Index ``docs`` with the stages ``config`` needs (dense vectors already computed come from ``stored``).

        Args:
            docs: the collection (unique ids).
            config: pipeline configuration (default: BM25 only, textbook parameters).
            encoder: a loaded :class:`~compliance.retrieval.encoding.TextEncoder` to share between indexes.
            reranker: an already loaded re-ranker (else loaded from ``config.reranker`` on first use).
        """
        config = config or RetrievalConfig()
        if len({d.id for d in docs}) != len(docs):
            raise RetrievalError("duplicate document ids in the collection")
        bm25 = BM25Index.build(docs, config.bm25, config.tokenizer) if cls.needs_bm25(config) else None
        dense = None
        if cls.needs_dense(config):
            dense = DenseIndex.build(docs, config.dense or DenseConfig(), encoder=encoder, stored=stored)
        return cls(config, docs, bm25, dense, reranker)

    def _sync(self) -> None:
        self._text_hashes: dict[str, str] | None = None
        self.ids: list[str] = list(self.documents)
        self._dates = [self.documents[i].date for i in self.ids]
        self._perm: dict[str, np.ndarray] = {}
        for name, index in (("bm25", self.bm25), ("dense", self.dense)):
            if index is None:
                continue
            if index.ids != self.ids:
                pos = {d: j for j, d in enumerate(index.ids)}
                try:
                    self._perm[name] = np.array([pos[i] for i in self.ids], dtype=np.int64)
                except KeyError as e:
                    raise RetrievalError(f"the {name} index lacks document {e}; rebuild the index") from e

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def checksum(self) -> str:
        return corpus_checksum(self.text_hashes())

    def text_hashes(self) -> dict[str, str]:
        """``{id: text_hash(text)}`` of the documents (computed once per state of the collection)."""
        if self._text_hashes is None:
            self._text_hashes = {i: text_hash(d.text) for i, d in self.documents.items()}
        return self._text_hashes

    # -- updates --------------------------------------------------------------------------------------------
    def add(self, docs: Sequence[Document], stored: StoredVectors | None = None) -> None:
        """Add or replace documents; unchanged documents cost nothing, others are embedded alone (or their
        vectors taken from ``stored``: :meth:`DenseIndex.add <compliance.retrieval.dense.DenseIndex.add>`)."""
        if self.bm25 is not None:
            self.bm25.add(docs)
        if self.dense is not None:
            self.dense.add(docs, stored)
        for d in docs:
            self.documents[d.id] = d
        self._rebuild_order()

    def remove(self, ids: Sequence[str]) -> None:
        """Remove documents by id (unknown ids ignored)."""
        for index in (self.bm25, self.dense):
            if index is not None:
                index.remove(ids)
        for i in ids:
            self.documents.pop(i, None)
        self._rebuild_order()

    def _rebuild_order(self) -> None:
        ref = self.bm25 or self.dense
        if ref is not None:
            self.documents = {i: self.documents[i] for i in ref.ids}
        self._sync()

    # -- stage scores ---------------------------------------------------------------------------------------
    def _aligned(self, name: str, scores: np.ndarray) -> np.ndarray:
        perm = self._perm.get(name)
        return scores if perm is None else scores[..., perm]

    def stage_scores(
        self, queries: Sequence[str], unions: Sequence[tuple[str, Sequence[int]]] = ()
    ) -> dict[str, np.ndarray]:
        """Raw per-stage score matrices (queries × documents, in :attr:`ids` order).

        ``unions``: further queries ``(text, parts)`` whose text is the concatenation of the queries ``parts``
        (rows after the queries'): BM25 scores the text; the dense stage pools the parts' chunk vectors instead
        of encoding the text again (:meth:`DenseIndex.query_vectors
        <compliance.retrieval.dense.DenseIndex.query_vectors>`)."""
        out: dict[str, np.ndarray] = {}
        texts = [*queries, *(text for text, _ in unions)]
        if self.bm25 is not None:
            mat = np.vstack([self.bm25.scores(q) for q in texts]) if texts else np.zeros((0, len(self.ids)))
            out["bm25"] = self._aligned("bm25", mat.astype(np.float32))
        if self.dense is not None:
            scores = self.dense.scores_many(queries, [parts for _, parts in unions])
            out["dense"] = self._aligned("dense", scores)
        return out

    def _fuse(
        self, stage: dict[str, np.ndarray], row: int, allowed: np.ndarray, config: RetrievalConfig
    ) -> np.ndarray:
        fusion = config.fusion
        method = fusion.method
        bm = stage.get("bm25")
        de = stage.get("dense")
        if method == "bm25":
            assert bm is not None
            s = bm[row].astype(np.float64)
            s = np.where(s > 0, s, -np.inf)
        elif method == "dense":
            assert de is not None
            s = de[row].astype(np.float64)
        elif method == "linear":
            assert bm is not None and de is not None
            s = linear_fusion(
                np.where(allowed, de[row], -np.inf), np.where(allowed, bm[row], -np.inf), fusion.alpha
            )
        else:
            assert bm is not None and de is not None
            rankings = []
            for is_bm25, arr in ((True, bm[row]), (False, de[row])):
                masked = np.where(allowed, arr, -np.inf)
                if is_bm25:  # documents without a shared term are not in the BM25 ranking
                    masked = np.where(masked > 0, masked, -np.inf)
                top = _top_indices(masked, fusion.prefetch_k)
                rankings.append([self.ids[i] for i in top])
            fused = rrf_fusion(rankings, k=fusion.rrf_k)
            s = np.full(len(self.ids), -np.inf)
            pos = {d: j for j, d in enumerate(self.ids)}
            for d, v in fused.items():
                s[pos[d]] = v
        return np.where(allowed, s, -np.inf)

    # -- search ---------------------------------------------------------------------------------------------
    def search(
        self, query: str, k: int = 10, query_date: date | None = None, exclude: Sequence[str] = ()
    ) -> list[Hit]:
        """The ``k`` best documents for ``query`` (a short text or a whole document).

        Args:
            query: the query text.
            k: number of hits.
            query_date: the query's date, used by the date filter (ignored when the filter is off).
            exclude: ids never returned (e.g. the query document itself).
        """
        return self.search_many([query], k, [query_date], exclude=[exclude])[0]

    def search_many(
        self,
        queries: Sequence[str],
        k: int = 10,
        query_dates: Sequence[date | None] | None = None,
        exclude: Sequence[Sequence[str]] | None = None,
    ) -> list[list[Hit]]:
        """:meth:`search` for several queries; the dense encoder runs once over all of them."""
        if not self.ids or not queries:
            return [[] for _ in queries]
        return self.rank(queries, self.stage_scores(queries), k, query_dates, exclude)

    def rank(
        self,
        queries: Sequence[str],
        stage: dict[str, np.ndarray],
        k: int = 10,
        query_dates: Sequence[date | None] | None = None,
        exclude: Sequence[Sequence[str]] | None = None,
        config: RetrievalConfig | None = None,
    ) -> list[list[Hit]]:
        """Rank from precomputed stage scores (:meth:`stage_scores`).

        ``config`` overrides the fusion, date filter and re-ranker settings (not the indexes): evaluation uses
        this to compare variants without re-encoding queries. Beyond a re-ranker's ``top_n`` the remaining
        candidates follow in pre-fetch order with negative scores (−1 − position).
        """
        cfg = config or self.config
        dates = list(query_dates) if query_dates is not None else [None] * len(queries)
        df = cfg.date_filter
        pos = {d: j for j, d in enumerate(self.ids)}
        n = len(self.ids)
        results: list[list[Hit]] = []
        for row, query in enumerate(queries):
            in_range = (
                date_mask(dates[row], self._dates, df.max_years, df.keep_undated)
                if df.mode != "off"
                else np.ones(n, dtype=bool)
            )
            allowed = in_range.copy() if df.mode == "pre" else np.ones(n, dtype=bool)
            if exclude is not None and exclude[row]:
                for d in exclude[row]:
                    if d in pos:
                        allowed[pos[d]] = False
            fused = self._fuse(stage, row, allowed, cfg)
            rr = cfg.reranker
            n_cand = max(k, rr.top_n) if rr is not None else k
            if df.mode == "post":
                n_cand = max(n_cand, cfg.fusion.prefetch_k)
            cand = [int(i) for i in _top_indices(fused, n_cand)]
            final = {i: float(fused[i]) for i in cand}
            rerank_scores: dict[int, float] = {}
            if rr is not None and cand:
                head = cand[: rr.top_n]
                raw = np.asarray(
                    self.reranker_for(rr).score(query, [self.documents[self.ids[i]] for i in head]),
                    dtype=np.float64,
                )
                rerank_scores = {i: float(v) for i, v in zip(head, raw, strict=True)}
                combined = rr.weight * minmax(raw) + (1 - rr.weight) * minmax(fused[head])
                final = {i: float(v) for i, v in zip(head, combined, strict=True)}
                final.update({i: -1.0 - j for j, i in enumerate(cand[rr.top_n :])})
            order = sorted(final, key=lambda i: (-final[i], i))
            if df.mode == "post":
                order = [i for i in order if in_range[i]]
            order = order[:k]
            results.append(
                [self._hit(i, final[i], stage, row, fused, rerank_scores, cfg.fusion.method) for i in order]
            )
        return results

    def _hit(
        self,
        i: int,
        score: float,
        stage: dict[str, np.ndarray],
        row: int,
        fused: np.ndarray,
        rerank: dict[int, float],
        method: str,
    ) -> Hit:
        ev: dict[str, Any] = {}
        for name, mat in stage.items():
            ev[name] = float(mat[row, i])
            ev[f"rank_{name}"] = int(np.count_nonzero(mat[row] > mat[row, i])) + 1
        if method in ("linear", "rrf"):
            ev["fused"] = float(fused[i])
        if i in rerank:
            ev["rerank"] = rerank[i]
        return Hit(self.ids[i], score, ev)

    # -- evidence -------------------------------------------------------------------------------------------
    def salient_terms(self, query: str, doc_id: str, n: int = 8) -> list[tuple[str, float]]:
        """Terms shared by ``query`` and the document, by their BM25 contribution (readable surface forms).

        Works whatever the fusion method: without a BM25 stage (dense only) the shared terms are weighted by
        an index-free fallback (see :func:`compliance.retrieval.evidence.salient_terms`).
        """
        from compliance.retrieval.evidence import salient_terms

        return salient_terms(query, self.documents[doc_id].text, self.bm25, doc_id, n)

    def best_passage(self, query: str, doc_id: str) -> str:
        """The document's passage (BM25 passage split) that matches ``query`` best by BM25."""
        from compliance.retrieval.analysis import Analyzer
        from compliance.retrieval.config import BM25Config

        text = self.documents[doc_id].text
        cfg = self.bm25.config if self.bm25 is not None else BM25Config()
        passages = split_passages(text, min(cfg.passage_words, 120), min(cfg.passage_overlap, 30))
        if len(passages) == 1:
            return passages[0]
        analyzer = self.bm25.analyzer if self.bm25 is not None else Analyzer()
        q = set(analyzer.tokenize(query))
        best = max(range(len(passages)), key=lambda j: (len(q & set(analyzer.tokenize(passages[j]))), -j))
        return passages[best]

    # -- re-ranker ------------------------------------------------------------------------------------------
    def reranker_for(self, config: Any) -> Any:
        """The loaded re-ranker for a :class:`RerankConfig` (cached; the one given to :meth:`build` for the
        index's own configuration)."""
        if config == self.config.reranker and self._reranker is not None:
            return self._reranker
        if config not in self._rerankers:
            from compliance.retrieval.rerank import load_reranker

            self._rerankers[config] = load_reranker(config)
        return self._rerankers[config]

    # -- persistence ----------------------------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Write the index directory (``config.json``, ``docs.jsonl``, ``bm25/``, ``dense/``, ``MODEL_CARD.md``)."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        with (path / "docs.jsonl").open("w", encoding="utf-8") as fh:
            for i in self.ids:
                fh.write(json.dumps(self.documents[i].to_json(), ensure_ascii=False) + "\n")
        if self.bm25 is not None:
            self.bm25.save(path / "bm25")
        if self.dense is not None:
            self.dense.save(path / "dense")
        write_config(
            path,
            ARTIFACT,
            {"retrieval": self.config.to_dict(), "documents": len(self.ids)},
            provenance={
                "corpus_checksum": self.checksum,
                "encoder": self.dense.identity if self.dense is not None else None,
            },
            sort_keys=True,
        )
        write_card(path, self._card())
        return path

    def _card(self) -> str:
        from compliance import __version__

        enc = self.dense.identity if self.dense is not None else None
        return (
            "# Retrieval index\n\n"
            f"- documents: {len(self.ids)}\n- corpus checksum: {self.checksum}\n"
            f"- stages: fusion={self.config.fusion.method}, bm25={'yes' if self.bm25 else 'no'}, "
            f"dense={'yes' if self.dense else 'no'}, date filter={self.config.date_filter.mode}, "
            f"re-ranker={self.config.reranker.kind if self.config.reranker else 'none'}\n"
            f"- encoder: {json.dumps(enc) if enc else 'none'}\n"
            f"- built by compliance {__version__}; configuration in config.json; evaluation in docs/retrieval.md\n"
        )

    @classmethod
    def load(cls, path: str | Path, encoder: Any = None) -> HybridRetriever:
        """Load a directory written by :meth:`save`."""
        path = Path(path)
        cfg = read_config(path, ARTIFACT)
        config = RetrievalConfig.from_dict(cfg["retrieval"])
        try:
            lines = [
                line
                for line in (path / "docs.jsonl").read_text(encoding="utf-8").splitlines()
                if line.strip()
            ]
            # one JSON array parse for all the lines: a third of the per-line parse for 100,000 documents
            docs = [Document.from_json(d) for d in json.loads("[" + ",".join(lines) + "]")]
        except (OSError, ValueError, KeyError) as e:
            raise RetrievalError(f"{path}: cannot read docs.jsonl ({e}); rebuild the index") from e
        bm25 = BM25Index.load(path / "bm25") if (path / "bm25").is_dir() else None
        dense = DenseIndex.load(path / "dense", encoder=encoder) if (path / "dense").is_dir() else None
        retriever = cls(config, docs, bm25, dense)
        if retriever.checksum != cfg["provenance"].get("corpus_checksum"):
            raise RetrievalError(f"{path}: documents do not match the stored checksum; rebuild the index")
        return retriever


def _top_indices(scores: np.ndarray, k: int) -> np.ndarray:
    finite = np.flatnonzero(np.isfinite(scores))
    if finite.size == 0 or k <= 0:
        return np.zeros(0, dtype=np.int64)
    k = min(k, finite.size)
    sub = scores[finite]
    top = finite[np.argpartition(-sub, k - 1)[:k]]
    return top[np.lexsort((top, -scores[top]))]
