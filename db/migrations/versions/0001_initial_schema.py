"""initial schema

Revision ID: 0001
Revises: (none)
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "bots",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=400), nullable=False),
        sa.Column("registered", sa.Boolean(), nullable=False),
        sa.Column("created", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_bots")),
        sa.UniqueConstraint("name", name=op.f("uq_bots_name")),
    )
    op.create_table(
        "tournaments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=True),
        sa.Column("game", sa.String(length=100), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("time_control", sa.JSON(), nullable=False),
        sa.Column("format", sa.String(length=20), nullable=False),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created", sa.DateTime(), nullable=False),
        sa.Column("finished", sa.DateTime(), nullable=True),
        sa.CheckConstraint(
            "format IN ('round-robin', 'gauntlet')", name=op.f("ck_tournaments_format")
        ),
        sa.CheckConstraint(
            "status <> 'done' OR finished IS NOT NULL", name=op.f("ck_tournaments_done_finished")
        ),
        sa.CheckConstraint("status IN ('running', 'done')", name=op.f("ck_tournaments_status")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournaments")),
    )
    op.create_table(
        "bot_versions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("target", sa.Text(), nullable=False),
        sa.Column("source", sa.Text(), nullable=True),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("created", sa.DateTime(), nullable=False),
        sa.CheckConstraint(
            "kind IN ('builtin', 'module', 'command', 'human')", name=op.f("ck_bot_versions_kind")
        ),
        sa.CheckConstraint("length(sha256) = 64", name=op.f("ck_bot_versions_sha256_length")),
        sa.ForeignKeyConstraint(
            ["bot_id"], ["bots.id"], name=op.f("fk_bot_versions_bot_id_bots"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_bot_versions")),
        sa.UniqueConstraint("bot_id", "sha256", name="uq_bot_versions_bot_sha256"),
    )
    with op.batch_alter_table("bot_versions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_bot_versions_bot_id"), ["bot_id"], unique=False)

    op.create_table(
        "matches",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=True),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("game", sa.String(length=100), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("time_control", sa.JSON(), nullable=False),
        sa.Column("players", sa.Integer(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("opening", sa.Text(), nullable=False),
        sa.Column("start_position", sa.Text(), nullable=True),
        sa.Column("final_position", sa.Text(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("termination", sa.String(length=20), nullable=True),
        sa.Column("fault_reason", sa.Text(), nullable=True),
        sa.Column("started", sa.DateTime(), nullable=True),
        sa.Column("finished", sa.DateTime(), nullable=True),
        sa.Column("duration_s", sa.Double(), nullable=True),
        sa.CheckConstraint(
            "status <> 'done' OR (termination IS NOT NULL AND finished IS NOT NULL)",
            name=op.f("ck_matches_done_result"),
        ),
        sa.CheckConstraint(
            "status IN ('pending', 'running', 'done', 'void')", name=op.f("ck_matches_status")
        ),
        sa.CheckConstraint(
            "termination IS NULL OR termination IN"
            " ('normal', 'timeout', 'crash', 'illegal_move', 'bad_output', 'stall')",
            name=op.f("ck_matches_term"),
        ),
        sa.CheckConstraint(
            "duration_s IS NULL OR duration_s >= 0", name=op.f("ck_matches_duration")
        ),
        sa.CheckConstraint("players >= 1", name=op.f("ck_matches_players")),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=op.f("fk_matches_tournament_id_tournaments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_matches")),
        sa.UniqueConstraint("id", "players", name="uq_matches_id_players"),
    )
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.create_index(
            "ix_matches_tournament_status", ["tournament_id", "status"], unique=False
        )

    op.create_table(
        "moves",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("ply", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("move", sa.Text(), nullable=False),
        sa.Column("time_ms", sa.Double(), nullable=False),
        sa.Column("info", sa.JSON(), nullable=True),
        sa.Column("forced", sa.Boolean(), nullable=False),
        sa.CheckConstraint("ply >= 0", name=op.f("ck_moves_ply")),
        sa.CheckConstraint("seat >= 0", name=op.f("ck_moves_seat")),
        sa.CheckConstraint("time_ms >= 0", name=op.f("ck_moves_time_ms")),
        sa.ForeignKeyConstraint(
            ["match_id"], ["matches.id"], name=op.f("fk_moves_match_id_matches"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_moves")),
        sa.UniqueConstraint("match_id", "ply", name="uq_moves_match_ply"),
    )
    op.create_table(
        "seats",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("players", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("bot_version_id", sa.Integer(), nullable=False),
        sa.Column("utility", sa.Double(), nullable=True),
        sa.Column("rank", sa.Integer(), nullable=True),
        sa.Column("score", sa.Double(), nullable=True),
        sa.Column("fault", sa.JSON(), nullable=True),
        sa.CheckConstraint(
            "(rank IS NULL AND score IS NULL AND utility IS NULL)"
            " OR (rank IS NOT NULL AND score IS NOT NULL AND utility IS NOT NULL)",
            name=op.f("ck_seats_result_complete"),
        ),
        sa.CheckConstraint(
            "rank IS NULL OR (rank >= 1 AND rank <= players)", name=op.f("ck_seats_rank_range")
        ),
        sa.CheckConstraint(
            "score IS NULL OR (score >= 0 AND score <= 1)", name=op.f("ck_seats_score_range")
        ),
        sa.CheckConstraint("seat >= 0 AND seat < players", name=op.f("ck_seats_seat_range")),
        sa.ForeignKeyConstraint(
            ["bot_version_id"],
            ["bot_versions.id"],
            name=op.f("fk_seats_bot_version_id_bot_versions"),
        ),
        sa.ForeignKeyConstraint(
            ["match_id", "players"],
            ["matches.id", "matches.players"],
            name="fk_seats_match_players",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_seats")),
        sa.UniqueConstraint("match_id", "seat", name="uq_seats_match_seat"),
    )
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.create_index("ix_seats_bot_version", ["bot_version_id"], unique=False)

    op.create_table(
        "tournament_entries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("spec", sa.Text(), nullable=False),
        sa.Column("bot_version_id", sa.Integer(), nullable=False),
        sa.CheckConstraint("position >= 0", name=op.f("ck_tournament_entries_position")),
        sa.ForeignKeyConstraint(
            ["bot_version_id"],
            ["bot_versions.id"],
            name=op.f("fk_tournament_entries_bot_version_id_bot_versions"),
        ),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=op.f("fk_tournament_entries_tournament_id_tournaments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournament_entries")),
        sa.UniqueConstraint("tournament_id", "position", name="uq_tournament_entries_position"),
    )


def downgrade() -> None:
    op.drop_table("tournament_entries")
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.drop_index("ix_seats_bot_version")

    op.drop_table("seats")
    op.drop_table("moves")
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_index("ix_matches_tournament_status")

    op.drop_table("matches")
    with op.batch_alter_table("bot_versions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_bot_versions_bot_id"))

    op.drop_table("bot_versions")
    op.drop_table("tournaments")
    op.drop_table("bots")
