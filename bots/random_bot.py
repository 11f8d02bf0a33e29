"""The uniform random player: seeded, so a tournament replays exactly from its seed."""

from __future__ import annotations

import random
from typing import Any

from bot_arena.bots.base import Bot, Decision, TimeBudget
from bot_arena.games.base import Game


class RandomBot(Bot):
    name = "random"

    def __init__(self, seed: int | None = None, spec: str | None = None) -> None:
        super().__init__(spec)
        self.seed = seed
        self.rng = random.Random(seed)

    def choose_move(self, game: Game[Any, Any], state: Any, budget: TimeBudget) -> Decision:
        return Decision(self.rng.choice(game.legal_moves(state)))
