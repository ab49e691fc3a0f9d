"""Paragraph vectors: the encoder vectors of stored paragraphs per embedding space (one forward, two uses).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "paragraph_vectors",
        sa.Column("paragraph_id", sa.Integer(), nullable=False),
        sa.Column("space", sa.String(length=64), nullable=False),
        sa.Column("chunks", sa.Integer(), nullable=False),
        sa.Column("dim", sa.Integer(), nullable=False),
        sa.Column("vectors", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["paragraph_id"],
            ["paragraphs.id"],
            name=op.f("fk_paragraph_vectors_paragraph_id_paragraphs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("paragraph_id", "space", name=op.f("pk_paragraph_vectors")),
    )
    op.create_index(op.f("ix_paragraph_vectors_space"), "paragraph_vectors", ["space"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_paragraph_vectors_space"), table_name="paragraph_vectors")
    op.drop_table("paragraph_vectors")
