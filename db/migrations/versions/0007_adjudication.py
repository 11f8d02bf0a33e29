"""adjudication: matches an adjudication rule ended, and the verdict

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23

``matches.termination`` gains ``adjudicated`` and ``matches.adjudication`` holds the verdict (a
JSON object: the rule that fired, the winner, the scores it went on); NULL for every other match.
On SQLite the CHECK needs the table rebuilt (batch mode, see 0002). The downgrade refuses while
an adjudicated match is stored: the older schema cannot say how it ended.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BEFORE = ("normal", "timeout", "crash", "illegal_move", "bad_output", "stall", "resign")
_AFTER = (*_BEFORE, "adjudicated")


def _check(words: tuple[str, ...]) -> str:
    return "termination IS NULL OR termination IN (" + ", ".join(f"'{w}'" for w in words) + ")"


def upgrade() -> None:
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.add_column(sa.Column("adjudication", sa.JSON(none_as_null=True), nullable=True))
        batch_op.drop_constraint(op.f("ck_matches_term"), type_="check")
        batch_op.create_check_constraint(op.f("ck_matches_term"), _check(_AFTER))


def downgrade() -> None:
    stored = (
        op.get_bind()
        .execute(sa.text("SELECT COUNT(*) FROM matches WHERE termination = 'adjudicated'"))
        .scalar()
    )
    if stored:
        raise RuntimeError(
            f"{stored} adjudicated match(es) stored: the older schema cannot hold them"
        )
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_matches_term"), type_="check")
        batch_op.create_check_constraint(op.f("ck_matches_term"), _check(_BEFORE))
        batch_op.drop_column("adjudication")
