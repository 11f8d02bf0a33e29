"""Alembic environment: runs on the connection that ``db.session.upgrade`` passes in.

A new revision after a model change (against a scratch database at the current head)::

    python -c "from alembic import command; from bot_arena.db.session import alembic_config as c; \\
        cfg = c(); cfg.set_main_option('sqlalchemy.url', 'sqlite:///scratch.db'); \\
        command.upgrade(cfg, 'head'); command.revision(cfg, 'what changed', autogenerate=True)"

then read and tidy the generated script in ``db/migrations/versions``.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, create_engine

from bot_arena.db.models import Base, declare_postgresql


def _run(connection: Connection) -> None:
    if connection.dialect.name == "postgresql":
        declare_postgresql()
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def main() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = context.config.get_main_option("sqlalchemy.url") or "sqlite:///arena.db"
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            _run(conn)
    finally:
        engine.dispose()


main()
