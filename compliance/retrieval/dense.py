"""Exact inner-product search over L2-normalised chunk vectors (numpy float32), persisted and incrementally
updatable.

Each document is chunked by the encoder; every chunk is a row of the matrix; a document's score is the maximum
over its chunks (passage → document max-pooling). The query is one normalised mean vector of its chunks
(``query_aggregation="mean"``, seed 001's centroid) or each query chunk scores on its own and the best counts
(``"max"``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from compliance.artifacts import corpus_checksum, index_spec, read_config, text_hash, write_card, write_config
from compliance.errors import RetrievalError
from compliance.retrieval.config import DenseConfig
from compliance.retrieval.passages import max_pool
from compliance.retrieval.types import Document, Hit

__all__ = ["ARTIFACT", "DenseIndex", "StoredVectors"]

#: ``(embedding space id, document ids) -> {id: chunk vectors (chunks, dim)}`` for the documents that have some
StoredVectors = Callable[[str, Sequence[str]], Mapping[str, np.ndarray]]

#: The dense index's artifact kind (see :mod:`compliance.artifacts`).
ARTIFACT = index_spec("dense", "dense index")


class DenseIndex:
    """Chunk-vector index with exact search.

    Args:
        config: encoder and chunking parameters.
        encoder: an already loaded :class:`~compliance.retrieval.encoding.TextEncoder` to share (else loaded
            lazily on first use).
    """

    def __init__(self, config: DenseConfig | None = None, encoder: Any = None) -> None:
        self.config = config or DenseConfig()
        self._encoder = encoder
        self.identity: dict[str, Any] | None = encoder.identity() if encoder is not None else None
        self.ids: list[str] = []
        self._hashes: dict[str, str] = {}
        self.vectors = np.zeros((0, 0), dtype=np.float32)
        self.owner = np.zeros(0, dtype=np.int64)
        self._pos: dict[str, int] = {}

    @property
    def encoder(self) -> Any:
        if self._encoder is None:
            from compliance.retrieval.encoding import TextEncoder

            enc = TextEncoder(self.config)
            if self.identity is not None and enc.identity() != self.identity:
                raise RetrievalError(
                    f"the encoder now at {enc.source} is not the one this index was built with "
                    f"({self.identity.get('model')}); rebuild the index"
                )
            self._encoder = enc
            self.identity = enc.identity()
        return self._encoder

    # -- building and updating ------------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        docs: Sequence[Document],
        config: DenseConfig | None = None,
        encoder: Any = None,
        stored: StoredVectors | None = None,
    ) -> DenseIndex:
        index = cls(config, encoder)
        index.add(docs, stored)
        return index

    def __len__(self) -> int:
        return len(self.ids)

    def add(self, docs: Sequence[Document], stored: StoredVectors | None = None) -> None:
        """Embed and add new documents; a known id with a changed text is re-embedded, unchanged ones skipped.

        ``stored(space_id, ids)`` gives the chunk vectors already computed for some of the documents in this
        index's embedding space (the audit's classifier forward stores them): those are taken as they are and only
        the others are embedded.
        """
        changed = [d for d in docs if self._hashes.get(d.id) != text_hash(d.text)]
        if len({d.id for d in changed}) != len(changed):
            raise RetrievalError("duplicate document ids in one add()")
        self.remove([d.id for d in changed if d.id in self._pos])
        if not changed:
            return
        known: Mapping[str, np.ndarray] = {}
        if stored is not None:
            space = self.encoder.space()
            if space is not None:
                known = stored(space.id, [d.id for d in changed])
        todo = [d for d in changed if d.id not in known]
        fresh, fresh_owner = self.encoder.encode_chunks([d.text for d in todo]) if todo else (None, None)
        if known:
            at = {d.id: i for i, d in enumerate(todo)}
            parts: list[np.ndarray] = []
            owners: list[np.ndarray] = []
            for i, d in enumerate(changed):
                if d.id in known:
                    rows = np.asarray(known[d.id], dtype=np.float32).reshape(-1, self.encoder.dim)
                else:
                    assert fresh is not None and fresh_owner is not None
                    rows = fresh[fresh_owner == at[d.id]]
                parts.append(rows)
                owners.append(np.full(len(rows), i, dtype=np.int64))
            vecs, owner = np.concatenate(parts), np.concatenate(owners)
        else:
            assert fresh is not None and fresh_owner is not None
            vecs, owner = fresh, fresh_owner
        offset = len(self.ids)
        self.vectors = vecs if self.vectors.size == 0 else np.concatenate([self.vectors, vecs])
        self.owner = np.concatenate([self.owner, owner + offset])
        self.ids.extend(d.id for d in changed)
        self._hashes.update({d.id: text_hash(d.text) for d in changed})
        self._pos = {d: i for i, d in enumerate(self.ids)}

    def remove(self, ids: Sequence[str]) -> None:
        """Drop documents by id without touching the other vectors (unknown ids are ignored)."""
        gone = {self._pos[i] for i in ids if i in self._pos}
        if not gone:
            return
        keep_doc = np.array([i not in gone for i in range(len(self.ids))], dtype=bool)
        new_pos = np.cumsum(keep_doc) - 1
        keep_rows = keep_doc[self.owner]
        self.vectors = self.vectors[keep_rows]
        self.owner = new_pos[self.owner[keep_rows]]
        for i in ids:
            self._hashes.pop(i, None)
        self.ids = [d for d, k in zip(self.ids, keep_doc, strict=True) if k]
        self._pos = {d: i for i, d in enumerate(self.ids)}

    def document_vectors(self, ids: Sequence[str]) -> np.ndarray:
        """One vector per document ``ids`` (float32 (n, dim)): the normalised mean of its chunk vectors, as a
        text's vector is aggregated everywhere (:func:`compliance.runtime.aggregate_chunks`).

        Raises:
            KeyError: an id that is not in the index.
        """
        from compliance.runtime import aggregate_chunks

        slot = np.full(len(self.ids), -1, dtype=np.int64)
        for j, doc_id in enumerate(ids):
            slot[self._pos[doc_id]] = j
        rows = slot[self.owner] >= 0
        return aggregate_chunks(self.vectors[rows], slot[self.owner[rows]], len(ids))

    @property
    def checksum(self) -> str:
        return corpus_checksum(self._hashes)

    # -- querying -------------------------------------------------------------------------------------------
    def query_vectors(
        self, queries: Sequence[str], unions: Sequence[Sequence[int]] = ()
    ) -> tuple[np.ndarray, np.ndarray]:
        """Query vectors and their owner query: one per query (``mean``) or one per query chunk (``max``).

        ``unions``: further queries, each made of the chunks of the queries it lists (owners ``len(queries)``
        on): a long text that is the concatenation of some queries (a whole law of its articles) costs no
        encoder pass of its own; its chunks end at the parts' boundaries."""
        from compliance.runtime import aggregate_chunks

        vecs, owner = self.encoder.encode_chunks(list(queries))
        if unions:
            rows = [np.flatnonzero(np.isin(owner, list(members))) for members in unions]
            vecs = np.concatenate([vecs, *(vecs[r] for r in rows)])
            owner = np.concatenate(
                [owner, *(np.full(len(r), len(queries) + j, dtype=np.int64) for j, r in enumerate(rows))]
            )
        n = len(queries) + len(unions)
        if self.config.query_aggregation == "mean":
            return aggregate_chunks(vecs, owner, n), np.arange(n, dtype=np.int64)
        return vecs, owner

    def scores_many(self, queries: Sequence[str], unions: Sequence[Sequence[int]] = ()) -> np.ndarray:
        """Cosine score of every document for every query, float32 (n_queries + n_unions, n_docs)."""
        qv, qowner = self.query_vectors(queries, unions)
        return self.scores_from_vectors(qv, qowner, len(queries) + len(unions))

    def scores_from_vectors(self, qv: np.ndarray, qowner: np.ndarray, n_queries: int) -> np.ndarray:
        if not self.ids:
            return np.zeros((n_queries, 0), dtype=np.float32)
        sims = qv @ self.vectors.T  # (query rows, chunks)
        doc = max_pool(sims, self.owner, len(self.ids))
        if doc.shape[0] == n_queries:
            return doc
        out = np.full((n_queries, len(self.ids)), -np.inf, dtype=np.float32)
        for row, q in enumerate(qowner):
            np.maximum(out[q], doc[row], out=out[q])
        return out

    def scores(self, query: str) -> np.ndarray:
        return self.scores_many([query])[0]

    def search_many(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        all_scores = self.scores_many(queries)
        out: list[list[Hit]] = []
        for s in all_scores:
            if s.size == 0:
                out.append([])
                continue
            kk = min(k, s.size)
            top = np.argpartition(-s, kk - 1)[:kk]
            top = top[np.lexsort((top, -s[top]))]
            out.append([Hit(self.ids[i], float(s[i]), {"dense": float(s[i])}) for i in top])
        return out

    def search(self, query: str, k: int = 10) -> list[Hit]:
        return self.search_many([query], k)[0]

    def best_chunk(self, query_vec: np.ndarray, doc_id: str) -> tuple[int, float]:
        rows = np.flatnonzero(self.owner == self._pos[doc_id])
        sims = self.vectors[rows] @ query_vec
        j = int(np.argmax(sims))
        return j, float(sims[j])

    # -- persistence ----------------------------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Write ``embeddings.npy``, ``owner.npy``, ``ids.json``, ``hashes.json``, ``config.json`` and
        ``MODEL_CARD.md``."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        np.save(path / "embeddings.npy", self.vectors.astype(np.float32))
        np.save(path / "owner.npy", self.owner.astype(np.int64))
        (path / "ids.json").write_text(json.dumps(self.ids), encoding="utf-8")
        (path / "hashes.json").write_text(json.dumps(self._hashes), encoding="utf-8")
        cfg = write_config(
            path,
            ARTIFACT,
            {
                "dense": self.config.to_dict(),
                "documents": len(self.ids),
                "chunks": int(self.owner.size),
                "dim": int(self.vectors.shape[1]) if self.vectors.ndim == 2 else 0,
            },
            provenance={"corpus_checksum": self.checksum, "encoder": self.identity},
            sort_keys=True,
        )
        write_card(
            path,
            "# Dense index\n\n"
            f"- documents: {len(self.ids)}, chunk vectors: {cfg['chunks']} of dimension {cfg['dim']}\n"
            f"- encoder: {json.dumps(self.identity)}\n"
            f"- corpus checksum: {self.checksum}\n"
            f"- built by compliance {cfg['package_version']}; parameters in config.json\n",
        )
        return path

    @classmethod
    def load(cls, path: str | Path, encoder: Any = None) -> DenseIndex:
        """Load a directory written by :meth:`save`; the encoder is loaded on first query and checked against
        the stored identity."""
        path = Path(path)
        cfg = read_config(path, ARTIFACT)
        index = cls(DenseConfig.model_validate(cfg["dense"]))
        index.identity = cfg["provenance"].get("encoder")
        if encoder is not None:
            if index.identity is not None and encoder.identity() != index.identity:
                raise RetrievalError(f"{path}: the given encoder is not the one this index was built with")
            index._encoder = encoder
        try:
            index.vectors = np.load(path / "embeddings.npy")
            index.owner = np.load(path / "owner.npy")
            index.ids = json.loads((path / "ids.json").read_text(encoding="utf-8"))
            index._hashes = json.loads((path / "hashes.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise RetrievalError(f"{path}: incomplete dense index ({e}); rebuild it") from e
        index._pos = {d: i for i, d in enumerate(index.ids)}
        if index.checksum != cfg["provenance"].get("corpus_checksum"):
            raise RetrievalError(f"{path}: corpus checksum does not match the stored documents; rebuild it")
        return index
