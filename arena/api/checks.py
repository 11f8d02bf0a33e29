"""The option checks every command and the Python API share, each raising ArenaError with the
one line the CLI prints (``cli/common.py`` turns it into ``error: ...``, exit 2)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from bot_arena import games
from bot_arena.arena.api.errors import ArenaError as ArenaError  # re-exported for the CLI
from bot_arena.games.base import Game, GameError

if TYPE_CHECKING:
    from bot_arena.arena.match.adjudication import Adjudication
    from bot_arena.arena.match.botref import BotRef
    from bot_arena.arena.match.pool import BotPool
    from bot_arena.arena.match.timecontrol import TimeControl
    from bot_arena.arena.tournament.schedule import Opening
    from bot_arena.arena.transport.limits import ResourceLimits
    from bot_arena.arena.transport.sandbox.mode import Mode, SandboxSettings


def load_game(
    name: str, params: list[str] | None = None, tree: str | None = None
) -> Game[Any, Any]:
    """The game by name with ``k=v`` parameters (and a tree file for the game ``tree``)."""
    try:
        kwargs: dict[str, Any] = games.parse_params(params or [])
        if tree is not None:
            kwargs["tree"] = tree
        return games.get(name, **kwargs)
    except GameError as exc:
        raise ArenaError(str(exc)) from None


def resource_limits(memory_mb: int, startup_s: float) -> ResourceLimits:
    """The bots' memory and start-up limits, checked."""
    from bot_arena.arena.transport.limits import ResourceLimits

    try:
        return ResourceLimits(memory_mb=memory_mb, startup_s=startup_s)
    except ValueError as exc:
        raise ArenaError(str(exc)) from None


def check_engines(refs: Sequence[BotRef], game: Game[Any, Any]) -> None:
    """Refuse a bot that cannot play ``game`` at all: a chess engine (UCI, xboard) plays chess
    only. The user's setup, so no match is played and nobody loses one."""
    from bot_arena.arena.match.botref import ENGINES, UCI
    from bot_arena.arena.match.uci import GAME

    for ref in refs:
        if ref.kind in ENGINES and game.name != GAME:
            protocol = "a UCI" if ref.kind == UCI else "an xboard"
            raise ArenaError(f"{ref.name}: {protocol} engine plays {GAME}, not {game.name}")


def check_book_setboard(
    refs: Sequence[BotRef],
    game: Game[Any, Any],
    book: Sequence[Opening],
    limits: ResourceLimits,
    sandbox: SandboxSettings,
) -> None:
    """``check_setboard`` over a run's openings (``book``: the book's, or a resume's open
    starts), each xboard engine started in a pool of the run's ``limits`` and ``sandbox``."""
    from bot_arena.arena.match.pool import BotPool

    starts = [(o.moves, o.position) for o in book]
    check_setboard(refs, game, starts, lambda: BotPool(limits, sandbox=sandbox))


def check_setboard(
    refs: Sequence[BotRef],
    game: Game[Any, Any],
    starts: Iterable[tuple[Sequence[str], str | None]],
    pool: Callable[[], AbstractContextManager[BotPool]],
) -> None:
    """Refuse, before anything runs, a start no xboard engine of ``refs`` without ``setboard``
    (fairymax: ``setboard=0``) can be given: a FEN that no moves from the standard start reach
    (``--position FEN``, an EPD book's lines). ``starts``: each start's moves from the standard
    start and its position (None: the standard start). An engine's features are known once it
    runs, so each xboard engine is started once in ``pool()`` (the run's limits and sandbox)
    and handshaken, as validation starts a bot; that costs a start only when a start needs
    ``setboard``. An engine that fails to start is left to the games, which say why."""
    from bot_arena.arena.match.botref import XBOARD
    from bot_arena.arena.match.record import Fault
    from bot_arena.arena.match.uci import GAME
    from bot_arena.arena.match.xboard import has_setboard, needs_setboard

    engines = [r for r in dict.fromkeys(refs) if r.kind == XBOARD]
    if not engines or game.name != GAME:
        return
    fen = None
    for moves, position in starts:
        if position is None:
            continue
        try:  # the text the seat is given: the game's own (a pawn move ends a history)
            text = game.format_position(game.parse_position(position))
        except GameError:
            continue  # said by the position's own check
        if needs_setboard(game, list(moves), text):
            fen = text
            break
    if fen is None:
        return
    with pool() as probe:
        for ref in engines:
            features = probe.features(ref, game)
            if not isinstance(features, Fault) and not has_setboard(features):
                raise ArenaError(
                    f"{ref.name}: the xboard engine has no setboard (it sent setboard=0), so it "
                    f"cannot start from {fen.partition(' moves ')[0][:100]!r}: give openings as "
                    "moves from the standard start (a PGN book, a Polyglot book, --opening-plies)"
                )


def adjudication(draw: str | None, resign: str | None, max_moves: int | None) -> Adjudication:
    """The adjudication rules of ``--draw-adjudicate``/``--resign-adjudicate``/``--max-moves``."""
    from bot_arena.arena.match.adjudication import Adjudication, AdjudicationError

    try:
        return Adjudication.parse(draw, resign, max_moves)
    except AdjudicationError as exc:
        raise ArenaError(str(exc)) from None


def time_controls(
    refs: Sequence[BotRef],
    move_time: Sequence[float],
    clock: Sequence[str],
    margin: float,
    default_move_time: float,
    each: str = "seat",
    depth: int | None = None,
    nodes: int | None = None,
) -> list[TimeControl]:
    """One time control per bot of ``refs`` (a match's seats, a tournament's entrants): each of
    ``move_time``/``clock`` given once applies to all, or once per bot in order (time odds).
    With neither, bots get ``default_move_time`` per move and humans no limit.
    ``depth``/``nodes`` limit every engine's search; ``each`` names the bots in messages."""
    from bot_arena.arena.match.botref import HUMAN
    from bot_arena.arena.match.timecontrol import TimeControl, TimeControlError

    n = len(refs)
    for what, values in (("--move-time", move_time), ("--clock", clock)):
        if len(values) not in (0, 1, n):
            raise ArenaError(
                f"{what} given {len(values)} times: give it once or once per {each} ({n})"
            )
    out = []
    for i, ref in enumerate(refs):
        mt = move_time[i if len(move_time) == n else 0] if move_time else None
        ck = clock[i if len(clock) == n else 0] if clock else None
        if mt is None and ck is None and ref.kind != HUMAN:
            mt = default_move_time
        try:
            out.append(TimeControl.parse(mt, ck, margin, depth, nodes))
        except TimeControlError as exc:
            raise ArenaError(str(exc)) from None
    return out


def sandbox_mode(mode: str | None) -> Mode:
    """``--sandbox``'s word (given, or else ``$ARENA_SANDBOX``, else auto), checked."""
    from bot_arena.arena.transport.sandbox.mode import ENV_VAR, parse_mode

    try:
        return parse_mode(mode)
    except ValueError as exc:
        raise ArenaError(str(exc) if mode is not None else f"${ENV_VAR}: {exc}") from None


def sandbox_level(mode: Mode) -> tuple[str, tuple[str, ...]]:
    """(the level bots run under, what this machine lacks); ``on`` on a machine that cannot
    confine bots fully is an error."""
    from bot_arena.arena.transport.sandbox import support
    from bot_arena.arena.transport.sandbox.mode import SandboxUnavailable

    try:
        level, missing = support.level_for(mode)
    except SandboxUnavailable as exc:
        raise ArenaError(str(exc)) from None
    return level, tuple(missing)


def resolve_bots(
    specs: Sequence[str], lookup: Callable[[str], BotRef | None] | None = None
) -> list[BotRef]:
    """Each spec as the bot it names (``lookup``: registered names)."""
    from bot_arena.arena.match.botref import BotSpecError
    from bot_arena.arena.match.botspec import resolve

    try:
        return [resolve(spec, lookup) for spec in specs]
    except BotSpecError as exc:
        raise ArenaError(str(exc)) from None


def position(game: Game[Any, Any], text: str | None) -> Any:
    """The start position: the game's initial one, or ``text`` read in its notation."""
    if text is None:
        return game.initial_state()
    try:
        return game.parse_position(text)
    except GameError as exc:
        raise ArenaError(str(exc)) from None


def seat_count(game: Game[Any, Any], bots: int) -> None:
    """One bot per seat of ``game``."""
    if bots != game.num_players:
        raise ArenaError(f"{game.name} takes {game.num_players} bots, got {bots}")
