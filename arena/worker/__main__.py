"""``python -m arena.worker [LIMITS] (--builtin SPEC | --file PATH[:ATTR] | --import MOD:ATTR)``.

Order matters: limits first, then the protocol moves to private fds, then the bot's code runs.
"""

from __future__ import annotations

import sys

from arena.worker.options import parse_limits


def main(argv: list[str]) -> int:
    opts = parse_limits(argv)
    from arena.worker.host import Host, fail_message, isolate

    channel = isolate()
    try:
        from arena.worker import loader

        if "builtin" in opts:
            factory = loader.builtin_factory(opts["builtin"])
        else:
            if "file" in opts:
                path, _, attr = opts["file"].rpartition(":")
                if not path.endswith(".py"):
                    path, attr = opts["file"], ""
                module, name = loader.load_file(path, attr or None, opts.get("sys-path"))
            elif "import" in opts:
                module, name = loader.load_import(opts["import"])
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
