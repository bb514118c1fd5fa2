"""toolpalette-sqlite: read-only queries and bound-parameter writes on one SQLite file.

The tools live in `toolpalette_sqlite.tools`; importing this package imports nothing else.
"""

from __future__ import annotations

__all__ = ["ENV_DATABASE"]

ENV_DATABASE = "TOOLPALETTE_SQLITE_DATABASE"
"""The environment variable read when the host's configuration gives no ``database``."""
