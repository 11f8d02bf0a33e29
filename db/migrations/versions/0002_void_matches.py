"""void matches: the reason and the time a match was annulled

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22

A void match keeps its seats and moves (the record of what happened) but counts nowhere; the
CHECK makes sure no match is void without a reason. On SQLite the CHECK needs the table to be
rebuilt (batch mode): ``db.session.upgrade`` runs migrations with foreign keys off so that
dropping the old ``matches`` table does not cascade to the seats and moves that refer to it.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.add_column(sa.Column("void_reason", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("voided", sa.DateTime(), nullable=True))
        batch_op.create_check_constraint(
            op.f("ck_matches_void_reason"), "status <> 'void' OR void_reason IS NOT NULL"
        )


def downgrade() -> None:
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_matches_void_reason"), type_="check")
        batch_op.drop_column("voided")
        batch_op.drop_column("void_reason")
