"""Adjudication with cutechess's rules: draw (movenumber, movecount, score), resign (movecount,
score, twosided) and a maximum length; the verdict names the rule and keeps the scores, the
referee stops there, the runner's replay of the record agrees, and PGN says ``adjudication``."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bot_arena import games
from bot_arena.arena.cli.app import app
from bot_arena.arena.match.adjudication import (
    MATE,
    Adjudication,
    AdjudicationError,
    Adjudicator,
    centipawns,
)
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.pool import BotPool
from bot_arena.arena.match.record import MatchRecord, Termination
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.match.verify import check_record
from bot_arena.arena.transport.limits import ResourceLimits

FAKE = Path(__file__).parent / "fixtures" / "fake_uci.py"
runner = CliRunner()


def scored(cp: int | str) -> str:
    return f"uci:{sys.executable} {FAKE} score {cp}"


def cp(value: int) -> dict[str, Any]:
    return {"score": {"cp": value}}


# --- the rules --------------------------------------------------------------------------------
def test_options_read_as_cutechess_writes_them() -> None:
    rules = Adjudication.parse("movenumber=40,movecount=8,score=10", "movecount=3,score=600", 200)
    assert (rules.draw_movenumber, rules.draw_movecount, rules.draw_score) == (40, 8, 10)
    assert (rules.resign_movecount, rules.resign_score, rules.resign_twosided) == (3, 600, False)
    assert rules.max_moves == 200 and rules.active
    assert Adjudication.parse(None, "movecount=2,score=500,twosided=true", None).resign_twosided
    assert Adjudication.from_dict(rules.to_dict()) == rules
    assert not Adjudication().active
    for draw, resign, moves, message in [
        ("movenumber=40,movecount=8", None, None, "score= is missing"),
        ("movenumber=x,movecount=8,score=1", None, None, "not a whole number"),
        (None, "movecount=3,score=600,twosided=maybe", None, "true or false"),
        (None, "count=3", None, "give movecount=N, score=N"),
        (None, None, 0, "--max-moves must be >= 1"),
    ]:
        with pytest.raises(AdjudicationError, match=message):
            Adjudication.parse(draw, resign, moves)


def test_draw_needs_the_move_number_and_both_sides_quiet() -> None:
    judge = Adjudicator(Adjudication(draw_movenumber=3, draw_movecount=2, draw_score=10))
    verdicts = [judge.after(ply % 2, cp(5 if ply != 1 else 50)) for ply in range(7)]
    # plies 0-5: six plies make three full moves, but ply 1's 50 breaks the run until ply 4
    assert verdicts[:5] == [None] * 5
    assert verdicts[5] == {"rule": "draw", "winner": None, "scores": [5, 5, 5, 5]}


def test_a_move_without_a_score_breaks_the_run() -> None:
    judge = Adjudicator(Adjudication(draw_movenumber=1, draw_movecount=1, draw_score=10))
    assert judge.after(0, cp(0)) is None
    assert judge.after(1, None) is None  # no score: no draw on these two plies
    assert judge.after(0, {"score": {"cp": 0, "bound": "upper"}}) is None  # a bound is no score
    assert judge.after(1, cp(0)) is None
    assert judge.after(0, cp(0)) == {"rule": "draw", "winner": None, "scores": [0, 0]}


def test_resign_one_sided_and_two_sided() -> None:
    one = Adjudicator(Adjudication(resign_movecount=2, resign_score=600))
    moves = [(0, 100), (1, -700), (0, 100), (1, -650)]
    assert [one.after(s, cp(v)) for s, v in moves] == [
        None,
        None,
        None,
        {"rule": "resign", "winner": 0, "loser_scores": [-700, -650]},
    ]
    two = Adjudicator(Adjudication(resign_movecount=2, resign_score=600, resign_twosided=True))
    assert [two.after(s, cp(v)) for s, v in moves] == [None] * 4  # the winner did not agree
    agreed = Adjudicator(Adjudication(resign_movecount=1, resign_score=600, resign_twosided=True))
    assert agreed.after(0, cp(800)) is None
    assert agreed.after(1, cp(-900)) == {
        "rule": "resign",
        "winner": 0,
        "loser_scores": [-900],
        "winner_scores": [800],
    }


def test_mate_scores_and_max_moves() -> None:
    assert centipawns({"score": {"mate": 3}}) == MATE - 3
    assert centipawns({"score": {"mate": -2}}) == -(MATE - 2)
    judge = Adjudicator(Adjudication(resign_movecount=1, resign_score=1000, max_moves=2))
    assert judge.after(0, {"score": {"mate": 5}}) is None
    assert judge.after(1, {"score": {"mate": -4}}) == {
        "rule": "resign",
        "winner": 0,
        "loser_scores": [-(MATE - 4)],
    }
    longest = Adjudicator(Adjudication(max_moves=2))
    assert [longest.after(p % 2, None) for p in range(4)] == [
        None,
        None,
        None,
        {"rule": "max moves", "winner": None, "moves": 2},
    ]


# --- a real match ------------------------------------------------------------------------------
def play(white: str, black: str, rules: Adjudication) -> MatchRecord:
    with BotPool(ResourceLimits(startup_s=5.0)) as pool:
        return pool.play(
            games.get("chess"),
            [resolve(white), resolve(black)],
            time_control=TimeControl(move_time=2.0),
            seed=1,
            adjudication=rules,
        )


def test_a_match_ends_at_the_rule_and_the_replay_agrees() -> None:
    chess = games.get("chess")
    rules = Adjudication(draw_movenumber=5, draw_movecount=2, draw_score=10)
    record = play(scored(0), scored(3), rules)
    assert record.termination is Termination.ADJUDICATED and len(record.moves) == 10
    assert record.adjudication == {"rule": "draw", "winner": None, "scores": [0, 3, 0, 3]}
    assert [s.rank for s in record.seats] == [1, 1] and [s.utility for s in record.seats] == [0, 0]
    refs = [resolve(scored(0)), resolve(scored(3))]
    assert check_record(chess, record, refs, None, rules) is None
    # the same record under rules it does not follow, or with a verdict of its own, is refused
    assert "where the rules give" in str(check_record(chess, record, refs, None, Adjudication()))
    later = Adjudication(draw_movenumber=6, draw_movecount=2, draw_score=10)
    assert check_record(chess, record, refs, None, later) is not None
    forged = dataclasses.replace(record, adjudication={"rule": "draw", "winner": 0, "scores": []})
    assert check_record(chess, forged, refs, None, rules) is not None

    resign = Adjudication(resign_movecount=3, resign_score=600)
    record = play(scored(700), scored(-700), resign)
    assert record.termination is Termination.ADJUDICATED and len(record.moves) == 6
    assert record.adjudication == {
        "rule": "resign",
        "winner": 0,
        "loser_scores": [-700, -700, -700],
    }
    assert [s.rank for s in record.seats] == [1, 2] and record.seats[1].fault is None


def test_a_tournament_stores_shows_and_exports_adjudications(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    args = ["tournament", "run", "chess", "--bot", scored(700), "--bot", scored(-700)]
    result = runner.invoke(
        app,
        [
            *args,
            *("--resign-adjudicate", "movecount=2,score=600", "--max-moves", "30"),
            *("--db", db, "--json", "--move-time", "2"),
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["standings"][0]["bot"] == scored(700)
    assert summary["standings"][0]["points"] == 2 and summary["standings"][1]["points"] == 0
    assert summary["settings"]["adjudication"]["resign_movecount"] == 2
    records = json.loads(runner.invoke(app, ["export", "--db", db]).stdout)
    assert [r["termination"] for r in records] == ["adjudicated", "adjudicated"]
    assert all(r["adjudication"]["rule"] == "resign" for r in records)
    shown = runner.invoke(app, ["tournament", "show", "1", "--db", db]).stdout
    assert "adjudicate resign movecount=2,score=600; max moves 30" in " ".join(shown.split())
    pgn = runner.invoke(app, ["export", "--format", "pgn", "--db", db]).stdout
    assert pgn.count('[Termination "adjudication"]') == 2
    assert "wins by adjudication: resign}" in pgn
    bad = runner.invoke(app, [*args, "--draw-adjudicate", "movecount=2", "--db", db])
    assert bad.exit_code == 2 and "movenumber= is missing" in bad.output
