"""``db.ladders.RevisionReader``, the ladder gate's read of its field's revision: through the
driver on a connection of its own, it sees every change committed before each read and leaves
no transaction open between reads (SQLite and PostgreSQL)."""

from __future__ import annotations

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from bot_arena.arena.api.ladders import ladder_create
from bot_arena.db import ladders


def idle(reader: ladders.RevisionReader) -> bool:
    driver = reader._conn.driver_connection
    if hasattr(driver, "in_transaction") and not hasattr(driver, "info"):  # sqlite3
        return not driver.in_transaction
    from psycopg.pq import TransactionStatus

    return bool(driver.info.transaction_status == TransactionStatus.IDLE)


def test_each_read_sees_what_was_committed_before_it(
    db_url: str, engine: Engine, factory: sessionmaker[Session]
) -> None:
    tid = ladder_create("club", "tictactoe", seed=1, db=db_url)
    other = ladder_create("other", "tictactoe", seed=1, db=db_url)
    reader = ladders.RevisionReader(engine, tid)
    try:
        assert reader.read() == 0
        assert idle(reader)
        for expected in (1, 2):
            with factory.begin() as session:
                ladders.bump(session, tid)
            assert reader.read() == expected
            assert idle(reader)
        with factory.begin() as session:
            ladders.bump(session, other)  # another ladder's change is not this one's
        assert reader.read() == 2
    finally:
        reader.close()
