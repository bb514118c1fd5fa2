"""A server's listing made into the tools a hub offers: bounded, each tool checked."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from toolpalette._mcp_client import provider as _provider
from toolpalette._mcp_client.config import MCPServerConfig
from toolpalette._mcp_client.connection import Connection
from toolpalette._mcp_client.listing import Fetched
from toolpalette._mcp_client.provider import MAX_TOOL_BYTES, MCPToolProvider, tool_bytes
from toolpalette._plugins.problems import Problem
from toolpalette.errors import InvalidToolSchemaError

__all__ = [
    "MAX_LISTING_BYTES",
    "MAX_TOOL_BYTES",
    "Offer",
    "mismatch_problem",
    "offer",
    "problem_pack",
    "server_problem",
    "tool_bytes",
]

MAX_LISTING_BYTES: Final = 4 * 1024 * 1024
"""The most bytes all of one server's tools may take together, as JSON."""


@dataclass(frozen=True)
class Offer:
    """What one listing of a server offers: its valid tools, and what was refused."""

    providers: tuple[MCPToolProvider, ...] = ()
    """The tools offered, in the server's order."""
    problems: tuple[Problem, ...] = field(default=())
    """The tools refused and the bounds passed."""


def problem_pack(server: str) -> str:
    """The ``pack`` field of a server's problems: ``mcp:NAME``."""
    return f"mcp:{server}"


def server_problem(config: MCPServerConfig, reason: str) -> Problem:
    """A ``server`` problem: the server (how it is reached, where it is configured) and why."""
    return Problem(
        "server",
        f"MCP server {config.name!r} ({config.describe()}, from {config.source}) "
        f"cannot be used: {reason}",
        problem_pack(config.name),
    )


def mismatch_problem(config: MCPServerConfig, name: str, reason: str) -> Problem:
    """An ``invalid-tool`` problem: a tool kept on disk that its live listing contradicted."""
    return Problem(
        "invalid-tool",
        f"tool {name!r} of MCP server {config.name!r} was offered from the listing kept on "
        f"disk and refused at its first call: {reason}",
        problem_pack(config.name),
        None,
        name,
    )


def offer(connection: Connection, fetched: Fetched) -> Offer:
    """The providers and problems of one listing of ``connection``'s server (see above)."""
    config = connection.config
    providers: list[MCPToolProvider] = []
    problems: list[Problem] = []
    total = 0
    excluded = frozenset(config.exclude)
    for position, tool in enumerate(fetched.tools):
        if excluded and getattr(tool, "name", None) in excluded:
            continue  # the host's [mcp_servers.NAME] exclude
        size = tool_bytes(tool)
        if size > MAX_TOOL_BYTES:
            problems.append(
                _refused(
                    config,
                    tool,
                    f"its description, title and schemas take more than {MAX_TOOL_BYTES} "
                    "bytes (the bound on one tool of an MCP server)",
                )
            )
            continue
        total += size
        if total > MAX_LISTING_BYTES:
            left = len(fetched.tools) - position
            problems.append(
                _over(
                    config,
                    f"its tools take more than {MAX_LISTING_BYTES} bytes (the bound on one "
                    f"server's listing); the last {left} are not offered",
                )
            )
            break
        try:
            providers.append(_provider.build(connection, tool))
        except (InvalidToolSchemaError, ValueError) as exc:
            problems.append(_refused(config, tool, _provider.refusal(exc)))
    if fetched.over is not None:
        problems.append(_over(config, f"{fetched.over}; only those within it are offered"))
    problems.extend(_duplicates(config.name, providers))
    return Offer(tuple(providers), tuple(problems))


def _refused(config: MCPServerConfig, tool: Any, reason: str) -> Problem:
    return Problem(
        "invalid-tool",
        f"tool {_shown(tool.name)} of MCP server {config.name!r} is not offered: {reason}",
        problem_pack(config.name),
        None,
        str(tool.name)[:64],
    )


def _shown(name: object) -> str:
    """A server's tool name as a problem quotes it: escaped, and cut at 64 characters."""
    text = str(name)
    return repr(text[:64]) + ("..." if len(text) > 64 else "")


def _over(config: MCPServerConfig, reason: str) -> Problem:
    return Problem(
        "server",
        f"MCP server {config.name!r} ({config.describe()}, from {config.source}): {reason}",
        problem_pack(config.name),
    )


def _duplicates(server: str, providers: list[MCPToolProvider]) -> list[Problem]:
    """A server listing two tools under one name (after renames): neither is offered."""
    seen: dict[str, int] = {}
    for p in providers:
        seen[p.name] = seen.get(p.name, 0) + 1
    twice = {name for name, count in seen.items() if count > 1}
    if not twice:
        return []
    providers[:] = [p for p in providers if p.name not in twice]
    return [
        Problem(
            "collision",
            f"MCP server {server!r} lists several tools named {name!r}; none is offered",
            problem_pack(server),
            None,
            name,
        )
        for name in sorted(twice)
    ]
