"""The coin game from the alpha-beta literature.

A row of coins; each turn a player takes 1..``max_take`` coins; whoever takes the last coin wins.
With two players it is zero-sum (+1 / -1); with N players the last taker gets 1 and everyone else
0 (constant sum 1).

State: ``(coins_left, player_to_move)``. Moves: the number of coins taken.

The parameters' limits keep what the game builds small: a table of the legal moves of every
row length (``coins`` x ``max_take`` entries, under a million), every move listed in each request
a bot gets, a row drawn coin by coin.
"""

from __future__ import annotations

from typing import Annotated, Final

from bot_arena.games.base import Game, GameError, GameKind, Utility, UtilityBounds
from bot_arena.games.params import Between
from bot_arena.games.quoting import shown

CoinsState = tuple[int, int]

MAX_COINS: Final = 10_000
MAX_TAKE: Final = 100
MAX_PLAYERS: Final = 16


class CoinsGame(Game[CoinsState, int]):
    name = "coins"
    description = "take 1..max_take coins from a row; whoever takes the last coin wins"

    def __init__(
        self,
        coins: Annotated[int, Between(0, MAX_COINS)] = 4,
        max_take: Annotated[int, Between(1, MAX_TAKE)] = 2,
        players: Annotated[int, Between(2, MAX_PLAYERS)] = 2,
    ) -> None:
        self.coins = coins
        self.max_take = max_take
        self.num_players = players
        self.params = {"coins": coins, "max_take": max_take, "players": players}
        if players == 2:
            self.kind = GameKind.ZERO_SUM
            self.bounds = UtilityBounds(min_each=-1.0, max_each=1.0, max_sum=0.0)
        else:
            self.kind = GameKind.CONSTANT_SUM
            self.bounds = UtilityBounds(min_each=0.0, max_each=1.0, max_sum=1.0)
        self._moves = [tuple(range(1, min(max_take, n) + 1)) for n in range(coins + 1)]

    def initial_state(self) -> CoinsState:
        return (self.coins, 0)

    def current_player(self, state: CoinsState) -> int:
        return state[1]

    def legal_moves(self, state: CoinsState) -> tuple[int, ...]:
        left = state[0]
        if left <= self.coins:
            return self._moves[left]
        return tuple(range(1, min(self.max_take, left) + 1))

    def apply(self, state: CoinsState, move: int) -> CoinsState:
        return (state[0] - move, (state[1] + 1) % self.num_players)

    def is_terminal(self, state: CoinsState) -> bool:
        return state[0] == 0

    def utility(self, state: CoinsState) -> Utility:
        winner = (state[1] - 1) % self.num_players  # the player who took the last coin
        if self.num_players == 2:
            return (1.0, -1.0) if winner == 0 else (-1.0, 1.0)
        return tuple(1.0 if p == winner else 0.0 for p in range(self.num_players))

    def parse_move(self, text: str) -> int:
        try:
            move = int(text)
        except ValueError:
            raise GameError(f"coins: move {shown(text)} is not a number of coins") from None
        if not 1 <= move <= self.max_take:
            raise GameError(f"coins: a move takes 1..{self.max_take} coins, not {shown(move)}")
        return move

    def format_move(self, move: int) -> str:
        return str(move)

    def parse_position(self, text: str) -> CoinsState:
        """``N`` coins left with player 0 to move, or ``N@P``."""
        left, _, player = text.strip().partition("@")
        try:
            n = int(left)
            p = int(player) if player else 0
        except ValueError:
            raise GameError(f"coins: position {shown(text)} is not COINS or COINS@PLAYER") from None
        if not 0 <= n <= MAX_COINS or not 0 <= p < self.num_players:
            raise GameError(f"coins: position {shown(text)} is out of range")
        return (n, p)

    def format_position(self, state: CoinsState) -> str:
        return f"{state[0]}@{state[1]}"

    def render(self, state: CoinsState) -> str:
        left, player = state
        row = " ".join("o" for _ in range(left)) or "(no coins left)"
        if left == 0:
            return f"{row}\nplayer {(player - 1) % self.num_players} took the last coin"
        return f"{row}\n{left} coin(s) left, player {player} to move"
