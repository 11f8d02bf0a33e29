"""Adjudication: ending a two-player game early on the engines' own scores, with cutechess's and
fastchess's rules and spelling.

- ``--draw-adjudicate movenumber=N,movecount=M,score=S``: a draw once at least N full moves are
  played and both engines' scores stayed within S centipawns of zero for M consecutive moves
  each (2M plies).
- ``--resign-adjudicate movecount=M,score=S[,twosided=true]``: a loss for the engine whose score
  was S centipawns or more below zero on each of its last M moves (twosided: and its opponent's
  at least S above zero on each of its last M).
- ``--max-moves N``: a draw after N full moves.

The scores are the ``score`` of the moves' search info (UCI ``score cp``; a mate score counts as
a score beyond any threshold); a move without one breaks every run of moves. The verdict names
the rule that fired and carries its evidence: the scores it was decided on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot_arena.games import keyvalue

MATE = 100_000  # a mate score in centipawns: beyond any adjudication threshold


class AdjudicationError(ValueError):
    """An adjudication option that does not read (one-line message)."""


@dataclass(frozen=True)
class Adjudication:
    """The rules of one match (all off by default)."""

    draw_movenumber: int | None = None  # None: no draw adjudication
    draw_movecount: int = 1
    draw_score: int = 0
    resign_movecount: int | None = None  # None: no resign adjudication
    resign_score: int = 0
    resign_twosided: bool = False
    max_moves: int | None = None

    @property
    def active(self) -> bool:
        return any(
            v is not None for v in (self.draw_movenumber, self.resign_movecount, self.max_moves)
        )

    @property
    def reads_scores(self) -> bool:
        """Whether a rule reads the moves' scores (the draw and resign rules; not max moves)."""
        return self.draw_movenumber is not None or self.resign_movecount is not None

    @classmethod
    def parse(cls, draw: str | None, resign: str | None, max_moves: int | None) -> Adjudication:
        """From the command line's three options (``None``: that rule off)."""
        d = _fields(draw, "--draw-adjudicate", ("movenumber", "movecount", "score"), ())
        r = _fields(resign, "--resign-adjudicate", ("movecount", "score"), ("twosided",))
        if max_moves is not None and max_moves < 1:
            raise AdjudicationError(f"--max-moves must be >= 1, not {max_moves}")
        twosided = r.get("twosided", "false").lower()
        if twosided not in ("true", "false"):
            raise AdjudicationError(f"--resign-adjudicate twosided={twosided}: true or false")
        return cls(
            draw_movenumber=_number(d, "movenumber", 0) if d else None,
            draw_movecount=_number(d, "movecount", 1) if d else 1,
            draw_score=_number(d, "score", 0) if d else 0,
            resign_movecount=_number(r, "movecount", 1) if r else None,
            resign_score=_number(r, "score", 1) if r else 0,
            resign_twosided=twosided == "true",
            max_moves=max_moves,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "draw_movenumber": self.draw_movenumber,
            "draw_movecount": self.draw_movecount,
            "draw_score": self.draw_score,
            "resign_movecount": self.resign_movecount,
            "resign_score": self.resign_score,
            "resign_twosided": self.resign_twosided,
            "max_moves": self.max_moves,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Adjudication:
        data = data or {}
        known = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in known})

    def describe(self) -> str:
        parts = []
        if self.draw_movenumber is not None:
            parts.append(
                f"draw movenumber={self.draw_movenumber},movecount={self.draw_movecount},"
                f"score={self.draw_score}"
            )
        if self.resign_movecount is not None:
            sided = ",twosided=true" if self.resign_twosided else ""
            parts.append(
                f"resign movecount={self.resign_movecount},score={self.resign_score}{sided}"
            )
        if self.max_moves is not None:
            parts.append(f"max moves {self.max_moves}")
        return "; ".join(parts) or "none"


def _fields(
    text: str | None, option: str, required: tuple[str, ...], optional: tuple[str, ...]
) -> dict[str, str]:
    if text is None:
        return {}
    known = (*required, *optional)
    try:
        out = keyvalue.pairs(keyvalue.separated(text, ", "))
    except keyvalue.KeyValueError as exc:
        if exc.key in known:
            raise AdjudicationError(f"{option} {text!r}: {exc.key}= is given twice") from None
        out = {exc.key: ""}  # not key=value, or an unknown key: the options are named
    if any(key not in known for key in out):
        names = ", ".join(f"{k}=N" for k in required)
        raise AdjudicationError(f"{option} {text!r}: give {names}")
    missing = [k for k in required if k not in out]
    if missing:
        raise AdjudicationError(f"{option} {text!r}: {missing[0]}= is missing")
    return out


def _number(fields: dict[str, str], key: str, least: int) -> int:
    try:
        value = int(fields[key])
    except ValueError:
        raise AdjudicationError(f"{key}={fields[key]!r} is not a whole number") from None
    if value < least:
        raise AdjudicationError(f"{key}={value}: at least {least}")
    return value


def centipawns(info: dict[str, Any] | None) -> int | None:
    """The mover's score of a move in centipawns (mates beyond any threshold), or None."""
    score = (info or {}).get("score")
    if not isinstance(score, dict) or score.get("bound"):
        return None  # no score, or only a bound (a fail-high/low line): nothing to go on
    if isinstance(score.get("cp"), int):
        return int(score["cp"])
    mate = score.get("mate")
    if isinstance(mate, int):
        return MATE - abs(mate) if mate > 0 else -(MATE - abs(mate))
    return None


class Adjudicator:
    """Watches one two-player game move by move (``after``) and says when a rule ends it."""

    def __init__(self, rules: Adjudication) -> None:
        self.rules = rules
        self.scores: list[tuple[int, int | None]] = []  # (seat, centipawns) of every move

    def after(self, seat: int, info: dict[str, Any] | None) -> dict[str, Any] | None:
        """The verdict after a move by ``seat`` (None: play on): ``rule`` (``draw``,
        ``resign``, ``max moves``), ``winner`` (a seat, or None for a draw) and the scores of
        the moves it was decided on."""
        rules = self.rules
        self.scores.append((seat, centipawns(info)))
        plies = len(self.scores)
        if rules.resign_movecount is not None:
            verdict = self._resign(seat)
            if verdict is not None:
                return verdict
        if rules.draw_movenumber is not None and plies >= 2 * rules.draw_movenumber:
            window = self.scores[-2 * rules.draw_movecount :]
            if len(window) == 2 * rules.draw_movecount and all(
                cp is not None and abs(cp) <= rules.draw_score for _, cp in window
            ):
                return {"rule": "draw", "winner": None, "scores": [cp for _, cp in window]}
        if rules.max_moves is not None and plies >= 2 * rules.max_moves:
            return {"rule": "max moves", "winner": None, "moves": rules.max_moves}
        return None

    def _resign(self, seat: int) -> dict[str, Any] | None:
        rules = self.rules
        count = rules.resign_movecount or 0
        own = [cp for s, cp in self.scores if s == seat][-count:]
        if len(own) < count or any(cp is None or cp > -rules.resign_score for cp in own):
            return None
        evidence: dict[str, Any] = {"rule": "resign", "winner": 1 - seat, "loser_scores": own}
        if rules.resign_twosided:
            other = [cp for s, cp in self.scores if s != seat][-count:]
            if len(other) < count or any(cp is None or cp < rules.resign_score for cp in other):
                return None
            evidence["winner_scores"] = other
        return evidence
