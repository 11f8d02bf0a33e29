"""N-player Nim with placement utilities.

Piles of stones; a move takes any positive number of stones from one pile; the game ends when
every pile is empty. Players move in turn 0, 1, ..., N-1, 0, ... The player who took the last
stone gets N-1, the player who moved before that N-2, and so on down to 0: a constant sum of
N(N-1)/2. Because turns rotate, the finishing order follows from who is to move at the end, so a
state is just ``(piles, player_to_move)``.

Moves are ``(pile, count)`` with piles numbered from 0 inside the program and from 1 in text:
``2:3`` takes 3 stones from the second pile. Default order: pile by pile, and within a pile the
largest take first (emptying a pile ends the game soonest).

Positions are the pile sizes separated by commas with an optional ``@P`` for the player to move
(default 0): ``3,4,5@1``.

Limits: the moves are listed, not generated lazily, and the stones are capped instead
(``MAX_STONES`` in all the piles). A position's legal moves are one per stone, and the referee
lists every one of them in each request a bot gets and keeps the lists of the positions it
met; a lazy generator here would save nothing there. Ten thousand stones is far beyond a game
anyone plays by hand or searches to the end, and keeps each request under about 100 KB.
``MAX_PLAYERS`` bounds the players x players table of placement utilities.
"""

from __future__ import annotations

from typing import Annotated, Final

from bot_arena.games.base import Game, GameError, GameKind, Utility, UtilityBounds
from bot_arena.games.params import Between, NumberList
from bot_arena.games.quoting import shown

NimState = tuple[tuple[int, ...], int]
NimMove = tuple[int, int]

MAX_PLAYERS: Final = 16
MAX_PILES: Final = 100
MAX_STONES: Final = 10_000
PILES = NumberList(count=MAX_PILES, total=MAX_STONES)


def _parse_piles(text: str, owner: str) -> tuple[int, ...]:
    PILES.check("nim", owner, text)
    parts = [p.strip() for p in text.split(",")]
    try:
        piles = tuple(int(p) for p in parts)
    except ValueError:
        raise GameError(f"nim: {owner} {shown(text)} is not pile sizes like 3,4,5") from None
    if any(p < 0 for p in piles):
        raise GameError(f"nim: {owner} {shown(text)} has a negative pile")
    return piles


def p_position(piles: tuple[int, ...], players: int) -> bool:
    """Whether every binary digit of the pile sizes sums to 0 mod ``players``.

    With two players this is Bouton's rule (xor zero). For any number of players under max^n
    (everyone maximising its own placement) it says exactly when the player who just moved takes
    the last stone; tests/games/test_nim.py checks this by brute force.
    """
    bit = 1
    top = max(piles, default=0)
    while bit <= top:
        if sum(1 for p in piles if p & bit) % players:
            return False
        bit <<= 1
    return True


def move_to_p_position(piles: tuple[int, ...], players: int) -> tuple[int, int] | None:
    """A move ``(pile, count)`` that leaves a position where :func:`p_position` holds, or None.

    Without pile ``i`` each binary digit has some count ``c``; the new size of pile ``i`` must
    supply ``-c mod players`` in that digit, which works only when that is 0 or 1 in every digit,
    and then fixes the new size; it must be smaller than the pile.
    """
    top = max(piles, default=0)
    for i, size in enumerate(piles):
        target, bit = 0, 1
        while bit <= top:
            need = -sum(1 for j, p in enumerate(piles) if j != i and p & bit) % players
            if need > 1:
                break
            target |= bit if need else 0
            bit <<= 1
        else:
            if target < size:
                return (i, size - target)
    return None


class NimGame(Game[NimState, NimMove]):
    name = "nim"
    description = "take stones from one pile; the last taker places first, then back in turn"

    def __init__(
        self,
        players: Annotated[int, Between(2, MAX_PLAYERS)] = 3,
        piles: Annotated[str, PILES] = "3,4,5",
    ) -> None:
        sizes = _parse_piles(piles, "piles")
        if not sizes:
            raise GameError("nim: piles must list at least one pile")
        self.num_players = players
        self.piles = sizes
        self.params = {"players": players, "piles": ",".join(map(str, sizes))}
        self.kind = GameKind.CONSTANT_SUM
        total = players * (players - 1) / 2
        self.bounds = UtilityBounds(min_each=0.0, max_each=float(players - 1), max_sum=total)
        self.default_depth = None
        # Utility vectors by the player who would move next at the end (= last mover + 1).
        self._utilities = tuple(
            tuple(float((p - nxt) % players) for p in range(players)) for nxt in range(players)
        )
        self._fair = (total / players,) * players

    # --- rules -------------------------------------------------------------------------------
    def initial_state(self) -> NimState:
        return (self.piles, 0)

    def current_player(self, state: NimState) -> int:
        return state[1]

    def legal_moves(self, state: NimState) -> list[NimMove]:
        return [(i, k) for i, size in enumerate(state[0]) for k in range(size, 0, -1)]

    def apply(self, state: NimState, move: NimMove) -> NimState:
        piles, player = state
        i, k = move
        return (
            (*piles[:i], piles[i] - k, *piles[i + 1 :]),
            (player + 1) % self.num_players,
        )

    def is_terminal(self, state: NimState) -> bool:
        return not any(state[0])

    def utility(self, state: NimState) -> Utility:
        """Placement: the last mover (the player before the one to move) gets N-1, and so on."""
        return self._utilities[state[1]]

    def evaluate(self, state: NimState) -> Utility:
        """Exact where the digit-sum rule decides the winner, a fair share elsewhere.

        If every binary digit of the piles sums to 0 mod N, the player who just moved takes the
        last stone; if the player to move can reach such a position, it does. With three players
        the remaining positions go to the player after the mover. The predicted winner gets
        N-1 and the others split the rest evenly; with no prediction everybody gets (N-1)/2.
        """
        piles, player = state
        n = self.num_players
        if not any(piles):
            return self._utilities[player]
        if p_position(piles, n):
            winner = (player - 1) % n
        elif move_to_p_position(piles, n) is not None:
            winner = player
        elif n == 3:
            winner = (player + 1) % n
        else:
            return self._fair
        rest = (n - 2) / 2
        return tuple(float(n - 1) if p == winner else rest for p in range(n))

    # --- text --------------------------------------------------------------------------------
    def parse_move(self, text: str) -> NimMove:
        """``PILE:COUNT`` with piles numbered from 1: ``2:3`` takes 3 from the second pile."""
        pile, sep, count = text.strip().partition(":")
        try:
            i, k = int(pile), int(count)
        except ValueError:
            raise GameError(f"nim: move {shown(text)} is not PILE:COUNT like 2:3") from None
        if not sep or i < 1 or k < 1:
            raise GameError(f"nim: move {shown(text)} is not PILE:COUNT like 2:3 (both from 1)")
        return (i - 1, k)

    def format_move(self, move: NimMove) -> str:
        return f"{move[0] + 1}:{move[1]}"

    def parse_position(self, text: str) -> NimState:
        """``3,4,5`` or ``3,4,5@1`` (player to move after ``@``, default 0)."""
        body, _, who = text.strip().partition("@")
        piles = _parse_piles(body, "position")
        if not piles:
            raise GameError(f"nim: position {shown(text)} has no piles")
        try:
            player = int(who) if who.strip() else 0
        except ValueError:
            raise GameError(
                f"nim: position {shown(text)}: player after @ is not a number"
            ) from None
        if not 0 <= player < self.num_players:
            raise GameError(
                f"nim: position {shown(text)}: player {player} is not 0..{self.num_players - 1}"
            )
        return (piles, player)

    def format_position(self, state: NimState) -> str:
        return f"{','.join(map(str, state[0]))}@{state[1]}"

    def render(self, state: NimState) -> str:
        piles, player = state
        width = len(str(len(piles)))
        lines = [
            f"pile {i + 1:>{width}}: {'|' * size or '-'} ({size})" for i, size in enumerate(piles)
        ]
        n = self.num_players
        if not any(piles):
            order = ", ".join(str((player - k) % n) for k in range(1, n + 1))
            lines.append(f"game over; placement, first to last: players {order}")
        else:
            lines.append(f"player {player} to move")
        return "\n".join(lines)
