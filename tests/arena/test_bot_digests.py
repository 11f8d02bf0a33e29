"""A large file of a bot (an engine's program) is hashed once a process while it is unchanged
(``match/digests.py``): the digest is still the file's SHA-256, a file that changed is read
and hashed again, even rewritten to the same size and modification time, and a file written
just now is read every time (its next write could keep its stamps)."""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot_arena.arena.match import digests
from bot_arena.arena.match.botspec import hash_ahead, resolve
from bot_arena.arena.transport.sandbox.scan import Scan

SIZE = digests.MIN_CACHED + 1000


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    digests.forget()
    yield
    digests.forget()


class Reads:
    """A file reader that counts its reads."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, path: str) -> bytes:
        self.count += 1
        return Path(path).read_bytes()


def _settled_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files written by the test count as settled (their times are not in the future)."""
    monkeypatch.setattr(digests, "SETTLED_S", 0.0)


def _scan_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the bots' scan reads from now on, in order."""
    reads: list[str] = []
    read = Scan.read

    def counted(self: Scan, real: str) -> bytes:
        reads.append(real)
        return read(self, real)

    monkeypatch.setattr(Scan, "read", counted)
    return reads


def test_a_large_file_is_read_once_and_its_digest_is_its_sha256(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _settled_now(monkeypatch)
    program = tmp_path / "engine"
    data = os.urandom(SIZE)
    program.write_bytes(data)
    reads = Reads()
    first = digests.file_sha256(str(program), reads)
    second = digests.file_sha256(str(program), reads)
    assert first == second == hashlib.sha256(data).digest()
    assert reads.count == 1


def test_a_changed_file_is_hashed_again_even_with_its_old_size_and_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _settled_now(monkeypatch)
    program = tmp_path / "engine"
    program.write_bytes(b"a" * SIZE)
    before = program.stat()
    reads = Reads()
    assert digests.file_sha256(str(program), reads) == hashlib.sha256(b"a" * SIZE).digest()
    # rebuilt in place: same size, modification time set back; only the change time moves
    with program.open("r+b") as fh:
        fh.write(b"b")
    os.utime(program, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert program.stat().st_size == before.st_size
    assert program.stat().st_mtime_ns == before.st_mtime_ns
    expected = hashlib.sha256(b"b" + b"a" * (SIZE - 1)).digest()
    assert digests.file_sha256(str(program), reads) == expected
    assert reads.count == 2
    # replaced by another file of the same contents and times: another inode, read again
    other = tmp_path / "engine.new"
    shutil.copy2(program, other)
    os.replace(other, program)
    assert digests.file_sha256(str(program), reads) == expected
    assert reads.count == 3


def test_a_file_written_just_now_is_read_every_time(tmp_path: Path) -> None:
    program = tmp_path / "engine"
    program.write_bytes(b"x" * SIZE)
    reads = Reads()
    for _ in range(2):
        assert digests.file_sha256(str(program), reads) == hashlib.sha256(b"x" * SIZE).digest()
    assert reads.count == 2


def test_a_small_file_is_read_every_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _settled_now(monkeypatch)
    module = tmp_path / "bot.py"
    module.write_text("x = 1\n")
    reads = Reads()
    for _ in range(2):
        assert digests.file_sha256(str(module), reads) == hashlib.sha256(b"x = 1\n").digest()
    assert reads.count == 2


def test_two_engines_of_one_program_read_it_once_with_the_version_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stockfish against itself with other options: the program is read once; each version is
    the hash of the command line and the program's name and SHA-256, as before the cache."""
    _settled_now(monkeypatch)
    program = tmp_path / "engine"
    data = os.urandom(SIZE)
    program.write_bytes(data)
    program.chmod(0o755)
    reads = _scan_reads(monkeypatch)
    monkeypatch.chdir(tmp_path)
    refs = [resolve(f"uci:{program} option.Hash={n}") for n in (16, 32)]
    assert reads == [str(program)]
    for ref in refs:
        expected = hashlib.sha256(ref.target.encode())
        expected.update(b"\0" + str(program).encode() + b"\0")
        expected.update(hashlib.sha256(data).digest())
        assert ref.sha256 == expected.hexdigest()


def test_a_file_that_changes_while_it_is_read_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _settled_now(monkeypatch)
    program = tmp_path / "engine"
    program.write_bytes(b"a" * SIZE)
    count = 0

    def read_then_rebuilt(path: str) -> bytes:
        nonlocal count
        count += 1
        data = Path(path).read_bytes()
        if count == 1:
            with open(path, "ab") as fh:
                fh.write(b"more")
        return data

    digests.file_sha256(str(program), read_then_rebuilt)
    assert (
        digests.file_sha256(str(program), read_then_rebuilt)
        == hashlib.sha256(b"a" * SIZE + b"more").digest()
    )
    assert count == 2


def test_a_file_read_by_one_thread_is_waited_for_not_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A digest asked for while another thread reads the same file waits for that reading
    and gets its digest: the file is read once."""
    _settled_now(monkeypatch)
    program = tmp_path / "engine"
    data = os.urandom(SIZE)
    program.write_bytes(data)
    reading, again, finish, waits = (threading.Event() for _ in range(4))
    reads: list[str] = []

    class Noted(threading.Event):
        def wait(self, timeout: float | None = None) -> bool:
            waits.set()
            return super().wait(timeout)

    monkeypatch.setattr(digests.threading, "Event", Noted)

    def slow(path: str) -> bytes:
        reads.append(path)
        (again if reading.is_set() else reading).set()
        assert finish.wait(30)  # held until the second asker waits, or reads too
        return Path(path).read_bytes()

    found: list[bytes] = []
    first = threading.Thread(target=lambda: found.append(digests.file_sha256(str(program), slow)))
    first.start()
    assert reading.wait(30)
    second = threading.Thread(target=lambda: found.append(digests.file_sha256(str(program), slow)))
    second.start()
    end = time.monotonic() + 30
    while not (waits.is_set() or again.is_set()) and time.monotonic() < end:
        waits.wait(0.01)  # the second asker is either waiting or reading
    finish.set()
    first.join(30)
    second.join(30)
    assert found == [hashlib.sha256(data).digest()] * 2
    assert reads == [str(program)]
    assert not digests._reading


def test_a_file_not_kept_by_the_reader_is_read_by_the_waiter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reading that ends without keeping a digest (the file changed meanwhile, or failed)
    leaves the waiter to read the file itself: never a stale or missing digest."""
    _settled_now(monkeypatch)
    program = tmp_path / "engine"
    program.write_bytes(b"a" * SIZE)
    reading, finish = threading.Event(), threading.Event()

    def failing(path: str) -> bytes:
        reading.set()
        assert finish.wait(30)
        raise OSError("gone")

    errors: list[BaseException] = []

    def first_reader() -> None:
        try:
            digests.file_sha256(str(program), failing)
        except OSError as exc:
            errors.append(exc)

    first = threading.Thread(target=first_reader)
    first.start()
    assert reading.wait(30)
    found: list[bytes] = []
    second = threading.Thread(
        target=lambda: found.append(
            digests.file_sha256(str(program), lambda p: Path(p).read_bytes())
        )
    )
    second.start()
    finish.set()
    first.join(30)
    second.join(30)
    assert [str(e) for e in errors] == ["gone"]
    assert found == [hashlib.sha256(b"a" * SIZE).digest()]


def test_hash_ahead_hashes_the_programs_so_the_resolve_reads_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new run's programs are hashed on a thread before their resolve: the resolve then
    reads no program, and its version is the one a resolve alone gives. Specs that run no
    program start no thread; a spec that cannot be resolved raises nothing on the thread."""
    _settled_now(monkeypatch)
    program = tmp_path / "engine"
    program.write_bytes(os.urandom(SIZE))
    program.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    spec = f"uci:{program} name=e option.Hash=16"
    alone = resolve(spec)
    digests.forget()
    assert hash_ahead(["random", "alphabeta:depth=2"]) is None
    thread = hash_ahead(["random", spec, "uci:/no/such/engine"])
    assert thread is not None
    thread.join(30)
    reads = _scan_reads(monkeypatch)
    assert resolve(spec) == alone
    assert reads == []
