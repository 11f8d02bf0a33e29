"""A report fitted by ML reads its two-player matches as pair totals: its crosstable is the one
of the results one by one, exactly, and its ratings over time (the matches streamed in play
order, summed per pair, cut at each tenth) are the per-result refits to 1e-9, cuts included;
a selection that also holds matches of more seats is read one by one as before."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from bot_arena.arena.match.botref import BotRef, sha256_text
from bot_arena.arena.match.record import Fault, MatchRecord, SeatResult, Termination
from bot_arena.arena.ratings.query import rated_table
from bot_arena.arena.report.data import _crosstable, _history, collect
from bot_arena.db.session import make_engine, session_factory
from bot_arena.db.store import save_match, versions_for

BOTS = ("alpha", "beta", "gamma", "delta", "eps")


def build(
    path: Path, seats: tuple[int, ...] = (2,), bots: tuple[str, ...] = BOTS, matches: int = 57
) -> str:
    url = f"sqlite:///{path}"
    rng = random.Random(7)
    refs = {b: BotRef(b, "builtin", b, None, sha256_text(b)) for b in bots}
    engine = make_engine(url)
    with session_factory(engine).begin() as session:
        # the versions stored once (the writer's API), not looked up again for every match
        stored = versions_for(session, list(refs.values()))
        ids = {b: v.id for b, v in zip(refs, stored, strict=True)}
        for number in range(matches):
            n = rng.choice(seats)
            names = rng.sample(bots, n)
            ranks = [rng.randint(1, n) for _ in names]
            fault = Fault(Termination.TIMEOUT, "late", {"overrun_ms": 3.0})
            faulted = number % 9 == 0
            record = MatchRecord(
                "tictactoe",
                {},
                "",
                [
                    SeatResult(
                        b, 0.0, r, 0.5, fault if faulted and i == 0 else None, refs[b].sha256
                    )
                    for i, (b, r) in enumerate(zip(names, ranks, strict=True))
                ],
                [],
                Termination.TIMEOUT if faulted else Termination.NORMAL,
                "",
                1_700_000_000.0 + rng.uniform(0, 1e5),  # play order is not id order
                0.0,
            )
            record.finished = record.started + 1.0
            save_match(
                session, record, [refs[b] for b in names], version_ids=[ids[b] for b in names]
            )
    engine.dispose()
    return url


def both(url: str) -> tuple[dict[str, Any], dict[str, Any], int]:
    """(the report's crosstable and history, the per-result ones, rated results)."""
    engine = make_engine(url)
    with session_factory(engine)() as session:
        data = collect(session, game="tictactoe", limit=None)
        sel, _ = rated_table(session, game="tictactoe", method="ml")  # results one by one
        labels = sel.display_labels()
        old = {
            "crosstable": _crosstable(sel.results, labels),
            "history": _history(sel.results, labels, "ml"),
        }
        new = {"crosstable": data.crosstable, "history": data.history}
    engine.dispose()
    return new, old, len(sel.results)


def same(new: dict[str, Any], old: dict[str, Any], within: float = 1e-9) -> None:
    assert new["crosstable"] == old["crosstable"]
    assert [h["games"] for h in new["history"]] == [h["games"] for h in old["history"]]
    for a, b in zip(new["history"], old["history"], strict=True):
        assert a["elo"].keys() == b["elo"].keys()
        assert all(a["elo"][k] == pytest.approx(b["elo"][k], abs=within) for k in a["elo"])


def test_the_pair_totals_report_is_the_per_result_one(tmp_path: Path) -> None:
    new, old, n = both(build(tmp_path / "a.db"))
    assert n == 57 and len(new["history"]) == 10
    same(new, old)


def test_a_malformed_fault_leaves_its_match_out_of_both(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    url = build(path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE seats SET fault = '{not json' WHERE match_id = 10 AND seat = 0")
    new, old, n = both(url)
    assert n == 56
    same(new, old)


def test_matches_of_more_seats_are_read_one_by_one(tmp_path: Path) -> None:
    new, old, _ = both(build(tmp_path / "a.db", seats=(2, 3)))
    same(new, old)


def test_counts_merged_between_the_cuts_give_the_same_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report adds the matches to its pair counts every ``_BATCH`` of them as well as at
    each tenth (so what it holds between two cuts is bounded): the same ratings over time."""
    from bot_arena.arena.report import data

    monkeypatch.setattr(data, "_BATCH", 2)
    new, old, _ = both(build(tmp_path / "a.db"))
    same(new, old)


def test_a_big_field_s_warm_started_history_is_each_fit_from_scratch(tmp_path: Path) -> None:
    """Past ``SMALL_LIMIT`` players each point over time is fitted from the last one's ratings
    and without intervals: each equals the fit from scratch on the results up to its cut (to
    1e-6); the heatmap, summed by numpy for its best ``HEATMAP_PLAYERS`` only, is the one of
    the results one by one."""
    from bot_arena.arena.ratings.ml_small import SMALL_LIMIT
    from bot_arena.arena.report.data import HEATMAP_PLAYERS

    bots = tuple(f"b{i:02d}" for i in range(SMALL_LIMIT + 6))
    new, old, n = both(build(tmp_path / "a.db", bots=bots, matches=600))
    assert n == 600 and len(new["history"]) == 10
    assert len(new["history"][-1]["elo"]) == len(bots) > HEATMAP_PLAYERS
    same(new, old, within=1e-6)
