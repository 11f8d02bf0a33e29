"""``arena serve``: the web site and the JSON API (``arena/server/``) on uvicorn."""

from __future__ import annotations

import importlib
from typing import Annotated

import typer

from bot_arena.arena.cli.common import (
    DbOption,
    fail,
    open_db,
    open_writable_db,
    warn_unconfined,
)
from bot_arena.arena.cli.option_sets import Sandboxing, with_option_sets
from bot_arena.arena.cli.tournament_cmd import RayAddressOption

#: the server's packages, by the module each brings (the ``bot-arena[server]`` extra)
SERVER_MODULES = ("starlette", "uvicorn", "python_multipart", "jinja2")
EXTRA = "bot-arena[server]"
#: how much lower the web side's CPU priority is than the ladders' runners' by default: readers
#: wait a little under load rather than slow the games (docs/server.md, "Readers and games")
WEB_NICE = 10


@with_option_sets
def serve_command(
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8000,
    open_registration: Annotated[
        bool,
        typer.Option(
            "--open-registration", help="Let visitors create accounts (off: `arena users add`)."
        ),
    ] = False,
    uploads_per_hour: Annotated[
        int, typer.Option("--uploads-per-hour", help="Uploads a user may try in any hour.")
    ] = 20,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            help="Play the ladders too: an `arena ladder run --jobs N` for each ladder nobody "
            "plays (off: leave them to `arena ladder run`).",
        ),
    ] = None,
    executor: Annotated[
        str | None,
        typer.Option("--executor", help="Play the ladders too, on this executor (local, ray)."),
    ] = None,
    ray_address: RayAddressOption = None,
    max_streams: Annotated[
        int,
        typer.Option(
            "--max-streams",
            help="Live standings streams open at once (more: 503); 8 per client address.",
        ),
    ] = 1000,
    standings_age: Annotated[
        float,
        typer.Option(
            "--standings-age",
            help="Seconds a ladder's standings are answered without reading the database "
            "(0 to 60; longer spares a large field's fits, shorter shows a game sooner).",
        ),
    ] = 1.0,
    web_nice: Annotated[
        int,
        typer.Option(
            "--web-nice",
            help="With --jobs or --executor: how much lower the web side's CPU priority is than "
            "the ladders' runners' (a nice value, 0 to 19; 0: the same).",
        ),
    ] = WEB_NICE,
    sandboxing: Sandboxing = Sandboxing(),  # noqa: B008 (an option set: its options)
    db: DbOption = None,
) -> None:
    """Serve the site and the JSON API (docs/server.md): accounts, bot uploads validated in
    the sandbox, bots' and games' pages, standings. --sandbox and --allow-read confine the
    validation games' bots and, with --jobs or --executor, are handed on to the ladders'
    runners."""
    for module in SERVER_MODULES:
        try:
            importlib.import_module(module)
        except ImportError:
            fail(f"arena serve needs {module}, which is not installed: pip install '{EXTRA}'")
    if not 0 <= port <= 65535:
        fail(f"--port {port}: give a port from 0 to 65535")
    if not 1 <= uploads_per_hour <= 100_000:
        fail(f"--uploads-per-hour {uploads_per_hour}: give 1 to 100000")
    if not 1 <= max_streams <= 100_000:
        fail(f"--max-streams {max_streams}: give 1 to 100000")
    if not 0 <= standings_age <= 60:  # NaN fails too
        fail(f"--standings-age {standings_age:g}: give 0 to 60 seconds")
    if jobs is not None and not 1 <= jobs <= 1024:
        fail(f"--jobs {jobs}: give 1 to 1024")
    if not 0 <= web_nice <= 19:
        fail(f"--web-nice {web_nice}: give 0 to 19")
    if executor is not None and executor not in ("local", "ray"):
        fail(f"--executor {executor[:40]!r}: use local or ray")
    from bot_arena.arena.api.cluster import check_cluster
    from bot_arena.arena.api.sandbox import check_executor

    check_executor(executor or "local", ray_address)
    if executor == "ray":  # its runners would each fail (or wait on a dead address) later
        check_cluster(ray_address)
    from bot_arena.arena.api import passwords

    try:
        scrypt_n = passwords.cost()  # a bad $ARENA_SCRYPT_N: refused now, not at the first sign-up
    except ValueError as error:
        fail(str(error))
    confinement = sandboxing.confinement()
    writes = open_writable_db(db)  # creates and migrates the database if need be
    reads = open_db(db, write=False)
    warn_unconfined(confinement)
    if scrypt_n != passwords.N:
        typer.echo(
            f"arena: warning: ${passwords.COST_ENV}={scrypt_n} hashes new passwords and tokens"
            f" {passwords.N // scrypt_n} times cheaper than the default: a test suite's setting",
            err=True,
        )

    from bot_arena.arena.server.app import create_app, serve
    from bot_arena.arena.server.scratch import sweep
    from bot_arena.arena.server.settings import ServerSettings
    from bot_arena.games.files import BOT

    settings = ServerSettings(
        db=db,
        confinement=confinement,
        open_registration=open_registration,
        uploads_per_hour=uploads_per_hour,
        max_bot_bytes=BOT.limit(),
        play_ladders=jobs is not None or executor is not None,
        ladder_jobs=jobs,
        ladder_executor=executor or "local",
        ladder_ray_address=ray_address,
        ladder_sandbox=sandboxing.arguments(),
        web_nice=web_nice if jobs is not None or executor is not None else 0,
        max_streams=max_streams,
        standings_age=standings_age,
    )
    app = create_app(settings, reads, writes)
    sweep()  # the upload folders dead servers left behind
    typer.echo(f"arena: serving http://{host}:{port}/", err=True)
    serve(app, host, port)
