"""Built-in players and the bot API."""

from bot_arena.bots.base import Bot, BotError, Decision, SearchInfo, TimeBudget
from bot_arena.bots.registry import bot_class, is_builtin, make, names, split_spec

__all__ = [
    "Bot",
    "BotError",
    "Decision",
    "SearchInfo",
    "TimeBudget",
    "bot_class",
    "is_builtin",
    "make",
    "names",
    "split_spec",
]
