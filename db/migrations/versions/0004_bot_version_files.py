"""bot version files: the other Python files of a file bot, stored with its version

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23

``bot_versions.files`` is a JSON list of [path relative to the bot's folder, text]: the modules a
file bot imports from its folder, which its SHA-256 covers since this revision. NULL for
versions stored before it (their bots ran with the modules found on disk).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("bot_versions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("files", sa.JSON(none_as_null=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("bot_versions", schema=None) as batch_op:
        batch_op.drop_column("files")
