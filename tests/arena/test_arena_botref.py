"""Bot references: every spec form resolves to the right kind and a version hash."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from arena_helpers import FIXTURES

from bot_arena.arena.match.botref import BotRef, BotSpecError
from bot_arena.arena.match.botspec import resolve


def test_builtin_spec() -> None:
    ref = resolve("random:seed=3")
    assert (ref.kind, ref.name, ref.target, ref.source) == (
        "builtin",
        "random:seed=3",
        "random:seed=3",
        None,
    )
    assert ref.sha256 == hashlib.sha256(b"random:seed=3").hexdigest()


def test_file_pins_the_source(tmp_path: Path) -> None:
    bot = tmp_path / "mine.py"
    bot.write_text("def choose_move(g, s, b):\n    return g.legal_moves(s)[0]\n")
    ref = resolve(str(bot))
    assert (ref.kind, ref.name, ref.target) == ("module", "mine", str(bot.resolve()))
    assert ref.source == bot.read_text()
    assert ref.sha256 == hashlib.sha256(bot.read_bytes()).hexdigest()
    bot.write_text(bot.read_text() + "# v2\n")
    assert resolve(str(bot)).sha256 != ref.sha256
    with_attr = resolve(f"{bot}:Thing")
    assert (
        with_attr.target.endswith("mine.py:Thing") and with_attr.sha256 == resolve(str(bot)).sha256
    )


def test_module_attr_and_command() -> None:
    ref = resolve("bot_arena.bots.random_bot:RandomBot")
    assert ref.kind == "module" and ref.source and "class RandomBot" in ref.source
    cmd = resolve(f"cmd:bash {FIXTURES / 'first_legal.sh'}")
    assert cmd.kind == "command" and cmd.target.startswith("bash ")
    assert cmd.name == f"cmd:{cmd.target}"
    assert resolve("human").kind == "human"


def test_registered_name_via_lookup() -> None:
    stored = BotRef("champ", "module", "/x/champ.py", "src", "0" * 64)
    assert resolve("champ", lambda name: stored if name == "champ" else None) is stored
    with pytest.raises(BotSpecError, match="unknown bot 'other'"):
        resolve("other", lambda name: None)


@pytest.mark.parametrize(
    "spec", ["", "cmd:", "/nope/bot.py", "no_such_pkg_xyz.mod:attr", "random:bogus=1", "nothing"]
)
def test_bad_specs_are_one_line_errors(spec: str) -> None:
    with pytest.raises(BotSpecError) as info:
        resolve(spec)
    assert "\n" not in str(info.value)
