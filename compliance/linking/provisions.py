"""The provision within an article: which numbered paragraph or point of the article the classifier ranked fits a
paragraph best (GDPR Art. 32(1)(a) within Art. 32).

The article ranking stays the classifier's; this only looks inside the chosen article. The article's paragraphs and
points are passages (:func:`compliance.rules.passages.provision_passages`, each with the article title); a
paragraph's text is scored against the passages of that article by BM25 (idf over every passage of the law), and
the best passage's provision is the target, with its own score. An article without finer structure, or a text
sharing no term with any of its passages, has no provision target (the link stays on the article).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from compliance.errors import require_weight

if TYPE_CHECKING:  # pragma: no cover
    from compliance.retrieval.bm25 import BM25Index
    from compliance.rules.corpus import Law

__all__ = ["ProvisionPicker", "ProvisionTarget", "cached_passage_vectors"]

_A = TypeVar("_A", str, int)  # an article as the caller names it: "art:32" or 32


@dataclass(frozen=True, slots=True)
class ProvisionTarget:
    """The paragraph or point of an article that fits a text best.

    Attributes:
        key: ``art:32/par:1/pt:a``.
        label: ``Art. 32(1)(a)``.
        score: its BM25 score (or cosine similarity, method ``dense``) against the text.
        share: ``score`` over the sum of the article's passages' scores (how clearly it wins, 0–1).
        runner_up: the second-best provision's key, if any.
        method: ``bm25``, ``dense``, ``hybrid``, or ``citation`` (the text cites the provision by the act's name:
            score and share 1).
        public_bodies: the provision's duties fall on public bodies only (a supervisory authority's list, a Member
            State's rules: :func:`compliance.rules.addressees.obliges_public_bodies_only`), read when the picker
            weighs addressees (``authority_weight`` < 1).
    """

    key: str
    label: str
    score: float
    share: float
    runner_up: str | None = None
    method: str = "bm25"
    public_bodies: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "key": self.key,
            "label": self.label,
            "score": round(self.score, 4),
            "share": round(self.share, 4),
            "runner_up": self.runner_up,
            "method": self.method,
        }
        if self.public_bodies:
            out["public_bodies"] = True
        return out


class ProvisionPicker:
    """BM25 over the paragraphs and points of one law's articles (see the module docstring).

    ``encode`` (texts → L2-normalised vectors, e.g. ``LinkDecisionModel.encode``) adds the dense encoder (the
    passages are embedded once): ``bm25_weight`` 0 picks by cosine alone (``method`` ``dense``), between 0 and 1
    by ``w · bm25 / max + (1 − w) · min-max-scaled cosine`` over the article's passages (``hybrid``, 0.5 when an
    encoder is given). ``passage_vectors`` gives the passages' vectors instead of encoding them (one row per
    :attr:`texts` entry, from a cache: :func:`cached_passage_vectors`); ``pick(..., vector=v)`` takes the text's
    vector from the caller (the audit's own forward pass) instead of encoding the text.

    ``authority_weight``: a provision whose every duty falls on a public body (a supervisory authority's list,
    the Commission's standard clauses, a CSIRT's reply: :func:`compliance.rules.addressees.addresses_public_bodies`)
    has its score multiplied by this, so that within an article the provision that obliges the organisation is
    named first; 1 (default) reads no addressee.
    """

    def __init__(
        self,
        law: Law,
        *,
        passage_words: int = 120,
        encode: Callable[[Sequence[str]], np.ndarray] | None = None,
        bm25_weight: float | None = None,
        passage_vectors: np.ndarray | None = None,
        authority_weight: float = 1.0,
    ) -> None:
        from compliance.retrieval.bm25 import BM25Index
        from compliance.retrieval.types import Document
        from compliance.rules.passages import provision_passages

        articles = [a.key for a in law.articles]
        texts, owners = provision_passages(law, articles, passage_words)
        self.law = law
        self.texts = texts
        self.owners = owners
        self._by_article: dict[str, list[int]] = defaultdict(list)
        for i, owner in enumerate(owners):
            self._by_article[owner.split("/", 1)[0]].append(i)
        self.authority_weight = require_weight("authority_weight", authority_weight)
        self._plans: dict[str, tuple[np.ndarray, np.ndarray, list[str]] | None] = {}
        self._weights: dict[str, np.ndarray] = {}
        self.index: BM25Index = BM25Index.build([Document(str(i), t) for i, t in enumerate(texts)])
        self.encode: Callable[[Sequence[str]], np.ndarray] | None = None
        self.bm25_weight = 1.0
        self.method = "bm25"
        self._vectors: np.ndarray | None = None
        self._last_bm25: tuple[str, np.ndarray] | None = None
        self._last_cosines: tuple[bytes, np.ndarray] | None = None
        self._provision_keys: set[str] | None = None
        if passage_vectors is None and encode is not None:
            passage_vectors = encode(texts)
        if passage_vectors is not None:
            self.attach_vectors(
                passage_vectors, encode=encode, bm25_weight=0.5 if bm25_weight is None else bm25_weight
            )

    def attach_vectors(
        self,
        vectors: np.ndarray,
        *,
        encode: Callable[[Sequence[str]], np.ndarray] | None = None,
        bm25_weight: float = 0.5,
    ) -> None:
        """Add the dense side to a BM25 picker: the passages' vectors (one row per :attr:`texts` entry, e.g. from
        :func:`cached_passage_vectors`) and the encoder for texts whose vector the caller does not give."""
        if len(vectors) != len(self.texts):
            raise ValueError(f"{len(vectors)} passage vectors for {len(self.texts)} passages")
        self._vectors = np.asarray(vectors, dtype=np.float32)
        self._last_cosines = None
        self.encode = encode
        self.bm25_weight = float(bm25_weight)
        self.method = "bm25" if self.bm25_weight >= 1.0 else "dense" if self.bm25_weight <= 0.0 else "hybrid"

    def article_cosines(self, vector: np.ndarray, articles: Iterable[_A]) -> dict[_A, float]:
        """For each of ``articles`` (``"art:32"`` or ``32``), keyed as given: the cosine of ``vector``
        (L2-normalised) with the closest of the article's passages — how much of the article's own wording the text
        carries, in the dense encoder's space. Articles without passages are left out; empty without passage
        vectors."""
        if self._vectors is None:
            return {}
        cos = self._cosines(vector)
        out: dict[_A, float] = {}
        for article in articles:
            rows = self._by_article.get(article if isinstance(article, str) else f"art:{article}")
            if rows:
                out[article] = float(np.max(cos[rows]))
        return out

    def _cosines(self, vector: np.ndarray) -> np.ndarray:
        """The cosine of ``vector`` with every passage; the last vector's are kept, since an audit asks for one
        paragraph's cosines with each of its ranked articles, then picks within each linked one."""
        assert self._vectors is not None
        q = np.ascontiguousarray(vector, dtype=np.float32)
        key = q.tobytes()
        last = self._last_cosines
        if last is not None and last[0] == key:
            return last[1]
        cos = self._vectors @ q
        self._last_cosines = (key, cos)
        return cos

    def articles_with_provisions(self) -> set[str]:
        """Article keys that have more than one provision to choose from."""
        return {a for a, rows in self._by_article.items() if len({self.owners[i] for i in rows}) > 1}

    def pick(
        self, text: str, article: str | int, *, vector: np.ndarray | None = None
    ) -> ProvisionTarget | None:
        """The best paragraph or point of ``article`` (``"art:32"`` or ``32``) for ``text`` (whose L2-normalised
        vector, when given, is used instead of encoding it), or None."""
        from compliance.rules.references import provision_label

        key = article if isinstance(article, str) else f"art:{article}"
        plan = self._plan(key)
        if plan is None:
            return None
        rows, owner_of_row, owners = plan
        # each provision's best passage (at least 0), provisions in order of their first passage
        best = np.zeros(len(owners))
        np.maximum.at(best, owner_of_row, np.asarray(self._scores(text, rows, vector), dtype=np.float64))
        weights = self._provision_weights(key, owners) if self.authority_weight < 1.0 else None
        if weights is not None:
            best *= weights
        order = np.argsort(-best, kind="stable")
        ranked = best[order]
        score = float(ranked[0])
        if score <= 0.0:
            return None
        total = float(np.sum(ranked[ranked > 0]))
        runner = owners[int(order[1])] if len(order) > 1 and ranked[1] > 0 else None
        top = owners[int(order[0])]
        public = weights is not None and bool(weights[int(order[0])] < 1.0)
        return ProvisionTarget(
            top, provision_label(top), score, score / total if total else 0.0, runner, self.method, public
        )

    def _plan(self, key: str) -> tuple[np.ndarray, np.ndarray, list[str]] | None:
        """An article's passage rows, each row's provision (an index into the provision keys, in order of first
        appearance) and those keys; None when the article has fewer than two provisions to choose from. Built
        once per article (an audit picks within the same articles thousands of times)."""
        plan = self._plans.get(key)
        if plan is None and key not in self._plans:
            rows = self._by_article.get(key, [])
            owners = list(dict.fromkeys(self.owners[i] for i in rows))
            if len(owners) >= 2:
                index = {o: j for j, o in enumerate(owners)}
                plan = (
                    np.asarray(rows, dtype=np.int64),
                    np.asarray([index[self.owners[i]] for i in rows], dtype=np.int64),
                    owners,
                )
            self._plans[key] = plan
        return plan

    def _provision_weights(self, key: str, owners: Sequence[str]) -> np.ndarray:
        """Per provision of article ``key``: ``authority_weight`` where its duties fall on public bodies only, else
        1 (read once per article)."""
        weights = self._weights.get(key)
        if weights is None:
            from compliance.rules.addressees import obliges_public_bodies_only

            weights = np.asarray(
                [self.authority_weight if obliges_public_bodies_only(self.law, o) else 1.0 for o in owners]
            )
            self._weights[key] = weights
        return weights

    def _bm25(self, text: str) -> np.ndarray:
        """BM25 scores of ``text`` against every passage; the last text's are kept, since a paragraph's linked
        articles are picked within one after another."""
        last = self._last_bm25
        if last is not None and last[0] == text:
            return last[1]
        scores = np.asarray(self.index.scores(text))
        self._last_bm25 = (text, scores)
        return scores

    def _scores(
        self, text: str, rows: Sequence[int] | np.ndarray, vector: np.ndarray | None = None
    ) -> np.ndarray:
        w = self.bm25_weight
        bm25 = self._bm25(text)[rows] if w > 0 else np.zeros(len(rows))
        if vector is None and self.encode is not None and self._vectors is not None and w < 1.0:
            vector = self.encode([text])[0]
        if self._vectors is None or vector is None or w >= 1.0:
            return np.asarray(bm25, dtype=np.float64)
        cos = np.asarray(self._cosines(vector)[rows], dtype=np.float64)
        if w <= 0.0:
            return cos
        if float(np.max(bm25)) <= 0.0:  # no shared term: nothing to mix in, no target
            return np.zeros(len(rows))
        span = float(cos.max() - cos.min()) or 1.0
        return w * bm25 / float(np.max(bm25)) + (1 - w) * (cos - cos.min()) / span

    def cited_target(self, article: str | int, keys: Sequence[str]) -> ProvisionTarget | None:
        """The provision of ``article`` that a text cites (``keys``, in the order cited:
        :attr:`compliance.rules.references.Citation.key`, e.g. ``art:6/par:1/pt:f`` for ``Art. 6(1)(f) GDPR``): the
        first that names a paragraph or point the article has — a numbered point cited as a paragraph
        (``Art. 4(11)`` where Art. 4 numbers points) read as that point, a subdivision the article lacks read as its
        closest existing parent — with method ``citation``; None when the citations name only the article."""
        from compliance.rules.references import provision_label

        key = article if isinstance(article, str) else f"art:{article}"
        if self._provision_keys is None:
            self._provision_keys = {p.key for p in self.law.provisions}
        found: list[str] = []
        for cited in keys:
            if cited.split("/", 1)[0] != key:
                continue
            resolved = self._existing(cited, key)
            if resolved is not None and resolved not in found:
                found.append(resolved)
        if not found:
            return None
        return ProvisionTarget(
            found[0], provision_label(found[0]), 1.0, 1.0, found[1] if len(found) > 1 else None, "citation"
        )

    def _existing(self, cited: str, article: str) -> str | None:
        """``cited`` or its closest existing parent below ``article`` (``par:N`` tried as ``pt:N`` too)."""
        assert self._provision_keys is not None
        parts = cited.split("/")
        while len(parts) > 1:
            for candidate in ("/".join(parts), "/".join(parts).replace("/par:", "/pt:", 1)):
                if candidate in self._provision_keys and candidate != article:
                    return candidate
            parts = parts[:-1]
        return None

    def pick_many(self, pairs: Sequence[tuple[str, str | int]]) -> list[ProvisionTarget | None]:
        return [self.pick(text, article) for text, article in pairs]


def cached_passage_vectors(
    texts: Sequence[str],
    encode: Callable[[Sequence[str]], np.ndarray],
    *,
    encoder_id: str,
    cache_dir: Path,
) -> np.ndarray:
    """The vectors ``encode`` gives ``texts``, read from ``cache_dir`` when a file for exactly these texts and this
    encoder (``encoder_id``: its weights' sha256) is there, else computed and written (atomically) for the next
    process. A law's passages are embedded once per encoder, not once per audit."""
    import hashlib
    import os
    import tempfile

    digest = hashlib.sha256(encoder_id.encode())
    for t in texts:
        digest.update(b"\0" + t.encode("utf-8"))
    path = cache_dir / f"provision-vectors-{digest.hexdigest()[:32]}.npy"
    if path.is_file():
        try:
            cached = np.load(path, allow_pickle=False)
            if cached.ndim == 2 and len(cached) == len(texts):
                return np.asarray(cached, dtype=np.float32)
        except (OSError, ValueError):
            pass  # unreadable (a torn write of an older version): computed again below
    vectors = np.asarray(encode(texts), dtype=np.float32)
    tmp: str | None = None
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache_dir, suffix=".npy.tmp")
        with os.fdopen(fd, "wb") as fh:
            np.save(fh, vectors, allow_pickle=False)
        os.replace(tmp, path)
    except OSError:  # a read-only home: the vectors are still right, only not kept
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
    return vectors
