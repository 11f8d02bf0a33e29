"""resign: a termination of its own for a person who gives the game up

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23

Before this revision a person who typed ``resign`` or ``quit`` at the terminal was recorded as a
``crash`` (the CHECK allowed no other word), with what was typed in the fault's ``reason``. A
resignation is a loss, not a fault of a program: from this revision on it is stored as
``resign``. Matches stored before keep their ``crash`` (their seats' fault records say the same,
and a record's termination must match its first fault). On SQLite the CHECK needs the table
rebuilt (batch mode, see 0002). The downgrade stores resignations as crashes, as before.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BEFORE = ("normal", "timeout", "crash", "illegal_move", "bad_output", "stall")
_AFTER = (*_BEFORE, "resign")


def _check(words: tuple[str, ...]) -> str:
    return "termination IS NULL OR termination IN (" + ", ".join(f"'{w}'" for w in words) + ")"


def upgrade() -> None:
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_matches_term"), type_="check")
        batch_op.create_check_constraint(op.f("ck_matches_term"), _check(_AFTER))


def downgrade() -> None:
    bind = op.get_bind()
    seats = sa.table("seats", sa.column("id", sa.Integer), sa.column("fault", sa.JSON))
    for seat_id, fault in bind.execute(sa.select(seats.c.id, seats.c.fault)).all():
        if isinstance(fault, dict) and fault.get("termination") == "resign":
            changed = {**fault, "termination": "crash"}
            bind.execute(seats.update().where(seats.c.id == seat_id).values(fault=changed))
    op.execute("UPDATE matches SET termination = 'crash' WHERE termination = 'resign'")
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_matches_term"), type_="check")
        batch_op.create_check_constraint(op.f("ck_matches_term"), _check(_BEFORE))
