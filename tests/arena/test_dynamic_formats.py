"""Swiss, knockout and SPRT tournaments of real bots through the CLI, checked with SQL; an
interrupted (kill -9) Swiss and SPRT resumed to exactly what an uninterrupted run plays. On
SQLite and, with $ARENA_TEST_PG_URL, on PostgreSQL."""

from __future__ import annotations

import itertools
import json
import math
import signal
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bot_arena.arena.cli.app import app
from tests.arena.test_tournament_crash import Gate, forked, wait_until
from tests.arena.test_tournament_crash import cli as cli  # the fixture, one server a module
from tests.db.dbtest import Db
from tests.forked_cli import Server

# each test runs the arena command (tournaments, several processes): seconds a test
pytestmark = pytest.mark.slow

runner = CliRunner()
# The runs played to their end: the formats are their subject, not the bots' confinement
# (tests/arena/test_sandbox_*.py), which costs each run a probe and bots started as clean
# interpreters (0.3 s of CPU a run). The runs killed and resumed stay confined, as a user's are.
UNCONFINED = ("--sandbox", "off")
# five bots of different strength whose games are a function of the match's seed
FIELD = ["random", "random:seed=1", "alphabeta:depth=1", "alphabeta:depth=2", "alphabeta"]


def arena(*args: str) -> Any:
    return runner.invoke(app, list(args))


def bots(field: list[str]) -> list[str]:
    return [a for spec in field for a in ("--bot", spec)]


def rounds_of(db: Db, tid: int) -> dict[int, list[tuple[tuple[str, ...], tuple[float, ...]]]]:
    """Each round's matches in the order they were made: bot per seat, score per seat."""
    rows = db.query(
        "SELECT m.id, m.round, b.name, s.score FROM matches m JOIN seats s ON s.match_id = m.id"
        " JOIN bot_versions v ON v.id = s.bot_version_id JOIN bots b ON b.id = v.bot_id"
        f" WHERE m.tournament_id = {tid} ORDER BY m.id, s.seat"
    )
    matches: dict[int, tuple[int, list[str], list[float]]] = {}
    for mid, rnd, name, score in rows:
        entry = matches.setdefault(mid, (rnd, [], []))
        entry[1].append(name)
        entry[2].append(score)
    out: dict[int, list[tuple[tuple[str, ...], tuple[float, ...]]]] = {}
    for rnd, names, scores in matches.values():
        out.setdefault(rnd, []).append((tuple(names), tuple(scores)))
    return out


def statuses(db: Db, tid: int) -> Counter[str]:
    return Counter(
        s for (s,) in db.query(f"SELECT status FROM matches WHERE tournament_id = {tid}")
    )


def tournament_id(output: str) -> int:
    return int(output.split("tournament ", 1)[1].split(":", 1)[0])


# --- Swiss -----------------------------------------------------------------------------------


def fewest_rematches(field: list[str], met: set[frozenset[str]], byes: list[str]) -> int:
    """By brute force: the fewest rematches of any round of ``field`` whose bye (odd field) goes
    to a bot with the fewest byes so far."""
    fewest = min(byes.count(name) for name in field)
    choices = [b for b in field if byes.count(b) == fewest] if len(field) % 2 else [None]

    def best(rest: list[str]) -> int:
        if not rest:
            return 0
        first, others = rest[0], rest[1:]
        return min(
            (frozenset((first, other)) in met) + best([o for o in others if o != other])
            for other in others
        )

    return min(best([b for b in field if b != bye]) for bye in choices)


def test_swiss_pairs_every_bot_every_round_without_rematches(db: Db) -> None:
    result = arena(
        "tournament", "run", "tictactoe", *bots(FIELD), "--format", "swiss", "--rounds", "4",
        "--games", "1", "--jobs", "2", "--seed", "11", *UNCONFINED, "--db", db.url,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    tid = tournament_id(result.output)
    assert statuses(db, tid) == {"done": 8}  # 4 rounds of 2 boards, one bye each
    rounds = rounds_of(db, tid)
    assert sorted(rounds) == [1, 2, 3, 4]
    met: set[frozenset[str]] = set()
    byes: list[str] = []
    first_seats: Counter[str] = Counter()
    for number in sorted(rounds):
        seated = [name for names, _ in rounds[number] for name in names]
        assert len(seated) == len(set(seated)) == 4, (number, seated)  # each bot once
        rematches = sum(frozenset(names) in met for names, _ in rounds[number])
        # never more rematches than the fairest bye and pairing could have had (5 bots in 4
        # rounds: the last round cannot avoid one)
        assert rematches == fewest_rematches(FIELD, met, byes), (number, rounds[number])
        for names, _ in rounds[number]:
            met.add(frozenset(names))
            first_seats[names[0]] += 1
        byes += [name for name in FIELD if name not in seated]
    assert len(byes) == len(set(byes)) == 4  # one a round, never twice to the same bot
    played = {name: 4 - byes.count(name) for name in FIELD}
    for name in FIELD:  # seats balanced: first seat in half the games, give or take one
        assert abs(2 * first_seats[name] - played[name]) <= 2, (name, first_seats)

    shown = arena("tournament", "show", str(tid), "--db", db.url, "--json")
    summary = json.loads(shown.output)
    table = summary["swiss"]["standings"]
    assert [row["bot"] for row in table] and len(table) == len(FIELD)
    points = [row["points"] for row in table]
    assert points == sorted(points, reverse=True)
    text = arena("tournament", "show", str(tid), "--db", db.url).output
    assert "swiss, 4 rounds" in text and "bye" in text


def test_a_resumed_swiss_pairs_as_an_uninterrupted_one(db: Db, tmp_path: Path, cli: Server) -> None:
    """The same Swiss played twice with one seed: once straight through, once killed (-9)
    mid-round and resumed: the same rounds, pairings, seats and results."""
    args = [
        "tournament", "run", "tictactoe", *bots(FIELD), "--format", "swiss", "--rounds", "4",
        "--games", "2", "--jobs", "2", "--seed", "7", "--db", db.url,
    ]  # fmt: skip
    whole = arena(*args)
    assert whole.exit_code == 0, whole.output
    straight = rounds_of(db, tournament_id(whole.output))

    log = tmp_path / "run.log"
    cmd = [sys.executable, "-m", "bot_arena.arena.cli.app", *args]
    with forked(cli, cmd, log) as proc:
        wait_until(
            proc,
            lambda: (
                db.query("SELECT COUNT(*) FROM tournaments")[0][0] == 2
                and db.query(
                    "SELECT COUNT(*) FROM matches m JOIN tournaments t ON t.id = m.tournament_id"
                    " WHERE t.id = (SELECT MAX(id) FROM tournaments) AND m.round = 2"
                    " AND m.status = 'done'"
                )[0][0]
                >= 1
            ),
            log,
        )
        proc.send_signal(signal.SIGKILL)
    tid = db.query("SELECT MAX(id) FROM tournaments")[0][0]
    assert statuses(db, tid)["done"] < 16  # killed before the end
    resumed = arena("tournament", "resume", str(tid), "--jobs", "2", "--db", db.url)
    assert resumed.exit_code == 0, resumed.output
    assert statuses(db, tid) == {"done": 16}
    assert rounds_of(db, tid) == straight


# --- knockout --------------------------------------------------------------------------------


def test_a_knockout_of_level_ties_goes_to_tiebreaks_then_the_coin(db: Db) -> None:
    """Perfect tic-tac-toe players draw every game: each tie plays its 2 games, its one
    tie-break pair, then the seed's coin decides; there is one winner.

    Perfect whatever the machine's load: full-depth searches (tic-tac-toe has no default depth;
    ``iterative`` without a time limit of its own searches until the value is proven) and a
    move time no loaded machine reaches (at 1 s, a full minimax search from the empty board
    lost on time at load 15-27, and the tie was decided by that game). Three alpha-beta
    searches: a plain minimax of the whole tree spent 2 s of CPU in these 8 games, the three
    of them a tenth of that."""
    field = ["alphabeta", "alphabeta:order=true", "iterative:time=0"]
    result = arena(
        "tournament", "run", "tictactoe", *bots(field), "--format", "knockout",
        "--tiebreak-pairs", "1", "--jobs", "2", "--seed", "5", "--move-time", "120",
        *UNCONFINED, "--db", db.url,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    tid = tournament_id(result.output)
    rounds = rounds_of(db, tid)
    assert sorted(rounds) == [1, 2]
    # round 1: seed 1 has a bye, seeds 2 and 3 meet; round 2: the final
    assert {frozenset(n) for n, _ in rounds[1]} == {frozenset(field[1:])}
    for number in (1, 2):
        assert len(rounds[number]) == 4  # 2 games + one tie-break pair, all drawn
        assert all(scores == (0.5, 0.5) for _, scores in rounds[number])
        seats = [names for names, _ in rounds[number]]
        assert seats[0] == seats[2] == tuple(reversed(seats[1])) == tuple(reversed(seats[3]))
    finalists = {n for names, _ in rounds[2] for n in names}
    assert field[0] in finalists
    summary = json.loads(arena("tournament", "show", str(tid), "--db", db.url, "--json").output)
    knockout = summary["knockout"]
    assert knockout["champion"] in finalists
    assert all(tie["by_coin"] for tie in knockout["rounds"][-1] if tie["winner"] is not None)
    assert summary["status"] == "done"
    shown = arena("tournament", "show", str(tid), "--db", db.url).output
    assert knockout["champion"] in shown and "coin" in shown


def test_a_knockout_always_crowns_one_bot(db: Db) -> None:
    result = arena(
        "tournament", "run", "tictactoe", *bots(FIELD), "--format", "knockout",
        "--jobs", "2", "--seed", "3", *UNCONFINED, "--db", db.url, "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    knockout = summary["knockout"]
    assert knockout["champion"] in FIELD
    rounds = knockout["rounds"]
    assert len(rounds) == math.ceil(math.log2(len(FIELD)))
    assert len(rounds[-1]) == 1 and rounds[-1][0]["winner"] == knockout["champion"]
    for earlier, later in itertools.pairwise(rounds):
        winners = [t["winner"] for t in earlier]
        assert sorted(n for t in later for n in (t["first"], t["second"])) == sorted(winners)


def test_a_knockout_seeded_by_rating_follows_the_leaderboard(db: Db) -> None:
    """--seeding rating: the bracket's seeds in the order of the game's leaderboard (the
    versions that play), bots without a rating after them in --bot order."""
    rated = ["random", "alphabeta:depth=4", "alphabeta:depth=1"]
    first = arena(
        "tournament", "run", "connect4", *bots(rated), "--games", "4", "--jobs", "2",
        "--seed", "2", *UNCONFINED, "--db", db.url,
    )  # fmt: skip
    assert first.exit_code == 0, first.output
    board = json.loads(arena("leaderboard", "--game", "connect4", "--db", db.url, "--json").output)
    by_rating = [row["bot"] for row in board]
    assert sorted(by_rating) == sorted(rated)
    assert len({round(row["elo"], 6) for row in board}) == 3  # no tie to break
    field = ["random:seed=1", *reversed(rated)]  # the unrated bot given first
    result = arena(
        "tournament", "run", "connect4", *bots(field), "--format", "knockout", "--seeding",
        "rating", "--jobs", "2", "--seed", "3", *UNCONFINED, "--db", db.url, "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["knockout"]["seeding"] == [*by_rating, "random:seed=1"]


# --- SPRT ------------------------------------------------------------------------------------


def sprt(db: Db, new: str, base: str, *extra: str) -> Any:
    return arena(
        "sprt", "tictactoe", "--bot", new, "--bot", base, "--elo0", "0", "--elo1", "20",
        "--jobs", "2", "--seed", "1", *UNCONFINED, "--db", db.url, "--json", *extra,
    )  # fmt: skip


def stored_state(db: Db, tid: int, settings: Any, new: str) -> Any:
    """The test's state computed here from the stored games alone (``new``: NEW's name)."""
    from bot_arena.arena.ratings.sprt_stats import evaluate, game_outcome, pair_outcome

    penta, tri = [0] * 5, [0] * 3
    for matches in rounds_of(db, tid).values():
        new_scores = [scores[names.index(new)] for names, scores in matches]
        for score in new_scores:
            tri[game_outcome(score)] += 1
        if len(new_scores) == 2:
            penta[pair_outcome(*new_scores)] += 1
    return evaluate(settings, penta, tri)


@pytest.mark.parametrize(
    ("new", "base", "decision"), [("alphabeta", "random", "H1"), ("random", "alphabeta", "H0")]
)
def test_sprt_decides_and_drops_what_it_no_longer_needs(
    db: Db, new: str, base: str, decision: str
) -> None:
    result = sprt(db, new, base)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    state = summary["sprt"]
    assert state["decision"] == decision
    tid = summary["id"]
    assert set(statuses(db, tid)) == {"done"}  # the pairs still in play were dropped
    rounds = rounds_of(db, tid)
    for matches in rounds.values():
        assert len(matches) <= 2
        if len(matches) == 2:  # a pair: the same bots, seats swapped
            assert matches[0][0] == tuple(reversed(matches[1][0]))
    from bot_arena.arena.ratings.sprt_stats import SprtSettings

    here = stored_state(db, tid, SprtSettings(0, 20), new)
    assert here.decision == decision
    assert state["llr"] == pytest.approx(here.llr)
    assert list(state["pentanomial"]) == list(here.pentanomial)
    assert summary["status"] == "done"


def test_sprt_refuses_what_it_cannot_test(db: Db) -> None:
    nim = arena("sprt", "nim", "--bot", "random", "--bot", "random:seed=1", "--db", db.url)
    assert nim.exit_code == 2
    assert "two-player" in nim.output and len(nim.output.strip().splitlines()) == 1
    bad = arena(
        "sprt", "tictactoe", "--bot", "random", "--bot", "random:seed=1",
        "--elo0", "5", "--elo1", "0", "--db", db.url,
    )  # fmt: skip
    assert bad.exit_code == 2 and len(bad.output.strip().splitlines()) == 1
    three = arena("sprt", "tictactoe", *bots(FIELD[:3]), "--db", db.url)
    assert three.exit_code == 2 and "NEW" in three.output


# undecided at this bound (random against random, elo0 -3, elo1 3): the resume plays to it
MAX_GAMES = 150
# The kill lands mid-test whatever the machine's speed: BASE is the gated random bot, given this
# many moves before the kill, which is sent once it has taken them all and waits for the next
# (two to five moves a game: 38 games or more are played, 100 at most)
GATED_MOVES = 200


def test_an_sprt_killed_mid_run_resumes_to_the_same_state(
    db: Db, tmp_path: Path, cli: Server
) -> None:
    """kill -9 mid-test: every pair stored is whole or finished by the resume, no game is lost
    or stored twice, and the state shown is the one the stored games give."""
    gate = Gate(tmp_path / "gated")
    args = [
        "sprt", "tictactoe", "--bot", "random", "--bot", gate.bot, "--elo0", "-3",
        "--elo1", "3", "--max-games", str(MAX_GAMES), "--jobs", "2", "--seed", "2",
        "--db", db.url,
    ]  # fmt: skip
    log = tmp_path / "run.log"
    gate.hold()
    try:
        gate.give(GATED_MOVES)
        with forked(cli, [sys.executable, "-m", "bot_arena.arena.cli.app", *args], log) as proc:
            wait_until(
                proc,
                lambda: (
                    gate.left() == 0
                    and db.query("SELECT COUNT(*) FROM matches WHERE status = 'done'") >= [(30,)]
                ),
                log,
            )
            proc.send_signal(signal.SIGKILL)
    finally:
        gate.release()  # the resume plays freely
    tid = db.query("SELECT MAX(id) FROM tournaments")[0][0]
    # killed before the end: games left to play
    assert db.query(f"SELECT status FROM tournaments WHERE id = {tid}") != [("done",)]
    assert 30 <= statuses(db, tid)["done"] <= GATED_MOVES // 2 < MAX_GAMES
    before = {
        mid: digest
        for mid, digest in db.query(
            f"SELECT id, final_position FROM matches WHERE tournament_id = {tid}"
            " AND status = 'done'"
        )
    }
    resumed = arena("tournament", "resume", str(tid), "--jobs", "2", "--db", db.url, "--json")
    assert resumed.exit_code == 0, resumed.output
    after = dict(
        db.query(
            f"SELECT id, final_position FROM matches WHERE tournament_id = {tid}"
            " AND status = 'done'"
        )
    )
    assert all(after[mid] == final for mid, final in before.items())  # nothing replayed
    rounds = rounds_of(db, tid)
    summary = json.loads(resumed.stdout.strip().splitlines()[-1])
    state = summary["sprt"]
    assert set(statuses(db, tid)) == {"done"}
    assert all(len(m) <= 2 for m in rounds.values())
    games = sum(len(m) for m in rounds.values())
    assert games == state["games"]
    if state["decision"] is None:
        assert games == MAX_GAMES and all(len(m) == 2 for m in rounds.values())
    from bot_arena.arena.ratings.sprt_stats import SprtSettings

    here = stored_state(db, tid, SprtSettings(-3, 3), "random")
    assert state["llr"] == pytest.approx(here.llr)
    assert state["decision"] == here.decision
