"""The one ``key=value`` parser (games/keyvalue.py) and the four readers that call it: game
parameters, a built-in bot's options, an engine's options and the adjudication options."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from bot_arena import bots, games
from bot_arena.arena.cli.app import app
from bot_arena.arena.match.adjudication import Adjudication, AdjudicationError
from bot_arena.arena.match.botref import BotSpecError
from bot_arena.arena.match.engines import split_engine
from bot_arena.bots.base import BotError
from bot_arena.games import keyvalue
from bot_arena.games.base import GameError

# keys: no '=', not blank, no white space at either end (the parser strips it)
KEYS = st.text(st.characters(blacklist_characters="=", blacklist_categories=("Cs",)), min_size=1)
KEYS = KEYS.map(str.strip).filter(bool)
VALUES = st.text(st.characters(blacklist_categories=("Cs",))).map(str.strip)
PAIRS = st.dictionaries(KEYS, VALUES, max_size=6)


@settings(max_examples=200, deadline=None)
@given(PAIRS)
def test_pairs_read_back_what_was_written(pairs: dict[str, str]) -> None:
    assert keyvalue.pairs(f"{k}={v}" for k, v in pairs.items()) == pairs
    # white space around a key or a value is not part of it
    assert keyvalue.pairs(f" {k} = {v} " for k, v in pairs.items()) == pairs


@settings(max_examples=200, deadline=None)
@given(PAIRS, st.data())
def test_a_key_given_twice_is_refused(pairs: dict[str, str], data: st.DataObject) -> None:
    if not pairs:
        return
    key = data.draw(st.sampled_from(sorted(pairs)))
    words = [f"{k}={v}" for k, v in pairs.items()] + [f"{key}=again"]
    with pytest.raises(keyvalue.KeyValueError) as caught:
        keyvalue.pairs(words)
    assert caught.value.duplicate and caught.value.key == key
    assert caught.value.word == f"{key}=again"


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(blacklist_characters="=", blacklist_categories=("Cs",))))
def test_a_word_without_an_equals_sign_is_refused(word: str) -> None:
    with pytest.raises(keyvalue.KeyValueError) as caught:
        keyvalue.pairs(["a=1", word])
    assert caught.value.word == word and not caught.value.duplicate
    for blank_key in (f"={word}", f"  ={word}"):
        with pytest.raises(keyvalue.KeyValueError):
            keyvalue.pair(blank_key)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(KEYS.filter(lambda k: "," not in k), VALUES.filter(lambda v: "," not in v)))
def test_separated_words_round_trip(pairs: dict[str, str]) -> None:
    text = ",".join(f"{k}={v}" for k, v in pairs.items())
    assert keyvalue.pairs(keyvalue.separated(text)) == pairs
    assert keyvalue.pairs(keyvalue.separated(f",,{text},")) == pairs  # empty words skipped


@settings(max_examples=200, deadline=None)
@given(PAIRS)
def test_quoted_engine_options_round_trip(pairs: dict[str, str]) -> None:
    """A value with spaces, quotes or '=' survives quoting: what ``shlex.join`` writes, the
    engine spec reads back, in order."""
    words = ["engine", "--flag", *(f"option.{k}={v}" for k, v in pairs.items())]
    argv, options = split_engine(shlex.join(words))
    assert argv == ["engine", "--flag"] and options == list(pairs.items())


def test_values_keep_equals_signs_and_may_be_empty() -> None:
    assert keyvalue.pairs(["fen=a=b", "empty="]) == {"fen": "a=b", "empty": ""}
    assert keyvalue.separated(" a=1, b=2 c=3,,", ", ") == ["a=1", "b=2", "c=3"]


# --- the four readers: their lines (unchanged), and a repeated key refused by each ------------
def test_game_parameters() -> None:
    assert games.parse_params(["coins=5", " players = 3 "]) == {"coins": "5", "players": "3"}
    with pytest.raises(GameError) as caught:
        games.parse_params(["coins"])
    assert str(caught.value) == "parameter 'coins' is not of the form key=value"
    with pytest.raises(GameError) as caught:
        games.parse_params(["coins=5", "coins=6"])
    assert str(caught.value) == "parameter 'coins' is given twice"


def test_bot_options() -> None:
    assert bots.split_spec("alphabeta: depth=6 ,order=1,") == (
        "alphabeta",
        {"depth": "6", "order": "1"},
    )
    with pytest.raises(BotError) as caught:
        bots.split_spec("alphabeta:depth")
    assert str(caught.value) == "bot spec 'alphabeta:depth': option 'depth' is not key=value"
    with pytest.raises(BotError) as caught:
        bots.split_spec("alphabeta:depth=2,depth=3")
    assert (
        str(caught.value) == "bot spec 'alphabeta:depth=2,depth=3': option 'depth' is given twice"
    )


def test_engine_options() -> None:
    assert split_engine('sf option.Hash=16 "option.Skill Level = 3"') == (
        ["sf"],
        [("Hash", "16"), ("Skill Level", "3")],
    )
    for target, message in [
        ("sf option.Hash", "engine option 'option.Hash' is not option.NAME=VALUE"),
        ("sf option.=1", "engine option 'option.=1' is not option.NAME=VALUE"),
        ("sf option.Hash=1 option.Hash=2", "engine option 'Hash' is given twice"),
        ('sf "option.Hash=1', "engine: cannot read the command line: No closing quotation"),
        ("option.Hash=1", "engine without a command line"),
    ]:
        with pytest.raises(BotSpecError) as caught:
            split_engine(target)
        assert str(caught.value) == message


def test_adjudication_options() -> None:
    rules = Adjudication.parse("movenumber=40 movecount=8,score=10", None, None)
    assert (rules.draw_movenumber, rules.draw_movecount, rules.draw_score) == (40, 8, 10)
    for draw, message in [
        ("movenumber=40,movecount=8,score=1,score=2", "score= is given twice"),
        ("movenumber=40,movecount", "give movenumber=N, movecount=N, score=N"),
        ("count=1,count=2", "give movenumber=N, movecount=N, score=N"),
    ]:
        with pytest.raises(AdjudicationError) as caught:
            Adjudication.parse(draw, None, None)
        assert str(caught.value) == f"--draw-adjudicate {draw!r}: {message}"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--param", "players=2", "--param", "players=3"], "parameter 'players' is given twice"),
        (["--bot", "alphabeta:depth=1,depth=2"], "option 'depth' is given twice"),
        (["--bot", "uci:stockfish option.Hash=1 option.Hash=2"], "'Hash' is given twice"),
        (["--draw-adjudicate", "movenumber=1,movecount=1,score=1,score=2"], "score= is given"),
    ],
)
def test_a_repeated_key_on_the_command_line_is_one_line_and_exit_code_2(
    args: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    game = "nim" if "--param" in args else "tictactoe"
    bots_given = ["--bot", "random"] * (2 - args.count("--bot"))
    result = CliRunner().invoke(app, ["play", game, *args, *bots_given, "--no-save"])
    assert result.exit_code == 2, result.output
    err = result.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and message in err[0], err
    assert "Traceback" not in result.output
