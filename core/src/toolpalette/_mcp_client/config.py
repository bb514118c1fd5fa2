"""MCP server configurations: what the host (or a pack, or code) says to connect to.

Importing this module never imports the ``mcp`` SDK.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from toolpalette._plugins.config import did_you_mean
from toolpalette._plugins.servers import MCPServerSpec
from toolpalette._tools.tool import TOOL_NAME

__all__ = [
    "BASE_ENV",
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_MAX_MESSAGE",
    "DEFAULT_MAX_STREAM",
    "KNOWN_KEYS",
    "MCPServerConfig",
    "BadEntry",
    "from_desktop_block",
    "from_spec",
    "from_table",
    "read_servers",
    "unknown_keys",
]

BASE_ENV: Final = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
"""The host variables every stdio server receives (when set), on POSIX systems."""
DEFAULT_CONNECT_TIMEOUT: Final = 20.0
"""Seconds a server may take to start and answer the handshake."""
DEFAULT_CALL_TIMEOUT: Final = 30.0
"""Seconds a call to a server's tool may run when the server sets no ``timeout``."""
DEFAULT_MAX_MESSAGE: Final = 4 * 1024 * 1024
"""The most bytes of one message a server may send (a line on stdio, a body or an event on
HTTP) when it sets no ``max_message``."""
DEFAULT_MAX_STREAM: Final = 64 * 1024 * 1024
"""The most bytes of one HTTP response (a whole SSE stream) when the server sets no
``max_stream``."""
DESCRIBED: Final = 200
"""The longest account of how a server is reached that a problem gives (characters)."""

_NAME: Final = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_PREFIX: Final = re.compile(r"^[A-Za-z0-9_-]{1,63}$")
_VAR: Final = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_EMPTY: Final[Mapping[str, str]] = MappingProxyType({})
BadEntry = tuple["str | None", str]
"""A configuration entry that was refused: the server's name (None: no one server's), why."""
_AS_GIVEN: Final = (
    "cwd",
    "url",
    "trusted",
    "timeout",
    "connect_timeout",
    "max_message",
    "max_stream",
    "stream_idle",
    "prefix",
)
"""The keys of a server's table passed on as they are (their types checked after)."""
_STRING_MAPS: Final = ("env", "headers", "rename")
"""The keys of a server's table that map strings to strings."""
KNOWN_KEYS: Final = frozenset(
    {
        "command",
        "args",
        *_AS_GIVEN,
        *_STRING_MAPS,
        "type",
        "transport",
        "enabled",
        "disabled",
        "exclude",
    }
)
"""The keys of a server's table; any other is refused, with the closest as a suggestion."""


@dataclass(frozen=True)
class MCPServerConfig:
    """One MCP server to connect to: how to reach it and how far to trust it.

    Exactly one of ``command`` (stdio), ``url`` (streamable HTTP) and ``server`` (an
    in-process SDK server, for tests and benchmarks) is set.
    """

    name: str
    """A short name, unique among the servers (letters, digits, ``_``, ``.``, ``-``)."""
    command: str | None = None
    """The executable that starts a stdio server."""
    args: tuple[str, ...] = ()
    """Its arguments."""
    env: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    """Variables given to the process besides `BASE_ENV` (``${VAR}`` expanded)."""
    cwd: str | None = None
    """The working directory of the process (default: the host's)."""
    url: str | None = None
    """The streamable HTTP endpoint."""
    headers: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    """HTTP headers sent with every request (``${VAR}`` expanded)."""
    server: Any = None
    """An in-process ``mcp`` ``Server`` or ``MCPServer`` (connected without a process)."""
    trusted: bool = False
    """Whether the server's hints (``readOnlyHint``, ``destructiveHint``, ...) are believed;
    otherwise every tool mutates, with MCP's default hints."""
    timeout: float = DEFAULT_CALL_TIMEOUT
    """Seconds a call may run (the tool's own timeout in the pipeline)."""
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    """Seconds the server may take to start and answer the handshake."""
    max_message: int = DEFAULT_MAX_MESSAGE
    """The most bytes of one message the server may send (stdio and HTTP)."""
    max_stream: int = DEFAULT_MAX_STREAM
    """The most bytes of one HTTP response, a whole SSE stream included."""
    stream_idle: float | None = None
    """The most seconds an HTTP request's response may go without a whole message
    (default: ``timeout``)."""
    prefix: str = ""
    """Put in front of every tool name of this server."""
    rename: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    """The server's tool name to the name it is offered under (wins over ``prefix``)."""
    exclude: tuple[str, ...] = ()
    """The server's own names of tools not to offer (``exclude = ["delete_repo"]``)."""
    source: str = "code"
    """Where the configuration comes from: ``code``, a file, or ``pack NAME``."""
    pack: str | None = None
    """The pack that described the server, if one did."""

    def __post_init__(self) -> None:
        where = f"MCP server {self.name!r} ({self.source})"
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ValueError(
                f"MCP server name {self.name!r}: use 1-64 letters, digits, '_', '.' or '-'"
            )
        reached = [x for x in (self.command, self.url, self.server) if x is not None]
        if len(reached) != 1:
            raise ValueError(f"{where}: needs exactly one of 'command' and 'url'")
        if self.command is not None and not (isinstance(self.command, str) and self.command):
            raise ValueError(f"{where}: 'command' must be a non-empty string")
        if not all(isinstance(a, str) for a in self.args):
            raise ValueError(f"{where}: 'args' must be strings")
        if self.url is not None and not (
            isinstance(self.url, str) and self.url.startswith(("http://", "https://"))
        ):
            raise ValueError(f"{where}: 'url' must be an http(s) URL")
        for label, table in (("env", self.env), ("headers", self.headers)):
            if not _str_pairs(table):
                raise ValueError(f"{where}: {label!r} must map strings to strings")
        if not isinstance(self.trusted, bool):
            raise ValueError(f"{where}: 'trusted' must be true or false")
        for label, seconds in (
            ("timeout", self.timeout),
            ("connect_timeout", self.connect_timeout),
        ):
            if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds <= 0:
                raise ValueError(f"{where}: {label!r} must be a positive number of seconds")
        for label, size in (("max_message", self.max_message), ("max_stream", self.max_stream)):
            if isinstance(size, bool) or not isinstance(size, int) or size < 1024:
                raise ValueError(f"{where}: {label!r} must be a number of bytes, at least 1024")
        idle = self.stream_idle
        if idle is not None and (
            isinstance(idle, bool) or not isinstance(idle, (int, float)) or idle <= 0
        ):
            raise ValueError(f"{where}: 'stream_idle' must be a positive number of seconds")
        if self.prefix and not _PREFIX.match(self.prefix):
            raise ValueError(f"{where}: prefix {self.prefix!r}: use letters, digits, '_' and '-'")
        if not _str_pairs(self.rename):
            raise ValueError(f"{where}: 'rename' must map strings to strings")
        if not isinstance(self.exclude, tuple) or not all(isinstance(n, str) for n in self.exclude):
            raise ValueError(f"{where}: 'exclude' must be a list of tool names")
        for old, new in self.rename.items():
            if not TOOL_NAME.match(new):
                raise ValueError(f"{where}: rename {old!r} -> {new!r} is not a valid tool name")

    @property
    def transport(self) -> str:
        """``stdio``, ``http`` or ``memory``."""
        if self.command is not None:
            return "stdio"
        return "http" if self.url is not None else "memory"

    def name_for(self, tool_name: str) -> str:
        """The name a tool of this server is offered under: renamed, prefixed, or unchanged."""
        return self.rename.get(tool_name) or self.prefix + tool_name

    def process_env(self, host: Mapping[str, str] | None = None) -> dict[str, str]:
        """The whole environment of the server's process: the base and ``env``, expanded.

        Raises:
            ValueError: a value names a ``${VAR}`` the host does not set.
        """
        host = os.environ if host is None else host
        base = {
            key: host[key] for key in BASE_ENV if key in host and not host[key].startswith("()")
        }
        return {**base, **self._expanded("env", self.env, host)}

    def http_headers(self, host: Mapping[str, str] | None = None) -> dict[str, str]:
        """The HTTP headers, ``${VAR}`` expanded.

        Raises:
            ValueError: a value names a ``${VAR}`` the host does not set.
        """
        return self._expanded("headers", self.headers, os.environ if host is None else host)

    def _expanded(
        self, label: str, table: Mapping[str, str], host: Mapping[str, str]
    ) -> dict[str, str]:
        def value_of(match: re.Match[str]) -> str:
            var = match.group(1)
            if var not in host:
                raise ValueError(
                    f"MCP server {self.name!r}: {label} names ${{{var}}}, which is not set"
                )
            return host[var]

        return {key: _VAR.sub(value_of, value) for key, value in table.items()}

    def describe(self) -> str:
        """How the server is reached, without headers or environment values (secrets).

        Cut at `DESCRIBED` characters: it goes into problems and ``check``.
        """
        if self.command is not None:
            text = " ".join([self.command, *self.args])
        elif self.url is not None:
            text = self.url
        else:
            text = f"in-process {type(self.server).__name__}"
        return text if len(text) <= DESCRIBED else text[: DESCRIBED - 3] + "..."


def _str_pairs(table: object) -> bool:
    return isinstance(table, Mapping) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in table.items()
    )


def from_spec(spec: MCPServerSpec, overrides: Mapping[str, Any] | None = None) -> MCPServerConfig:
    """The configuration of a server a pack describes, with the host's overrides.

    The host's ``[mcp_servers.NAME]`` table for a pack's server may set ``trusted``,
    ``env``, ``cwd``, ``headers``, ``timeout``, the bounds (``max_message``,
    ``max_stream``, ``stream_idle``), ``prefix`` and ``rename``; how to start
    the server stays the pack's.

    Raises:
        ValueError: an override has the wrong type.
    """
    table: dict[str, Any] = dict(overrides or {})
    table.pop("command", None), table.pop("args", None), table.pop("url", None)
    if spec.command is not None:
        table["command"], table["args"] = spec.command[0], list(spec.command[1:])
    else:
        table["url"] = spec.url
    table.setdefault("trusted", spec.trusted)
    return from_table(spec.name, table, source=f"pack {spec.pack}", pack=spec.pack)


def from_table(
    name: str, table: Mapping[str, Any], *, source: str = "code", pack: str | None = None
) -> MCPServerConfig:
    """Read one ``[mcp_servers.NAME]`` table (or one ``mcpServers`` entry).

    ``command`` is a string (with ``args`` a list) or a whole argv list. ``type`` or
    ``transport`` (``stdio``, ``http``, ``streamable-http``, ``streamableHttp``) may be
    given as desktop configurations do; ``sse`` is refused (only streamable HTTP is
    spoken). ``disabled = true`` (or ``enabled = false``) leaves the server out.

    Raises:
        ValueError: the table is not of that shape; the message names the field.
    """
    where = f"MCP server {name!r} ({source})"
    if not isinstance(table, Mapping):
        raise ValueError(f"{where}: expected a table, not {type(table).__name__}")
    unknown = sorted(str(key) for key in set(table) - KNOWN_KEYS)
    if unknown:
        raise ValueError(f"{where}: {unknown_keys(unknown)}")
    kind = table.get("type", table.get("transport"))
    if kind is not None and kind not in ("stdio", "http", "streamable-http", "streamableHttp"):
        raise ValueError(f"{where}: transport {kind!r} is not supported (use stdio or http)")
    command, args = table.get("command"), table.get("args", [])
    if isinstance(command, (list, tuple)):
        if not command or not all(isinstance(part, str) for part in command):
            raise ValueError(f"{where}: 'command' must be a non-empty list of strings")
        command, args = command[0], [*command[1:], *args]
    if not isinstance(args, (list, tuple)):
        raise ValueError(f"{where}: 'args' must be a list of strings")
    options: dict[str, Any] = {key: table[key] for key in _AS_GIVEN if key in table}
    for key in _STRING_MAPS:
        if key in table:
            if not _str_pairs(table[key]):
                raise ValueError(f"{where}: {key!r} must map strings to strings")
            options[key] = MappingProxyType(dict(table[key]))
    if "cwd" in options and not isinstance(options["cwd"], str):
        raise ValueError(f"{where}: 'cwd' must be a path")
    if "exclude" in table:
        excluded = table["exclude"]
        if not isinstance(excluded, (list, tuple)) or not all(isinstance(n, str) for n in excluded):
            raise ValueError(f"{where}: 'exclude' must be a list of tool names")
        options["exclude"] = tuple(excluded)
    return MCPServerConfig(
        name, command=command, args=tuple(args), source=source, pack=pack, **options
    )


def unknown_keys(keys: list[str]) -> str:
    """``unknown keys 'comand' (did you mean 'command'?)``: keys a server's table cannot take."""
    return "unknown keys " + ", ".join(f"{k!r}{did_you_mean(k, KNOWN_KEYS)}" for k in keys)


def is_disabled(table: Mapping[str, Any]) -> bool:
    """Whether a table turns its server off (``disabled = true`` or ``enabled = false``)."""
    return table.get("disabled") is True or table.get("enabled") is False


def from_desktop_block(
    data: Mapping[str, Any], *, source: str
) -> tuple[list[MCPServerConfig], list[BadEntry]]:
    """The servers of an ``{"mcpServers": {...}}`` block, and what was wrong with others.

    Each entry is read by `from_table()`; a bad entry is a reason in the second list
    and the others are kept.
    """
    block = data.get("mcpServers", data.get("mcp_servers"))
    if not isinstance(block, Mapping):
        return [], [(None, f"{source}: no 'mcpServers' object")]
    return read_servers(block, source=source)


def read_servers(
    tables: Mapping[str, Any], *, source: str
) -> tuple[list[MCPServerConfig], list[BadEntry]]:
    """Read a mapping of server names to tables, `MCPServerConfig` or SDK servers.

    Returns the configurations (disabled ones left out) and, per bad entry, the
    server's name and the reason.
    """
    found: list[MCPServerConfig] = []
    bad: list[BadEntry] = []
    for name, table in tables.items():
        try:
            if isinstance(table, MCPServerConfig):
                found.append(table if table.name == name else _renamed(table, str(name)))
            elif isinstance(table, Mapping):
                if not is_disabled(table):
                    found.append(from_table(str(name), table, source=source))
            else:  # an in-process SDK server object, given in code
                found.append(MCPServerConfig(str(name), server=table, source=source))
        except ValueError as exc:
            bad.append((str(name), str(exc)))
    return found, bad


def read_json_file(path: str | os.PathLike[str]) -> Mapping[str, Any]:
    """Read a desktop client's JSON configuration file.

    Raises:
        ValueError: the file is not JSON, or not an object.
        OSError: the file cannot be read.
    """
    file = Path(path)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{file.name}: not valid JSON ({exc.msg}, line {exc.lineno})") from exc
    if not isinstance(data, Mapping):
        raise ValueError(f"{file.name}: expected a JSON object")
    return data


def _renamed(config: MCPServerConfig, name: str) -> MCPServerConfig:
    from dataclasses import replace

    return replace(config, name=name)
