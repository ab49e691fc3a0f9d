"""Paragraph vectors in the store (mixed into :class:`~compliance.store.Store`): the encoder vectors an audit's
forward pass produced for each paragraph, per embedding space, so that the controls index takes them from here
instead of embedding the paragraphs a second time (issue 12, "one forward, two uses").

The store keeps bytes; turning them into arrays is the caller's job (no numpy here).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from compliance.errors import StoreError
from compliance.store.base import StoreBase, _chunks
from compliance.store.records import ParagraphVectors


class VectorsMixin(StoreBase):
    """Paragraph vectors keyed by (paragraph, embedding space); derived data, written once per key."""

    def save_paragraph_vectors(
        self, space: str, vectors: Iterable[ParagraphVectors], *, actor: str | None = None
    ) -> int:
        """Store each paragraph's vectors in ``space`` unless it has some there already (a paragraph's text never
        changes, so neither do its vectors). Returns how many were stored.

        Raises:
            StoreError: an empty space, a record whose byte size is not ``chunks × dim × 4``, or an unknown
                paragraph.
        """
        from sqlalchemy import insert, select

        from compliance.store.orm import ParagraphVectorRow

        if not space:
            raise StoreError("paragraph vectors need an embedding space id")
        rows = {v.paragraph_id: v for v in vectors}
        for v in rows.values():
            if v.chunks < 1 or v.dim < 1 or len(v.data) != v.chunks * v.dim * 4:
                raise StoreError(
                    f"paragraph {v.paragraph_id}: {len(v.data)} bytes are not {v.chunks} x {v.dim} float32"
                )
        if not rows:
            return 0
        with self.session() as s:
            self._check_ids(s, "paragraph", set(rows))
            known: set[int] = set()
            for ids in _chunks(sorted(rows)):
                known.update(
                    s.scalars(
                        select(ParagraphVectorRow.paragraph_id).where(
                            ParagraphVectorRow.space == space, ParagraphVectorRow.paragraph_id.in_(ids)
                        )
                    )
                )
            new = [rows[i] for i in sorted(rows) if i not in known]
            if new:  # one executemany, not a unit of work per row
                s.execute(
                    insert(ParagraphVectorRow),
                    [
                        {
                            "paragraph_id": v.paragraph_id,
                            "space": space,
                            "chunks": v.chunks,
                            "dim": v.dim,
                            "vectors": v.data,
                        }
                        for v in new
                    ],
                )
                self._log(
                    s,
                    "vectors.save",
                    actor=actor,
                    target_type="embedding-space",
                    target_id=space,
                    details={"paragraphs": len(new)},
                )
            return len(new)

    def paragraph_vectors(self, space: str, paragraph_ids: Sequence[int]) -> dict[int, ParagraphVectors]:
        """The stored vectors in ``space`` of those of ``paragraph_ids`` that have some."""
        from sqlalchemy import select

        from compliance.store.orm import ParagraphVectorRow

        out: dict[int, ParagraphVectors] = {}
        with self.session() as s:
            for ids in _chunks(sorted(set(paragraph_ids))):
                for pid, chunks, dim, data in s.execute(
                    select(
                        ParagraphVectorRow.paragraph_id,
                        ParagraphVectorRow.chunks,
                        ParagraphVectorRow.dim,
                        ParagraphVectorRow.vectors,
                    ).where(ParagraphVectorRow.space == space, ParagraphVectorRow.paragraph_id.in_(ids))
                ):
                    out[int(pid)] = ParagraphVectors(int(pid), int(chunks), int(dim), bytes(data))
        return out

    def vector_spaces(self) -> dict[str, int]:
        """Every embedding space with stored vectors and how many paragraphs have vectors in it."""
        from sqlalchemy import func, select

        from compliance.store.orm import ParagraphVectorRow

        with self.session() as s:
            rows = s.execute(
                select(ParagraphVectorRow.space, func.count()).group_by(ParagraphVectorRow.space)
            )
            return {str(space): int(n) for space, n in rows}
