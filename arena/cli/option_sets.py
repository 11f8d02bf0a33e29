"""Options that several commands share, declared once: an *option set* is a dataclass whose
fields are typer options (an ``Annotated`` alias and its default). A command names the set as
one parameter; ``with_option_sets`` puts the set's options into the command's signature in that
parameter's place (so ``--help`` lists them where the parameter stands) and calls the command
with the set built from them. A field whose type is itself an option set is expanded in turn."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bot_arena.arena.cli.common import (
    AllowReadOption,
    SandboxOption,
    StartupOption,
    sandbox_options,
)

if TYPE_CHECKING:
    from bot_arena.arena.api.sandbox import Confinement


def _is_set(annotation: object) -> bool:
    return isinstance(annotation, type) and dataclasses.is_dataclass(annotation)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    """The fields' annotations of ``cls``, evaluated once (every ``arena`` start decorates the
    commands: ``tournament run`` and ``sprt`` share a set)."""
    return typing.get_type_hints(cls, include_extras=True)


def _options(cls: type) -> list[inspect.Parameter]:
    """The command-line parameters of the option set ``cls``, in field order."""
    hints = _hints(cls)
    out: list[inspect.Parameter] = []
    for f in dataclasses.fields(cls):
        if _is_set(hints[f.name]):
            out += _options(hints[f.name])
        else:
            kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
            out.append(inspect.Parameter(f.name, kind, default=f.default, annotation=hints[f.name]))
    return out


def _build(cls: type, values: dict[str, Any]) -> Any:
    """The option set ``cls`` from the parsed ``values`` (its options taken out of them)."""
    hints = _hints(cls)
    fields = {
        f.name: _build(hints[f.name], values) if _is_set(hints[f.name]) else values.pop(f.name)
        for f in dataclasses.fields(cls)
    }
    return cls(**fields)


def with_option_sets(command: Callable[..., None]) -> Callable[..., None]:
    """``command`` with each parameter annotated with an option set replaced by the set's
    options (see the module's docstring)."""
    hints = typing.get_type_hints(command, include_extras=True)
    params: list[inspect.Parameter] = []
    sets: dict[str, type] = {}
    for p in inspect.signature(command).parameters.values():
        annotation = hints.get(p.name, p.annotation)
        if _is_set(annotation):
            sets[p.name] = annotation
            params += _options(annotation)
        else:
            params.append(p.replace(annotation=annotation))

    @functools.wraps(command)
    def run(**values: Any) -> None:
        for name, cls in sets.items():
            values[name] = _build(cls, values)
        command(**values)

    run.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in params}
    return run


ValidationMoveTimeOption = Annotated[
    float, typer.Option("--move-time", help="Seconds per move in the validation games.")
]
ValidationJsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


@dataclass(frozen=True)
class Validation:
    """An option set: how a new bot's validation games are played and the answer printed, as
    ``bots check``, ``bots add``, ``bots add-all`` and ``ladder add`` share them."""

    move_time: ValidationMoveTimeOption = 2.0
    startup_time: StartupOption = 10.0
    sandbox: SandboxOption = None
    allow_read: AllowReadOption = None
    as_json: ValidationJsonOption = False

    def confinement(self) -> Confinement:
        """The sandbox these options ask for (checked: a bad one is one line, exit 2)."""
        return sandbox_options(self.sandbox, self.allow_read)


@dataclass(frozen=True)
class Sandboxing:
    """An option set: how bots are confined (``--sandbox``, ``--allow-read``), as ``ladder
    run`` and ``arena serve`` take them (the server hands them on to its ladder runners)."""

    sandbox: SandboxOption = None
    allow_read: AllowReadOption = None

    def confinement(self) -> Confinement:
        """The sandbox these options ask for (checked: a bad one is one line, exit 2)."""
        return sandbox_options(self.sandbox, self.allow_read)

    def arguments(self) -> tuple[str, ...]:
        """These options as a command line gives them (for a process started with them):
        none when none was given, so the process takes its own default."""
        given = () if self.sandbox is None else ("--sandbox", self.sandbox)
        return given + tuple(a for path in self.allow_read or () for a in ("--allow-read", path))
