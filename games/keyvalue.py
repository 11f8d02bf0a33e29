"""Reading the ``key=value`` words users write: the one parser of game parameters
(``--param coins=5``), a built-in bot's options (``alphabeta:depth=6,order=true``), an engine's
options (``"option.Skill Level=3"``) and the adjudication options (``movecount=3,score=600``).

The rules, here only:

- a word is split at its first ``=``; the key and the value are stripped of surrounding white
  space; a value may be empty (``key=``) and may hold ``=`` itself;
- a word without ``=``, or with an empty key, is refused;
- a key given twice is refused: taking the last one would hide a typo's twin (``depth=3,depth=6``
  asks for two things at once), so the user is told;
- the words of a text are split at separators (commas, or commas and spaces) with empty words
  skipped, or, where a value may hold spaces (an engine's command line), read as a shell reads
  them (``shlex``: a quoted word keeps its spaces).

Each caller words the refusal in its own line (its messages predate this module), from the
:class:`KeyValueError`'s ``word`` and ``key``.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable

__all__ = ["KeyValueError", "pair", "pairs", "separated", "shell_words"]


class KeyValueError(ValueError):
    """A word that is not ``key=value``, or a key given twice (``key`` is that key, else
    empty): ``word`` is the word as written."""

    def __init__(self, word: str, key: str = "") -> None:
        self.word = word
        self.key = key
        self.duplicate = bool(key)
        super().__init__(f"{key!r} is given twice" if key else f"{word!r} is not key=value")


def pair(word: str) -> tuple[str, str]:
    """``" k = v "`` -> ``("k", "v")``; KeyValueError without ``=`` or with an empty key."""
    key, found, value = word.partition("=")
    key = key.strip()
    if not found or not key:
        raise KeyValueError(word)
    return key, value.strip()


def pairs(words: Iterable[str]) -> dict[str, str]:
    """The words' pairs in their order; KeyValueError on a malformed word or a repeated key."""
    out: dict[str, str] = {}
    for word in words:
        key, value = pair(word)
        if key in out:
            raise KeyValueError(word, key)
        out[key] = value
    return out


def separated(text: str, separators: str = ",") -> list[str]:
    """The words of ``text`` between any of ``separators``, stripped, empty ones skipped."""
    for sep in separators[1:]:
        text = text.replace(sep, separators[0])
    return [word for word in (part.strip() for part in text.split(separators[0])) if word]


def shell_words(text: str) -> list[str]:
    """The words of ``text`` as a POSIX shell reads them (ValueError on an open quote)."""
    return shlex.split(text)
