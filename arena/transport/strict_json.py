"""JSON as its standard defines it: numbers are finite.

Python's ``json`` reads and writes ``NaN``, ``Infinity`` and ``-Infinity`` by default, and reads
``1e400`` as an infinity; none of them is JSON, so a browser's ``JSON.parse`` and strict parsers
elsewhere refuse a text that holds one. The rule lives here, for every layer that reads a
stranger's JSON or writes JSON that others read:

- ``decode``/``STRICT_DECODER``: ``NonFinite`` (a ValueError) for such a number, and for an integer
  beyond a double's range (``1e400`` written without its exponent), which readers that keep
  numbers as doubles would turn into an infinity;
- ``dumps``/``STRICT_ENCODER``: ValueError for a non-finite float, so one that slipped into what
  is stored or exported is a loud error in a test, never silent bad data;
- ``finite``: a copy of a value with every non-finite float as None (null), for showing data
  stored before these rules (an older database can hold ``NaN`` in a move's info).
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any, NoReturn

_FLOAT_MAX = sys.float_info.max
_SHORT_INT = 300  # digits: an integer this short is well inside a double's range


class NonFinite(ValueError):
    """A number JSON cannot carry: NaN, an infinity, or a value beyond a double's range."""


def _constant(name: str) -> NoReturn:
    raise NonFinite(f"{name} is not a JSON number")


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):  # float() of a decimal literal is never NaN
        raise NonFinite(f"{text[:20]} is beyond a double's range")
    return value


def json_int(text: str) -> int:
    """``int(text)``, refusing (``NonFinite``, a ValueError) an integer beyond a double's range:
    for numbers read from a stranger's text that end up in stored JSON (a chess engine's
    ``nodes``), which readers that keep numbers as doubles would see as an infinity."""
    value = int(text)
    if len(text) > _SHORT_INT and abs(value) > _FLOAT_MAX:
        raise NonFinite(f"an integer of {len(text)} digits is beyond a double's range")
    return value


#: A decoder that refuses non-finite numbers (built once: options build a coder per call).
STRICT_DECODER = json.JSONDecoder(parse_constant=_constant, parse_float=_float, parse_int=json_int)
#: An encoder that refuses non-finite floats (compact separators).
STRICT_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)


def decode(text: str) -> Any:
    """The JSON value of ``text``; ValueError for anything that is not JSON, ``NonFinite``
    (a ValueError too) for a number JSON cannot carry."""
    return STRICT_DECODER.decode(text)


_PLAIN_ENCODER = json.JSONEncoder(allow_nan=False)  # json.dumps's own separators


def dumps(value: Any, **options: Any) -> str:
    """``json.dumps`` that refuses NaN and the infinities (ValueError): every JSON text the
    arena stores or exports is made by this, or by ``STRICT_ENCODER`` on a hot path. Without
    options, the text is byte for byte ``json.dumps``'s, at its cost (one encoder, built once)."""
    if not options:
        return _PLAIN_ENCODER.encode(value)
    return json.dumps(value, allow_nan=False, **options)


def finite(value: Any) -> Any:
    """A copy of ``value`` with every non-finite float, at any depth of its dicts, lists and
    tuples (a tuple becomes a list, as JSON has it), as None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value
