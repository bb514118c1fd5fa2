"""Hooks of a test pack where one implementation raises and another works."""

from __future__ import annotations

from typing import Any

import toolpalette


@toolpalette.tool(read_only=True)
def steady() -> str:
    """Still offered although a sibling implementation raises."""
    return "steady"


@toolpalette.hookimpl
def toolpalette_register_tools() -> Any:
    raise RuntimeError("this hook implementation is broken on purpose")


@toolpalette.hookimpl(specname="toolpalette_register_tools")
def toolpalette_register_more_tools() -> Any:
    return [steady]
