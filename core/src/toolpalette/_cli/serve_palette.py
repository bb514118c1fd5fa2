"""``toolpalette serve``'s palette without a Thinker module: ``--tool-search`` and ``--defer``."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolpalette._agents.thinker import Thinker
    from toolpalette._hub import ToolHub
    from toolpalette._tools.provider import ToolProvider

__all__ = ["MODES", "PaletteError", "add_options", "from_args", "settings", "shaped"]

MODES = ("auto", "search", "enum")
"""The ``tool_search`` modes ``serve`` takes (``native`` is a provider's, not MCP's)."""


class PaletteError(Exception):
    """``--tool-search`` or ``--defer`` (or their ``[serve]`` keys) cannot be used."""


def add_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--tool-search`` and ``--defer``."""
    group = parser.add_argument_group(
        "a palette without a Thinker module (--select, or everything; also [serve])"
    )
    group.add_argument(
        "--tool-search",
        choices=MODES,
        help="how the model finds the deferred tools: search_tools, request_tools with "
        "an enum of their names, or auto (by their number; the default)",
    )
    group.add_argument(
        "--defer",
        metavar="PACK",
        nargs="+",
        help="keep the tools of these distributions, import packages, packs or MCP "
        "servers (mcp:NAME) out of the listing, for the model to search or request",
    )


def from_args(args: argparse.Namespace) -> dict[str, Any]:
    """What the command line gave (JSON, for the workers)."""
    given: dict[str, Any] = {}
    if getattr(args, "tool_search", None) is not None:
        given["tool_search"] = args.tool_search
    if getattr(args, "defer", None):
        given["defer"] = list(args.defer)
    return given


def settings(given: Mapping[str, Any], table: Mapping[str, Any]) -> tuple[str | None, list[str]]:
    """The mode and the deferred names: the command line's, else ``[serve]``'s, checked.

    Raises:
        PaletteError: a mode ``serve`` does not take, or ``defer`` not a list of names.
    """
    mode = given.get("tool_search", table.get("tool_search"))
    if mode is not None and mode not in MODES:
        raise PaletteError(f"[serve] tool_search must be one of {', '.join(MODES)}, not {mode!r}")
    defer = given.get("defer", table.get("defer", []))
    if isinstance(defer, str) or not (
        isinstance(defer, Sequence) and all(isinstance(n, str) and n for n in defer)
    ):
        raise PaletteError("[serve] defer must be a list of distribution or package names")
    return mode, list(defer)


def shaped(
    hub: ToolHub, thinker: type[Thinker], *, mode: str | None, defer: Sequence[str]
) -> type[Thinker]:
    """``thinker`` with ``mode`` as its ``tool_search`` and the tools of ``defer`` deferred.

    Every tool ``thinker`` offers or defers is kept; a deferred name's tools join
    deferred even when ``thinker`` did not select them.

    Raises:
        PaletteError: a name of ``defer`` gives no tool.
    """
    from toolpalette._agents.selector import ToolSelector

    later: dict[str, ToolProvider] = {}
    for name in defer:
        found = _providers(hub, name)
        if not found:
            raise PaletteError(
                f"--defer {name}: no installed distribution, import package, pack or "
                "MCP server (mcp:NAME) of that name has tools (toolpalette list shows them)"
            )
        later.update((p.name, p) for p in found)
    resolved = hub.resolve(thinker.declare_compatible_tools())
    chosen = ToolSelector()
    for provider in resolved.offered:
        chosen.provider(provider, deferred=provider.name in later)
    for provider in resolved.deferred:
        chosen.provider(provider, deferred=True)
    for name, provider in later.items():
        if name not in resolved.names:
            chosen.provider(provider, deferred=True)
    search = mode or thinker.tool_search

    class Shaped(thinker):  # type: ignore[valid-type,misc]
        """The palette served, with its deferred tools and tool search as the options say."""

        tool_search = search

        @classmethod
        def declare_compatible_tools(cls) -> ToolSelector:
            return chosen

    Shaped.__name__ = Shaped.__qualname__ = thinker.__name__
    return Shaped


def _providers(hub: ToolHub, name: str) -> list[ToolProvider]:
    if name.startswith("mcp:"):
        try:
            return hub.providers_for_server(name[len("mcp:") :])
        except KeyError:
            return []
    return (
        hub.providers_for_distribution(name)
        or hub.providers_for_package(name)
        or hub.providers_for_pack(name)
    )
