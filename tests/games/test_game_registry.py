"""The game registry: names, parameters coerced from text, errors, runtime and entry-point games."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from typing import Any

import pytest

from bot_arena import games
from bot_arena.games import plugins, registry
from bot_arena.games.base import GameError
from bot_arena.games.coins import CoinsGame


@pytest.fixture(autouse=True)
def _isolated_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_classes", dict(registry._classes))


def test_built_in_names_come_first_in_order() -> None:
    names = games.names()
    built_in = [n for n in registry._BUILTIN if n in names]
    assert names[: len(built_in)] == built_in
    for required in ("coins", "tictactoe", "tree", "nim"):
        assert required in names


def test_unknown_game_lists_the_known_ones() -> None:
    with pytest.raises(GameError, match=r"unknown game 'go' \(known: .*coins") as info:
        games.get("go")
    assert "\n" not in str(info.value)


def test_unknown_parameter_lists_the_accepted_ones() -> None:
    with pytest.raises(GameError, match=r"coins: unknown parameter 'coin' \(parameters: coins, "):
        games.get("coins", coin=3)
    with pytest.raises(GameError, match="unknown parameter 'size'"):
        games.get("tictactoe", size=4)


@pytest.mark.parametrize(
    ("name", "params", "why"),
    [
        ("coins", {"coins": "four"}, "coins: coins='four' is not a valid int"),
        ("nim", {"players": "2.5"}, "nim: players='2.5' is not a valid int"),
        ("coins", {"players": "1"}, "players must be >= 2"),
    ],
)
def test_bad_parameter_values(name: str, params: dict[str, Any], why: str) -> None:
    with pytest.raises(GameError, match=why):
        games.get(name, **params)


def test_text_parameters_are_coerced() -> None:
    game = games.get("coins", coins="7", max_take="3", players="3")
    assert game.params == {"coins": 7, "max_take": 3, "players": 3}
    assert game == CoinsGame(coins=7, max_take=3, players=3)
    assert game != CoinsGame(coins=7, max_take=3)


def test_parse_params() -> None:
    assert games.parse_params(["coins=5", " players = 3 "]) == {"coins": "5", "players": "3"}
    for bad in (["coins"], ["=5"]):
        with pytest.raises(GameError, match="key=value"):
            games.parse_params(bad)


class _Pebbles(CoinsGame):
    name = "pebbles-test"


def test_runtime_registration() -> None:
    games.register(_Pebbles)
    assert games.game_class("pebbles-test") is _Pebbles
    assert games.get("pebbles-test", coins=2).initial_state() == (2, 0)


def test_entry_point_games_are_discovered(monkeypatch: pytest.MonkeyPatch) -> None:
    points = [
        EntryPoint(
            name="stones-test", value="bot_arena.games.coins:CoinsGame", group="arena.games"
        ),
        EntryPoint(
            name="broken-test", value="bot_arena.games.no_such_module:Game", group="arena.games"
        ),
    ]

    def fake(group: str) -> list[EntryPoint]:
        return points if group == "arena.games" else []

    monkeypatch.setattr(plugins, "entry_points", fake)
    names = games.names()
    assert "stones-test" in names and names.index("stones-test") > names.index("coins")
    assert isinstance(games.get("stones-test"), CoinsGame)
    # A broken plugin is left out of the list and is a one-line GameError, not a traceback.
    assert "broken-test" not in names
    with pytest.raises(
        GameError, match=r"cannot be loaded: No module named 'bot_arena\.games\.no_such"
    ):
        games.get("broken-test")


def test_non_game_target_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry._BUILTIN, "notagame-test", "bot_arena.games.base:GameError")
    with pytest.raises(GameError, match="is not a Game class"):
        games.game_class("notagame-test")
    assert "notagame-test" not in games.names()
