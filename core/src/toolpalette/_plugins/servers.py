"""MCP server descriptions that packs bridge (``toolpalette_register_mcp_servers``).

Only the description is handled here, so importing toolpalette never imports the
``mcp`` SDK; connecting to a server is the MCP client's job.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["MCPServerSpec", "parse_server"]

_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}\Z")


@dataclass(frozen=True)
class MCPServerSpec:
    """One MCP server a pack asks the host to connect to."""

    name: str
    """A short name, unique among the servers (letters, digits, ``_``, ``.``, ``-``)."""
    command: tuple[str, ...] | None
    """The command that starts a stdio server, or None for an HTTP one."""
    url: str | None
    """The streamable HTTP endpoint, or None for a stdio server."""
    trusted: bool
    """Whether the host trusts the server's tool annotations (``readOnlyHint``)."""
    pack: str
    """The pack that described it."""


def parse_server(item: object, pack: str) -> MCPServerSpec:
    """Check one description returned by a pack.

    Raises:
        ValueError: the description is not a mapping of the documented shape; the
            message says which field is wrong.
    """
    if not isinstance(item, Mapping):
        raise ValueError(f"a server description is a mapping, not {type(item).__name__}")
    name = item.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError("'name' must be 1-64 letters, digits, '_', '.' or '-'")
    command, url = item.get("command"), item.get("url")
    if (command is None) == (url is None):
        raise ValueError(f"server {name!r} needs exactly one of 'command' and 'url'")
    if command is not None and not _is_argv(command):
        raise ValueError(f"server {name!r}: 'command' must be a non-empty list of strings")
    if url is not None and not (isinstance(url, str) and url.startswith(("http://", "https://"))):
        raise ValueError(f"server {name!r}: 'url' must be an http(s) URL")
    trusted = item.get("trusted", False)
    if not isinstance(trusted, bool):
        raise ValueError(f"server {name!r}: 'trusted' must be true or false")
    argv = tuple(command) if command is not None else None
    return MCPServerSpec(name, argv, url, trusted, pack)


def _is_argv(value: Any) -> bool:
    return (
        isinstance(value, (list, tuple))
        and bool(value)
        and all(isinstance(part, str) and part for part in value)
    )
