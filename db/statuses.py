"""A match's statuses (the CHECK of ``models.Match.status``), in a module without SQLAlchemy: a
read command checks ``--status`` before it knows whether it will load the ORM at all."""

MATCH_STATUSES = ("pending", "running", "done", "void")
