"""rate limits that survive a restart of ``arena serve`` (issue 31)

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27

One new table, nothing existing rebuilt: ``rate_events``, one row per attempt counted by a
limit of the server (an upload by a user, a sign-in under a name), with its time. The server
counts a key's rows of the last window instead of a list in memory, so a restart (or a
kill -9) resets nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "rate_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rate_events")),
    )
    op.create_index("ix_rate_events_kind_key_at", "rate_events", ["kind", "key", "at"])


def downgrade() -> None:
    op.drop_index("ix_rate_events_kind_key_at", table_name="rate_events")
    op.drop_table("rate_events")
