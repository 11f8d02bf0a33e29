"""A ladder's director followed between the server's reads (``api/ladder_follow.py``): after
every kind of change (games stored, a game in play added, an open one voided, a done one
voided, the field changed) the followed standings are exactly those of a director loaded
afresh from every match, and the ones the update can follow are followed without reading
the ladder whole again."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot_arena.arena.api import ladder_views
from bot_arena.arena.api.ladder_follow import Followers
from bot_arena.arena.api.ladders import ladder_add, ladder_retire, ladder_run
from tests.api.played_ladder import FIRST_LEGAL, played_ladder
from tests.db.dbtest import sqlite_copy


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Ladder ``club`` (tictactoe: three bots) with 6 games played, made once a module."""
    bots = ["random", "random:seed=3", str(FIRST_LEGAL)]
    return played_ladder(tmp_path_factory.mktemp("ladder-follow"), bots, games=6, seed=7)


@pytest.fixture
def db(played: Path, tmp_path: Path) -> str:
    copy = str(tmp_path / "arena.db")
    sqlite_copy(played, copy)
    return copy


@contextlib.contextmanager
def sessions(db: str, *, read_only: bool = True) -> Iterator[Any]:
    from bot_arena.db.session import make_engine, session_factory

    engine = make_engine(db, read_only=read_only)
    try:
        yield session_factory(engine)
    finally:
        engine.dispose()


def both(db: str, followers: Followers) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ladder's standings through ``followers`` and loaded afresh, in one session."""
    with sessions(db) as made, made() as session:
        row = ladder_views.find(session, "club")
        return (
            ladder_views.standings(session, row, followers),
            ladder_views.standings(session, row),
        )


def void(db: str, match_ids: list[int], *, replay: bool = False) -> list[int]:
    """Void the matches (``replay``: each with a pending copy); the copies' ids."""
    from bot_arena.arena.tournament.voiding import void_matches

    with sessions(db, read_only=False) as made, made() as session, session.begin():
        return [
            v.replay for v in void_matches(session, match_ids, "test", replay=replay) if v.replay
        ]


def match_ids(db: str, status: str) -> list[int]:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        rows = conn.execute("SELECT id FROM matches WHERE status = ? ORDER BY id", (status,))
        return [int(r[0]) for r in rows]


def test_games_stored_are_followed_without_reading_the_ladder_again(db: str) -> None:
    followers = Followers()
    followed, fresh = both(db, followers)
    assert followed == fresh and fresh["games"] == 6
    assert (followers.loads, followers.updates) == (1, 0)
    ladder_run("club", jobs=1, until_games=10, db=db)
    followed, fresh = both(db, followers)
    assert followed == fresh and fresh["games"] == 10
    assert (followers.loads, followers.updates) == (1, 1)


def test_games_in_play_added_played_and_voided_are_followed(db: str) -> None:
    followers = Followers()
    both(db, followers)
    first, second = match_ids(db, "done")[:2]
    copies = void(db, [first, second], replay=True)  # two done games void, two to play
    followed, fresh = both(db, followers)
    assert fresh["in_play"] == 2 and fresh["games"] == 4
    assert followed == fresh
    assert followers.loads == 2  # a done game voided: read whole again
    void(db, copies[:1])  # one in play voided: followed
    followed, fresh = both(db, followers)
    assert fresh["in_play"] == 1 and followed == fresh
    ladder_run("club", jobs=1, until_games=9, db=db)  # the other copy played, more games
    followed, fresh = both(db, followers)
    assert fresh["in_play"] == 0 and fresh["games"] >= 9
    assert followed == fresh
    assert (followers.loads, followers.updates) == (2, 2)


def test_a_done_game_voided_is_seen(db: str) -> None:
    followers = Followers()
    before, _ = both(db, followers)
    void(db, match_ids(db, "done")[-1:])
    followed, fresh = both(db, followers)
    assert followed == fresh and fresh["games"] == before["games"] - 1


def test_a_change_to_the_field_reads_the_ladder_again(db: str) -> None:
    followers = Followers()
    both(db, followers)
    ladder_retire("club", "random", db=db)
    followed, fresh = both(db, followers)
    assert followed == fresh and followers.loads == 2
    ladder_add("club", ["alphabeta:depth=1"], db=db)
    ladder_run("club", jobs=1, until_games=12, db=db)
    followed, fresh = both(db, followers)
    assert followed == fresh and followers.loads == 3
    assert "alphabeta:depth=1" in {s["name"] for s in fresh["standings"]}
