"""The MCP servers of one hub: their configurations, the pool, their tools and problems."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
import threading
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from toolpalette._mcp_client import cached as _cached
from toolpalette._mcp_client import config as _config
from toolpalette._mcp_client.config import MCPServerConfig
from toolpalette._mcp_client.connection import Connection
from toolpalette._mcp_client.offered import problem_pack
from toolpalette._mcp_client.pool import ClientPool
from toolpalette._mcp_client.provider import MCPToolProvider
from toolpalette._mcp_client.refresh import Mode, ServerTools
from toolpalette._plugins.config import did_you_mean, shown_name
from toolpalette._plugins.problems import Problem
from toolpalette._plugins.servers import MCPServerSpec
from toolpalette._plugins.switches import Switches

if TYPE_CHECKING:
    from toolpalette._skills import Skill, SkillRegistry

logger = logging.getLogger("toolpalette.mcp")

__all__ = [
    "MCPServers",
    "add_pack_servers",
    "add_server_skills",
    "assemble",
    "claim_note",
    "problem_pack",
]

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
        self.overrides_from = "configuration"
        """The configuration file those tables are in, as problems name it."""
        self.unmatched: list[Problem] = []
        """Those of them that adjust no server at all (set once the packs' are known)."""
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
            found = [*self._problems, *self.unmatched]
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


def add_server_skills(servers: MCPServers, name: str, registry: SkillRegistry) -> None:
    """Declare server ``name``'s skills (the Skills extension) in ``registry``, unlisted.

    They are listed when a skill under ``mcp.NAME`` is first asked for; never while
    `MCPServers.at_hand()` says to start no server (unless it is connected).
    """
    from toolpalette._mcp_client.skills import bundle_prefix, server_skills  # PyYAML: when used

    prefix = bundle_prefix(name)
    if prefix is None:
        logger.warning("MCP server %r: its name gives no bundle id; its skills are not used", name)
        return

    def load() -> tuple[list[Skill], list[Problem]] | None:
        if servers.config(name) is None:
            return [], []
        connection = servers.connection(name)
        if _MODE.get() == "only" and not connection.connected:
            return None
        return server_skills(connection, name)

    registry.add_remote(prefix, load, label=problem_pack(name))


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

    ``tables`` are the file's ``[mcp_servers.NAME]`` tables and ``json_file`` its
    ``mcp_json``. A table with ``command`` or ``url`` defines its server (replacing the
    JSON file's entry of that name: the TOML is the host's own file); one without them
    adjusts the JSON file's server of that name (its keys merged over the entry's), or
    else a pack's server (see `add_pack_servers()`). ``code`` is what
    ``ToolHub(mcp_servers=...)`` got: a mapping of names to tables,
    `MCPServerConfig` objects or in-process SDK servers; a mapping holding an
    ``mcpServers`` block; or the path of a JSON file holding one. Every bad entry is a
    problem; the rest are kept.
    """
    servers = MCPServers(switches=switches)
    shown = shown_name(source)
    servers.overrides_from = shown
    own: dict[str, Any] = {}
    adjusting: dict[str, Mapping[str, Any]] = {}
    for name, table in tables.items():
        if not isinstance(table, Mapping):
            reason = f"{_table_path(shown, name)} in {shown} must be a table"
            servers.add_problem(Problem("server", reason, problem_pack(str(name))))
        elif SOURCE_KEYS & set(table):
            own[name] = table
        else:
            adjusting[name] = table
    found: list[MCPServerConfig] = []
    bad: list[_config.BadEntry] = []
    if json_file is not None:
        found, bad = _desktop_file(json_file, adjusting, shown)
    more, worse = _config.read_servers(own, source=shown)
    found, bad = [*found, *more], [*bad, *worse]
    if code is not None:
        more, worse = _from_code(code)
        found, bad = [*found, *more], [*bad, *worse]
    for config in found:
        servers.add(config)
    for server, reason in bad:  # filed under the server it concerns, when it is one
        servers.add_problem(Problem("server", reason, problem_pack(server) if server else "mcp"))
    servers.overrides = adjusting
    return servers


def add_pack_servers(servers: MCPServers, specs: Iterable[MCPServerSpec]) -> None:
    """Add the servers packs describe, unless the host defines a server of that name.

    A host table that adjusts no server (no ``command`` or ``url``, and no pack's or
    JSON file's server of its name) is a ``server`` problem: it would otherwise be
    ignored without a word (a typo in ``command``, or in the server's name).
    """
    described: list[str] = []
    for spec in specs:
        described.append(spec.name)
        if servers.config(spec.name) is not None:
            continue
        overrides = servers.overrides.get(spec.name)
        if overrides is not None and _config.is_disabled(overrides):
            continue
        try:
            servers.add(_config.from_spec(spec, overrides))
        except ValueError as exc:
            servers.add_problem(Problem("server", str(exc), problem_pack(spec.name)))
    known = [*servers.names(), *described]
    servers.unmatched = [
        _unmatched(servers.overrides_from, name, table, known)
        for name, table in servers.overrides.items()
        if name not in known and not _config.is_disabled(table)
    ]


def _unmatched(shown: str, name: str, table: Mapping[str, Any], known: list[str]) -> Problem:
    """The problem of a host table that adjusts a server nobody defines."""
    unknown = sorted(str(key) for key in set(table) - _config.KNOWN_KEYS)
    typos = f" It has {_config.unknown_keys(unknown)}." if unknown else ""
    close = did_you_mean(name, known) if known else ""
    reason = (
        f"{_table_path(shown, name)} in {shown} has neither 'command' nor 'url', and no pack "
        f"or JSON file defines a server named {name!r}{close}, so nothing uses it.{typos} "
        "Give it 'command' (a stdio server) or 'url' (streamable HTTP), or name a server "
        "that exists."
    )
    return Problem("server", reason, problem_pack(name))


def _table_path(shown: str, name: str) -> str:
    """How the host writes a server's table in ``shown``: ``[mcp_servers.NAME]``."""
    table = "tool.toolpalette.mcp_servers" if shown == "pyproject.toml" else "mcp_servers"
    return f"[{table}.{name}]"


def claim_note(config: MCPServerConfig, config_file: str | None) -> tuple[str, str]:
    """Where a server comes from, and how to resolve a collision with its own keys.

    Returns the source as collision reports show it (``from toolpalette.toml``) and the
    hint: the server's own ``prefix`` or ``rename``, in the place that configures it
    (``{tool}`` in it stands for the server's name of the contested tool).
    """
    shown = shown_name(config_file)
    name = config.name
    keys = f'prefix = "{name}_" (or rename = {{{{tool}} = "NEW_NAME"}})'
    table = f"{_table_path(shown, name)} {keys} in {shown}"
    if config.source == "code" or config.source.endswith("(given in code)"):
        how = "give it prefix= or rename= where code configures it (ToolHub(mcp_servers=...))"
    elif config.pack is not None:
        how = f"adjust the pack's server: {table}"
    elif config.source == shown:
        how = f"set {table}"
    else:  # a JSON file, or a JSON file adjusted by the host's file
        how = f"set {table} (merged over the JSON file's entry)"
    return f"from {config.source}", f"give MCP server {name!r} its own prefix or rename: {how}"


def _desktop_file(
    path: str, adjusting: dict[str, Mapping[str, Any]], shown: str
) -> tuple[list[MCPServerConfig], list[_config.BadEntry]]:
    """The servers of a desktop client's JSON file; ``adjusting`` tables merged over them.

    The host's tables of the JSON servers' names are taken out of ``adjusting``: each
    is merged over its entry, key by key (the host's keys win).
    """
    try:
        data = _config.read_json_file(path)
    except (OSError, ValueError) as exc:
        return [], [(None, f"MCP servers file {path}: {exc}")]
    name = Path(path).name
    block = data.get("mcpServers", data.get("mcp_servers"))
    if not isinstance(block, Mapping):
        return _config.from_desktop_block(data, source=name)  # says what is missing
    plain: dict[str, Any] = {}
    found: list[MCPServerConfig] = []
    bad: list[_config.BadEntry] = []
    for server, entry in block.items():
        adjustment = adjusting.pop(server, None) if isinstance(entry, Mapping) else None
        if adjustment is None:
            plain[server] = entry
            continue
        merged = {**entry, **adjustment}
        more, worse = _config.read_servers({server: merged}, source=f"{name}, adjusted in {shown}")
        found, bad = [*found, *more], [*bad, *worse]
    more, worse = _config.read_servers(plain, source=name)
    return [*more, *found], [*worse, *bad]


def _from_code(code: Any) -> tuple[list[MCPServerConfig], list[_config.BadEntry]]:
    if isinstance(code, (str, os.PathLike)):
        path = os.fspath(code)
        try:
            data = _config.read_json_file(path)
        except (OSError, ValueError) as exc:
            return [], [(None, f"MCP servers file {path}: {exc}")]
        return _config.from_desktop_block(data, source=f"{Path(path).name} (given in code)")
    if not isinstance(code, Mapping):
        return [], [(None, f"mcp_servers= takes a mapping or a path, not {type(code).__name__}")]
    if "mcpServers" in code:
        return _config.from_desktop_block(code, source="code")
    return _config.read_servers(code, source="code")
