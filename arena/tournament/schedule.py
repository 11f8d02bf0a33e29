"""Tournament schedules: who plays whom, in which seats, from which opening, with which seed.

Pure functions of (format, field size, players per game, games per group, seed): the same
arguments always give the same schedule. A *group* is one set of bots that meets (a pair in a
two-player round-robin, a combination of N bots in an N-player game). Within a group, game ``g``
seats the bots in rotation ``g % N``, so N consecutive games put every bot in every seat once;
those N games share opening ``g // N`` (both seatings of a pair play the same opening).
"""

from __future__ import annotations

import hashlib
import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot_arena.games.base import Game

FORMATS = ("round-robin", "gauntlet")
_OPENING_ATTEMPTS = 1000


class ScheduleError(ValueError):
    """A tournament that cannot be scheduled (one-line message)."""


@dataclass(frozen=True, slots=True)
class Pairing:
    """One scheduled match. ``seats`` holds indices into the field, in seat order."""

    round: int  # 1-based: game g of every group is in round g + 1
    group: int  # index of the group of bots that meets
    game: int  # index of this game within its group
    seats: tuple[int, ...]
    opening: int  # opening index within the group (shared by a full rotation)
    seed: int  # the match's own seed (random bots, fault stand-ins)


def derive_seed(seed: int, *keys: object) -> int:
    """A 63-bit seed derived from the tournament seed and a path of keys (stable across runs
    and platforms, unlike ``hash``)."""
    text = ":".join(str(k) for k in (seed, *keys))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def groups(fmt: str, field_size: int, players: int) -> list[tuple[int, ...]]:
    """The sets of bots (field indices, ascending) that meet."""
    if fmt not in FORMATS:
        raise ScheduleError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
    if players < 2:
        raise ScheduleError(f"a tournament needs a game of 2 or more players, not {players}")
    if field_size < players:
        raise ScheduleError(
            f"a {players}-player game needs at least {players} bots, got {field_size}"
        )
    if fmt == "round-robin":
        return list(itertools.combinations(range(field_size), players))
    if field_size < 2:
        raise ScheduleError("a gauntlet needs at least 2 bots")
    return [(0, *rest) for rest in itertools.combinations(range(1, field_size), players - 1)]


def schedule(
    fmt: str, field_size: int, players: int, games: int | None = None, seed: int = 0
) -> list[Pairing]:
    """Every match of the tournament, round by round. ``games`` per group defaults to one full
    rotation of the seats (2 for two-player games)."""
    per_group = players if games is None else games
    if per_group < 1:
        raise ScheduleError(f"games per pairing must be >= 1, not {per_group}")
    sets = groups(fmt, field_size, players)
    out: list[Pairing] = []
    for g in range(per_group):
        shift = g % players
        for index, members in enumerate(sets):
            seats = members[shift:] + members[:shift]
            out.append(
                Pairing(
                    round=g + 1,
                    group=index,
                    game=g,
                    seats=seats,
                    opening=g // players,
                    seed=derive_seed(seed, "match", index, g),
                )
            )
    return out


@dataclass(frozen=True, slots=True)
class Opening:
    moves: tuple[str, ...]  # move texts from the initial position
    position: str | None  # position text after them; None = the initial position (no plies)

    @property
    def text(self) -> str:
        return " ".join(self.moves)


def random_opening(game: Game[Any, Any], seed: int, plies: int) -> Opening:
    """``plies`` uniformly random moves from the initial position, drawn from ``seed``; a draw
    that ends the game is skipped and the next one tried."""
    if plies <= 0:
        return Opening((), None)
    rng = random.Random(seed)
    for _ in range(_OPENING_ATTEMPTS):
        state = game.initial_state()
        moves: list[str] = []
        for _ply in range(plies):
            legal: Sequence[Any] = game.legal_moves(state)
            if not legal:
                break
            move = rng.choice(legal)
            moves.append(game.format_move(move))
            state = game.apply(state, move)
        if len(moves) == plies and not game.is_terminal(state):
            return Opening(tuple(moves), game.format_position(state))
    raise ScheduleError(
        f"no opening of {plies} plies in {game.name} leaves the game unfinished "
        f"({_OPENING_ATTEMPTS} random tries); use fewer --opening-plies"
    )


def openings(
    game: Game[Any, Any], pairings: Sequence[Pairing], seed: int, plies: int
) -> list[Opening]:
    """The opening of each pairing: one per (group, opening index), shared by its rotation."""
    if plies <= 0:  # no opening whatever the seed: none drawn
        return [Opening((), None)] * len(pairings)
    cache: dict[tuple[int, int], Opening] = {}
    out = []
    for p in pairings:
        key = (p.group, p.opening)
        if key not in cache:
            cache[key] = random_opening(game, derive_seed(seed, "opening", *key), plies)
        out.append(cache[key])
    return out
