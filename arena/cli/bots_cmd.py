"""``arena bots add|list|show|check``: submitted bots, validated in a worker, stored by version.

Validation is Kaggle's validation episode: the bot loads in a worker, answers the handshake and
plays one game in every seat against ``random`` without a fault. Only then is it stored, with its
source and SHA-256, so results always point at the exact version that played.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bot_arena.arena.cli.common import (
    ArenaCommand,
    DbOption,
    command_group,
    echo_err,
    fail,
    fault_evidence,
    open_existing_db,
    open_writable_db,
)
from bot_arena.arena.cli.option_sets import Validation, with_option_sets
from bot_arena.arena.match.text import shown

if TYPE_CHECKING:  # loaded when a command runs, not for --help
    from bot_arena.arena.api.sandbox import Confinement
    from bot_arena.arena.match.botref import BotRef
    from bot_arena.arena.match.record import MatchRecord

bots_app = command_group(help="Submitted bots: validate, register, list.", no_args_is_help=True)

GameOption = Annotated[
    str | None,
    typer.Option(
        "--game", "-g", help="Game of the validation games (required: see `arena games`)."
    ),
]
ParamOption = Annotated[list[str] | None, typer.Option("--param", "-p", help="Game parameter k=v.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


def _check(
    path: str,
    game_name: str | None,
    params: list[str] | None,
    move_time: float,
    startup: float,
    confinement: Confinement,
    as_json: bool,
    anchored: bool = False,
) -> tuple[BotRef, list[MatchRecord]]:
    """Validate (the API's ``submit.validate``), or exit 1 with the fault and why (the bot's
    traceback or last words on stderr; with ``as_json`` one JSON object on stdout instead)."""
    from bot_arena.arena.api.submit import validate

    validation = validate(
        path,
        game_name,
        params,
        confinement,
        move_time=move_time,
        startup_s=startup,
        anchored=anchored,
        warn=echo_err,
    )
    ref, records = validation.ref, validation.records
    if validation.failed is None:
        return ref, records
    seat, fault = validation.failed
    if as_json:
        failed = {"seat": seat, "fault": fault.to_dict()}
        typer.echo(json.dumps({"ok": False, **validation.summary(), "failed": failed}))
        raise typer.Exit(1)
    why = "".join(f"\n  {line}" for line in fault_evidence(fault))
    fail(
        f"{shown(ref.name)} failed validation ({records[-1].game}, seat {seat}): "
        f"{fault.termination.value}: {fault.message}{why}",
        code=1,
    )


def _summary(ref: BotRef, records: list[MatchRecord]) -> dict[str, Any]:
    from bot_arena.arena.api.submit import Validation

    return Validation(ref, records).summary()


@bots_app.command("check", cls=ArenaCommand)
@with_option_sets
def check_command(
    path: Annotated[str, typer.Argument(help="FILE.py[:ATTR], pkg.mod:attr or cmd:<command>.")],
    game: GameOption = None,
    param: ParamOption = None,
    validation: Validation = Validation(),  # noqa: B008 (an option set: its options)
) -> None:
    """Validate a bot without storing it (exit 1 when it fails)."""
    v = validation
    ref, records = _check(
        path, game, param, v.move_time, v.startup_time, v.confinement(), v.as_json
    )
    summary = _summary(ref, records)
    if v.as_json:
        typer.echo(json.dumps({"ok": True, **summary}))
        return
    typer.echo(
        f"ok: {shown(ref.name)} ({ref.short_version}) played {summary['games']} validation game(s) "
        f"of {summary['game']}, {summary['moves']} moves, without a fault"
    )


@bots_app.command("add", cls=ArenaCommand)
@with_option_sets
def add_command(
    path: Annotated[str, typer.Argument(help="FILE.py[:ATTR], pkg.mod:attr or cmd:<command>.")],
    name: Annotated[str, typer.Option("--name", "-n", help="Name to register the bot under.")],
    game: GameOption = None,
    param: ParamOption = None,
    validation: Validation = Validation(),  # noqa: B008 (an option set: its options)
    db: DbOption = None,
) -> None:
    """Validate a bot, then store its source and SHA-256 as a version of NAME."""
    v = validation
    confinement = v.confinement()
    from bot_arena.arena.api.submit import check_bot_name, register

    name = check_bot_name(name)
    factory = open_writable_db(db)  # before the validation games, not after them
    ref, records = _check(
        path, game, param, v.move_time, v.startup_time, confinement, v.as_json, anchored=True
    )
    with factory.begin() as session:
        stored = register(session, name, ref)
    number, created = stored.number, stored.created
    out = {**_summary(ref, records), "name": name, "created": created, "version": number}
    if v.as_json:
        typer.echo(json.dumps(out))
        return
    what = f"new version {number}" if created else f"unchanged (already version {number})"
    typer.echo(f"{name}: {what}, sha256 {ref.sha256[:12]}")


def _version_row(v: Any, number: int) -> dict[str, Any]:
    return {
        "version": number,
        "sha256": v.sha256,
        "kind": v.kind,
        "target": v.target,
        "created": v.created.isoformat(timespec="seconds"),
    }


@bots_app.command("list", cls=ArenaCommand)
def list_command(as_json: JsonOption = False, db: DbOption = None) -> None:
    """The registered bots with their latest version."""
    from tabulate import tabulate

    from bot_arena.db.store import list_bots

    with open_existing_db(db).begin() as session:
        rows = [
            {
                "name": b.name,
                "versions": len(b.versions),
                **_version_row(b.versions[-1], len(b.versions)),
            }
            for b in list_bots(session)
            if b.versions
        ]
    if as_json:
        typer.echo(json.dumps(rows))
        return
    if not rows:
        typer.echo("no registered bots (add one with `arena bots add FILE.py --name NAME`)")
        return
    table = [
        [
            shown(r["name"]),
            r["versions"],
            r["sha256"][:12],
            r["kind"],
            shown(r["target"]),
            r["created"],
        ]
        for r in rows
    ]
    typer.echo(tabulate(table, headers=["bot", "versions", "latest", "kind", "target", "added"]))


@bots_app.command("show", cls=ArenaCommand)
def show_command(
    name: Annotated[str, typer.Argument(help="Registered bot name.")],
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Every version of a bot, oldest first."""
    from tabulate import tabulate

    from bot_arena.db.store import bot_versions

    with open_existing_db(db).begin() as session:
        rows = [_version_row(v, i + 1) for i, v in enumerate(bot_versions(session, name))]
    if not rows:
        fail(f"no bot named {name!r}")
    if as_json:
        typer.echo(json.dumps({"name": name, "versions": rows}))
        return
    typer.echo(f"{name}: {len(rows)} version(s)")
    table = [
        [r["version"], r["sha256"][:12], r["kind"], shown(r["target"]), r["created"]] for r in rows
    ]
    typer.echo(tabulate(table, headers=["version", "sha256", "kind", "target", "added"]))


def class_entries(folder: str) -> list[tuple[str, str]]:
    """(name, path) of each bot in ``folder``: every ``.py`` file and every subfolder holding
    ``main.py``, named after it, in name order; hidden and ``_`` names are left out."""
    from pathlib import Path

    from bot_arena.arena.match.botspec import MAIN

    root = Path(folder)
    if not root.is_dir():
        fail(f"{shown(folder)} is not a folder")
    found: list[tuple[str, str]] = []
    for entry in sorted(root.iterdir(), key=lambda p: p.name):
        if entry.name.startswith((".", "_")):
            continue
        if entry.is_file() and entry.suffix == ".py":
            found.append((entry.stem, str(entry)))
        elif entry.is_dir() and (entry / MAIN).is_file():
            found.append((entry.name, str(entry)))
    if not found:
        fail(f"{shown(folder)} holds no bot (.py files or folders with {MAIN})")
    return found


def _add_one(
    name: str,
    path: str,
    game: str,
    params: list[str] | None,
    move_time: float,
    startup: float,
    confinement: Confinement,
    factory: Any,
) -> dict[str, Any]:
    """Register one bot of a class (``add_all_command``) as ``bots add`` does (the API's
    ``submit``): its row of the summary."""
    from bot_arena.arena.api.errors import ArenaError
    from bot_arena.arena.api.submit import check_bot_name, register, validate

    row: dict[str, Any] = {"name": name, "path": path, "ok": False}
    try:
        check_bot_name(name)
        validation = validate(
            path, game, params, confinement, move_time=move_time, startup_s=startup
        )
    except ArenaError as exc:
        return {**row, "result": "refused", "why": str(exc)}
    if validation.failed is not None:
        seat, fault = validation.failed
        why = f"{fault.termination.value}: {fault.message}"
        return {**row, "result": "failed", "why": why, "seat": seat}
    with factory.begin() as session:
        registered = register(session, name, validation.ref)
    number = registered.number
    what = f"version {number}" + ("" if registered.created else " (unchanged)")
    return {**row, "ok": True, "result": "added", "why": what, "version": number}


@bots_app.command("add-all", cls=ArenaCommand)
@with_option_sets
def add_all_command(
    folder: Annotated[str, typer.Argument(help="A folder of bots: FILE.py and FOLDER/main.py.")],
    game: GameOption = None,
    param: ParamOption = None,
    validation: Validation = Validation(),  # noqa: B008 (an option set: its options)
    db: DbOption = None,
) -> None:
    """Register a class: each .py file and each folder with main.py in FOLDER is validated as
    `bots add` does and stored under its own name; a table says who passed and why not. Exit
    0 when every bot passed, 1 otherwise."""
    v = validation
    confinement = v.confinement()
    if game is None:
        fail("--game is required: the game to check the bots on (`arena games` lists them)")
    from bot_arena.arena.api.checks import load_game
    from bot_arena.arena.api.errors import ArenaError

    try:
        load_game(game, list(param or []))  # a bad game or parameter: one line, nothing run
    except ArenaError as exc:
        fail(str(exc))
    entries = class_entries(folder)
    factory = open_writable_db(db)  # before the validation games, not after them
    line = confinement.warning()
    if line is not None:
        echo_err(line)
    rows = [
        _add_one(name, path, game, param, v.move_time, v.startup_time, confinement, factory)
        for name, path in entries
    ]
    if v.as_json:
        typer.echo(json.dumps(rows))
    else:
        width = max(len(shown(r["name"])) for r in rows)
        for r in rows:
            typer.echo(f"{shown(r['name']):<{width}}  {r['result']:<7}  {shown(r['why'])}")
        passed = sum(1 for r in rows if r["ok"])
        typer.echo(f"{passed} of {len(rows)} bots added")
    if not all(r["ok"] for r in rows):
        raise typer.Exit(1)


@bots_app.command("source", cls=ArenaCommand)
def source_command(
    name: Annotated[str, typer.Argument(help="NAME (the latest version), NAME@N or NAME@SHA.")],
    output: Annotated[
        str | None,
        typer.Option("--output", "-o", help="Write its files into this folder (made if new)."),
    ] = None,
    db: DbOption = None,
) -> None:
    """A stored version's source: its main file on stdout, or with -o all its files (the ones it
    imports from its folder too) written into a folder, never over an existing file."""
    from pathlib import Path

    from bot_arena.arena.match.botref import MODULE
    from bot_arena.db.store import lookup_bot

    with open_existing_db(db).begin() as session:
        ref = lookup_bot(session, name)
    if ref is None:
        fail(f"no registered bot {shown(name)} (NAME, NAME@N or NAME@SHA-PREFIX)")
    if ref.kind != MODULE or ref.source is None:
        runs = shown(ref.target)
        fail(f"{shown(name)} is a {ref.kind} bot: it has no stored source (it runs {runs})")
    main = Path(ref.target.rpartition(":")[0] if ref.target.count(":") else ref.target).name
    if output is None:
        typer.echo(ref.source, nl=False)
        return
    folder = Path(output)
    written = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for relative, text in [(main, ref.source), *ref.files]:
            target = folder / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "x", encoding="utf-8") as fh:
                fh.write(text)
            written.append(str(target))
    except OSError as exc:
        fail(f"cannot write {shown(str(exc.filename or folder))}: {exc.strerror or exc}")
    typer.echo(f"wrote {len(written)} file(s) of {ref.name} ({ref.sha256[:12]}) into {folder}")
