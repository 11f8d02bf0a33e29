"""``arena users`` and ``arena serve``'s refusals at the command line: the token printed once
and stored only as a hash, one-line errors (exit 2) for bad names, taken names, a missing
password, and for ``arena serve`` without its extra."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from bot_arena.arena.api import accounts
from bot_arena.db.session import make_engine, session_factory
from tests import inprocess
from tests.server.conftest import start, tls

# servers and a process without the server's packages: seconds a test
pytestmark = pytest.mark.slow

#: run ``arena`` as if the server's packages were not installed
WITHOUT_SERVER = """
import sys
from importlib.abc import MetaPathFinder

class Missing(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("starlette", "uvicorn"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Missing())
from bot_arena.arena.cli.app import main
sys.argv[0] = "arena"
main()
"""


def arena(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` with ``stdin``, run in this process (the commands' output and exit codes
    are the subject here, not the process: tests/inprocess.py)."""
    return inprocess.run(*args, cwd=Path.cwd(), input=stdin)


def test_users_add_prints_the_token_once_and_stores_its_hash(tmp_path: Path) -> None:
    db = str(tmp_path / "a.db")
    added = arena("users", "add", "ann", "--admin", "--json", "--db", db)
    assert added.returncode == 0, added.stderr
    out = json.loads(added.stdout)
    assert out["user"]["name"] == "ann" and out["user"]["admin"] is True
    token = out["token"]
    assert token not in (tmp_path / "a.db").read_bytes().decode("latin-1")
    engine = make_engine(db)
    try:
        with session_factory(engine)() as session:
            found = accounts.user_for_token(session, token)
            assert found is not None and found.name == "ann"
            assert accounts.user_for_token(session, token[:-1] + "x") is None
    finally:
        engine.dispose()
    listed = json.loads(arena("users", "list", "--json", "--db", db).stdout)
    assert [u["name"] for u in listed] == ["ann"]
    assert "token" not in listed[0]


def test_users_add_refuses_in_one_line(tmp_path: Path) -> None:
    db = str(tmp_path / "a.db")
    assert arena("users", "add", "ann", "--db", db).returncode == 0
    for args, stdin, says in (
        (("ann",), "", "exists"),
        (("<b>x</b>",), "", "user name"),
        (("bo b",), "", "user name"),
        (("bob", "--password-stdin"), "", "no password"),
        (("bob", "--password-stdin"), "short\n", "8 characters"),
    ):
        refused = arena("users", "add", *args, "--db", db, stdin=stdin)
        assert refused.returncode == 2, refused
        assert refused.stderr.startswith("error: ") and says in refused.stderr
        assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
    suspended = arena("users", "suspend", "nobody", "--db", db)
    assert suspended.returncode == 2 and "no user named" in suspended.stderr


def test_serve_without_its_extra_is_one_line(tmp_path: Path) -> None:
    ran = subprocess.run(
        [sys.executable, "-c", WITHOUT_SERVER, "serve", "--db", str(tmp_path / "a.db")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert ran.returncode == 2, ran
    assert ran.stderr == (
        "error: arena serve needs starlette, which is not installed: "
        "pip install 'bot-arena[server]'\n"
    )
    assert not (tmp_path / "a.db").exists()


def test_serve_starts_in_a_fresh_folder_with_no_database_flag(tmp_path: Path) -> None:
    """A fresh clone: ``arena serve`` (only a free port given) makes arena.db and serves."""
    server = start(tmp_path, None)
    try:
        assert (tmp_path / "arena.db").is_file()
        with server.client() as client:
            assert client.get("/").status_code == 200
            assert client.get("/api/health").json() == {"ok": True}
    finally:
        server.stop()


def test_open_registration_makes_an_account_and_signs_it_in(tmp_path: Path) -> None:
    server = start(tmp_path, tmp_path / "a.db", "--open-registration")
    try:
        with httpx.Client(base_url=server.url, timeout=120, verify=tls()) as client:
            page = client.get("/register")
            assert page.status_code == 200
            csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
            assert csrf is not None
            data = {"csrf": csrf.group(1), "name": "newcomer", "password": "long enough"}
            made = client.post("/register", data=data)
            assert made.status_code == 303 and "arena_session=" in made.headers["set-cookie"]
            assert "signed in as <b>newcomer</b>" in client.get("/my").text
        with httpx.Client(base_url=server.url, timeout=120, verify=tls()) as other:
            csrf = re.search(r'name="csrf" value="([^"]+)"', other.get("/register").text)
            assert csrf is not None
            data["csrf"] = csrf.group(1)
            again = other.post("/register", data=data)  # the same name: refused
            assert again.status_code == 400 and "exists" in again.text
            refused = other.post("/register", data={**data, "name": "<script>x</script>"})
            assert refused.status_code == 400 and "&lt;script&gt;x" in refused.text
            assert "<script>x" not in refused.text
    finally:
        server.stop()
