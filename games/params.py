"""Turning ``key=value`` strings into the typed keyword arguments a constructor declares.

Games and bots both take options from the command line (``coins=5``, ``alphabeta:depth=6``);
the constructor's annotations say what type each one is, and may declare its limits beside it
(``coins: Annotated[int, Between(0, 10_000)] = 4``): :func:`bind` checks them before anything
is built, so a parameter that would make the game's tables huge (a memory bomb in the arena's
own process) is one line naming the limit, and ``arena games --json`` shows them.
"""

from __future__ import annotations

import inspect
import math
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from bot_arena.games import keyvalue
from bot_arena.games.base import GameError
from bot_arena.games.quoting import shown

_SIMPLE = {"int": int, "float": float, "str": str, "bool": bool}


def accepted(func: Callable[..., Any], skip: tuple[str, ...] = ()) -> dict[str, inspect.Parameter]:
    """The keyword parameters of ``func`` (a class means its ``__init__``)."""
    sig = inspect.signature(func)
    return {
        p.name: p
        for p in sig.parameters.values()
        if p.name not in ("self", *skip) and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
    }


class Limit(Protocol):
    """What a parameter's ``Annotated`` metadata declares: a check and its description."""

    def check(self, owner: str, key: str, value: Any) -> None:
        """GameError (one line naming the limit) when ``value`` is out of it."""

    def describe(self) -> dict[str, Any]:
        """The limit as JSON (``arena games --json``)."""


@dataclass(frozen=True)
class Between:
    """A whole number from ``low`` to ``high``."""

    low: int
    high: int

    def check(self, owner: str, key: str, value: Any) -> None:
        if not isinstance(value, int) or isinstance(value, bool):
            return  # not a whole number: the game says what is wrong
        if value < self.low:
            raise GameError(f"{owner}: {key} must be >= {self.low}, not {shown(value)}")
        if value > self.high:
            raise GameError(
                f"{owner}: {key} must be <= {self.high} (its limit), not {shown(value)}"
            )

    def describe(self) -> dict[str, Any]:
        return {"min": self.low, "max": self.high}


@dataclass(frozen=True)
class NumberList:
    """Whole numbers written ``3,4,5`` (Nim's piles): at most ``count`` of them, none
    negative, adding up to at most ``total``. Only the limits are checked here (the text is
    measured before it is split); the game parses the numbers and says what else is wrong."""

    count: int
    total: int

    def check(self, owner: str, key: str, value: Any) -> None:
        if not isinstance(value, str):
            return
        longest = self.count * (len(str(self.total)) + 2)  # digits, a comma, a space each
        items = value.count(",") + 1
        if items > self.count:
            raise GameError(
                f"{owner}: {key} lists {items} numbers; at most {self.count} (its limit)"
            )
        if len(value) > longest:
            raise GameError(f"{owner}: {key} {shown(value)} is longer than its limit allows")
        try:
            numbers = [int(part) for part in value.split(",")]
        except ValueError:
            return  # the game's own message
        if sum(n for n in numbers if n > 0) > self.total:
            raise GameError(
                f"{owner}: {key} {shown(value)} adds up to more than {self.total} (its limit)"
            )

    def describe(self) -> dict[str, Any]:
        return {"max_count": self.count, "max_total": self.total}


@dataclass(frozen=True)
class Described:
    """Limits a parameter's value is held to where it is used (a tree file's nodes and depth,
    checked as it is read): shown by ``arena games --json``, nothing to check here."""

    limits: tuple[tuple[str, int], ...]

    def check(self, owner: str, key: str, value: Any) -> None:
        return None

    def describe(self) -> dict[str, Any]:
        return dict(self.limits)


def limits(func: Callable[..., Any]) -> dict[str, Limit]:
    """The limits ``func`` (a class means its ``__init__``) declares on its parameters: the
    ``Annotated`` metadata with a ``check`` and a ``describe``. An annotation that cannot be
    evaluated (a third-party game's) declares none."""
    target = func.__init__ if isinstance(func, type) else func  # type: ignore[misc]
    try:
        hints = typing.get_type_hints(target, include_extras=True)
    except Exception:  # a name only known to a type checker: no limits to read
        return {}
    out: dict[str, Limit] = {}
    for name, hint in hints.items():
        for meta in getattr(hint, "__metadata__", ()):
            if callable(getattr(meta, "check", None)) and callable(getattr(meta, "describe", None)):
                out[name] = meta
    return out


def _annotation_type(param: inspect.Parameter) -> type:
    annotation = param.annotation
    if isinstance(annotation, str) and annotation.startswith("Annotated["):
        annotation = annotation.removeprefix("Annotated[").partition(",")[0]
    if isinstance(annotation, str):  # postponed annotations: "int", "float | None", ...
        first = [a.strip() for a in annotation.split("|") if a.strip() != "None"]
        return _SIMPLE.get(first[0] if first else "str", str)
    if isinstance(annotation, type):
        return annotation
    return str


def coerce(owner: str, key: str, value: Any, param: inspect.Parameter) -> Any:
    if not isinstance(value, str):
        return value
    kind = _annotation_type(param)
    try:
        if kind is bool:
            low = value.lower()
            if low in ("1", "true", "yes", "on"):
                return True
            if low in ("0", "false", "no", "off"):
                return False
            raise ValueError(value)
        if kind is float and not math.isfinite(float(value)):
            raise ValueError(value)  # nan, inf: not a number JSON (the stored params) can carry
        if kind in (int, float):
            return kind(value)
    except ValueError:
        raise GameError(f"{owner}: {key}={shown(value)} is not a valid {kind.__name__}") from None
    return value


def bind(
    owner: str, func: Callable[..., Any], params: Mapping[str, Any], skip: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Check ``params`` against what ``func`` accepts and coerce strings to the declared types."""
    known = accepted(func, skip)
    unknown = sorted(set(params) - set(known))
    if unknown:
        names = ", ".join(known) or "none"
        raise GameError(f"{owner}: unknown parameter {shown(unknown[0])} (parameters: {names})")
    values = {k: coerce(owner, k, v, known[k]) for k, v in params.items()}
    if values:
        declared = limits(func)
        for key, value in values.items():
            if key in declared:
                declared[key].check(owner, key, value)
    return values


def parse_items(items: list[str] | tuple[str, ...]) -> dict[str, str]:
    """``["k=v", ...]`` into a dict (GameError on a malformed item or a repeated key)."""
    try:
        return keyvalue.pairs(items)
    except keyvalue.KeyValueError as exc:
        if exc.duplicate:
            raise GameError(f"parameter {shown(exc.key)} is given twice") from None
        raise GameError(f"parameter {shown(exc.word)} is not of the form key=value") from None
