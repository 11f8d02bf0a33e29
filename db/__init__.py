"""The results database: models, engine/session factory (SQLite by default), stored queries."""
