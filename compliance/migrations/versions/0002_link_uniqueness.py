"""Links unique per (paragraph, provision, method, model version); runs numbered per kind, with their owner.

* ``links.model_version`` (the proposing model's identity, back-filled from ``evidence["model"]``) and a unique
  constraint on (paragraph_id, provision_id, method, model_version). Links stored twice before this revision
  (concurrent audits) are merged first: the oldest row is kept and the reviews of the others move to it.
* ``runs.number``: the run's number among the runs of its kind (back-filled in id order), unique per kind;
  ``runs.owner``: ``host:pid:start-token`` of the process running it (NULL for old runs), for the reaper.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_links = sa.table(
    "links",
    sa.column("id", sa.Integer),
    sa.column("paragraph_id", sa.Integer),
    sa.column("provision_id", sa.Integer),
    sa.column("method", sa.String),
    sa.column("model_version", sa.String),
    sa.column("evidence", sa.JSON),
)
_reviews = sa.table("reviews", sa.column("id", sa.Integer), sa.column("link_id", sa.Integer))
_runs = sa.table(
    "runs", sa.column("id", sa.Integer), sa.column("kind", sa.String), sa.column("number", sa.Integer)
)


def _model_of(evidence: Any) -> str:
    if isinstance(evidence, dict) and evidence.get("model") is not None:
        return str(evidence["model"])[:255]
    return ""


def upgrade() -> None:
    conn = op.get_bind()
    with op.batch_alter_table("links") as batch:
        batch.add_column(sa.Column("model_version", sa.String(length=255), nullable=True))
    kept: dict[tuple[int, int, str, str], int] = {}
    for link_id, paragraph_id, provision_id, method, evidence in conn.execute(
        sa.select(
            _links.c.id, _links.c.paragraph_id, _links.c.provision_id, _links.c.method, _links.c.evidence
        ).order_by(_links.c.id)
    ):
        version = _model_of(evidence)
        key = (paragraph_id, provision_id, method, version)
        first = kept.setdefault(key, link_id)
        if first != link_id:  # a duplicate: its reviews move to the first row, then it goes
            conn.execute(sa.update(_reviews).where(_reviews.c.link_id == link_id).values(link_id=first))
            conn.execute(sa.delete(_links).where(_links.c.id == link_id))
        else:
            conn.execute(sa.update(_links).where(_links.c.id == link_id).values(model_version=version))
    with op.batch_alter_table("links") as batch:
        batch.alter_column("model_version", existing_type=sa.String(length=255), nullable=False)
        batch.create_unique_constraint(
            op.f("uq_links_paragraph_id_provision_id_method_model_version"),
            ["paragraph_id", "provision_id", "method", "model_version"],
        )

    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("number", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("owner", sa.String(length=255), nullable=True))
    counters: dict[str, int] = {}
    for run_id, kind in conn.execute(sa.select(_runs.c.id, _runs.c.kind).order_by(_runs.c.id)):
        counters[kind] = counters.get(kind, 0) + 1
        conn.execute(sa.update(_runs).where(_runs.c.id == run_id).values(number=counters[kind]))
    with op.batch_alter_table("runs") as batch:
        batch.alter_column("number", existing_type=sa.Integer(), nullable=False)
        batch.create_unique_constraint(op.f("uq_runs_kind_number"), ["kind", "number"])


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_constraint(op.f("uq_runs_kind_number"), type_="unique")
        batch.drop_column("owner")
        batch.drop_column("number")
    with op.batch_alter_table("links") as batch:
        batch.drop_constraint(op.f("uq_links_paragraph_id_provision_id_method_model_version"), type_="unique")
        batch.drop_column("model_version")
