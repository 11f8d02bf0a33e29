"""``db.ladders.RevisionReader``, the ladder gate's read of its field's revision: through the
driver on a connection of its own, it sees every change committed before each read and leaves
no transaction open between reads (SQLite and PostgreSQL)."""

from __future__ import annotations

import logging
import signal
import threading

import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from bot_arena.arena.api.ladders import ladder_create
from bot_arena.db import ladders


def idle(reader: ladders.RevisionReader) -> bool:
    assert reader._conn is not None
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


def backend_pid(reader: ladders.RevisionReader) -> int:
    assert reader._conn is not None
    return int(reader._conn.driver_connection.info.backend_pid)  # type: ignore[union-attr]


def test_a_read_cut_off_by_the_server_raises_its_reason_and_the_next_read_reconnects(
    db_url: str, engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    """The CI failure of ``arena serve``'s ladder on PostgreSQL: a read stopped part-way left a
    closed connection, whose rollback then raised "the connection is closed" in place of what
    had stopped the read (so a Ctrl-C became a failure), and the pool's reset logged a
    traceback when the reader was closed. Here the server ends the reader's session while its
    read waits on a lock: the read raises the server's reason, the next read works on a new
    connection, and closing it logs nothing."""
    if not db_url.startswith("postgresql"):
        pytest.skip("only PostgreSQL's server can end a session part-way through a read")
    from psycopg import OperationalError  # the driver's own: the reader reads through it

    tid = ladder_create("club", "tictactoe", seed=1, db=db_url)
    reader = ladders.RevisionReader(engine, tid)
    try:
        assert reader.read() == 0
        victim = backend_pid(reader)
        with engine.connect() as locker, engine.connect() as admin:
            locker.exec_driver_sql("LOCK TABLE ladders IN ACCESS EXCLUSIVE MODE")

            def cut_off() -> None:
                # waits until the reader's read is blocked on the lock (no guessed sleep)
                while not admin.exec_driver_sql(
                    "SELECT 1 FROM pg_stat_activity WHERE pid = %s AND wait_event_type = 'Lock'",
                    (victim,),
                ).first():
                    admin.rollback()
                admin.exec_driver_sql("SELECT pg_terminate_backend(%s)", (victim,))
                admin.commit()

            thread = threading.Thread(target=cut_off)
            thread.start()
            with pytest.raises(OperationalError) as raised:
                reader.read()
            thread.join()
            locker.rollback()
        assert "the connection is closed" not in str(raised.value), raised.value
        with caplog.at_level(logging.ERROR, logger="sqlalchemy"):
            assert reader.read() == 0
            assert backend_pid(reader) != victim
            with engine.begin() as conn:
                ladders.bump(Session(bind=conn), tid)
            assert reader.read() == 1
            reader.close()
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    finally:
        reader.close()


def test_a_read_stopped_by_ctrl_c_raises_keyboardinterrupt_and_the_reader_reads_on(
    db_url: str, engine: Engine
) -> None:
    """Ctrl-C (SIGINT, as ``arena serve`` stops its ladder runner) while a read waits on
    PostgreSQL: KeyboardInterrupt comes out of the read (the runner's stop path), and the
    reader still reads afterwards."""
    if not db_url.startswith("postgresql"):
        pytest.skip("a SQLite read does not wait on the server")
    tid = ladder_create("club", "tictactoe", seed=1, db=db_url)
    reader = ladders.RevisionReader(engine, tid)
    main = threading.main_thread().ident
    assert main == threading.get_ident() and main is not None
    read_over = threading.Event()
    interrupted: list[int] = []

    def once(signum: int, frame: object) -> None:
        """Ctrl-C's KeyboardInterrupt, raised once: the signal may be sent again (below)."""
        if not interrupted:
            interrupted.append(signum)
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, once)
    try:
        victim = backend_pid(reader)
        with engine.connect() as locker, engine.connect() as admin:
            locker.exec_driver_sql("LOCK TABLE ladders IN ACCESS EXCLUSIVE MODE")

            def interrupt() -> None:
                while not admin.exec_driver_sql(
                    "SELECT 1 FROM pg_stat_activity WHERE pid = %s AND wait_event_type = 'Lock'",
                    (victim,),
                ).first():
                    admin.rollback()
                # to the main thread itself: a signal the kernel hands to this thread instead
                # reaches the main thread's handler only when the driver's wait looks for one.
                # Sent again until the read is over: one that lands while the main thread is
                # between two of the driver's polls (not in the system call, so nothing is
                # interrupted) waits for the driver to return to Python, which a read held by
                # a lock never does. A real Ctrl-C's read ends in milliseconds anyway.
                for _ in range(150):
                    signal.pthread_kill(main, signal.SIGINT)
                    if read_over.wait(0.2):
                        return
                # never a hung test: after 30 s the read is ended, and fails
                admin.exec_driver_sql("SELECT pg_terminate_backend(%s)", (victim,))
                admin.commit()

            thread = threading.Thread(target=interrupt)
            thread.start()
            try:
                with pytest.raises(KeyboardInterrupt):
                    reader.read()
            finally:
                read_over.set()
                thread.join()
            locker.rollback()
        assert reader.read() == 0
    finally:
        signal.signal(signal.SIGINT, previous)
        reader.close()
