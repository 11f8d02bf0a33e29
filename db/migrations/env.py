"""Alembic environment: runs on the connection that db.session.upgrade passes in.

Run by hand (``alembic -x url=... revision --autogenerate``) it opens that URL itself.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, create_engine

from db.models import Base


def _run(connection: Connection) -> None:
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
    url = context.get_x_argument(as_dictionary=True).get("url", "sqlite:///arena.db")
    with create_engine(url).begin() as conn:
        _run(conn)


main()
