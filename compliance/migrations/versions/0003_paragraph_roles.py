"""Paragraph roles: what each stored paragraph does (statement, definition, description, heading, metadata, form,
furniture, reference), indexed for filtering. Paragraphs stored before this revision keep a NULL role.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("paragraphs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("role", sa.String(length=16), nullable=True))
        batch_op.create_index(batch_op.f("ix_paragraphs_role"), ["role"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("paragraphs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_paragraphs_role"))
        batch_op.drop_column("role")
