"""A plugin game the report knows nothing about, for the board and replay tests."""

from __future__ import annotations

from bot_arena.games.base import Game, GameError


class Countdown(Game[tuple[int, ...], int]):
    """A plugin game the report knows nothing about: remove one of the numbers; its picture is
    one line per number left, so the text view changes length."""

    name = "countdown"

    def __init__(self) -> None:
        self.num_players = 2
        self.params = {}

    def initial_state(self) -> tuple[int, ...]:
        return (0, 5, 3, 8, 1)

    def current_player(self, state: tuple[int, ...]) -> int:
        return state[0]

    def legal_moves(self, state: tuple[int, ...]) -> list[int]:
        return list(range(len(state) - 1))

    def apply(self, state: tuple[int, ...], move: int) -> tuple[int, ...]:
        rest = state[1:]
        return (1 - state[0], *rest[:move], *rest[move + 1 :])

    def is_terminal(self, state: tuple[int, ...]) -> bool:
        return len(state) == 1

    def utility(self, state: tuple[int, ...]) -> tuple[float, ...]:
        return (1.0, -1.0) if state[0] else (-1.0, 1.0)

    def parse_move(self, text: str) -> int:
        try:
            return int(text)
        except ValueError:
            raise GameError(text) from None

    def format_move(self, move: int) -> str:
        return str(move)

    def parse_position(self, text: str) -> tuple[int, ...]:
        return tuple(int(t) for t in text.split(","))

    def format_position(self, state: tuple[int, ...]) -> str:
        return ",".join(map(str, state))

    def render(self, state: tuple[int, ...]) -> str:
        lines = [f"  <{n}> {'#' * n}" for n in state[1:]]
        return "\n".join([*lines, f"player {state[0]} to move </script>"])
