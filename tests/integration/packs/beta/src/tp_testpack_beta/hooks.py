"""Hooks of the beta test pack: 'search' collides with the alpha pack's."""

from __future__ import annotations

from typing import Any

import toolpalette


@toolpalette.tool(read_only=False)
def search(query: str, limit: int = 5) -> str:
    """Search beta's index, differently.

    Args:
        query: What to look for.
        limit: How many hits.
    """
    return f"beta: {query} ({limit})"


@toolpalette.tool(read_only=True)
def beta_only(query: str) -> str:
    """A tool only beta has.

    Args:
        query: Anything.
    """
    return query


@toolpalette.hookimpl
def toolpalette_register_tools() -> list[Any]:
    return [search, beta_only]
