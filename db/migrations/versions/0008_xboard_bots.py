"""xboard bots: a bot kind for chess engines that speak xboard/CECP

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23

``bot_versions.kind`` gains ``xboard`` (``xboard:<command> option.NAME=VALUE ...``: the
engine's command line and options). On SQLite the CHECK needs the table rebuilt (batch mode,
see 0002). The downgrade refuses while an ``xboard`` version is stored.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BEFORE = ("builtin", "module", "command", "human", "uci")
_AFTER = (*_BEFORE, "xboard")


def _check(words: tuple[str, ...]) -> str:
    return "kind IN (" + ", ".join(f"'{w}'" for w in words) + ")"


def upgrade() -> None:
    with op.batch_alter_table("bot_versions", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_bot_versions_kind"), type_="check")
        batch_op.create_check_constraint(op.f("ck_bot_versions_kind"), _check(_AFTER))


def downgrade() -> None:
    stored = (
        op.get_bind()
        .execute(sa.text("SELECT COUNT(*) FROM bot_versions WHERE kind = 'xboard'"))
        .scalar()
    )
    if stored:
        raise RuntimeError(
            f"{stored} xboard bot version(s) stored: the older schema cannot hold them"
        )
    with op.batch_alter_table("bot_versions", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_bot_versions_kind"), type_="check")
        batch_op.create_check_constraint(op.f("ck_bot_versions_kind"), _check(_BEFORE))
