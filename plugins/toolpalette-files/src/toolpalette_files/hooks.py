"""The pack's hooks: the value of its ``toolpalette.plugins`` entry point.

Cheap to import: the tools (and pydantic) are imported only when the hub asks for them.
"""

from __future__ import annotations

from typing import Any

from toolpalette import hookimpl


@hookimpl
def toolpalette_register_tools() -> list[Any]:
    """Offer the workspace tools: four read-only, four mutating."""
    from toolpalette_files.tools import TOOLS

    return list(TOOLS)
