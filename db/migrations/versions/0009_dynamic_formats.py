"""Swiss, knockout and SPRT tournaments: formats whose matches are made as the results come

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23

``tournaments.format`` gains ``swiss``, ``knockout`` and ``sprt``. Their matches are added round
by round (or pair by pair) by the runner, so the schema needs nothing else: what a resume needs
to carry on is derived from the stored results and the tournament's settings. On SQLite the CHECK
needs the table rebuilt (batch mode, see 0002). The downgrade refuses while such a tournament is
stored.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BEFORE = ("round-robin", "gauntlet")
_AFTER = (*_BEFORE, "swiss", "knockout", "sprt")


def _check(words: tuple[str, ...]) -> str:
    return "format IN (" + ", ".join(f"'{w}'" for w in words) + ")"


def upgrade() -> None:
    with op.batch_alter_table("tournaments", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_tournaments_format"), type_="check")
        batch_op.create_check_constraint(op.f("ck_tournaments_format"), _check(_AFTER))


def downgrade() -> None:
    stored = (
        op.get_bind()
        .execute(
            sa.text(
                "SELECT COUNT(*) FROM tournaments WHERE format IN ('swiss', 'knockout', 'sprt')"
            )
        )
        .scalar()
    )
    if stored:
        raise RuntimeError(
            f"{stored} swiss, knockout or sprt tournament(s) stored: the older schema cannot "
            "hold them"
        )
    with op.batch_alter_table("tournaments", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_tournaments_format"), type_="check")
        batch_op.create_check_constraint(op.f("ck_tournaments_format"), _check(_BEFORE))
