"""The owner and bot of each standing (``ladder_views.standings``), read for the whole field
in two queries (``db.accounts.bots_named``, ``versions_held``): a user's bot is theirs, its
second version entered beside it (``NAME@2``) is theirs too, a bot of the house has no owner
but a page, a spec's bot (``random``) neither."""

from __future__ import annotations

from pathlib import Path

from bot_arena.arena.api import accounts, ladder_views
from bot_arena.arena.api.ladders import ladder_add, ladder_create
from bot_arena.arena.api.submit import register
from bot_arena.arena.match.botspec import resolve
from bot_arena.db.session import make_engine, session_factory

FIRST_LEGAL = Path(__file__).resolve().parents[1] / "arena" / "fixtures" / "first_legal.py"


def test_each_standing_names_its_owner_and_bot(tmp_path: Path) -> None:
    db = str(tmp_path / "arena.db")
    ladder_create("club", "tictactoe", db=db, seed=5)
    changed = tmp_path / "changed.py"
    changed.write_text(FIRST_LEGAL.read_text() + "\n# a second version\n")
    engine = make_engine(db)
    sessions = session_factory(engine)
    try:
        with sessions.begin() as session:
            alice, _ = accounts.add_user(session, "alice")
            mine = register(session, "alice-bot", resolve(str(FIRST_LEGAL)), alice)
            house = register(session, "house-bot", resolve(str(FIRST_LEGAL)))
        ladder_add("club", ["alice-bot", "house-bot", "random"], sandbox="off", db=db)
        with sessions.begin() as session:
            again = register(session, "alice-bot", resolve(str(changed)), alice)
        assert again.bot_id == mine.bot_id and again.version_id != mine.version_id
        ladder_add("club", ["alice-bot"], sandbox="off", db=db)  # enters as alice-bot@2

        with sessions() as session:
            view = ladder_views.standings(session, ladder_views.find(session, "club"))
        found = {s["name"]: (s["owner"], s["bot"]) for s in view["standings"]}
        assert found == {
            "alice-bot": ("alice", mine.bot_id),
            "alice-bot@2": ("alice", mine.bot_id),
            "house-bot": (None, house.bot_id),
            "random": (None, None),
        }
    finally:
        engine.dispose()
