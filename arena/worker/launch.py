"""``python -m arena.worker.launch LIMITS -- COMMAND...``: set resource limits, exec a command.

How ``cmd:`` bots start: the limits are applied in the bot's own process before ``exec``, so the
arena needs no ``preexec_fn``.
"""

from __future__ import annotations

import os
import sys

from bot_arena.arena.worker.options import prepare


def main(argv: list[str]) -> None:
    if "--" not in argv:
        print("usage: python -m arena.worker.launch [LIMITS] -- COMMAND...", file=sys.stderr)
        os._exit(2)
    split = argv.index("--")
    limits, command = argv[:split], argv[split + 1 :]
    if not command:
        print("arena launch: no command", file=sys.stderr)
        os._exit(2)
    prepare(limits)
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"arena launch: cannot run {command[0]!r}: {exc.strerror}", file=sys.stderr)
        os._exit(127)


if __name__ == "__main__":
    main(sys.argv[1:])
