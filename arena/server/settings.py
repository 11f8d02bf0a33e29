"""What ``arena serve`` was started with, read by every part of the server."""

from __future__ import annotations

from dataclasses import dataclass

from bot_arena.arena.api.sandbox import Confinement

FORM_SLACK = 64 * 1024  # bytes of a multipart body beside the file (boundaries, the fields)
#: seconds a ladder's standings are answered without reading the database (the page polls
#: every 2 s, so no reader is shown standings older than one poll), by default
STANDINGS_MAX_AGE = 1.0


@dataclass(frozen=True)
class ServerSettings:
    db: str | None  # the database URL (None: $ARENA_DB, else arena.db)
    confinement: Confinement  # how the validation games' bots are confined
    open_registration: bool = False  # may a visitor create an account? (off: admins add users)
    uploads_per_hour: int = 20  # uploads a user may try in any hour (429 beyond)
    signins_per_hour: int = 20  # sign-in attempts under one name in any hour (429 beyond)
    concurrent_validations: int = 2  # validation games played at once (the others wait)
    max_bot_bytes: int = 16 * 1024 * 1024  # the bot file limit (games/files.py's BOT)
    play_ladders: bool = False  # run a `ladder run` process for each ladder (ladder_play.py)
    ladder_jobs: int | None = None  # their --jobs
    ladder_executor: str = "local"  # their --executor
    ladder_ray_address: str | None = None  # their --ray-address (with --executor ray)
    ladder_sandbox: tuple[str, ...] = ()  # their --sandbox and --allow-read, as given to serve
    web_nice: int = 0  # how much lower the web side's CPU priority is than the runners'
    max_streams: int = 1000  # live standings streams open at once (503 beyond: events.py)
    streams_per_client: int = 8  # of them from one client address (429 beyond)
    stream_poll: float = 0.5  # seconds between a watched ladder's reads for its streams
    stream_heartbeat: float = 15.0  # seconds of silence before a stream sends a comment
    # seconds a ladder's standings (and the ladder list) are answered without reading the
    # database: longer spares a large field's fits, shorter shows a stored game sooner
    standings_age: float = STANDINGS_MAX_AGE

    @property
    def max_upload_bytes(self) -> int:
        """The most a request body may hold: the bot file and the form around it."""
        return self.max_bot_bytes + FORM_SLACK
