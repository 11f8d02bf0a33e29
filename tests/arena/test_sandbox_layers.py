"""Each confinement layer on its own, in a throw-away child process: what it allows and what it
refuses (the whole sandbox against real hostile bots is tests/arena/test_sandbox_attacks.py).

A layer this machine lacks is skipped with the reason the probe gives."""

from __future__ import annotations

import errno
import json
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from bot_arena.arena.transport.sandbox import confine, landlock, paths, seccomp, support
from bot_arena.arena.transport.sandbox.mode import (
    CONFINED,
    UNCONFINED,
    Mode,
    SandboxSettings,
    SandboxUnavailable,
    parse_mode,
)
from tests.needs import SANDBOX, missing, required

pytestmark = pytest.mark.sandbox

LAYERS, MISSING = support.probe()


def needs(layer: str) -> None:
    """Skip when this machine lacks ``layer``; fail where CI says every layer must work."""
    if layer not in LAYERS:
        missing(SANDBOX, f"this machine lacks {support.WHAT[layer]}")


def in_child(test: Callable[[], object]) -> object:
    """Run ``test`` in a forked child (layers are for good); its JSON-able result, or the
    text of the exception it raised."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            out: object = {"ok": test()}
        except BaseException as exc:  # the child reports everything, then leaves
            out = {"error": f"{type(exc).__name__}: {exc}"}
        os.write(w, json.dumps(out, default=str).encode())
        os._exit(0)
    os.close(w)
    chunks = []
    while chunk := os.read(r, 1 << 16):
        chunks.append(chunk)
    os.close(r)
    os.waitpid(pid, 0)
    result = json.loads(b"".join(chunks))
    return result.get("ok", result.get("error"))


def test_landlock_allows_what_it_lists_and_nothing_else(tmp_path: Path) -> None:
    needs(confine.LANDLOCK)
    readable = tmp_path / "readable"
    readable.mkdir()
    (readable / "book.txt").write_text("opening book")
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    work = tmp_path / "work"
    work.mkdir()

    def attempt() -> dict[str, str]:
        landlock.restrict([*confine.SYSTEM_READ], [str(work)], list_only=[str(tmp_path)])
        seen: dict[str, str] = {}
        for name, action in {
            "read allowed": lambda: (readable / "book.txt").read_text(),
            "read secret": lambda: secret.read_text(),
            "write work": lambda: (work / "out.txt").write_text("x"),
            "write beside": lambda: (tmp_path / "planted.txt").write_text("x"),
            "list folder": lambda: sorted(os.listdir(tmp_path)),
        }.items():
            try:
                seen[name] = repr(action())
            except PermissionError:
                seen[name] = "denied"
        return seen

    # "readable" is not in the read list yet: the folder is listable, its files are not
    seen = in_child(attempt)
    assert isinstance(seen, dict)
    assert seen["read allowed"] == "denied" and seen["read secret"] == "denied"
    assert seen["write beside"] == "denied" and seen["write work"] != "denied"
    assert "secret.txt" in seen["list folder"]
    assert not (tmp_path / "planted.txt").exists()

    def attempt_with_book() -> str:
        landlock.restrict([str(readable)], [])
        return (readable / "book.txt").read_text()

    assert in_child(attempt_with_book) == "opening book"


def test_landlock_refuses_tcp_connections() -> None:
    needs(confine.LANDLOCK)
    if landlock.abi() < 4:
        pytest.skip("Landlock ABI < 4: no TCP rules on this kernel")
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def attempt() -> str:
        landlock.restrict([*confine.SYSTEM_READ], [])
        try:
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
        except PermissionError:
            return "denied"
        return "connected"

    try:
        assert in_child(attempt) == "denied"
    finally:
        listener.close()


def test_seccomp_takes_every_socket_away_but_socketpair(tmp_path: Path) -> None:
    needs(confine.SECCOMP)
    path = str(tmp_path / "listener.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen()

    def attempt() -> list[str]:
        seccomp.install()
        out = []
        for family in (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6):
            try:
                socket.socket(family, socket.SOCK_STREAM).close()
                out.append("created")
            except PermissionError as exc:
                out.append("denied" if exc.errno == errno.EACCES else str(exc))
        a, b = socket.socketpair()
        a.sendall(b"x")
        out.append(b.recv(1).decode())
        return out

    try:
        assert in_child(attempt) == ["denied", "denied", "denied", "x"]
    finally:
        listener.close()


def test_the_seccomp_program_jumps_where_it_says() -> None:
    """Walk the filter as the kernel would, for a few syscall numbers."""
    arch, socket_nr = 0xC000003E, 41
    code = seccomp.program(arch, socket_nr)

    def run(nr: int, audit_arch: int = arch) -> int:
        acc, pc = 0, 0
        while True:
            op, jt, jf, k = code[pc]
            if op == 0x20:
                acc = audit_arch if k == 4 else nr
                pc += 1
            elif op in (0x15, 0x35):
                hit = acc == k if op == 0x15 else acc >= k
                pc += 1 + (jt if hit else jf)
            else:
                return k

    allow, deny = 0x7FFF0000, 0x00050000 | errno.EACCES
    assert run(0) == allow and run(57) == allow  # read, fork
    assert run(socket_nr) == deny and run(425) == deny  # socket, io_uring_setup
    assert run(0x40000000 + 41) == deny  # x32 numbering
    assert run(41, audit_arch=0x40000003) == 0x80000000  # i386: killed


def test_namespaces_leave_no_network_and_show_only_the_bot(tmp_path: Path) -> None:
    needs(confine.NAMESPACES)
    work = tmp_path / "work"
    work.mkdir()
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    plan = confine.Plan((confine.NAMESPACES,), str(work), env={"HOME": str(work)})

    def attempt() -> dict[str, object]:
        confine.enter(plan)
        seen: dict[str, object] = {"pids": sorted(p for p in os.listdir("/proc") if p.isdigit())}
        try:
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
            seen["tcp"] = "connected"
        except OSError as exc:
            seen["tcp"] = exc.errno
        (work / "scratch").write_text("private")
        seen["env"] = dict(os.environ)
        seen["cwd"] = os.getcwd()
        return seen

    try:
        seen = in_child(attempt)
    finally:
        listener.close()
    assert isinstance(seen, dict)
    assert seen["pids"] == ["1", "2"]  # init and the bot
    assert seen["tcp"] == errno.ENETUNREACH
    assert seen["env"] == {"HOME": str(work)} and seen["cwd"] == str(work)
    assert list(work.iterdir()) == []  # it wrote into its own tmpfs, gone with it


def test_the_keeper_exits_as_the_bot_did(tmp_path: Path) -> None:
    needs(confine.NAMESPACES)
    plan = confine.Plan((confine.NAMESPACES,), str(tmp_path))
    for how, expected in ((lambda: os._exit(7), 7), (lambda: os.kill(os.getpid(), 9), -9)):
        pid = os.fork()
        if pid == 0:
            try:
                confine.enter(plan)
                how()
            finally:
                os._exit(99)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == expected


def test_python_closure_follows_imports_within_the_folder_only(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text("import helper\nfrom pkg import thing\nimport json\n")
    (tmp_path / "helper.py").write_text("import deeper\n")
    (tmp_path / "deeper.py").write_text("")
    (tmp_path / "other_bot.py").write_text("SECRET = 1\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    found = set(paths.python_closure(str(tmp_path / "bot.py")))
    names = {Path(p).name for p in found}
    assert names == {"bot.py", "helper.py", "deeper.py", "pkg"}


def test_command_paths_name_the_program_and_its_file_arguments(tmp_path: Path) -> None:
    net = tmp_path / "weights.nnue"
    net.write_text("w")
    found = paths.command_paths(["python3", str(tmp_path / "engine.py"), f"--net={net}"])
    assert str(net) in found and any(p.endswith("python3") or "python" in p for p in found)
    assert str(tmp_path / "engine.py") not in found  # not there: nothing to allow


def test_modes_parse_and_on_refuses_a_machine_that_lacks_a_layer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert parse_mode("ON") is Mode.ON
    monkeypatch.setenv("ARENA_SANDBOX", "off")
    assert parse_mode(None) is Mode.OFF
    with pytest.raises(ValueError, match=r"auto\|on\|off"):
        parse_mode("maybe")
    assert SandboxSettings.from_dict(
        SandboxSettings(Mode.ON, ("/x",)).to_dict()
    ) == SandboxSettings(Mode.ON, ("/x",))
    assert support.level_for(Mode.OFF) == (UNCONFINED, ())
    monkeypatch.setattr(support, "probe", lambda: (frozenset({confine.LANDLOCK}), ("seccomp",)))
    with pytest.raises(SandboxUnavailable, match="seccomp"):
        support.level_for(Mode.ON)
    assert support.level_for(Mode.AUTO) == ("partial", ("seccomp",))


def test_this_machine_confines_fully_when_ci_says_it_must() -> None:
    """CI sets ARENA_SANDBOX_REQUIRED=1: there, a missing layer is a failure, not a skip."""
    if not required(SANDBOX):
        pytest.skip(f"{SANDBOX} is not set (only CI insists on every layer)")
    assert support.level_for(Mode.AUTO) == (CONFINED, ()), MISSING


def test_plan_round_trips_through_json(tmp_path: Path) -> None:
    plan = confine.Plan(
        confine.LAYERS, str(tmp_path), ("/usr",), (str(tmp_path),), ("/x",), 8, {"A": "b"}
    )
    assert confine.Plan.from_json(plan.to_json()) == plan


def test_leftover_working_folders_of_dead_arenas_are_swept(tmp_path: Path) -> None:
    from bot_arena.arena.match import confinement

    child = subprocess.Popen(["true"])
    child.wait()
    tmp = Path(tempfile.gettempdir())
    gone = tmp / f"{confinement.WORK_PREFIX}{child.pid}-test"
    mine = tmp / f"{confinement.WORK_PREFIX}{os.getpid()}-test"
    for folder in (gone, mine):
        folder.mkdir()
        (folder / "left.txt").write_text("x")
    try:
        confinement.sweep_stale_work()
        assert not gone.exists() and mine.exists()
    finally:
        shutil.rmtree(gone, ignore_errors=True)
        shutil.rmtree(mine, ignore_errors=True)
