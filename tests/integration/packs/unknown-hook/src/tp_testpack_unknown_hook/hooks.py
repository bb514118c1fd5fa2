"""Hooks of a test pack with a misspelled hook next to a correct one."""

from __future__ import annotations

from typing import Any

import toolpalette


@toolpalette.tool(read_only=True)
def spelled_right() -> str:
    """Offered through the correctly spelled hook."""
    return "ok"


@toolpalette.hookimpl
def toolpalette_register_tool() -> Any:
    return [spelled_right]


@toolpalette.hookimpl
def toolpalette_register_tools() -> Any:
    return [spelled_right]
