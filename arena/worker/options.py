"""Command-line options of the worker and the launcher (no argparse: start-up time matters)."""

from __future__ import annotations

from bot_arena.arena.transport import limits


class OptionError(ValueError):
    pass


def take(argv: list[str]) -> dict[str, str]:
    """``--key value`` pairs into a dict (OptionError on a dangling or unknown form)."""
    out: dict[str, str] = {}
    i = 0
    while i < len(argv):
        key = argv[i]
        if not key.startswith("--") or i + 1 >= len(argv):
            raise OptionError(f"bad worker option {key!r}")
        out[key[2:]] = argv[i + 1]
        i += 2
    return out


def prepare(argv: list[str]) -> dict[str, str]:
    """Before any bot code: confine this process by ``--sandbox PLAN`` (JSON, see
    ``transport.sandbox.confine``), then apply ``--memory-mb``/``--open-files``/``--cpu-s``;
    return the other options."""
    opts = take(argv)
    plan = opts.pop("sandbox", None)
    if plan is not None:
        from bot_arena.arena.transport.sandbox.confine import Plan, enter

        enter(Plan.from_json(plan))
    memory = opts.pop("memory-mb", None)
    files = opts.pop("open-files", None)
    cpu = opts.pop("cpu-s", None)
    limits.apply(
        int(memory) if memory is not None else None,
        int(files) if files is not None else None,
        float(cpu) if cpu is not None else None,
    )
    return opts
