"""Serving palettes over the Model Context Protocol, and using MCP servers' tools.

Importing ``toolpalette`` never imports this package; it needs ``pip install 'toolpalette[mcp]'``.
"""

from __future__ import annotations

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from toolpalette._mcp_client.config import MCPServerConfig
    from toolpalette._mcp_client.provider import MCPToolProvider
    from toolpalette.mcp._auth import JWTAuth
    from toolpalette.mcp._http import asgi_app
    from toolpalette.mcp._principal import PaletteChoice, Principal
    from toolpalette.mcp._server import PaletteServer, selection_thinker, server
    from toolpalette.mcp._task_store import (
        MemoryTaskStore,
        RedisTaskStore,
        SqliteTaskStore,
        TaskStore,
        task_store,
    )
    from toolpalette.mcp._tasks import TaskSettings

__all__ = [
    "JWTAuth",
    "MCPServerConfig",
    "MCPToolProvider",
    "MemoryTaskStore",
    "PaletteChoice",
    "PaletteServer",
    "Principal",
    "RedisTaskStore",
    "SqliteTaskStore",
    "TaskSettings",
    "TaskStore",
    "asgi_app",
    "selection_thinker",
    "server",
    "task_store",
]

_LAZY: dict[str, str] = {
    "JWTAuth": "toolpalette.mcp._auth",
    "PaletteChoice": "toolpalette.mcp._principal",
    "Principal": "toolpalette.mcp._principal",
    "MCPServerConfig": "toolpalette._mcp_client.config",
    "MCPToolProvider": "toolpalette._mcp_client.provider",
    "PaletteServer": "toolpalette.mcp._server",
    "asgi_app": "toolpalette.mcp._http",
    "selection_thinker": "toolpalette.mcp._server",
    "server": "toolpalette.mcp._server",
    "MemoryTaskStore": "toolpalette.mcp._task_store",
    "RedisTaskStore": "toolpalette.mcp._task_store",
    "SqliteTaskStore": "toolpalette.mcp._task_store",
    "TaskStore": "toolpalette.mcp._task_store",
    "task_store": "toolpalette.mcp._task_store",
    "TaskSettings": "toolpalette.mcp._tasks",
}
"""Public names imported on first use, and the module that defines each."""


def __getattr__(name: str) -> _typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolpalette.mcp' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
