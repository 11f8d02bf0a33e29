"""A bot given as an archive (issue 26): bombs, links, devices and names that leave the folder
are refused through the real command line (``arena bots add``, ``arena play --bot``) with one
line and exit 2, in bounded time, leaving the bundle cache and the database as they were; a
good archive is unpacked once into the cache, which is kept under its cap.

Every archive is built here, in ``tmp_path``; the large ones by hand (a zip's headers written
with ``struct``, its deflated zeros one compressed piece repeated), so a 2 GiB bomb costs the
test 2 MB and a few milliseconds.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import sqlite3
import stat
import struct
import subprocess
import sys
import tarfile
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot_arena.arena.match import archives, bundles
from bot_arena.arena.match.archives import ArchiveError, Limits
from tests import inprocess, needs

# each test runs the arena command (tournaments, several processes): seconds a test
pytestmark = pytest.mark.slow

MAIN = b"def choose_move(game, state, budget):\n    return game.legal_moves(state)[0]\n"
MIB = 1 << 20


def arena(*args: str, cache: Path, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` in ``cwd``, unpacking into ``cache``, in this process
    (``tests/inprocess.py``)."""
    return inprocess.run(*args, cwd=cwd, env={bundles.ROOT_ENV: str(cache), **env})


# -- archives built by hand ------------------------------------------------------------------


def _zeros(mib: int) -> tuple[bytes, int]:
    """Raw deflate of ``mib`` MiB of zeros, and its CRC-32: one piece, fully flushed (so every
    piece is the same bytes), repeated."""
    block = bytes(MIB)
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    piece = co.compress(block) + co.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(min(mib, 64)):  # past 64 MiB the CRC is not needed: refused before it
        crc = zlib.crc32(block, crc)
    return piece * mib + co.flush(), crc


def write_zip(
    path: Path, entries: list[tuple[str, bytes, int, int, int, int]], count: int | None = None
) -> Path:
    """A zip of (name, data, method, crc, declared size, unix mode) entries, headers as given;
    ``count``: the number of entries its end record says, when not the true one."""
    told = len(entries) if count is None else count
    out = io.BytesIO()
    central = b""
    for name, data, method, crc, size, mode in entries:
        raw = name.encode()
        offset = out.tell()
        out.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0x21, crc,
                              len(data), size, len(raw), 0))  # fmt: skip
        out.write(raw + data)
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x0314, 20, 0, method, 0,
                               0x21, crc, len(data), size, len(raw), 0, 0, 0, 0, mode << 16,
                               offset) + raw  # fmt: skip
    start = out.tell()
    out.write(central)
    out.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, told, told,
                          len(central), start, 0))  # fmt: skip
    path.write_bytes(out.getvalue())
    return path


def stored(name: str, data: bytes, mode: int = stat.S_IFREG | 0o644) -> tuple[Any, ...]:
    return (name, data, zipfile.ZIP_STORED, zlib.crc32(data), len(data), mode)


def zip_bomb(tmp: Path) -> Path:
    """2 GiB of zeros, declared honestly: about 2 MB on disk."""
    data, crc = _zeros(2048)
    bomb = ("zeros.bin", data, zipfile.ZIP_DEFLATED, crc, 2048 * MIB, 0o100644)
    return write_zip(tmp / "bomb.zip", [stored("main.py", MAIN), bomb])


def zip_liar(tmp: Path) -> Path:
    """A header that says 1,000 bytes over 64 MiB of deflated zeros."""
    data, crc = _zeros(64)
    liar = ("zeros.bin", data, zipfile.ZIP_DEFLATED, crc, 1000, 0o100644)
    return write_zip(tmp / "liar.zip", [stored("main.py", MAIN), liar])


def zip_ratio(tmp: Path) -> Path:
    """5 MiB of zeros in 5 kB, declared: under the total, over the ratio."""
    data, crc = _zeros(5)
    dense = ("zeros.bin", data, zipfile.ZIP_DEFLATED, crc, 5 * MIB, 0o100644)
    return write_zip(tmp / "ratio.zip", [stored("main.py", MAIN), dense])


def zip_many(tmp: Path) -> Path:
    empty = [stored(f"f{i}", b"") for i in range(10_001)]
    return write_zip(tmp / "many.zip", [stored("main.py", MAIN), *empty])


def zip_miscounted(tmp: Path) -> Path:
    """10,002 entries, its end record says 2."""
    empty = [stored(f"f{i}", b"") for i in range(10_001)]
    return write_zip(tmp / "miscounted.zip", [stored("main.py", MAIN), *empty], count=2)


def zip_entry(name: str, mode: int = stat.S_IFREG | 0o644) -> Callable[[Path], Path]:
    def build(tmp: Path) -> Path:
        odd = stored(name.format(tmp=tmp), b"x", mode)  # {tmp}: this test's folder
        return write_zip(tmp / "entry.zip", [stored("main.py", MAIN), odd])

    return build


def zip_twice(tmp: Path) -> Path:
    return write_zip(tmp / "twice.zip", [stored("main.py", MAIN), stored("./main.py", MAIN)])


def write_tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tf.addfile(info, None if data is None else io.BytesIO(data))
    return path


def tar_entry(name: str, kind: bytes, link: str = "") -> Callable[[Path], Path]:
    def build(tmp: Path) -> Path:
        odd = tarfile.TarInfo(name.format(tmp=tmp))  # {tmp}: this test's folder
        odd.type, odd.linkname, odd.devmajor, odd.devminor = kind, link, 1, 3
        data = b"x" if kind == tarfile.REGTYPE else None
        return write_tar(tmp / "entry.tar.gz", [(tarfile.TarInfo("main.py"), MAIN), (odd, data)])

    return build


def tar_zeros(tmp: Path) -> Path:
    """A 5 MiB file of zeros in a .tar.gz of a few kB: the decompressed stream's ratio."""
    return write_tar(
        tmp / "zeros.tar.gz",
        [(tarfile.TarInfo("main.py"), MAIN), (tarfile.TarInfo("zeros.bin"), bytes(5 * MIB))],
    )


def tar_many(tmp: Path) -> Path:
    members = [(tarfile.TarInfo(f"f{i}"), b"") for i in range(10_001)]
    return write_tar(tmp / "many.tar.gz", [(tarfile.TarInfo("main.py"), MAIN), *members])


# -- the command line --------------------------------------------------------------------------


def snapshot(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def dump(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return list(conn.iterdump())


@pytest.fixture(scope="module")
def registered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A database and a cache with one archive bot added through the command line."""
    tmp = tmp_path_factory.mktemp("registered")
    good = write_zip(tmp / "good.zip", [stored("main.py", MAIN)])
    cache, db = tmp / "cache", tmp / "arena.db"
    added = arena(
        *("bots", "add", str(good), "-n", "good", "-g", "tictactoe", "--db", str(db)),
        cache=cache,
        cwd=tmp,
    )
    assert added.returncode == 0, added.stderr
    assert len([p for p in cache.iterdir() if not p.name.startswith(".")]) == 1  # one bundle
    return db, cache


REFUSED = {
    "zip bomb": (zip_bomb, "'zeros.bin' declares 2147483648 bytes, over the 104857600"),
    "zip header that lies": (zip_liar, "cannot unpack bot archive"),
    "zip ratio": (zip_ratio, "'zeros.bin' declares 5242880 bytes, over 1"),
    "zip entries": (zip_many, "counts 10002 entries, over the 10000 allowed"),
    "zip entries miscounted": (zip_miscounted, "holds 10002 entries, over the 10000 allowed"),
    "zip symlink": (zip_entry("link", stat.S_IFLNK | 0o777), "'link' is a link"),
    "zip fifo": (zip_entry("pipe", stat.S_IFIFO | 0o644), "'pipe' is not a file or a folder"),
    "zip ..": (zip_entry("../evil"), "unsafe path '../evil'"),
    "zip absolute": (zip_entry("{tmp}/abs"), "unsafe path '/"),
    "zip same name twice": (zip_twice, "'./main.py' appears twice"),
    "tar.gz ratio": (tar_zeros, "expands past"),
    "tar entries": (tar_many, "more than 10000 entries"),
    "tar symlink": (tar_entry("link", tarfile.SYMTYPE, "/etc/passwd"), "'link' is a link"),
    "tar hard link": (tar_entry("hard", tarfile.LNKTYPE, "main.py"), "'hard' is a link"),
    "tar fifo": (tar_entry("pipe", tarfile.FIFOTYPE), "'pipe' is not a file or a folder"),
    "tar device": (tar_entry("null", tarfile.CHRTYPE), "'null' is not a file or a folder"),
    "tar ..": (tar_entry("../evil", tarfile.REGTYPE), "unsafe path '../evil'"),
    "tar absolute": (tar_entry("{tmp}/abs", tarfile.REGTYPE), "unsafe path '/"),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_hostile_archive_is_refused_leaving_nothing(
    case: str, registered: tuple[Path, Path], tmp_path: Path
) -> None:
    build, why = REFUSED[case]
    db, cache = tmp_path / "arena.db", tmp_path / "cache"
    shutil.copy(registered[0], db)
    shutil.copytree(registered[1], cache)
    before, rows = snapshot(cache), dump(db)
    archive = build(tmp_path)
    add = ("bots", "add", str(archive), "-n", "evil", "-g", "tictactoe", "--db", str(db))
    play = ("play", "tictactoe", "-b", str(archive), "-b", "random", "--db", str(db))
    for argv in (add, play):
        proc = arena(*argv, cache=cache, cwd=tmp_path)
        assert proc.returncode == 2, (argv[0], proc.stdout, proc.stderr)
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert why in proc.stderr, proc.stderr
        assert snapshot(cache) == before
        assert dump(db) == rows
    assert not (cache / "evil").exists() and not (tmp_path / "abs").exists()


@pytest.mark.timeout(60)
def test_limits_are_settable_and_checked(registered: tuple[Path, Path], tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    shutil.copytree(registered[1], cache)
    small = write_zip(tmp_path / "small.zip", [stored("main.py", MAIN), stored("a", b"x")])
    play = ("play", "tictactoe", "-b", str(small), "-b", "random", "--no-save")
    few = arena(*play, cache=cache, cwd=tmp_path, ARENA_ARCHIVE_ENTRIES="1")
    assert few.returncode == 2 and "counts 2 entries, over the 1 allowed" in few.stderr, few.stderr
    tiny = arena(*play, cache=cache, cwd=tmp_path, ARENA_ARCHIVE_BYTES="64")
    assert tiny.returncode == 2 and "over 64 bytes ($ARENA_ARCHIVE_BYTES)" in tiny.stderr, (
        tiny.stderr
    )
    named = write_zip(tmp_path / "named.zip", [stored("main.py", MAIN), stored("n" * 3000, b"")])
    play_named = ("play", "tictactoe", "-b", str(named), "-b", "random", "--no-save")
    wide = arena(*play_named, cache=cache, cwd=tmp_path, ARENA_ARCHIVE_ENTRIES="2")
    assert wide.returncode == 2 and "a central directory of 3099 bytes, over 2048" in wide.stderr
    zip64 = write_zip(tmp_path / "zip64.zip", [stored("main.py", MAIN)], count=0xFFFF)
    play64 = ("play", "tictactoe", "-b", str(zip64), "-b", "random", "--no-save")
    big = arena(*play64, cache=cache, cwd=tmp_path)
    assert big.returncode == 2 and "refused: a zip64 archive" in big.stderr, big.stderr
    bad = arena(*play, cache=cache, cwd=tmp_path, ARENA_ARCHIVE_RATIO="many")
    assert bad.returncode == 2 and "$ARENA_ARCHIVE_RATIO: 'many' is not" in bad.stderr
    assert bad.stderr.count("\n") == 1
    assert snapshot(cache) == snapshot(registered[1])


@pytest.mark.timeout(60)
def test_a_cache_that_is_not_ours_alone_is_refused(tmp_path: Path) -> None:
    good = write_zip(tmp_path / "good.zip", [stored("main.py", MAIN)])
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o777)
    cache.chmod(0o777)  # anyone could plant a bundle there
    proc = arena(
        *("play", "tictactoe", "-b", str(good), "-b", "random", "--no-save"),
        cache=cache,
        cwd=tmp_path,
    )
    assert proc.returncode == 2 and "is not a folder of this user's alone" in proc.stderr
    assert os.listdir(cache) == []


def confined_play(archive: Path, cache: Path, tmp: Path) -> dict[str, Any]:
    proc = arena(
        *("play", "tictactoe", "-b", str(archive), "-b", "random", "--json", "--no-save"),
        *("--sandbox", "on"),
        cache=cache,
        cwd=tmp,
    )
    if proc.returncode == 2 and "sandbox on:" in proc.stderr:
        needs.missing(needs.SANDBOX, proc.stderr.strip())
    assert proc.returncode == 0, proc.stderr
    record: dict[str, Any] = json.loads(proc.stdout)
    return record


@pytest.mark.timeout(120)
def test_a_good_archive_plays_confined_and_is_cached_once(tmp_path: Path) -> None:
    inner = "bot/"
    good = write_zip(
        tmp_path / "good.zip",
        [
            stored(inner, b"", stat.S_IFDIR | 0o755),
            stored(inner + "main.py", b"import helper\n" + MAIN.replace(b"[0]", b"[helper.K]")),
            stored(inner + "helper.py", b"K = -1\n"),
        ],
    )
    cache = tmp_path / "cache"
    first = confined_play(good, cache, tmp_path)
    assert first["seats"][0]["bot"] == "good" and first["seats"][0]["fault"] is None
    assert first["sandbox"] == "confined", first.get("sandbox")
    bundle = [p for p in cache.iterdir() if not p.name.startswith(".")]
    assert len(bundle) == 1 and (bundle[0] / "bot" / "helper.py").read_bytes() == b"K = -1\n"
    stamp = os.stat(bundle[0]).st_mtime_ns
    again = confined_play(good, cache, tmp_path)
    assert again["seats"][0]["version"] == first["seats"][0]["version"]
    assert [p for p in cache.iterdir() if not p.name.startswith(".")] == bundle
    assert os.stat(bundle[0]).st_mtime_ns >= stamp  # used again: the newest for the LRU


# -- the cache ---------------------------------------------------------------------------------

UNPACK = "import sys; from pathlib import Path; from bot_arena.arena.match import bundles; "


def unpack(archive: Path, cache: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``bundles.unpacked`` in a process of its own (which holds the bundle while it lives)."""
    code = UNPACK + f"print(bundles.unpacked(Path({str(archive)!r})))"
    environ = {**os.environ, bundles.ROOT_ENV: str(cache), **env}
    proc = subprocess.run(
        [sys.executable, "-c", code], env=environ, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def numbered(tmp: Path, i: int, size: int = 0) -> Path:
    return write_zip(
        tmp / f"bot{i}.zip", [stored("main.py", MAIN + f"# {i}\n".encode() + b"#" * size)]
    )


@pytest.mark.timeout(120)
def test_the_least_recently_used_bundles_go_past_the_cap(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    archives_ = [numbered(tmp_path, i, 20_000) for i in range(4)]
    for archive in archives_[:3]:
        unpack(archive, cache, ARENA_BUNDLE_CACHE="1M")
    made = {p.name: p.stat().st_mtime for p in cache.iterdir() if not p.name.startswith(".")}
    assert len(made) == 3
    oldest = min(made, key=made.__getitem__)
    os.utime(cache / oldest, (1, 1))  # make the order certain, whatever the clock's grain
    unpack(archives_[3], cache, ARENA_BUNDLE_CACHE="50K")  # room for two bundles of 21 kB
    left = {p.name for p in cache.iterdir() if not p.name.startswith(".")}
    assert len(left) == 2 and oldest not in left


@pytest.mark.timeout(120)
def test_a_bundle_in_use_is_kept_and_leftovers_are_removed(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    held = numbered(tmp_path, 0, 20_000)
    code = UNPACK + f"print(bundles.unpacked(Path({str(held)!r})), flush=True); sys.stdin.read()"
    environ = {**os.environ, bundles.ROOT_ENV: str(cache)}
    user = subprocess.Popen(
        [sys.executable, "-c", code], env=environ, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert user.stdout is not None
        in_use = Path(user.stdout.readline().decode().strip())
        os.utime(in_use, (1, 1))  # the least recently used of all
        dead = cache / f"{bundles.PARTIAL}dead-0000"  # an extraction whose process was killed
        (dead / "sub").mkdir(parents=True)
        unpack(numbered(tmp_path, 1, 20_000), cache, ARENA_BUNDLE_CACHE="30K")
        assert in_use.is_dir()  # over the cap, but a live process holds it
        assert not dead.exists()
    finally:
        user.communicate(b"", timeout=30)
    unpack(numbered(tmp_path, 2, 20_000), cache, ARENA_BUNDLE_CACHE="30K")
    assert not in_use.exists()  # its process is gone: now it may go


@pytest.mark.timeout(120)
def test_concurrent_extractions_of_one_archive_agree(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    files = [stored("main.py", MAIN)] + [stored(f"d/{i}.txt", os.urandom(4096)) for i in range(300)]
    archive = write_zip(tmp_path / "busy.zip", files)
    code = UNPACK + f"print(bundles.unpacked(Path({str(archive)!r})))"
    environ = {**os.environ, bundles.ROOT_ENV: str(cache)}
    procs = [
        subprocess.Popen([sys.executable, "-c", code], env=environ, stdout=subprocess.PIPE)
        for _ in range(4)
    ]
    outs = {p.communicate(timeout=60)[0] for p in procs}
    assert all(p.returncode == 0 for p in procs)
    assert len(outs) == 1
    entries = sorted(p.name for p in cache.iterdir())
    assert len(entries) == 2 and entries[0] == bundles.LOCK, entries  # one bundle, no partial
    assert len(list((cache / entries[1] / "d").iterdir())) == 300


# -- the counting behind the headers ---------------------------------------------------------


def test_bytes_are_counted_as_written_not_as_declared(tmp_path: Path) -> None:
    budget = archives._Budget(tmp_path / "x.zip", Limits(total_bytes=100_000))
    with pytest.raises(ArchiveError, match="more than 100000 bytes unpacked"):
        budget.copy(io.BytesIO(bytes(200_000)), tmp_path / "a", "a", cap=1 << 30)
    ratio = archives._Budget(tmp_path / "x.zip", Limits())
    with pytest.raises(ArchiveError, match="'b' expands past 5000 bytes"):
        ratio.copy(io.BytesIO(bytes(200_000)), tmp_path / "b", "b", cap=5000)


@pytest.mark.timeout(120)
def test_an_extraction_in_progress_is_not_a_leftover(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While this process unpacks an archive, another one finishes its own and cleans the
    cache: the partial folder in progress is held, so it is left alone."""
    cache = tmp_path / "cache"
    monkeypatch.setenv(bundles.ROOT_ENV, str(cache))
    real = archives.extract

    def slow_extract(archive: Path, data: bytes, folder: Path, limits: Limits) -> int:
        assert folder.name.startswith(bundles.PARTIAL)
        unpack(numbered(tmp_path, 1), cache)  # its cleaning runs now, in another process
        assert folder.is_dir()
        return real(archive, data, folder, limits)

    monkeypatch.setattr(archives, "extract", slow_extract)
    bundle = bundles.unpacked(numbered(tmp_path, 0))
    assert (bundle / "main.py").read_bytes().startswith(MAIN)


def test_the_first_of_two_extractions_of_one_archive_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process renames the same archive's bundle into place while this one unpacks
    it: this one's copy is dropped and the other's used (a rename over a full folder fails)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv(bundles.ROOT_ENV, str(cache))
    archive = numbered(tmp_path, 0)
    real = archives.extract

    def raced(archive: Path, data: bytes, folder: Path, limits: Limits) -> int:
        other = tmp_path / "other"
        other.mkdir()
        real(archive, data, other, limits)
        (other / "theirs").write_text("")
        other.rename(cache / hashlib.sha256(data).hexdigest())
        return real(archive, data, folder, limits)

    monkeypatch.setattr(archives, "extract", raced)
    bundle = bundles.unpacked(archive)
    assert (bundle / "theirs").exists()
    assert sorted(p.name for p in cache.iterdir()) == [bundles.LOCK, bundle.name]
