"""Bot Arena from Python: ``play``, ``tournament``, ``sprt`` and ``rate``, the same checks and
the same machinery as the ``arena`` commands (re-exported lazily by ``bot_arena.arena``)."""
