"""``python -m bot_arena.arena.worker [LIMITS] BOT`` where BOT is ``--builtin SPEC``,
``--file PATH [--attr NAME]`` or ``--import MOD:ATTR``.

Order matters: limits first, then the protocol moves to private fds, then the bot's code runs.
"""

from __future__ import annotations

import sys

from bot_arena.arena.worker.options import prepare


def die_with_parent() -> None:
    """Ask Linux to kill this worker when the arena process that started it dies (SIGKILL of
    a referee must not leave bots computing). Elsewhere the referee's group kill still holds."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import os
    import signal

    parent = os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def main(argv: list[str]) -> int:
    die_with_parent()
    opts = prepare(argv)
    from bot_arena.arena.worker.host import Host, fail_message, isolate

    channel = isolate()
    try:
        from bot_arena.arena.worker import loader

        if "builtin" in opts:
            factory = loader.builtin_factory(opts["builtin"])
        else:
            if "file" in opts:  # the file as given, the attribute apart (--attr)
                module, name = loader.load_file(
                    opts["file"], opts.get("attr"), opts.get("sys-path")
                )
            elif "import" in opts:
                module, name = loader.load_import(opts["import"], opts.get("sys-path"))
            else:
                raise loader.LoadError("worker started without a bot (--builtin/--file/--import)")
            factory = loader.find_bot(module, name)
    except BaseException as exc:  # import errors, syntax errors, sys.exit at import time
        channel.send(fail_message(exc, "load"))
        return 1
    Host(channel, factory).run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
