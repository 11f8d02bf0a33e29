"""read indexes: the reads that follow the question (issue 29)

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27

Two indexes on ``matches`` so that reads cost what they show, not the size of the history:

- ``ix_matches_status_finished`` (status, finished, id): the most recently finished match (the
  game a leaderboard rates by default) is the index's last entry, not a sort of every match;
- ``ix_matches_status_id`` (status, id): ``arena matches --status S --limit N`` reads the last
  N ids of that status from the index, newest first (keyset paging on the primary key).

Indexes only: no table is rebuilt, on SQLite or PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_matches_status_finished", "matches", ["status", "finished", "id"])
    op.create_index("ix_matches_status_id", "matches", ["status", "id"])


def downgrade() -> None:
    op.drop_index("ix_matches_status_id", table_name="matches")
    op.drop_index("ix_matches_status_finished", table_name="matches")
