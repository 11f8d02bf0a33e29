"""``arena submit``: a bot file handed to an ``arena serve`` over its HTTP API, as the web
upload does, and the server's answer made one line.

The server is a stranger too: what it answers is read within ``MAX_ANSWER`` bytes and a
deadline, must be a JSON object, and every text taken from it is shown as text (no terminal
escapes) and cut to a line. Every refusal, of the server or of the network, is an ArenaError
(the CLI's ``error: ...``, exit 2).

The token comes from ``--token-file``, else ``$ARENA_TOKEN``, else the file
``$XDG_CONFIG_HOME/bot-arena/token`` (``~/.config/bot-arena/token``): never from the command
line, where ``ps`` and the shell's history would show it."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from bot_arena.arena.api.errors import ArenaError

if TYPE_CHECKING:
    import httpx

#: where a ladder takes uploads (hserve1's endpoint): the one place the path is written
UPLOAD_PATH = "/api/ladders/{ladder}/bots"
TOKEN_ENV = "ARENA_TOKEN"
MAX_ANSWER = 256 * 1024  # bytes of the server's answer read at most
MAX_TOKEN = 256  # characters of a token (the server reads no longer Authorization)
MAX_SHOWN = 300  # characters of a server's message shown
EXTRA = "bot-arena[server]"
ENDINGS = (".tar.gz", ".tgz", ".tar", ".zip", ".py")
_TOKEN = re.compile(r"[\x21-\x7e]+")  # printable ASCII, no space: one header value


@dataclass(frozen=True)
class Submitted:
    """A stored upload: the bot, its version, whether the version is new, the answer."""

    bot: str
    owner: str
    version: int
    sha256: str
    new: bool
    answer: dict[str, Any]

    def line(self) -> str:
        state = "new version" if self.new else "already stored"
        return (
            f"{self.bot} version {self.version} ({self.sha256[:12]}, {state}), owner {self.owner}"
        )


def _shown(value: object) -> str:
    from bot_arena.arena.match.text import shown

    text = shown(value)
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "..."


def token_path() -> Path:
    """The token file read when neither ``--token-file`` nor ``$ARENA_TOKEN`` gives one."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "bot-arena" / "token"


def read_token(token_file: str | None = None) -> str:
    """The API token: ``token_file``'s first line, else ``$ARENA_TOKEN``, else the first line
    of ``token_path()``; checked to be one printable word."""
    from bot_arena.games.files import FileRefused, read_bytes

    if token_file is None and os.environ.get(TOKEN_ENV, "").strip():
        where, raw = f"${TOKEN_ENV}", os.environ[TOKEN_ENV]
    else:
        path = token_file if token_file is not None else str(token_path())
        if token_file is None and not os.path.exists(path):
            raise ArenaError(
                f"no API token: set ${TOKEN_ENV}, give --token-file, or write it to {path}"
            )
        try:
            data = read_bytes(path, "token file", 4096)
        except FileRefused as exc:
            raise ArenaError(str(exc)) from None
        where, raw = _shown(path), data.decode("utf-8", "replace")
    lines = raw.strip().splitlines()
    token = lines[0].strip() if lines else ""
    if not token or len(token) > MAX_TOKEN or not _TOKEN.fullmatch(token):
        raise ArenaError(
            f"the token in {where} is not an API token (one word, as `arena users add` prints)"
        )
    return token


def ladder_url(server: str, ladder: str) -> str:
    """The upload URL of ``ladder`` on ``server`` (http or https, a host, maybe a path)."""
    parts = urlsplit(server.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ArenaError(
            f"--server {_shown(server)}: give the server's URL, like http://127.0.0.1:8000"
        )
    if parts.query or parts.fragment or parts.username or parts.password:
        raise ArenaError(f"--server {_shown(server)}: give no query, fragment or credentials")
    if not ladder or len(ladder) > 200:
        raise ArenaError("--ladder: give the ladder's name")
    base = server.strip().rstrip("/")
    return base + UPLOAD_PATH.format(ladder=quote(ladder, safe=""))


def _bot_file(file: str, name: str | None) -> tuple[str, str, bytes]:
    """(bot name, file name sent, its bytes), the file read within the bot file limit."""
    from bot_arena.games.files import BOT, FileRefused, read_bytes

    base = os.path.basename(file)
    ending = next((e for e in ENDINGS if base.lower().endswith(e)), None)
    if ending is None:
        raise ArenaError(f"{_shown(file)}: a bot is a {', '.join(reversed(ENDINGS))} file")
    try:
        data = read_bytes(file, "bot file", BOT.limit())
    except FileRefused as exc:
        raise ArenaError(str(exc)) from None
    return name if name is not None else base[: -len(ending)], "bot" + ending, data


def submit_file(
    file: str,
    server: str,
    ladder: str,
    *,
    token: str,
    name: str | None = None,
    timeout: float = 300.0,
) -> Submitted:
    """Upload ``file`` to ``ladder`` on ``server`` as the user of ``token`` (the server
    validates it: that can take a while, hence the long default ``timeout``)."""
    bot, sent_as, data = _bot_file(file, name)
    return post_bot(ladder_url(server, ladder), token, {"name": bot}, sent_as, data, timeout)


def post_bot(
    url: str, token: str, fields: dict[str, str], filename: str, data: bytes, timeout: float
) -> Submitted:
    """POST the multipart upload to ``url`` and read the answer: a 201 becomes Submitted,
    anything else an ArenaError of one line."""
    try:
        import httpx
    except ImportError:
        raise ArenaError(
            f"arena submit needs httpx, which is not installed: pip install '{EXTRA}'"
        ) from None
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    try:
        with (
            httpx.Client(timeout=timeout, follow_redirects=False, trust_env=False) as client,
            client.stream(
                "POST", url, headers=headers, data=fields, files={"file": (filename, data)}
            ) as response,
        ):
            status, body = response.status_code, _bounded(response)
    except httpx.TimeoutException:
        raise ArenaError(f"{_shown(url)}: no answer within {timeout:g} s") from None
    except httpx.ConnectError as exc:
        raise ArenaError(f"{_shown(url)}: cannot connect ({_shown(exc) or 'refused'})") from None
    except httpx.HTTPError as exc:
        raise ArenaError(f"{_shown(url)}: {type(exc).__name__}: {_shown(exc)}") from None
    return _judge(status, body)


def _bounded(response: httpx.Response) -> bytes:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_ANSWER:
        raise ArenaError(
            f"the server's answer ({response.status_code}) is larger than {MAX_ANSWER} bytes"
        )
    body = bytearray()
    for chunk in response.iter_bytes():
        body += chunk
        if len(body) > MAX_ANSWER:
            raise ArenaError(
                f"the server's answer ({response.status_code}) is larger than {MAX_ANSWER} bytes"
            )
    return bytes(body)


#: what each refusal means to the user, before the server's own words
_MEANING = {
    401: "the server refused the token (set $ARENA_TOKEN, or give --token-file)",
    403: "not allowed",
    404: "not found (no such ladder, or a server without ladder uploads)",
    413: "too large",
    429: "too many uploads: try again later",
    503: "the server is busy: nothing was stored, try again",
}


def _judge(status: int, body: bytes) -> Submitted:
    try:
        answer = json.loads(body)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise ArenaError(f"the server answered {status} with something that is not a JSON object")
    if status == 201:
        return _stored(answer)
    message = _shown(answer.get("error", "")) or "no reason given"
    if status == 400:
        fault = answer.get("fault")
        evidence = answer.get("evidence")
        line = f"refused (400): {message}"
        if isinstance(fault, dict) and fault.get("termination") is not None:
            line += f"; fault: {_shown(fault['termination'])}"
        if isinstance(evidence, list) and evidence:
            line += "; evidence: " + " | ".join(_shown(e) for e in evidence[:8])
        raise ArenaError(_shown(line))
    meaning = _MEANING.get(status, "refused")
    raise ArenaError(f"{meaning} ({status}): {message}")


def _stored(answer: dict[str, Any]) -> Submitted:
    bot, version = answer.get("bot"), answer.get("version")
    if not isinstance(bot, dict) or not isinstance(version, dict):
        raise ArenaError("the server answered 201 without the bot and its version")
    number, sha = version.get("number"), version.get("sha256")
    if not isinstance(number, int) or not isinstance(sha, str):
        raise ArenaError("the server answered 201 without the version's number and SHA-256")
    return Submitted(
        _shown(bot.get("name", "")),
        _shown(bot.get("owner", "")),
        number,
        _shown(sha),
        version.get("new") is True,
        answer,
    )
