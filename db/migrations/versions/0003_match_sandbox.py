"""match sandbox: the confinement level a match's bots ran under

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23

``matches.sandbox`` is ``confined`` (every layer), ``partial`` (some) or ``off`` (none); NULL
for matches stored before this revision, which count as unconfined. The CHECK keeps it to those
words; on SQLite adding it rebuilds the table (batch mode, foreign keys off: see 0002).
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
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.add_column(sa.Column("sandbox", sa.String(length=16), nullable=True))
        batch_op.create_check_constraint(
            op.f("ck_matches_sandbox"),
            "sandbox IS NULL OR sandbox IN ('confined', 'partial', 'off')",
        )


def downgrade() -> None:
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_matches_sandbox"), type_="check")
        batch_op.drop_column("sandbox")
