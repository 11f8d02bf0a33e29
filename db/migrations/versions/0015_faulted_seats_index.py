"""faulted seats index: a leaderboard finds the faulted seats without reading every seat
(issue 29)

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27

``ix_seats_faulted`` (match_id, seat) over the seats WHERE ``fault IS NOT NULL``: a partial
index, on SQLite and PostgreSQL alike. A leaderboard counts each bot's faults; about 1% of
seats have one, and the query read every done match's seats to find them (0.75 s of CPU at
1M matches). It now walks this index (the faulted seats only, in match and seat order) and
looks each one's match up by its key (``db/rated_sql.py``, ``FAULTED``): 0.05 s at 1M.

An index only: no table is rebuilt.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FAULTED = sa.text("fault IS NOT NULL")


def upgrade() -> None:
    op.create_index(
        "ix_seats_faulted",
        "seats",
        ["match_id", "seat"],
        sqlite_where=FAULTED,
        postgresql_where=FAULTED,
    )


def downgrade() -> None:
    op.drop_index("ix_seats_faulted", table_name="seats")
