"""The MCP servers of one hub: their configurations, the pool, their tools and problems.

The hub holds one :class:`MCPServers`. Tools are listed on first need (a selection
naming the server, the catalog, ``toolpalette list`` or ``check``), through the pool,
and listed again once the server says its list changed or its ``ttlMs`` runs out. A
server that does not start, does not answer in time, or lists an invalid tool is a
problem (kinds ``server`` and ``invalid-tool``, pack ``mcp:NAME``), never an exception.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

from toolpalette._mcp_client import config as _config
from toolpalette._mcp_client import provider as _provider
from toolpalette._mcp_client.config import MCPServerConfig
from toolpalette._mcp_client.connection import Connection
from toolpalette._mcp_client.pool import ClientPool
from toolpalette._mcp_client.provider import MCPToolProvider
from toolpalette._plugins.problems import Problem
from toolpalette._plugins.servers import MCPServerSpec
from toolpalette.errors import InvalidToolSchemaError, MCPServerError

__all__ = ["LIST_TIMEOUT", "MCPServers", "add_pack_servers", "assemble", "problem_pack"]

LIST_TIMEOUT: Final = 60.0
"""The longest a sync caller waits for one server's listing, past its connect timeout."""


def problem_pack(server: str) -> str:
    """The ``pack`` field of a server's problems: ``mcp:NAME``."""
    return f"mcp:{server}"


class _Listed:
    __slots__ = ("generation", "problems", "providers")

    def __init__(
        self, generation: int, providers: list[MCPToolProvider], problems: list[Problem]
    ) -> None:
        self.generation = generation
        self.providers = providers
        self.problems = problems


class MCPServers:
    """The configured servers, their connections (one pool) and their validated tools.

    Thread-safe. Nothing connects until a server's tools are asked for.
    """

    def __init__(
        self, configs: Iterable[MCPServerConfig] = (), problems: Iterable[Problem] = ()
    ) -> None:
        self._lock = threading.RLock()
        self._configs: dict[str, MCPServerConfig] = {}
        self._listed: dict[str, _Listed] = {}
        self._problems: list[Problem] = list(problems)
        self._pool: ClientPool | None = None
        self._closed = False
        self.overrides: dict[str, Mapping[str, Any]] = {}
        """Host tables that adjust a pack's server (no ``command`` or ``url`` of their own)."""
        for config in configs:
            self.add(config)

    @property
    def pool(self) -> ClientPool:
        """The client pool (created on first use)."""
        with self._lock:
            if self._pool is None:
                self._pool = ClientPool()
            return self._pool

    def add(self, config: MCPServerConfig) -> None:
        """Configure one more server (a later configuration of a name replaces the earlier)."""
        with self._lock:
            self._configs[config.name] = config
            self._listed.pop(config.name, None)

    def add_problem(self, problem: Problem) -> None:
        """Record a problem found while reading configurations."""
        with self._lock:
            self._problems.append(problem)

    def names(self) -> list[str]:
        """The configured servers' names, sorted."""
        with self._lock:
            return sorted(self._configs)

    def config(self, name: str) -> MCPServerConfig | None:
        """The configuration of server ``name``, or None."""
        return self._configs.get(name)

    def __bool__(self) -> bool:
        return bool(self._configs)

    def connection(self, name: str) -> Connection:
        """The pool's connection to server ``name``.

        Raises:
            KeyError: no server of that name is configured.
        """
        return self.pool.connection(self._configs[name])

    @property
    def generation(self) -> int:
        """Grows whenever a server's listing may have changed (palette caches key on it)."""
        with self._lock:
            if self._pool is None:
                return 0
            connections = self._pool.connections()
        for connection in connections:
            connection.listing.check_expiry()
        return sum(c.listing.generation for c in connections)

    def providers(self, name: str) -> list[MCPToolProvider]:
        """The valid tools of server ``name``, listing them if needed; [] when it failed.

        Raises:
            KeyError: no server of that name is configured.
        """
        config = self._configs[name]
        with self._lock:
            if self._closed:
                return []
            connection = self.pool.connection(config)
            listed = self._listed.get(name)
            if (
                listed is not None
                and listed.generation == connection.listing.generation
                and connection.listing.fresh()
            ):
                return list(listed.providers)
        generation = connection.listing.generation
        try:
            timeout = config.connect_timeout + LIST_TIMEOUT
            tools = self.pool.run(connection.tools(), timeout=timeout)
        except (MCPServerError, TimeoutError, RuntimeError) as exc:
            reason = exc.reason if isinstance(exc, MCPServerError) else str(exc)
            failed = _Listed(generation, [], [_server_problem(config, reason)])
            with self._lock:
                self._listed[name] = failed
            return []
        providers: list[MCPToolProvider] = []
        problems: list[Problem] = []
        for tool in tools:
            try:
                providers.append(_provider.build(connection, tool))
            except (InvalidToolSchemaError, ValueError) as exc:
                problems.append(
                    Problem(
                        "invalid-tool",
                        f"tool {tool.name!r} of MCP server {name!r} is not offered: "
                        f"{_provider.refusal(exc)}",
                        problem_pack(name),
                        None,
                        str(tool.name)[:64],
                    )
                )
        problems.extend(_duplicates(name, providers))
        with self._lock:
            self._listed[name] = _Listed(connection.listing.generation, providers, problems)
        return list(providers)

    def all_providers(self) -> dict[str, list[MCPToolProvider]]:
        """Every server's valid tools, by server name (connecting to each)."""
        return {name: self.providers(name) for name in self.names()}

    def problems(self) -> list[Problem]:
        """Configuration problems, and those of every server listed so far."""
        with self._lock:
            found = list(self._problems)
            for listed in self._listed.values():
                found.extend(listed.problems)
            return found

    def close(self) -> None:
        """End every connection and server process; the tools then answer 503."""
        with self._lock:
            self._closed = True
            pool = self._pool
        if pool is not None:
            pool.close()


def _server_problem(config: MCPServerConfig, reason: str) -> Problem:
    return Problem(
        "server",
        f"MCP server {config.name!r} ({config.describe()}, from {config.source}) "
        f"cannot be used: {reason}",
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


SOURCE_KEYS: Final = frozenset({"command", "url"})


def assemble(
    tables: Mapping[str, Any],
    *,
    json_file: str | None,
    code: Any,
    source: str | None,
) -> MCPServers:
    """The servers of a hub's configuration file and code; code wins, name by name.

    ``code`` is what ``ToolHub(mcp_servers=...)`` got: a mapping of names to tables,
    :class:`MCPServerConfig` objects or in-process SDK servers; a mapping holding an
    ``mcpServers`` block; or the path of a JSON file holding one. A host table without
    ``command`` or ``url`` adjusts the pack's server of that name (see
    :func:`add_pack_servers`). Every bad entry is a problem; the rest are kept.
    """
    servers = MCPServers()
    where = source or "configuration"
    own = {name: table for name, table in tables.items() if _defines(table)}
    found, bad = _config.read_servers(own, source=where)
    if json_file is not None:
        more, worse = _desktop_file(json_file)
        found, bad = [*found, *more], [*bad, *worse]
    if code is not None:
        more, worse = _from_code(code)
        found, bad = [*found, *more], [*bad, *worse]
    for config in found:
        servers.add(config)
    for reason in bad:
        servers.add_problem(Problem("server", reason, "mcp"))
    servers.overrides = {
        name: table
        for name, table in tables.items()
        if isinstance(table, Mapping) and name not in own
    }
    return servers


def add_pack_servers(servers: MCPServers, specs: Iterable[MCPServerSpec]) -> None:
    """Add the servers packs describe, unless the host defines a server of that name."""
    for spec in specs:
        if servers.config(spec.name) is not None:
            continue
        overrides = servers.overrides.get(spec.name)
        if overrides is not None and _config.is_disabled(overrides):
            continue
        try:
            servers.add(_config.from_spec(spec, overrides))
        except ValueError as exc:
            servers.add_problem(Problem("server", str(exc), problem_pack(spec.name)))


def _defines(table: Any) -> bool:
    return not isinstance(table, Mapping) or bool(SOURCE_KEYS & set(table))


def _desktop_file(path: str) -> tuple[list[MCPServerConfig], list[str]]:
    try:
        data = _config.read_json_file(path)
    except (OSError, ValueError) as exc:
        return [], [f"MCP servers file {path}: {exc}"]
    return _config.from_desktop_block(data, source=Path(path).name)


def _from_code(code: Any) -> tuple[list[MCPServerConfig], list[str]]:
    if isinstance(code, (str, os.PathLike)):
        return _desktop_file(os.fspath(code))
    if not isinstance(code, Mapping):
        return [], [f"mcp_servers= takes a mapping or a path, not {type(code).__name__}"]
    if "mcpServers" in code:
        return _config.from_desktop_block(code, source="code")
    return _config.read_servers(code, source="code")
