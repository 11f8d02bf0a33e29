"""The rules of ``arena/match/text.py`` (text a bot controls, shown as text on a terminal and in
CSV) and ``arena/match/names.py`` (what a bot may be called), one by one."""

from __future__ import annotations

import csv
import io

import pytest

from bot_arena.arena.match.botref import BotSpecError
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.names import MAX_NAME, BotNameError, check_derived, check_name
from bot_arena.arena.match.text import csv_cell, csv_text, csv_value, shown


@pytest.mark.parametrize(
    ("raw", "visible"),
    [
        ("\x1b]0;TITLE\x07\x1b[2J", "\\x1b]0;TITLE\\x07\\x1b[2J"),  # OSC, BEL, CSI
        ("a\x00b\x7fc", "a\\x00b\\x7fc"),  # NUL, DEL
        ("\x9b2J\x9d0;t\x9c", "\\x9b2J\\x9d0;t\\x9c"),  # C1: CSI, OSC, ST in one character
        ("one\ntwo\r\tthree", "one\\ntwo\\r\\tthree"),  # a one-line field stays one line
        ("abc\u202edcba\u2066x\u2069", "abc\\u202edcba\\u2066x\\u2069"),  # bidi override, isolate
        ("zero\u200bwidth\ufeff", "zero\\u200bwidth\\ufeff"),  # format characters
        ("line\u2028para\u2029", "line\\u2028para\\u2029"),  # separators
        ("lone \udcff", "lone \\udcff"),  # a surrogate (undecodable stderr) cannot even print
        ("plain text, üñí ♞ 中文", "plain text, üñí ♞ 中文"),  # text is left alone
    ],
)
def test_shown_writes_controls_as_escapes(raw: str, visible: str) -> None:
    assert shown(raw) == visible
    assert shown(raw).isprintable()


def test_shown_keeps_newlines_only_in_a_block_of_lines() -> None:
    assert shown("a\x1b[2J\nb\r\n", lines=True) == "a\\x1b[2J\nb\\r\n"
    assert shown(42) == "42"


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ("=1+2", "'=1+2"),
        ('=HYPERLINK("http://evil","click")', '\'=HYPERLINK("http://evil","click")'),
        ("+cmd", "'+cmd"),
        ("-cmd|' /C calc'!A0", "'-cmd|' /C calc'!A0"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("'=1", "''=1"),  # already quoted: one more, so reading back gives it unchanged
        ("'plain", "'plain"),  # a quote before nothing dangerous is the value's own
        ("plain=1", "plain=1"),
        ("", ""),
        ("-35", "-35"),  # number-shaped text is data, not a formula
        ("+1.5e-3", "+1.5e-3"),
        ("-35 bots", "'-35 bots"),
        (-35, -35),  # numbers stay numbers
        (-0.5, -0.5),
        (None, None),
    ],
)
def test_csv_cell_neutralises_formulas_and_reads_back(value: object, cell: object) -> None:
    assert csv_cell(value) == cell
    if isinstance(value, str):
        assert csv_value(str(cell)) == value


def test_csv_text_quotes_text_and_leaves_numbers_bare() -> None:
    text = csv_text(["bot", "elo"], [["=evil()", -35.5], ["-35", 3]])
    assert text == 'bot,elo\n"\'=evil()",-35.5\n"-35",3\n'
    rows = list(csv.reader(io.StringIO(text)))
    assert [csv_value(r[0]) for r in rows[1:]] == ["=evil()", "-35"]


@pytest.mark.parametrize("name", ["my-bot", "v1.2+exp", "alpha_beta", "bot@home", "Élan", "7up"])
def test_plain_names_are_allowed(name: str) -> None:
    assert check_name(f"  {name} ") == name


@pytest.mark.parametrize(
    "name",
    [
        "",
        "   ",
        "=cmd",
        "+cmd",
        "-cmd",
        "@cmd",
        ".hidden",
        "a b",
        "a\tb",
        "a:b",
        "a/b",
        "x.py",
        "esc\x1b[2J",
        "bidi\u202e",
        "new\nline",
        "x" * (MAX_NAME + 1),
    ],
)
def test_a_bad_name_is_refused_in_one_line(name: str) -> None:
    with pytest.raises(BotNameError) as err:
        check_name(name)
    message = str(err.value)
    assert "\n" not in message and message.isprintable()


def test_a_file_name_keeps_its_name_unless_it_cannot_be_shown(tmp_path: object) -> None:
    assert check_derived("my-bot", "my-bot.py") == "my-bot"
    assert check_derived("=HYPERLINK(1)", "=HYPERLINK(1).py") == "=HYPERLINK(1)"  # inert later
    for bad in ("a\x1bb", "tab\there", "rtl\u202e", " "):
        with pytest.raises(BotNameError, match="rename the file"):
            check_derived(bad, f"{bad}.py")


def test_resolve_refuses_a_file_or_folder_whose_name_holds_controls(tmp_path: object) -> None:
    from pathlib import Path

    folder = Path(str(tmp_path))
    good = folder / "my-bot.py"
    good.write_text("def choose_move(game, state, budget):\n    return 0\n")
    assert resolve(str(good)).name == "my-bot"
    bad = folder / "evil\x1b]0;T\x07.py"
    bad.write_text(good.read_text())
    with pytest.raises(BotSpecError, match="rename the file"):
        resolve(str(bad))
    bundle = folder / "pack\x1b[2J"
    bundle.mkdir()
    (bundle / "main.py").write_text(good.read_text())
    with pytest.raises(BotSpecError, match="rename the file"):
        resolve(str(bundle))
