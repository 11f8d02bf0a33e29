"""Turning ``key=value`` strings into the typed keyword arguments a constructor declares.

Games and bots both take options from the command line (``coins=5``, ``alphabeta:depth=6``);
the constructor's annotations say what type each one is.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping
from typing import Any

from bot_arena.games.base import GameError

_SIMPLE = {"int": int, "float": float, "str": str, "bool": bool}


def accepted(func: Callable[..., Any], skip: tuple[str, ...] = ()) -> dict[str, inspect.Parameter]:
    """The keyword parameters of ``func`` (a class means its ``__init__``)."""
    sig = inspect.signature(func)
    return {
        p.name: p
        for p in sig.parameters.values()
        if p.name not in ("self", *skip) and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
    }


def _annotation_type(param: inspect.Parameter) -> type:
    annotation = param.annotation
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
        raise GameError(f"{owner}: {key}={value!r} is not a valid {kind.__name__}") from None
    return value


def bind(
    owner: str, func: Callable[..., Any], params: Mapping[str, Any], skip: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Check ``params`` against what ``func`` accepts and coerce strings to the declared types."""
    known = accepted(func, skip)
    unknown = sorted(set(params) - set(known))
    if unknown:
        names = ", ".join(known) or "none"
        raise GameError(f"{owner}: unknown parameter {unknown[0]!r} (parameters: {names})")
    return {k: coerce(owner, k, v, known[k]) for k, v in params.items()}


def parse_items(items: list[str] | tuple[str, ...], sep: str = "=") -> dict[str, str]:
    """``["k=v", ...]`` into a dict (GameError on a malformed item)."""
    out: dict[str, str] = {}
    for item in items:
        key, found, value = item.partition(sep)
        if not found or not key.strip():
            raise GameError(f"parameter {item!r} is not of the form key=value")
        out[key.strip()] = value.strip()
    return out
