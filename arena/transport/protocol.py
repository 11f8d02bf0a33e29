"""The arena <-> bot line protocol: one compact JSON object per line (see docs/protocol.md).

Arena to bot: ``hello`` (first message), ``new_game`` (a further game on the same process),
``move`` (a request), ``quit``. Bot to arena: ``ready`` (answers hello/new_game), ``move``
(answers a request), ``error`` (the bot failed; the arena counts it as a crash).

Requests are written by the arena and trusted; answers come from untrusted bots and are checked
here field by field, so the referee deals only in typed values or a ProtocolError.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii
from json.scanner import make_scanner
from typing import Any, cast

from bot_arena.arena.transport.strict_json import STRICT_DECODER, NonFinite

VERSION = 1
MAX_LINE = 1 << 20  # longest answer line accepted (bytes, newline excluded)
MAX_INFO = 64 * 1024  # longest info object kept, as its stored JSON text; longer is dropped
# What a chess engine's info keeps (``uci:``, ``xboard:``): its text has no JSON object to
# measure, so each part is bounded on its own (docs/security.md, "How much a game can store").
MAX_PV = 128  # moves of a principal variation (a deep search reports some tens)
MAX_PV_MOVE = 16  # characters of one of its moves (UCI ``e7e8q``, SAN ``exd8=Q+``); longer ends it
MAX_INFO_WORDS = MAX_PV + 64  # words of an info line read (the fields before its pv, the pv)
MAX_INFO_INT = (1 << 63) - 1  # magnitude of an info number (an engine's 64-bit counters)


class ProtocolError(ValueError):
    """An answer that does not follow the protocol; ``text`` is the offending line, truncated."""

    def __init__(self, message: str, text: str = "") -> None:
        super().__init__(message)
        self.text = text


# Built once: json.dumps/json.loads with options construct a coder on every call (hot path).
_ENCODER = json.JSONEncoder(separators=(",", ":"), default=str)
_DECODER = STRICT_DECODER  # NonFinite for NaN, the infinities and numbers beyond a double
# The C scanner behind _DECODER: one call parses a value at an index, without the two
# whitespace regex matches JSONDecoder.decode adds around it.
_SCAN = make_scanner(cast(Any, _DECODER))
#: A string as a JSON literal, exactly as ``encode`` writes it (ASCII, escapes included).
json_str = encode_basestring_ascii


def encode(message: Mapping[str, Any]) -> bytes:
    return (_ENCODER.encode(message) + "\n").encode("utf-8")


def encode_json(value: Any) -> str:
    """``value`` as compact JSON text, as it appears inside a line ``encode`` writes."""
    return _ENCODER.encode(value)


def loads(line: str) -> Any:
    """``json.loads`` for one line (ValueError on bad JSON; ``NonFinite``, a ValueError too, on
    NaN, an infinity or a number beyond a double's range: not JSON). The usual line is one value at
    its start, maybe followed by whitespace (the newline): one scanner call; anything else
    takes the full decoder, which also accepts leading whitespace and words the error."""
    try:
        value, end = _SCAN(line, 0)
        if end == len(line) or not line[end:].strip(" \t\n\r"):  # JSON's own whitespace
            return value
    except StopIteration:  # no JSON value at index 0 (leading whitespace, junk, empty)
        pass
    return _DECODER.decode(line)


class _NotANumber:
    """What a number JSON cannot carry reads as in an answer that held one (``_LENIENT``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<not a JSON number>"


_NAN = _NotANumber()


def _lenient_float(text: str) -> Any:
    value = float(text)
    return _NAN if math.isinf(value) else value


def _lenient_int(text: str) -> Any:
    try:
        value = STRICT_DECODER.parse_int(text)
    except NonFinite:
        return _NAN
    return value


# Only for an answer the strict decoder refused with NonFinite: the same text read again, each
# such number as _NAN, so that the checks below find out which field held it.
_LENIENT = json.JSONDecoder(
    parse_constant=lambda _name: _NAN, parse_float=_lenient_float, parse_int=_lenient_int
)


def _holds_nan(value: Any) -> bool:
    if value is _NAN:
        return True
    if isinstance(value, dict):
        return any(_holds_nan(v) for v in value.values())
    return isinstance(value, list) and any(_holds_nan(v) for v in value)


def truncate(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + f"...[{len(text) - limit} more chars]"


# --- what an info keeps -----------------------------------------------------------------------
_INFO_INT = re.compile(r"-?[0-9]{1,19}")
# The most characters ``json.dumps`` (the database's encoder) writes for one character of a line
# it decoded: an astral character is two ``\uXXXX`` escapes.
_STORED_PER_CHAR = 12
_STORED_ENCODER = json.JSONEncoder(allow_nan=False)  # json.dumps's text


def info_words(line: str) -> list[str]:
    """The words of an engine's info line that are read: the first MAX_INFO_WORDS (a 1 MB line
    is not split into half a million words)."""
    return line.split(None, MAX_INFO_WORDS)[:MAX_INFO_WORDS]


def info_int(word: str) -> int | None:
    """``word`` as an info number (ASCII digits, at most MAX_INFO_INT in magnitude), else None."""
    if _INFO_INT.fullmatch(word) is None:
        return None
    value = int(word)
    return value if -MAX_INFO_INT <= value <= MAX_INFO_INT else None


def info_pv(words: Sequence[str]) -> list[str]:
    """The moves of a pv that are kept: at most MAX_PV, up to the first word that is no move's
    text (longer than MAX_PV_MOVE, or not printable ASCII: the rest is not a line of moves)."""
    pv: list[str] = []
    for word in words[:MAX_PV]:
        if len(word) > MAX_PV_MOVE or not (word.isascii() and word.isprintable()):
            break
        pv.append(word)
    return pv


def stored_info(info: dict[str, Any], line: str) -> dict[str, Any]:
    """``info``, decoded from ``line`` by the strict decoder (so every number in it is finite), as
    the arena keeps it: replaced by a note when its text as stored (``json.dumps``) would be
    longer than MAX_INFO. The usual line is too short to need the encoding."""
    if len(line) * _STORED_PER_CHAR <= MAX_INFO:
        return info
    try:
        size = len(_STORED_ENCODER.encode(info))
    except RecursionError:
        size = MAX_INFO + 1
    if size > MAX_INFO:
        return {"dropped": f"info longer than {MAX_INFO} bytes"}
    return info


# --- arena to bot ------------------------------------------------------------------------------
def hello(
    *,
    game: str,
    params: Mapping[str, Any],
    seat: int,
    players: int,
    seed: int,
    position: str,
    first: bool = True,
    opening: Sequence[str] = (),
) -> dict[str, Any]:
    """``hello`` opens a process; ``new_game`` (``first=False``) starts a further game on it.
    ``opening``: the moves from the game's initial position that led to ``position``, when a
    tournament's opening made it (sent only then)."""
    message: dict[str, Any] = {
        "type": "hello" if first else "new_game",
        "protocol": VERSION,
        "game": game,
        "params": dict(params),
        "seat": seat,
        "players": players,
        "seed": seed,
        "position": position,
    }
    if opening:
        message["opening"] = list(opening)
    return message


def move_request(
    *,
    request_id: int,
    position: str,
    moves: Sequence[str],
    legal: Sequence[str],
    clock: Mapping[str, Any],
) -> dict[str, Any]:
    return {
        "type": "move",
        "id": request_id,
        "position": position,
        "moves": list(moves),
        "legal": list(legal),
        "clock": dict(clock),
    }


QUIT: dict[str, Any] = {"type": "quit"}


@dataclass(slots=True)
class MoveRequest:
    """A move request as the referee sends it: the encoded ``line`` and what judging the answer
    needs (``legal``: move text -> move, in the game's order; ``deadline``: the limit the bot was
    told, seconds or None)."""

    id: int
    line: bytes
    legal: Mapping[str, Any]
    deadline: float | None
    # every seat's clock (the match layer's Clock objects), for protocols that tell a bot its
    # opponents' time too (UCI's wtime/btime); the arena's own line carries the bot's alone
    clocks: Sequence[Any] = ()
    # the moves so far (the referee's MoveRecords, ``.move`` their text), for protocols that
    # are not told them in ``line`` (a chess engine's): the referee's own list, not a copy
    moves: Sequence[Any] = ()


class RequestWriter:
    """The move requests of one game, byte for byte ``encode(move_request(...))``, from parts
    that are encoded once: the moves so far are kept as JSON text that grows by one move per
    ply (instead of re-encoding the whole list every request); the position, the legal list
    and the clock arrive already encoded (see ``arena.referee_states``, ``Clock.request_json``).
    """

    __slots__ = ("moves_json",)

    def __init__(self) -> None:
        self.moves_json = ""  # the ``moves`` list's items: '"5","1"'

    def played(self, move_text: str) -> None:
        item = json_str(move_text)
        self.moves_json = f"{self.moves_json},{item}" if self.moves_json else item

    def line(self, request_id: int, position_json: str, legal_json: str, clock_json: str) -> bytes:
        return (
            f'{{"type":"move","id":{request_id},"position":{position_json},'
            f'"moves":[{self.moves_json}],"legal":[{legal_json}],"clock":{clock_json}}}\n'
        ).encode()


def decode_request(line: bytes | str) -> dict[str, Any]:
    """A request as the worker reads it (written by the arena, so only shape-checked)."""
    message = loads(line.decode("utf-8") if isinstance(line, bytes) else line)
    if not isinstance(message, dict) or message.get("type") not in (
        "hello",
        "new_game",
        "move",
        "quit",
    ):
        raise ProtocolError("not an arena request", truncate(str(line)))
    return message


# --- bot to arena ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Ready:
    name: str | None = None
    version: str | None = None


@dataclass(frozen=True, slots=True)
class MoveAnswer:
    move: str
    info: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class BotFailure:
    """The bot reported its own failure (an exception in the bot, a module that won't load)."""

    message: str
    exception: str | None = None
    phase: str | None = None  # "load" | "start" | "move"


Answer = Ready | MoveAnswer | BotFailure


def move_answer(request_id: Any, move: str, info: Mapping[str, Any] | None = None) -> bytes:
    """The worker's answer line to a move request, as ``encode`` writes it."""
    if type(request_id) is int:  # the arena's ids; anything else takes the general encoder
        head = f'{{"type":"move","id":{request_id},"move":{json_str(move)}'
        if info is None:
            return f"{head}}}\n".encode()
        return f'{head},"info":{_ENCODER.encode(info)}}}\n'.encode()
    message: dict[str, Any] = {"type": "move", "id": request_id, "move": move}
    if info is not None:
        message["info"] = info
    return encode(message)


def _opt_str(message: dict[str, Any], key: str, line: str) -> str | None:
    value = message.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ProtocolError(f"field {key!r} must be a string", truncate(line))
    return truncate(value, 500)


#: A move's info that held a number JSON cannot carry is stored as ``{"dropped": NAN_DROPPED}``.
NAN_DROPPED = "info held a number JSON cannot carry (not a number, an infinity, or too large)"


def decode_answer(raw: bytes, expect_id: int | None = None) -> Answer:
    """Parse one answer line from a bot (ProtocolError on anything malformed).

    Numbers JSON cannot carry (``NaN``, ``Infinity``, ``1e400``: Python's ``json`` reads them,
    a browser's does not) never get past this function. Where one stands in a field the arena
    reads (the id, the move, a name), the type checks refuse the answer as for any other wrong
    type. Where it stands in ``info``, only the info is dropped (replaced by a note saying why,
    as an oversized info is) and the move counts: info is the bot's commentary, shown and never
    judged, and a NaN there is the usual sign of an honest bug (a mean over zero visits), not
    of a move the bot did not mean; forfeiting the game over it would punish the wrong thing.
    Keeping the info with its bad numbers as null instead would show holes as if they were
    data."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolError(
            "answer is not UTF-8", truncate(raw.decode("utf-8", "replace"))
        ) from None
    lenient = False  # whether the line held a number JSON cannot carry
    try:
        try:
            message = loads(line)
        except NonFinite:  # NaN, an infinity, 1e400: read again to see where (see below)
            message, lenient = _LENIENT.decode(line), True
    except (ValueError, RecursionError):  # RecursionError: nesting deeper than the C stack
        raise ProtocolError("answer is not a JSON object", truncate(line.strip())) from None
    if not isinstance(message, dict):
        raise ProtocolError("answer is not a JSON object", truncate(line.strip()))
    kind = message.get("type")
    if kind == "move":
        move = message.get("move")
        if not isinstance(move, str):
            raise ProtocolError("move answer without a string 'move'", truncate(line.strip()))
        if expect_id is not None and message.get("id", expect_id) != expect_id:
            raise ProtocolError(
                f"answer to request {message.get('id')!r}, expected {expect_id}",
                truncate(line.strip()),
            )
        info = message.get("info")
        if info is not None and not isinstance(info, dict):
            raise ProtocolError("'info' must be a JSON object", truncate(line.strip()))
        if info is not None:
            info = (
                {"dropped": NAN_DROPPED}
                if lenient and _holds_nan(info)
                else stored_info(info, line)
            )
        return MoveAnswer(move, info)
    if kind == "ready":
        return Ready(_opt_str(message, "name", line), _opt_str(message, "version", line))
    if kind == "error":
        return BotFailure(
            _opt_str(message, "message", line) or "bot error",
            _opt_str(message, "exception", line),
            _opt_str(message, "phase", line),
        )
    raise ProtocolError(f"unknown answer type {kind!r}", truncate(line.strip()))
