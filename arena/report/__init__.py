"""``arena report``: one self-contained HTML file of a tournament, and searched trees as SVG.

Everything here reads what is stored (``db``) and what the ratings compute (``arena.ratings``) and
turns it into pictures and a page; nothing here plays or stores a game.
"""
