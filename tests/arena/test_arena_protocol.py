"""The line protocol: answers are checked field by field, and the documented transcript replays
against a real worker process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot_arena.arena.transport import protocol
from bot_arena.arena.transport.protocol import BotFailure, MoveAnswer, ProtocolError, Ready

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b'{"type":"ready"}', Ready()),
        (b'{"type":"ready","name":"x","version":"2"}', Ready("x", "2")),
        (b'{"type":"move","move":"5"}', MoveAnswer("5")),
        (b'{"type":"move","id":3,"move":"5","info":{"depth":4}}', MoveAnswer("5", {"depth": 4})),
        (
            b'{"type":"error","exception":"E: x","phase":"move"}',
            BotFailure("bot error", "E: x", "move"),
        ),
    ],
)
def test_good_answers_decode(line: bytes, expected: Any) -> None:
    assert protocol.decode_answer(line, 3) == expected


@pytest.mark.parametrize(
    "line",
    [
        b"e2e4",
        b"[1,2]",
        b'{"type":"move"}',
        b'{"type":"move","move":5}',
        b'{"type":"move","move":"5","id":4}',
        b'{"type":"move","move":"5","info":[1]}',
        b'{"type":"ready","name":7}',
        b'{"type":"hello"}',
        b"\xff\xfe",
    ],
)
def test_bad_answers_raise_protocol_error_with_the_text(line: bytes) -> None:
    with pytest.raises(ProtocolError) as info:
        protocol.decode_answer(line, 3)
    assert len(info.value.text) <= 240


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_escape_as_other_errors(raw: bytes) -> None:
    try:
        answer = protocol.decode_answer(raw, 1)
    except ProtocolError as exc:
        assert isinstance(exc.text, str)
        return
    assert isinstance(answer, Ready | MoveAnswer | BotFailure)


@settings(max_examples=60, deadline=None)
@given(
    st.text(max_size=30),
    st.lists(st.text(max_size=5), max_size=10),
    st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=4),
)
def test_encoded_requests_are_single_compact_lines(
    position: str, moves: list[str], info: dict[str, Any]
) -> None:
    request = protocol.move_request(
        request_id=1, position=position, moves=moves, legal=moves or ["1"], clock={"deadline": 1.0}
    )
    line = protocol.encode(request)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert line.startswith(b'{"type":"move","id":1,"position":')
    assert json.loads(line) == request
    answer = protocol.encode({"type": "move", "id": 1, "move": position, "info": info})
    assert protocol.decode_answer(answer.rstrip(b"\n"), 1) == MoveAnswer(position, info)


def transcript() -> list[tuple[str, str | None]]:
    """(request, answer or None) pairs of the complete example in docs/protocol.md."""
    text = DOC.read_text(encoding="utf-8")
    block = text.split("## A complete example", 1)[1].split("```", 2)[1]
    pairs: list[tuple[str, str | None]] = []
    for line in block.splitlines():
        if line.startswith("> "):
            pairs.append((line[2:], None))
        elif line.startswith("< "):
            pairs[-1] = (pairs[-1][0], line[2:])
    return pairs


def test_documented_transcript_replays_against_a_real_worker() -> None:
    pairs = transcript()
    assert len(pairs) == 6 and pairs[-1] == ('{"type":"quit"}', None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot_arena.arena.worker", "--builtin", "alphabeta:depth=2"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for request, expected in pairs[:-1]:
            proc.stdin.write(request + "\n")
            proc.stdin.flush()
            assert expected is not None
            got = json.loads(proc.stdout.readline())
            want = json.loads(expected)
            for answer in (got, want):
                (answer.get("info") or {}).pop("time_s", None)
            assert got == want
        proc.stdin.write(pairs[-1][0] + "\n")
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
        proc.wait()
