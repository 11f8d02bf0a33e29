"""Hostile bots against the sandbox: every attack of the issue's table, each by a small bot
(``tests/arena/fixtures/hostile/``, "Row N" in their docstrings), and a few more that look for
what the layers do not cover (a sibling module named in a dead import, file metadata, SysV IPC
and /dev/shm), through the ``arena`` command as a user runs it.

Each attack is played three ways, and judged from outside the arena:

- ``arena play`` with ``--sandbox on`` (so the suite fails loudly if this machine stops
  offering full confinement): the attack must fail. The earlier results in the database are
  unchanged and the file passes ``PRAGMA integrity_check``; no secret (a file the test plants,
  a variable of the arena's environment, another bot's source, the opponent's memory) appears
  anywhere in what was stored or printed; the test's TCP and unix-socket listeners accepted
  nothing; no file changed or appeared; no process of the bot is left; the opponent got no fault;
  and the match ended with a recorded result, stored as ``confined``.
- one ``arena tournament run --jobs 2`` in the default mode (``auto``, fully confined here) over
  an existing database with earlier results, every hostile bot in one gauntlet against the
  opponent: the same checks, per attacker and for the whole run.
- ``arena play`` with ``--sandbox off``: the same bots must get what they are after, so that the
  attacks are real and the confined tests mean something (each ``evidence`` function below says
  what counts as getting through; the confined tests require none of it).

The runs of each kind happen once, the attacks of a run concurrently (module fixtures; a
parallel run keeps a file on one worker); each test then judges one attack. A bot in an
unconfined run is aimed at the test's own arena only (see hostile_lib.py): its real pid is known
before it starts (the arena is held until the bots' config is written), and a stopped arena is
continued by the test.

The tournament's arena is a fresh ``python -P -m bot_arena.arena.cli.app`` (a shell wrapper
holds it, then execs it). The 36 ``arena play`` runs are forks of one server that started
Python, imported the command and probed the sandbox once (tests/arena/arena_forks.py: about
0.2 s of CPU a run, half of each run's): the same ``main()``, whose pool starts its own fork
server and confines its bots as a fresh arena's does, and whose command line and environment
in /proc are written to be the fresh one's (what the reader, the spy and the others look at).
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import os
import secrets
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Protocol

import pytest

from bot_arena.arena.match.confinement import PROCESS_CAP
from bot_arena.arena.transport.process import descendants
from tests import inprocess
from tests.arena import arena_forks
from tests.db.dbtest import sqlite_copy

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]

ARENA = [sys.executable, "-P", "-m", "bot_arena.arena.cli.app"]
# Holds the process until the test has written the bots' config (the arena's pid in it), then
# becomes the arena: the pid stays the same. A shell, not a Python interpreter: 37 runs each
# started one only to wait for a line (about 40 ms of CPU apiece); `exec` keeps the pid, the
# environment and the descriptors as os.execv did.
WRAPPER = ["/bin/sh", "-c", 'read -r _; exec "$@"', "arena-wrapper"]
HOSTILE = Path(__file__).resolve().parent / "fixtures" / "hostile"
RUN_TIMEOUT = 150.0  # seconds: a bound for a hung arena, far above a normal run (2-20 s)
GONE_TIMEOUT = 15.0  # seconds: a bound for a confined bot's processes to be gone after the arena
PARALLEL = 4  # arena runs at once (they wait as much as they compute)
PLAY_MEMORY_MB = 256  # `arena play --memory-mb` (2 of the hoarder's 4 children x 150 MB exceed it)
TOURNAMENT_MEMORY_MB = 1024  # the tournament's default limit (2 of 4 x 600 MB exceed it)
VICTIM = "victim"


@dataclass(frozen=True)
class Attack:
    """One hostile bot (``fixtures/hostile/<name>.py``) and the setting of its match."""

    name: str
    row: str
    victim_delay: float = 0.0  # the opponent's thinking time per move (seconds)
    victim_time: float = 5.0  # the opponent's move time in `arena play`
    thaw: bool = False  # the test continues a stopped arena at once (else only at the end)
    rival: bool = False  # in `arena play`, its opponent is the rival bot beside it


ATTACKS = [
    Attack("db_edit", "1 alter results: flip a result, delete a match, rename bots (SQL)"),
    Attack("db_overwrite", "1 alter results: overwrite the database file"),
    Attack("reader", "2 read files, the environment, /proc/*/environ|cmdline, others' sources"),
    Attack("importer", "2 read a sibling bot's source by naming it in a dead import", rival=True),
    Attack("net", "3 connect to a TCP listener and to a unix-socket listener"),
    Attack("writer", "4 write the working folder, other bots' files, the installed package"),
    Attack("metadata", "4 chmod/utime/setxattr the database and another bot's file"),
    Attack("daemon", "5 leave a double-forked setsid daemon"),
    Attack("quitter", "5 leave a setsid child behind a clean exit"),
    Attack("ipc", "5 leave a SysV message queue and a /dev/shm file behind"),
    Attack("forker", "5 start 200 processes"),
    Attack("hoarder", "5 several children holding memory together"),
    Attack("spy", "6 the referee's and fork server's environ/cmdline; the opponent's memory"),
    Attack("pipe_junk", "7 junk into the opponent's protocol pipes via /proc/PID/fd"),
    # the opponent answers well in time (0.5 s of 2 s) unless the referee is stopped (3.5 s)
    Attack("stopper", "7 SIGSTOP the referee during the opponent's turn", 0.5, 2.0),
    # the opponent is still thinking (1 s) when the fork server dies 0.1 s into its turn
    Attack("server_killer", "7 SIGKILL the fork server during the opponent's turn", 1.0, 3.0),
    Attack("freezer", "8 SIGSTOP the referee for good", thaw=True),
    Attack("killer", "8 SIGKILL the referee"),
]
BY_NAME = {a.name: a for a in ATTACKS}


# --- what a run leaves ----------------------------------------------------------------------------
@dataclass
class Secrets:
    file: str = field(default_factory=lambda: "FILESECRET-" + secrets.token_hex(16))
    env: str = field(default_factory=lambda: secrets.token_hex(16))
    rival: str = field(default_factory=lambda: "RIVALSECRET-" + secrets.token_hex(16))
    victim: str = field(default_factory=lambda: "VICTIMSECRET-" + secrets.token_hex(16))

    def as_dict(self) -> dict[str, str]:
        return {"file": self.file, "env": self.env, "rival": self.rival, "victim": self.victim}


@dataclass
class Match:
    """One hostile bot's match, as stored (or printed)."""

    status: str | None
    termination: str | None
    sandbox: str | None
    info: dict[str, Any] | None  # the attacker's first move's info
    attacker_fault: dict[str, Any] | None
    victim_fault: dict[str, Any] | None
    text: str  # everything of the match the attacker could write into: moves' info, faults


@dataclass(repr=False)
class Outcome:
    """Everything observed from outside about one arena run."""

    label: str
    mode: str
    memory_mb: int
    child_mb: int
    returncode: int | None
    stdout: str
    stderr: str
    matches: dict[str, Match]  # attacker name -> its match
    new_matches: int
    earlier_changed: list[str]  # earlier rows changed or gone
    integrity: str
    leaks: dict[str, list[str]]  # secret kind -> where it was found
    accepted: dict[str, list[bytes]]  # listener -> what each connection sent
    files_changed: dict[str, list[str]]  # "content" / "metadata" -> paths
    package_file: bool
    leftovers: list[str]  # processes of the bots after the arena: "pid cmdline"
    kernel_objects: list[str]  # the bots' SysV message queue and /dev/shm file, if left
    stopped: list[int]  # arena processes seen stopped during the run
    config: dict[str, Any]  # what the bots were told (hostile_config.py)
    secrets: dict[str, str]  # what they must not find
    summary: dict[str, Any] | None = None  # the tournament's --json summary

    def __repr__(self) -> str:
        return f"<{self.label}>"

    def describe(self) -> str:
        return (
            f"{self.label}: exit {self.returncode}\nstderr: {self.stderr[-2000:]}\n"
            f"stdout: {self.stdout[:1500]}"
        )


# --- the database ---------------------------------------------------------------------------------
@dataclass
class Db:
    """Every row of every table (and each table's column names), and PRAGMA integrity_check
    (or the error opening the file)."""

    rows: dict[str, list[tuple[Any, ...]]]
    columns: dict[str, list[str]]
    integrity: str

    @classmethod
    def read(cls, path: Path) -> Db:
        try:
            con = sqlite3.connect(path, timeout=10)
            try:
                tables = [
                    r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                ]
                rows = {t: [tuple(r) for r in con.execute(f'SELECT * FROM "{t}"')] for t in tables}
                columns = {
                    t: [r[1] for r in con.execute(f'PRAGMA table_info("{t}")')] for t in tables
                }
                check = "\n".join(str(r[0]) for r in con.execute("PRAGMA integrity_check"))
            finally:
                con.close()
        except sqlite3.DatabaseError as exc:
            return cls({}, {}, f"error: {exc}")
        return cls(rows, columns, check)

    def table(self, name: str) -> list[dict[str, Any]]:
        names = self.columns.get(name, [])
        return [dict(zip(names, row, strict=True)) for row in self.rows.get(name, [])]

    def text(self) -> str:
        """Every value of every column, as text (the place to look for a smuggled secret)."""
        out = []
        for table, values in self.rows.items():
            for row in values:
                for value in row:
                    if isinstance(value, bytes):
                        value = value.decode("utf-8", "replace")
                    if value is not None:
                        out.append(f"{table}: {value}")
        return "\n".join(out)

    def changed_since(self, before: Db) -> list[str]:
        out = []
        for table, rows in before.rows.items():
            now = set(self.rows.get(table, []))
            out += [f"{table}: {row!r} changed or gone" for row in rows if row not in now]
        return out

    def new_matches(self, before: Db) -> dict[str, Match]:
        """The hostile bots' matches among those not in ``before``, by attacker name."""
        old = {m["id"] for m in before.table("matches")}
        bots = {b["id"]: b["name"] for b in self.table("bots")}
        versions = {v["id"]: bots.get(v["bot_id"]) for v in self.table("bot_versions")}
        seats, moves = self.table("seats"), self.table("moves")
        out: dict[str, Match] = {}
        for match in self.table("matches"):
            if match["id"] in old:
                continue
            mine = sorted(
                (s for s in seats if s["match_id"] == match["id"]), key=lambda s: s["seat"]
            )
            names = [versions.get(s["bot_version_id"]) for s in mine]
            attacker = next((n for n in names if n and n != VICTIM), None)
            if attacker is None:
                continue
            a_seat = names.index(attacker)
            faults = [json.loads(s["fault"]) if s["fault"] else None for s in mine]
            played = sorted(
                (m for m in moves if m["match_id"] == match["id"]), key=lambda m: m["ply"]
            )
            own = [m for m in played if m["seat"] == a_seat]
            info = json.loads(own[0]["info"]) if own and own[0]["info"] else None
            text = "\n".join([*(str(m["info"]) for m in played), *(str(s["fault"]) for s in mine)])
            out[attacker] = Match(
                match["status"],
                match["termination"],
                match["sandbox"],
                info,
                faults[a_seat],
                faults[1 - a_seat] if len(faults) == 2 else None,
                text,
            )
        return out


def match_from_record(record: dict[str, Any], attacker: str) -> Match:
    seats = record["seats"]
    a_seat = next(i for i, s in enumerate(seats) if s["bot"] == attacker)
    mine = [m for m in record["moves"] if m["seat"] == a_seat]
    return Match(
        "printed",
        record["termination"],
        None,
        mine[0].get("info") if mine else None,
        seats[a_seat]["fault"],
        seats[1 - a_seat]["fault"],
        json.dumps(record),
    )


# --- files, processes, listeners ------------------------------------------------------------------
FileState = dict[str, tuple[str, int, int, tuple[str, ...]]]


def file_state(folders: list[Path], skip: set[Path]) -> FileState:
    """(content hash, mode, modification time, extended attributes) of every file beneath
    ``folders`` but ``skip`` (the database and its journals, which the arena writes) and Python's
    byte-code caches; a folder's own times change with what is written in it, so not kept."""
    out: FileState = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path in skip or "__pycache__" in path.parts:
                continue
            st = path.lstat()
            attrs = tuple(sorted(os.listxattr(path, follow_symlinks=False)))
            if path.is_dir():
                out[str(path)] = ("folder", st.st_mode, 0, attrs)
            else:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                out[str(path)] = (digest, st.st_mode, st.st_mtime_ns, attrs)
    return out


def db_meta(path: Path) -> tuple[int, tuple[str, ...]]:
    return path.stat().st_mode, tuple(sorted(os.listxattr(path)))


def compare_files(before: FileState, after: FileState) -> dict[str, list[str]]:
    """Paths whose content changed (or that appeared or went), and those whose content is the
    same but not their mode, time or attributes."""
    content = [p for p in after if p not in before or after[p][0] != before[p][0]]
    content += [p for p in before if p not in after]
    meta = [
        p for p in after if p in before and after[p][0] == before[p][0] and after[p] != before[p]
    ]
    return {"content": sorted(content), "metadata": sorted(meta)}


def read_proc(pid: str, name: str) -> bytes | None:
    """``/proc/PID/NAME`` (None once the process is gone)."""
    try:
        fd = os.open(f"/proc/{pid}/{name}", os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(fd, 1 << 16)
    except OSError:
        return None
    finally:
        os.close(fd)


def marked(config: dict[str, Any]) -> list[str]:
    """Live processes of this run's bots: named after it, or its ``sleep`` markers. One read
    of ``/proc/PID/stat`` a process (its name and state; a scan of the machine's hundreds of
    processes is most of the test process's own CPU), the command line only of those named
    after the run and of ``sleep``s (an exec'd ``/bin/sleep`` is named ``sleep``)."""
    out = []
    names = (config["COMM"].encode(), b"sleep")
    markers = (config["DAEMON_ARG"].encode(), config["QUIT_ARG"].encode())
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        stat = read_proc(entry, "stat")
        if stat is None:
            continue
        close = stat.rfind(b")")
        comm, state = stat[stat.find(b"(") + 1 : close], stat[close + 2 : close + 3]
        if state == b"Z" or comm not in names:
            continue
        cmd = (read_proc(entry, "cmdline") or b"").replace(b"\0", b" ").strip()
        if comm == names[0] or any(marker in cmd for marker in markers):
            out.append(f"{entry} {cmd.decode(errors='replace')}")
    return out


def kill_marked(config: dict[str, Any]) -> None:
    """End the processes an unconfined bot left (ours: found by this run's markers)."""
    left = marked(config)
    for line in left:
        with contextlib.suppress(OSError):
            os.kill(int(line.split()[0]), signal.SIGKILL)
    if left:
        assert wait_until(lambda: not marked(config), GONE_TIMEOUT), marked(config)


def kernel_objects(config: dict[str, Any]) -> list[str]:
    """The run's SysV message queue (in this, the host's, IPC namespace) and /dev/shm file."""
    out = []
    for line in Path("/proc/sysvipc/msg").read_text().splitlines()[1:]:
        if line.split()[0] == str(config["IPC_KEY"]):
            out.append(f"message queue {line.split()[:5]}")
    if Path(config["SHM_FILE"]).exists():
        out.append(config["SHM_FILE"])
    return out


def remove_kernel_objects(config: dict[str, Any]) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    queue = libc.msgget(ctypes.c_int(config["IPC_KEY"]), 0)
    if queue >= 0:
        libc.msgctl(queue, 0, None)  # IPC_RMID
    with contextlib.suppress(FileNotFoundError):
        os.unlink(config["SHM_FILE"])
    assert not kernel_objects(config)


def stopped_in(pids: list[int]) -> list[int]:
    out = []
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_bytes()
        except OSError:
            continue
        if stat[stat.rfind(b")") + 2 :].split()[0] in (b"T", b"t"):
            out.append(pid)
    return out


def wait_until(predicate: Callable[[], object], seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return bool(predicate())


class Listeners:
    """A TCP listener on 127.0.0.1 and a unix-socket listener in the run's folder."""

    def __init__(self, folder: Path) -> None:
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(16)
        self.path = folder / "l.sock"
        assert len(str(self.path)) < 100, self.path
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind(str(self.path))
        self.unix.listen(16)
        for sock in (self.tcp, self.unix):
            sock.setblocking(False)

    @property
    def port(self) -> int:
        return int(self.tcp.getsockname()[1])

    def accepted(self) -> dict[str, list[bytes]]:
        """What each connection made so far sent (accepting them all)."""
        out: dict[str, list[bytes]] = {}
        for name, sock in (("tcp", self.tcp), ("unix", self.unix)):
            got = []
            while True:
                try:
                    conn, _ = sock.accept()
                except BlockingIOError:
                    break
                with conn:
                    conn.settimeout(2)
                    try:
                        got.append(conn.recv(1024))
                    except OSError as exc:
                        got.append(repr(exc).encode())
            out[name] = got
        return out

    def close(self) -> None:
        self.tcp.close()
        self.unix.close()


# --- one run --------------------------------------------------------------------------------------
class Started(Protocol):
    """An arena process, started held (its pid known, nothing run yet)."""

    pid: int

    def go(self) -> None: ...
    def poll(self) -> int | None: ...
    def wait(self, timeout: float | None = None) -> int: ...
    def kill(self) -> None: ...


Start = Callable[[list[str], Path, dict[str, str], Path, Path], Started]


class Exec:
    """A fresh ``arena`` process (``python -P -m bot_arena.arena.cli.app``), held by the shell
    wrapper until the go."""

    def __init__(
        self, args: list[str], cwd: Path, env: dict[str, str], stdout: Path, stderr: Path
    ) -> None:
        with open(stdout, "wb") as out, open(stderr, "wb") as err:
            self.proc = subprocess.Popen(
                [*WRAPPER, *ARENA, *args],
                cwd=cwd,
                stdin=subprocess.PIPE,
                stdout=out,
                stderr=err,
                env=env,
            )
        self.pid = self.proc.pid

    def go(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"go\n")
        self.proc.stdin.close()

    def poll(self) -> int | None:
        return self.proc.poll()

    def wait(self, timeout: float | None = None) -> int:
        return self.proc.wait(timeout)

    def kill(self) -> None:
        self.proc.kill()


def forked(server: arena_forks.Server) -> Start:
    """Arena processes forked from ``server`` (tests/arena/arena_forks.py)."""

    def start(
        args: list[str], cwd: Path, env: dict[str, str], stdout: Path, stderr: Path
    ) -> Started:
        return server.start(args, cwd=cwd, env=env, stdout=stdout, stderr=stderr)

    return start


@dataclass
class Folders:
    base: Path
    cwd: Path
    alice: Path  # the hostile bots' folder (with a rival bot, which plays too)
    bob: Path  # the opponent's folder
    private: Path  # the secret file

    @classmethod
    def make(cls, base: Path) -> Folders:
        made = cls(base, base / "cwd", base / "alice", base / "bob", base / "private")
        for folder in (made.cwd, made.alice, made.bob, made.private):
            folder.mkdir(parents=True)
        return made


def prepare(
    folders: Folders, attackers: list[str], keys: Secrets, delay: float, child_mb: int
) -> dict[str, Any]:
    """Write the bots, the secret file and the parts of the config known before the run."""
    for name in [*attackers, "hostile_lib"]:
        shutil.copy(HOSTILE / f"{name}.py", folders.alice / f"{name}.py")
    (folders.alice / "rival.py").write_text(
        f'"""Another bot in the same folder, in the field."""\n\nPLAN = {keys.rival!r}\n\n\n'
        "def choose_move(game, state, budget):\n    return game.legal_moves(state)[-1]\n"
    )
    shutil.copy(HOSTILE / "victim.py", folders.bob / "victim.py")
    (folders.bob / "victim_secret.py").write_text(f"SECRET = {keys.victim!r}\nDELAY = {delay!r}\n")
    (folders.private / "secret.txt").write_text(keys.file + "\n")
    mark = secrets.token_hex(8)
    number = int(mark, 16) % 10**9
    package = find_spec("bot_arena.arena")
    assert package is not None and package.submodule_search_locations
    db = folders.cwd / "arena.db"
    return {
        "TOKEN": str(db),
        "DB": str(db),
        "CWD_FILE": str(folders.cwd / f"pwned-{mark}.txt"),
        "SECRET_FILE": str(folders.private / "secret.txt"),
        "RIVAL_FILE": str(folders.alice / "rival.py"),
        "VICTIM_HELPER": str(folders.bob / "victim_secret.py"),
        "VICTIM_FILE": str(folders.bob / "victim.py"),
        "PACKAGE_FILE": str(Path(package.submodule_search_locations[0]) / f"pwned-{mark}.txt"),
        "COMM": f"hx{mark[:12]}",
        "IPC_KEY": int(mark[:7], 16) + 1,
        "SHM_FILE": f"/dev/shm/arena-pwned-{mark}",
        "DAEMON_ARG": f"987.{number}",
        "QUIT_ARG": f"986.{number}",
        "FORKS": 200,
        "CHILDREN": 4,
        "CHILD_MB": child_mb,
        "HOARD_WAIT_S": 5.0,
        "STOP_S": 3.5,
    }


def arena_env() -> dict[str, str]:
    """The environment an arena runs in (without the secret a run adds)."""
    return {k: v for k, v in os.environ.items() if k not in ("ARENA_SANDBOX", "ARENA_DB")}


def write_config(folder: Path, config: dict[str, Any]) -> None:
    lines = [f"{key} = {value!r}" for key, value in sorted(config.items())]
    (folder / "hostile_config.py").write_text("\n".join(lines) + "\n")


def run(
    label: str,
    base: Path,
    template: Path,
    attackers: list[str],
    args: Callable[[Folders], list[str]],
    *,
    start: Start,
    mode: str,
    memory_mb: int,
    child_mb: int,
    delay: float = 0.0,
    thaw: bool = False,
    tournament: bool = False,
) -> Outcome:
    """Run the arena with ``args`` (given the folders) once, and observe everything."""
    folders = Folders.make(base)
    keys = Secrets()
    config = prepare(folders, attackers, keys, delay, child_mb)
    db = folders.cwd / "arena.db"
    sqlite_copy(template, db)
    earlier = Db.read(db)
    listeners = Listeners(folders.base)
    config.update(TCP_PORT=listeners.port, UNIX_SOCKET=str(listeners.path))
    watched = [folders.cwd, folders.alice, folders.bob, folders.private]
    env = {**arena_env(), "ARENA_TEST_SECRET": keys.env}
    out_path, err_path = folders.base / "stdout", folders.base / "stderr"
    stopped: set[int] = set()
    proc: Started | None = None
    try:
        proc = start(args(folders), folders.cwd, env, out_path, err_path)
        config["REFEREE_PID"] = proc.pid
        write_config(folders.alice, config)
        journals = {db, *(db.with_name(db.name + end) for end in ("-wal", "-shm", "-journal"))}
        files_before = file_state(watched, journals)
        db_before = db_meta(db)
        proc.go()
        end = time.monotonic() + RUN_TIMEOUT
        while proc.poll() is None and time.monotonic() < end:
            frozen = stopped_in([proc.pid, *descendants(proc.pid)])
            stopped.update(frozen)
            if frozen and thaw:
                for pid in frozen:
                    os.kill(pid, signal.SIGCONT)
            time.sleep(0.02)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
            raise AssertionError(f"{label}: the arena did not finish in {RUN_TIMEOUT} s")
        if mode != "off":  # a confined bot's processes die with its namespace, just after it
            wait_until(lambda: not marked(config), GONE_TIMEOUT)
        leftovers = marked(config)
        after = Db.read(db)
        stdout = out_path.read_text(errors="replace")
        stderr = err_path.read_text(errors="replace")
        matches = after.new_matches(earlier)
        summary = None
        if tournament and proc.poll() == 0:
            summary = json.loads(stdout)
        elif not tournament:  # what `play --json` printed, when the database lost the match
            with contextlib.suppress(ValueError, KeyError, StopIteration, IndexError):
                printed = match_from_record(json.loads(stdout), attackers[0])
                stored = matches.get(attackers[0])
                if stored is None:
                    matches[attackers[0]] = printed
                else:
                    stored.text += "\n" + printed.text
        # the rival plays too, so its source (and the secret in it) is stored as its version's,
        # as every bot's is, and so is the victim's helper module (a bot's version holds the
        # modules it imports, as JSON): only a copy elsewhere is a leak
        stored = after.text()
        own = {"rival source": config["RIVAL_FILE"], "victim helper": config["VICTIM_HELPER"]}
        for label, path in own.items():
            code = Path(path).read_text()
            for form in (code, json.dumps(code)[1:-1]):  # as text, and inside a JSON string
                stored = stored.replace(form, f"<{label}>")
        text = {"database": stored, "stdout": stdout, "stderr": stderr}
        leaks = {
            kind: [where for where, body in text.items() if value in body]
            for kind, value in keys.as_dict().items()
        }
        files = compare_files(files_before, file_state(watched, journals))
        if db_meta(db) != db_before:
            files["metadata"].append(str(db))
        return Outcome(
            label=label,
            mode=mode,
            memory_mb=memory_mb,
            child_mb=child_mb,
            returncode=proc.poll(),
            stdout=stdout,
            stderr=stderr,
            matches=matches,
            new_matches=len(after.rows.get("matches", [])) - len(earlier.rows["matches"]),
            earlier_changed=after.changed_since(earlier),
            integrity=after.integrity,
            leaks={k: v for k, v in leaks.items() if v},
            accepted=listeners.accepted(),
            files_changed=files,
            package_file=Path(config["PACKAGE_FILE"]).exists(),
            leftovers=leftovers,
            kernel_objects=kernel_objects(config),
            stopped=sorted(stopped),
            config=config,
            secrets=keys.as_dict(),
            summary=summary,
        )
    finally:
        if proc is not None:
            for pid in stopped_in([proc.pid, *descendants(proc.pid)]):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGCONT)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        with contextlib.suppress(FileNotFoundError, KeyError):
            Path(config["PACKAGE_FILE"]).unlink()
        remove_kernel_objects(config)
        kill_marked(config)
        listeners.close()


def play_args(attack: Attack, mode: str) -> Callable[[Folders], list[str]]:
    def args(folders: Folders) -> list[str]:
        return [
            *["play", "tictactoe", "--bot", str(folders.alice / f"{attack.name}.py")],
            *[
                "--bot",
                str(folders.alice / "rival.py" if attack.rival else folders.bob / f"{VICTIM}.py"),
            ],
            *["--move-time", "5", "--move-time", str(attack.victim_time)],
            *["--memory-mb", str(PLAY_MEMORY_MB), "--seed", "1", "--json"],
            *["--sandbox", mode, "--db", f"sqlite:///{folders.cwd / 'arena.db'}"],
        ]

    return args


def play_all(mode: str, root: Path, template: Path, start: Start) -> dict[str, Outcome]:
    def one(attack: Attack) -> Outcome:
        return run(
            f"arena play --sandbox {mode}: {attack.name}",
            root / attack.name,
            template,
            [attack.name],
            play_args(attack, mode),
            start=start,
            mode=mode,
            memory_mb=PLAY_MEMORY_MB,
            child_mb=150,
            delay=attack.victim_delay,
            thaw=attack.thaw,
        )

    with ThreadPoolExecutor(PARALLEL) as pool:
        return dict(zip(BY_NAME, pool.map(one, ATTACKS), strict=True))


# --- fixtures -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database with earlier results: a finished tournament of two built-in bots."""
    folder = tmp_path_factory.mktemp("earlier")
    path = folder / "earlier.db"
    done = inprocess.run(  # earlier results, not a subject: no process of its own
        *["tournament", "run", "tictactoe", "--bot", "random", "--bot", "random:seed=1"],
        *["--games", "2", "--jobs", "1", "--seed", "3", "--move-time", "5", "--json"],
        *["--sandbox", "off", "--db", f"sqlite:///{path}"],
        cwd=folder,
    )
    assert done.returncode == 0, done.stderr
    earlier = Db.read(path)
    assert earlier.integrity == "ok" and len(earlier.rows["matches"]) == 2, earlier
    return path


@pytest.fixture(scope="module")
def forks() -> Iterator[arena_forks.Server]:
    """The server the `arena play` runs are forked from (started in the environment they run
    in, less the secret each run adds)."""
    server = arena_forks.Server(arena_env())
    yield server
    server.close()


@pytest.fixture(scope="module")
def confined_plays(
    template: Path, tmp_path_factory: pytest.TempPathFactory, forks: arena_forks.Server
) -> dict[str, Outcome]:
    return play_all("on", tmp_path_factory.mktemp("on"), template, forked(forks))


@pytest.fixture(scope="module")
def unconfined_plays(
    template: Path, tmp_path_factory: pytest.TempPathFactory, forks: arena_forks.Server
) -> dict[str, Outcome]:
    return play_all("off", tmp_path_factory.mktemp("off"), template, forked(forks))


@pytest.fixture(scope="module")
def tournament(template: Path, tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    """Every hostile bot in one gauntlet against the opponent, in the default mode, run by a
    fresh ``arena`` process, as a user runs it."""
    names = [a.name for a in ATTACKS]

    def args(folders: Folders) -> list[str]:
        field_ = ["--bot", str(folders.bob / f"{VICTIM}.py")]
        for name in [*names, "rival"]:
            field_ += ["--bot", str(folders.alice / f"{name}.py")]
        return [
            *["tournament", "run", "tictactoe", *field_, "--format", "gauntlet"],
            *["--games", "1", "--jobs", "2", "--move-time", "5", "--seed", "11", "--json"],
            *["--db", f"sqlite:///{folders.cwd / 'arena.db'}"],
        ]

    return run(
        "arena tournament run --jobs 2 (default sandbox)",
        tmp_path_factory.mktemp("tournament"),
        template,
        names,
        args,
        mode="auto",
        memory_mb=TOURNAMENT_MEMORY_MB,
        start=Exec,
        child_mb=600,
        tournament=True,
    )


# --- what counts as getting through ---------------------------------------------------------------
def _info(outcome: Outcome, name: str) -> dict[str, Any]:
    match = outcome.matches.get(name)
    return match.info if match and match.info else {}


def _own_leaks(outcome: Outcome, name: str, kinds: tuple[str, ...]) -> list[str]:
    """Secrets the attacker's own match (its info, its faults) carries."""
    match = outcome.matches.get(name)
    text = match.text if match else ""
    return [f"the {kind} secret is in its match" for kind in kinds if outcome.secrets[kind] in text]


def _ok(info: dict[str, Any], *keys: str) -> list[str]:
    return [f"{key}: {info[key]}" for key in keys if info.get(key) in ("ok", "connected")]


def _victim_fault(outcome: Outcome, name: str) -> list[str]:
    match = outcome.matches.get(name)
    if match is not None and match.victim_fault is not None:
        return [f"the opponent was charged: {match.victim_fault}"]
    return []


def ev_db(outcome: Outcome, name: str) -> list[str]:
    out = [f"earlier results altered: {c}" for c in outcome.earlier_changed[:5]]
    if outcome.integrity != "ok":
        out.append(f"integrity check: {outcome.integrity[:200]}")
    return out + _ok(_info(outcome, name), "edited", "overwritten")


def ev_reader(outcome: Outcome, name: str) -> list[str]:
    info = _info(outcome, name)
    out = _own_leaks(outcome, name, ("file", "env", "rival"))
    if str(info.get("passwd", "")).startswith("root:"):
        out.append("read /etc/passwd")
    if info.get("proc_cmdline"):
        out.append(f"read the arena's command line: {info['proc_cmdline'][:1]}")
    if info.get("proc_environ"):
        out.append("read another process's environment")
    if not str(info.get("victim_source", "ERR")).startswith("ERR"):
        out.append("read the opponent's source")
    if info.get("own_memory") and not isinstance(info["own_memory"], str):
        out.append(f"found the arena's environment in its own memory: {info['own_memory']}")
    return out


def ev_importer(outcome: Outcome, name: str) -> list[str]:
    info = _info(outcome, name)
    out = _own_leaks(outcome, name, ("rival",))
    if not str(info.get("rival_source", "ERR")).startswith("ERR"):
        out.append("read the rival bot's source")
    return out


def ev_net(outcome: Outcome, name: str) -> list[str]:
    out = [f"{k} listener accepted {v}" for k, v in outcome.accepted.items() if v]
    return out + _ok(_info(outcome, name), "tcp", "unix")


def ev_writer(outcome: Outcome, name: str) -> list[str]:
    out = [f"changed or created {p}" for p in outcome.files_changed["content"]]
    if outcome.package_file:
        out.append(f"created {outcome.config['PACKAGE_FILE']}")
    return out + _ok(_info(outcome, name), "cwd", "rival", "victim", "package")


def ev_metadata(outcome: Outcome, name: str) -> list[str]:
    out = [f"changed the mode or attributes of {p}" for p in outcome.files_changed["metadata"]]
    keys = ("chmod_db", "chmod_rival", "utime_db", "utime_victim", "xattr_rival")
    return out + _ok(_info(outcome, name), *keys)


def _left(outcome: Outcome, marker: str) -> list[str]:
    return [f"left running: {line}" for line in outcome.leftovers if marker in line]


def ev_daemon(outcome: Outcome, name: str) -> list[str]:
    return _left(outcome, outcome.config["DAEMON_ARG"])


def ev_quitter(outcome: Outcome, name: str) -> list[str]:
    return _left(outcome, outcome.config["QUIT_ARG"])


def ev_ipc(outcome: Outcome, name: str) -> list[str]:
    return [f"left behind: {thing}" for thing in outcome.kernel_objects]


def ev_forker(outcome: Outcome, name: str) -> list[str]:
    forks = int(_info(outcome, name).get("forks", 0))
    return [f"{forks} processes started (cap {PROCESS_CAP})"] if forks > PROCESS_CAP else []


def ev_hoarder(outcome: Outcome, name: str) -> list[str]:
    info = _info(outcome, name)
    held = int(info.get("held", 0))
    total = held * outcome.child_mb
    if total > outcome.memory_mb:
        return [f"{held} children held {total} MB together (limit {outcome.memory_mb} MB)"]
    return []


def ev_spy(outcome: Outcome, name: str) -> list[str]:
    info = _info(outcome, name)
    out = _own_leaks(outcome, name, ("env", "victim"))
    for pid, seen in (info.get("referees") or {}).items():
        if "bot_arena.arena.cli.app" in seen.get("cmdline", ""):
            out.append(f"read the command line of the arena ({pid})")
    for kind in ("referees", "servers"):  # (a confined bot sees its own init as a server)
        for pid, seen in (info.get(kind) or {}).items():
            if isinstance(seen.get("environ"), list) and seen["environ"]:
                out.append(f"read the environment of {kind[:-1]} {pid}")
    for pid, found in (info.get("memory") or {}).items():
        if isinstance(found, list) and found:
            out.append(f"found the opponent's secret in the memory of {pid}")
    return out


def ev_pipe_junk(outcome: Outcome, name: str) -> list[str]:
    pipes = _info(outcome, name).get("pipes") or {}
    wrote = [
        f"wrote into {pid}'s fd {r}"
        for pid, rs in pipes.items()
        if isinstance(rs, list)
        for r in rs
        if r.endswith(": ok")
    ]
    return _victim_fault(outcome, name) + wrote[:3]


def ev_stopper(outcome: Outcome, name: str) -> list[str]:
    return _victim_fault(outcome, name) + ev_freezer(outcome, name)


def ev_server_killer(outcome: Outcome, name: str) -> list[str]:
    # unconfined, the kill gets through; the arena then stores no result rather than charge
    # the opponent (whose process died with the server), and says why
    killed = ["killed the fork server"] if "fork server died" in outcome.stderr else []
    return _victim_fault(outcome, name) + killed


def ev_freezer(outcome: Outcome, name: str) -> list[str]:
    return [f"arena processes stopped: {outcome.stopped}"] if outcome.stopped else []


def ev_killer(outcome: Outcome, name: str) -> list[str]:
    if outcome.returncode == -signal.SIGKILL:
        return ["the arena was killed"]
    return []


EVIDENCE: dict[str, Callable[[Outcome, str], list[str]]] = {
    "db_edit": ev_db,
    "db_overwrite": ev_db,
    "reader": ev_reader,
    "importer": ev_importer,
    "net": ev_net,
    "writer": ev_writer,
    "metadata": ev_metadata,
    "daemon": ev_daemon,
    "quitter": ev_quitter,
    "ipc": ev_ipc,
    "forker": ev_forker,
    "hoarder": ev_hoarder,
    "spy": ev_spy,
    "pipe_junk": ev_pipe_junk,
    "stopper": ev_stopper,
    "server_killer": ev_server_killer,
    "freezer": ev_freezer,
    "killer": ev_killer,
}
assert set(EVIDENCE) == set(BY_NAME)
# attacks that may cost a confined attacker its game, and so its report (its own fault): the
# hoarder killed by its unit's memory cap
MAY_LOSE = {"hoarder"}


def check_match(outcome: Outcome, name: str, level: str) -> None:
    """The attacker's match ended with a recorded result, stored with its sandbox level, the
    opponent was not charged, and the attack really ran (its report is there)."""
    match = outcome.matches.get(name)
    assert match is not None, f"no recorded match of {name}\n{outcome.describe()}"
    assert match.status == "done" and match.termination, (match.status, match.termination)
    assert match.sandbox == level, f"stored as {match.sandbox!r}, not {level!r}"
    assert match.victim_fault is None, f"the opponent was charged: {match.victim_fault}"
    if match.info is None and name in MAY_LOSE:
        assert match.attacker_fault is not None, "no report and no fault"
    else:
        assert match.info and match.info.get("done"), f"the attack did not run: {match}"
        assert "crashed" not in match.info, match.info


def check_contained(outcome: Outcome) -> None:
    """Whatever bot ran: nothing of the arena's was touched and nothing leaked or stayed (every
    problem is listed at once)."""
    problems = [f"earlier results altered: {c}" for c in outcome.earlier_changed[:5]]
    if outcome.integrity != "ok":
        problems.append(f"integrity check: {outcome.integrity[:200]}")
    problems += [f"the {kind} secret is in: {where}" for kind, where in outcome.leaks.items()]
    problems += [f"the {k} listener accepted {v}" for k, v in outcome.accepted.items() if v]
    problems += [
        f"{kind} changed: {paths}" for kind, paths in outcome.files_changed.items() if paths
    ]
    if outcome.package_file:
        problems.append("a file appeared in the installed package")
    problems += [f"outlived the arena: {line}" for line in outcome.leftovers]
    problems += [f"left behind: {thing}" for thing in outcome.kernel_objects]
    if outcome.stopped:
        problems.append(f"arena processes were stopped: {outcome.stopped}")
    assert not problems, "\n".join(problems)


# --- the tests ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(BY_NAME))
def test_a_confined_bot_gets_nothing_through_arena_play(
    name: str, confined_plays: dict[str, Outcome]
) -> None:
    outcome = confined_plays[name]
    assert outcome.returncode == 0, outcome.describe()
    assert outcome.new_matches == 1, outcome.describe()
    check_match(outcome, name, "confined")
    evidence = EVIDENCE[name](outcome, name)
    assert not evidence, f"{BY_NAME[name].row}: got through the sandbox: {evidence}"
    check_contained(outcome)


@pytest.mark.parametrize("name", list(BY_NAME))
def test_a_confined_bot_gets_nothing_through_a_parallel_tournament(
    name: str, tournament: Outcome
) -> None:
    check_match(tournament, name, "confined")
    evidence = EVIDENCE[name](tournament, name)
    assert not evidence, f"{BY_NAME[name].row}: got through the sandbox: {evidence}"


def test_the_tournament_ends_with_every_result_stored_and_nothing_touched(
    tournament: Outcome,
) -> None:
    assert tournament.returncode == 0, tournament.describe()
    summary = tournament.summary
    assert summary is not None and summary["status"] == "done", summary
    assert summary["progress"]["done"] == len(ATTACKS) + 1, summary["progress"]  # + the rival
    assert tournament.new_matches == len(ATTACKS) + 1
    assert set(tournament.matches) == {*BY_NAME, "rival"}
    check_contained(tournament)


@pytest.mark.parametrize("name", list(BY_NAME))
def test_an_unconfined_bot_gets_through(name: str, unconfined_plays: dict[str, Outcome]) -> None:
    """With --sandbox off the same bot gets what it is after: the attacks are real."""
    outcome = unconfined_plays[name]
    evidence = EVIDENCE[name](outcome, name)
    assert evidence, f"{BY_NAME[name].row}: the attack did nothing unconfined\n{outcome.describe()}"


def test_a_forked_arena_looks_like_the_command_from_outside(
    forks: arena_forks.Server, tmp_path: Path
) -> None:
    """What the bots of a forked run see of its arena (the plays above are forks) is what they
    would see of a fresh one: its command line and environment in /proc, held until the go;
    the server's own command line names no arena."""
    env = {**arena_env(), "ARENA_TEST_SECRET": secrets.token_hex(16)}
    args = ["games", "--json"]
    started = forks.start(
        args, cwd=tmp_path, env=env, stdout=tmp_path / "out", stderr=tmp_path / "err"
    )
    cmdline = Path(f"/proc/{started.pid}/cmdline").read_bytes()
    assert cmdline.rstrip(b"\0") + b"\0" == b"".join(
        os.fsencode(a) + b"\0" for a in (*ARENA, *args)
    )
    environ = Path(f"/proc/{started.pid}/environ").read_bytes().rstrip(b"\0").split(b"\0")
    assert environ == [os.fsencode(f"{k}={v}") for k, v in env.items()]
    assert started.poll() is None and not (tmp_path / "out").read_bytes()  # held
    started.go()
    assert started.wait(RUN_TIMEOUT) == 0, (tmp_path / "err").read_text()
    assert "tictactoe" in (tmp_path / "out").read_text()
    server = Path(f"/proc/{forks.pid}/cmdline").read_bytes()
    assert b"bot_arena" not in server and server.startswith(b"arena-forks\0")
