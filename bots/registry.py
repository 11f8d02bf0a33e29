"""Built-in bots by spec string: ``name`` or ``name:key=value,key=value``.

``alphabeta:depth=6,order=true`` makes an AlphaBetaBot(depth=6, order=True). Options are checked
against the bot class's constructor, so a typo is a one-line BotError. Third-party bots register
through the ``arena.bots`` entry-point group.
"""

from __future__ import annotations

import hashlib
from importlib import import_module
from typing import Any

from bot_arena.bots.base import Bot, BotError
from bot_arena.games import keyvalue, plugins
from bot_arena.games.base import GameError
from bot_arena.games.params import accepted, bind
from bot_arena.games.quoting import shown

ENTRY_POINT_GROUP = "arena.bots"

_BUILTIN: dict[str, str] = {
    "random": "bot_arena.bots.random_bot:RandomBot",
    "minimax": "bot_arena.bots.minimax:MinimaxBot",
    "alphabeta": "bot_arena.bots.alphabeta:AlphaBetaBot",
    "iterative": "bot_arena.bots.iterative:IterativeBot",
    "maxn": "bot_arena.bots.maxn:MaxNBot",
    "paranoid": "bot_arena.bots.paranoid:ParanoidBot",
    "mcts": "bot_arena.bots.mcts:MCTSBot",
    "solver": "bot_arena.bots.solver:SolverBot",
}


def builtin_modules() -> list[str]:
    """The modules of the built-in entries (a fork server imports them ahead of its workers)."""
    return list(dict.fromkeys(target.partition(":")[0] for target in _BUILTIN.values()))


def _targets() -> dict[str, str]:
    return plugins.all_targets(_BUILTIN, ENTRY_POINT_GROUP)


def bot_class(name: str) -> type[Bot]:
    target = plugins.find_target(name, _BUILTIN, ENTRY_POINT_GROUP)
    if target is None:
        raise BotError(f"unknown bot {shown(name)} (built-in: {', '.join(names())})")
    module_name, _, attr = target.partition(":")
    try:
        cls = getattr(import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise BotError(f"bot {name!r} cannot be loaded: {exc}") from None
    if not (isinstance(cls, type) and issubclass(cls, Bot)):
        raise BotError(f"{target} is not a Bot class")
    return cls


def names() -> list[str]:
    """Built-in bot names whose module is present, then third-party ones."""
    out = []
    for name in _targets():
        try:
            bot_class(name)
        except BotError:
            continue
        out.append(name)
    return out


def split_spec(spec: str) -> tuple[str, dict[str, str]]:
    """``"alphabeta:depth=6,order=1"`` -> ``("alphabeta", {"depth": "6", "order": "1"})``."""
    name, _, rest = spec.strip().partition(":")
    try:
        options = keyvalue.pairs(keyvalue.separated(rest))
    except keyvalue.KeyValueError as exc:
        if exc.duplicate:
            raise BotError(
                f"bot spec {shown(spec)}: option {shown(exc.key)} is given twice"
            ) from None
        raise BotError(
            f"bot spec {shown(spec)}: option {shown(exc.word)} is not key=value"
        ) from None
    if not name:
        raise BotError(f"bot spec {shown(spec)} has no bot name")
    return name, options


def is_builtin(spec: str) -> bool:
    name = spec.strip().partition(":")[0]
    return plugins.find_target(name, _BUILTIN, ENTRY_POINT_GROUP) is not None


def seeded(kwargs: dict[str, Any], cls: type, seed: int | None) -> dict[str, Any]:
    """``kwargs`` with the ``seed`` a bot of ``cls`` plays a match seeded ``seed`` with: that
    seed, or, where the spec sets its own (``random:seed=7``), the two combined
    (``combined_seed``). A spec's own seed alone would replay the same game at every match of
    a pairing (a crosstable of 0, 1/2 and 1 only); combined, each match differs and still
    replays exactly from its stored seed. No ``seed`` (a spec checked, not played): as given."""
    if seed is None or "seed" not in accepted(cls):
        return kwargs
    own = kwargs.get("seed")
    return {**kwargs, "seed": seed if own is None else combined_seed(own, seed)}


def combined_seed(own: int, match: int) -> int:
    """A spec's own seed and a match's seat seed as one seed in [0, 2**63): a hash of both, so
    neither masks the other and no two pairs of small numbers collide by arithmetic."""
    digest = hashlib.blake2b(f"{own}/{match}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def make(spec: str, seed: int | None = None) -> Bot:
    """A built-in bot from its spec. ``seed`` seeds a bot's randomness, combined with the
    spec's own seed where it sets one (``seeded``)."""
    name, options = split_spec(spec)
    cls = bot_class(name)
    try:
        kwargs: dict[str, Any] = bind(f"bot {name}", cls, options, skip=("spec",))
    except GameError as exc:
        raise BotError(str(exc)) from None
    kwargs = seeded(kwargs, cls, seed)
    try:
        return cls(spec=spec.strip(), **kwargs)
    except (TypeError, ValueError) as exc:
        raise BotError(f"bot {shown(spec)}: {exc}") from None
