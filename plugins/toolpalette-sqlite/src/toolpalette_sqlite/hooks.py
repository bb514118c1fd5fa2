"""The pack's hooks: the value of its ``toolpalette.plugins`` entry point.

Cheap to import: the tools (sqlite3 and pydantic) are imported only when the hub asks.
"""

from __future__ import annotations

from typing import Any

from toolpalette import hookimpl


@hookimpl
def toolpalette_register_tools() -> list[Any]:
    """Offer the database tools: three read-only, one mutating."""
    from toolpalette_sqlite.tools import TOOLS

    return list(TOOLS)
