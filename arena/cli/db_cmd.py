"""``arena db upgrade|check``: bring a database to the latest schema; check that a database is
an arena database (one someone sent, say) without changing it.

Commands that only read a database never migrate it (they open it read-only); commands that
store results migrate on their own. Both refuse a file whose schema is not exactly Bot Arena's
(docs/security.md, "Opening a database someone sent you")."""

from __future__ import annotations

import typer

from bot_arena.arena.cli.common import ArenaCommand, DbOption, command_group, open_existing_db

db_app = command_group(help="The results database: upgrade its schema, check it.")


def _describe(db: str | None, write: bool) -> str:
    from bot_arena.db.session import current_revision, database_url, display_url

    engine = open_existing_db(db, write=write).kw["bind"]
    try:
        revision = current_revision(engine)
    finally:
        engine.dispose()
    return f"database {display_url(database_url(db))}: arena schema, revision {revision} (latest)"


@db_app.command("upgrade", cls=ArenaCommand)
def upgrade_command(db: DbOption = None) -> None:
    """Bring the database's schema to the latest revision (once it is checked to be an arena
    database: nothing else in it is run)."""
    typer.echo(_describe(db, write=True))


@db_app.command("check", cls=ArenaCommand)
def check_command(db: DbOption = None) -> None:
    """Check, without writing anything, that the database is an arena database at the latest
    schema: one line and exit 2 naming what is foreign (a trigger, a view, a table defined
    otherwise) or that it needs ``arena db upgrade``."""
    typer.echo(_describe(db, write=False))
