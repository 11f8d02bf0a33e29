"""What every request handler shares: the settings, the database, the checked tokens, the
upload limiter, the live standings streams."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from sqlalchemy.orm import Session, sessionmaker
from starlette.requests import Request

from bot_arena.arena.api.accounts import TokenCache
from bot_arena.arena.api.ladder_views import StandingsCache
from bot_arena.arena.server.events import Feeds
from bot_arena.arena.server.ratelimit import RateLimiter
from bot_arena.arena.server.ready import Derived, Recent
from bot_arena.arena.server.settings import STANDINGS_MAX_AGE, ServerSettings
from bot_arena.arena.server.validators import Validators

MAX_LADDER_PAGES = 500  # ladders whose page is kept rendered


@dataclass
class ServerState:
    settings: ServerSettings
    reads: sessionmaker[Session]  # a read-only engine: never waits for a writer (SQLite's WAL)
    writes: sessionmaker[Session]  # transactions that store (each takes the write lock first)
    tokens: TokenCache = field(default_factory=TokenCache)
    # ladders' standings: a fit a second at most (``create_app``: ``settings.standings_age``)
    standings: StandingsCache = field(
        default_factory=lambda: StandingsCache(max_age=STANDINGS_MAX_AGE)
    )
    limiter: RateLimiter = field(init=False)  # uploads, by user id
    signins: RateLimiter = field(init=False)  # sign-in attempts, by name
    validations: Validators = field(init=False)  # uploads' validation games (validators.py)
    feeds: Feeds = field(init=False)  # live standings streams (events.py)
    refreshes: set[asyncio.Task[None]] = field(default_factory=set)  # standings read afresh
    ladder_list: Recent = field(  # GET /api/ladders: a read a second at most
        default_factory=lambda: Recent(max_age=STANDINGS_MAX_AGE)
    )
    ladder_pages: Derived = field(  # a ladder's page for visitors not signed in, by ladder:
        default_factory=lambda: Derived(MAX_LADDER_PAGES)  # rendered once its standings change
    )

    def __post_init__(self) -> None:
        self.limiter = RateLimiter("upload", self.settings.uploads_per_hour, self.writes)
        self.signins = RateLimiter("signin", self.settings.signins_per_hour, self.writes)
        self.validations = Validators(self.settings.concurrent_validations)
        self.feeds = Feeds(
            max_streams=self.settings.max_streams,
            per_client=self.settings.streams_per_client,
            poll=self.settings.stream_poll,
            heartbeat=self.settings.stream_heartbeat,
        )

    def changed(self, ladder: str) -> None:
        """This server changed the ladder ``ladder`` (an entrant added or suspended, the
        ladder made): its standings and the ladder list are read afresh by the next reader."""
        self.standings.forget(ladder)
        self.ladder_list.forget()


def state_of(request: Request) -> ServerState:
    state = request.app.state.arena
    assert isinstance(state, ServerState)
    return state
