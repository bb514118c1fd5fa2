"""Hooks of the alpha test pack: 'search' collides with the beta pack's."""

from __future__ import annotations

from typing import Any

import toolpalette


@toolpalette.tool(read_only=True)
def search(query: str) -> str:
    """Search alpha's index.

    Args:
        query: What to look for.
    """
    return f"alpha: {query}"


@toolpalette.tool(read_only=True)
def alpha_only(query: str) -> str:
    """A tool only alpha has.

    Args:
        query: Anything.
    """
    return query


@toolpalette.hookimpl
def toolpalette_register_tools() -> list[Any]:
    return [search, alpha_only]
