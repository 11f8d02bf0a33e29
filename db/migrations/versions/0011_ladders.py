"""ladders: a tournament that never ends, its entrants' status (issue 30)

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27

``tournaments.format`` gains ``ladder``: a ladder is a tournament row (so the leaderboard, the
report, the export and ``tournament show`` read it as one), its entrants are its
``tournament_entries``, and its matches are made as it goes. Two tables hold what a ladder adds:

- ``ladders``: its name (unique among ladders), after how many faults in a row an entrant is
  suspended, and ``revision``, a counter of changes to its field (a running ladder reads it to
  notice an entrant added, retired or suspended by another process);
- ``ladder_entrants``: each entrant's status (active, retired, suspended) and faults in a row.

On SQLite the format's CHECK needs the tournaments table rebuilt (batch mode, see 0009). The
downgrade refuses while a ladder is stored.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BEFORE = ("round-robin", "gauntlet", "swiss", "knockout", "sprt")
_AFTER = (*_BEFORE, "ladder")


def _check(words: tuple[str, ...]) -> str:
    return "format IN (" + ", ".join(f"'{w}'" for w in words) + ")"


def upgrade() -> None:
    with op.batch_alter_table("tournaments", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_tournaments_format"), type_="check")
        batch_op.create_check_constraint(op.f("ck_tournaments_format"), _check(_AFTER))
    op.create_table(
        "ladders",
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("suspend_after", sa.Integer(), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.CheckConstraint("suspend_after >= 1", name=op.f("ck_ladders_suspend_after")),
        sa.CheckConstraint("revision >= 0", name=op.f("ck_ladders_revision")),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=op.f("fk_ladders_tournament_id_tournaments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("tournament_id", name=op.f("pk_ladders")),
        sa.UniqueConstraint("name", name=op.f("uq_ladders_name")),
    )
    op.create_table(
        "ladder_entrants",
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("faults_in_row", sa.Integer(), nullable=False),
        sa.Column("joined", sa.DateTime(), nullable=False),
        sa.CheckConstraint(
            "status IN ('active', 'retired', 'suspended')", name=op.f("ck_ladder_entrants_status")
        ),
        sa.CheckConstraint("faults_in_row >= 0", name=op.f("ck_ladder_entrants_faults_in_row")),
        sa.CheckConstraint("position >= 0", name=op.f("ck_ladder_entrants_position")),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["ladders.tournament_id"],
            name=op.f("fk_ladder_entrants_tournament_id_ladders"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("tournament_id", "position", name=op.f("pk_ladder_entrants")),
    )


def downgrade() -> None:
    stored = (
        op.get_bind()
        .execute(sa.text("SELECT COUNT(*) FROM tournaments WHERE format = 'ladder'"))
        .scalar()
    )
    if stored:
        raise RuntimeError(f"{stored} ladder(s) stored: the older schema cannot hold them")
    op.drop_table("ladder_entrants")
    op.drop_table("ladders")
    with op.batch_alter_table("tournaments", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_tournaments_format"), type_="check")
        batch_op.create_check_constraint(op.f("ck_tournaments_format"), _check(_BEFORE))
