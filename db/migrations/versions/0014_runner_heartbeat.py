"""runner heartbeat: a tournament's runner refreshes a time stamp while it runs (issue 32)

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27

``tournaments.heartbeat`` (UTC, NULL when no runner plays it): written by the runner when it
starts and every few seconds while it runs, cleared when it ends. ``tournament list`` and
``show`` say a ``running`` tournament whose stamp is older than its lease is interrupted,
whatever the host its runner recorded (a runner on another machine cannot be looked at any
other way). A column, not a key of ``settings``: the stamp is refreshed from a thread of its
own, which must not rewrite the settings a runner's other writes change.

One column added, nothing rebuilt.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("tournaments") as batch:
        batch.add_column(sa.Column("heartbeat", sa.DateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("tournaments") as batch:
        batch.drop_column("heartbeat")
