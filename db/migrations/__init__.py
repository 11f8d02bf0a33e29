"""Alembic migration scripts of the results database (run from db.session.make_engine)."""
