"""The MCP servers of one hub: their configurations, the pool, their tools and problems.

The hub holds one :class:`MCPServers`. A server's tools are listed on first need (a
selection naming the server, the catalog, ``toolpalette list`` or ``check``), through
the pool, or read from the disk cache of a listing made by an earlier process
(:mod:`.cached`), and listed again in the background once the server says its list
changed, its ``ttlMs`` runs out, or it started since its tools came from the disk
(:mod:`.refresh`: the last good listing serves meanwhile, and nothing ever waits for a
refresh). A server that does not start, does not answer in time, lists an invalid
tool or passes a bound on what it sends is a problem (kinds ``server``,
``invalid-tool`` and ``collision``, pack ``mcp:NAME``), never an exception.

How a listing is found can be narrowed for the current thread or task:
:meth:`MCPServers.at_hand` takes only what is at hand, starting no server
(``toolpalette call`` of a pack's tool), and :meth:`MCPServers.live` lists every
server live, over the disk cache (``toolpalette check``).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import threading
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final

from toolpalette._mcp_client import cached as _cached
from toolpalette._mcp_client import config as _config
from toolpalette._mcp_client.config import MCPServerConfig
from toolpalette._mcp_client.connection import Connection
from toolpalette._mcp_client.offered import problem_pack
from toolpalette._mcp_client.pool import ClientPool
from toolpalette._mcp_client.provider import MCPToolProvider
from toolpalette._mcp_client.refresh import Mode, ServerTools
from toolpalette._plugins.problems import Problem
from toolpalette._plugins.servers import MCPServerSpec
from toolpalette._plugins.switches import Switches

__all__ = ["MCPServers", "add_pack_servers", "assemble", "problem_pack"]

_MODE: contextvars.ContextVar[Mode] = contextvars.ContextVar("toolpalette_mcp_mode", default="use")
_CONSULTED: contextvars.ContextVar[set[str] | None] = contextvars.ContextVar(
    "toolpalette_mcp_consulted", default=None
)


class MCPServers:
    """The configured servers, their connections (one pool) and their validated tools.

    Thread-safe. Nothing connects until a server's tools are asked for and no fresh
    listing of it is on disk.
    """

    def __init__(
        self,
        configs: Iterable[MCPServerConfig] = (),
        problems: Iterable[Problem] = (),
        switches: Switches | None = None,
    ) -> None:
        self._lock = threading.RLock()
        self._configs: dict[str, MCPServerConfig] = {}
        self._tools: dict[str, ServerTools] = {}
        self._problems: list[Problem] = list(problems)
        self._pool: ClientPool | None = None
        self._closed = False
        self._switches = switches if switches is not None else Switches.from_environ()
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
            self._tools.pop(config.name, None)

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
            tools = list(self._tools.values())
        total = 0
        for each in tools:
            each.poke()
            listing = each.connection.listing
            listing.check_expiry()
            total += listing.generation + each.changes
        return total

    def _tools_of(self, name: str) -> ServerTools | None:
        config = self._configs[name]
        with self._lock:
            if self._closed:
                return None
            found = self._tools.get(name)
            if found is None or found.connection.config != config:
                connection = self.pool.connection(config)
                stored = _cached.Stored(self._switches, config)
                found = self._tools[name] = ServerTools(connection, stored)
            return found

    def providers(self, name: str) -> list[MCPToolProvider]:
        """The valid tools of server ``name``; [] when it cannot be used (a problem says why).

        Waits only for the server's first listing, when no fresh one is on disk; a
        listing that may have changed is read again in the background meanwhile.

        Raises:
            KeyError: no server of that name is configured.
        """
        tools = self._tools_of(name)
        consulted = _CONSULTED.get()
        if consulted is not None:
            consulted.add(name)
        if tools is None:
            return []
        return list(tools.offer(_MODE.get()).providers)

    def all_providers(self) -> dict[str, list[MCPToolProvider]]:
        """Every server's valid tools, by server name (connecting to each)."""
        return {name: self.providers(name) for name in self.names()}

    async def settle(self, names: Iterable[str]) -> None:
        """Await the listings of servers ``names`` in flight or due, from any event loop.

        Each within its deadline; the loop keeps turning meanwhile. Unknown names and a
        closed hub are skipped.
        """
        found = []
        for name in names:
            if name in self._configs:
                tools = self._tools_of(name)
                if tools is not None:
                    found.append(tools.settled())
        if found:
            await asyncio.gather(*found)

    @staticmethod
    @contextlib.contextmanager
    def at_hand() -> Iterator[None]:
        """In this context (thread or task), start no server: use listings at hand only.

        A server neither listed in this process nor on disk then offers nothing, and
        records no problem.
        """
        token = _MODE.set("only")
        try:
            yield
        finally:
            _MODE.reset(token)

    @staticmethod
    @contextlib.contextmanager
    def live() -> Iterator[None]:
        """In this context (thread or task), list servers live, never from the disk cache."""
        token = _MODE.set("live")
        try:
            yield
        finally:
            _MODE.reset(token)

    @staticmethod
    @contextlib.contextmanager
    def consulting() -> Iterator[set[str]]:
        """Collect the names of the servers whose tools are asked for in this context."""
        names: set[str] = set()
        token = _CONSULTED.set(names)
        try:
            yield names
        finally:
            _CONSULTED.reset(token)

    def problems(self) -> list[Problem]:
        """Configuration problems, and those of every server listed so far."""
        with self._lock:
            found = list(self._problems)
            tools = list(self._tools.values())
        for each in tools:
            found.extend(each.problems())
        return found

    def close(self) -> None:
        """End every connection and server process; the tools then answer 503."""
        with self._lock:
            self._closed = True
            pool = self._pool
        if pool is not None:
            pool.close()


SOURCE_KEYS: Final = frozenset({"command", "url"})


def assemble(
    tables: Mapping[str, Any],
    *,
    json_file: str | None,
    code: Any,
    source: str | None,
    switches: Switches | None = None,
) -> MCPServers:
    """The servers of a hub's configuration file and code; code wins, name by name.

    ``code`` is what ``ToolHub(mcp_servers=...)`` got: a mapping of names to tables,
    :class:`MCPServerConfig` objects or in-process SDK servers; a mapping holding an
    ``mcpServers`` block; or the path of a JSON file holding one. A host table without
    ``command`` or ``url`` adjusts the pack's server of that name (see
    :func:`add_pack_servers`). Every bad entry is a problem; the rest are kept.
    """
    servers = MCPServers(switches=switches)
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
