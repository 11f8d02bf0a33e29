"""The bot host process: ``python -m arena.worker`` loads one bot and speaks the line protocol.

Kept import-light on purpose: the package is imported by every worker and launcher process.
"""
