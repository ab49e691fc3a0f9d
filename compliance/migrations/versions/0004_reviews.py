"""Reviews record the suggestion they decide (run and model) and how the decision came in.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("reviews", schema=None) as batch_op:
        batch_op.add_column(sa.Column("suggested_run_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("suggested_model", sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column("source", sa.String(length=32), nullable=True))
        batch_op.create_index(batch_op.f("ix_reviews_suggested_run_id"), ["suggested_run_id"], unique=False)
        batch_op.create_foreign_key(
            batch_op.f("fk_reviews_suggested_run_id_runs"),
            "runs",
            ["suggested_run_id"],
            ["id"],
            ondelete="SET NULL",
        )


def downgrade() -> None:
    with op.batch_alter_table("reviews", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_reviews_suggested_run_id_runs"), type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_reviews_suggested_run_id"))
        batch_op.drop_column("source")
        batch_op.drop_column("suggested_model")
        batch_op.drop_column("suggested_run_id")
