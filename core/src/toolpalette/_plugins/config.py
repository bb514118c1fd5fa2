"""Host configuration: explicit renames and prefixes, and each pack's own settings.

A collision between two packs is never resolved silently; the host resolves it here.
The configuration comes from code (``ToolHub(rename=..., prefix=..., config=...)``) or
from a file: a ``toolpalette.toml`` (top-level keys) or the ``[tool.toolpalette]``
table of a ``pyproject.toml``, given by path or found in the current directory
(``toolpalette.toml`` first). Code arguments win over the file, key by key.

Keys:

- ``rename``: ``{"old": "new"}`` renames a tool in every pack; ``{"pack.old": "new"}``
  renames it in one pack only (tool names never contain a dot, so the pack is what
  comes before the last dot). A rename wins over a prefix.
- ``prefix``: ``{"pack": "prefix_"}`` puts ``prefix_`` in front of every tool of that pack.
- ``packs``: ``{"pack": {...}}`` settings a pack reads through ``hub.pack_config(pack)``
  (a workspace root, a database path).
- ``worker_threads``: the size of the thread pool the hub's thinkers run sync tools in
  (a positive integer; default ``min(32, CPUs + 4)``).
- ``mcp_servers``: ``{"name": {...}}`` MCP servers to use (read by the MCP client, see
  ``toolpalette._mcp_client.config``); ``mcp_json``: the path of a desktop client's JSON
  file whose ``mcpServers`` block is read as is (relative to the configuration file).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Union

__all__ = ["ConfigSource", "HubConfig", "load_config"]


ConfigSource = Union[Mapping[str, Any], str, "os.PathLike[str]", None]
"""What ``ToolHub(config=...)`` accepts: a mapping, a file path, or None (look in the CWD)."""

KNOWN_KEYS: Final = frozenset(
    {"rename", "prefix", "packs", "worker_threads", "mcp_servers", "mcp_json"}
)
"""The configuration keys this module reads; others are logged and ignored."""
_PREFIX: Final = re.compile(r"^[A-Za-z0-9_-]{1,63}\Z")
_EMPTY: Final[Mapping[str, Any]] = MappingProxyType({})


@dataclass(frozen=True)
class HubConfig:
    """A host's configuration, validated."""

    rename: Mapping[str, str] = field(default_factory=dict)
    """``old`` or ``pack.old`` to the new tool name."""
    prefix: Mapping[str, str] = field(default_factory=dict)
    """Pack name to the prefix put in front of each of its tools."""
    packs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Pack name to that pack's own settings."""
    source: str | None = None
    """The file the configuration was read from, if any."""
    worker_threads: int | None = None
    """Threads of the pool the hub's thinkers run sync tools in; None: the default size."""
    mcp_servers: Mapping[str, Any] = field(default_factory=dict)
    """Server name to its ``[mcp_servers.NAME]`` table, as written (checked by the client)."""
    mcp_json: str | None = None
    """A desktop client's JSON configuration to read servers from, resolved to a path."""

    def name_for(self, pack: str, tool_name: str) -> str:
        """The name a pack's tool is offered under: renamed, prefixed, or unchanged."""
        renamed = self.rename.get(f"{pack}.{tool_name}") or self.rename.get(tool_name)
        if renamed:
            return renamed
        return self.prefix.get(pack, "") + tool_name

    def pack_config(self, pack: str) -> Mapping[str, Any]:
        """The read-only settings of ``pack`` (empty when there are none)."""
        settings = self.packs.get(pack)
        return MappingProxyType(dict(settings)) if settings else _EMPTY


def load_config(
    config: ConfigSource = None,
    *,
    rename: Mapping[str, str] | None = None,
    prefix: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> HubConfig:
    """Read and validate the host configuration; code arguments win over the file.

    Args:
        config: A mapping (the table itself), a path to a ``toolpalette.toml`` or a
            ``pyproject.toml``, or None to look for one of those in ``cwd``.
        rename: Renames given in code, merged over the file's.
        prefix: Prefixes given in code, merged over the file's.
        cwd: Where to look when ``config`` is None; defaults to the current directory.

    Raises:
        ValueError: a key has the wrong type, or a new name or prefix is not valid.
        OSError: an explicit path cannot be read.
    """
    if isinstance(config, Mapping):
        table, source = config, None
    else:
        table, source = _read_file(config, os.fspath(cwd) if cwd is not None else os.getcwd())
    unknown = sorted(set(table) - KNOWN_KEYS)
    if unknown:
        import logging  # only on this path: the command line starts without it

        logging.getLogger("toolpalette.config").warning(
            "ignoring unknown toolpalette configuration keys: %s", ", ".join(unknown)
        )
    merged_rename = {**_str_map(table, "rename"), **dict(rename or {})}
    merged_prefix = {**_str_map(table, "prefix"), **dict(prefix or {})}
    _check_names(merged_rename, merged_prefix)
    threads = _worker_threads(table)
    servers, mcp_json = _mcp(table, source)
    return HubConfig(
        merged_rename, merged_prefix, _packs(table), source, threads, servers, mcp_json
    )


def _mcp(table: Mapping[str, Any], source: str | None) -> tuple[dict[str, Any], str | None]:
    servers = table.get("mcp_servers", {})
    if not isinstance(servers, Mapping):
        raise ValueError("toolpalette configuration: 'mcp_servers' must map names to tables")
    path = table.get("mcp_json")
    if path is not None and not isinstance(path, str):
        raise ValueError("toolpalette configuration: 'mcp_json' must be a path")
    if path is not None and source is not None:
        path = os.path.join(os.path.dirname(source), path)
    return dict(servers), path


def _read_file(
    path: str | os.PathLike[str] | None, cwd: str
) -> tuple[Mapping[str, Any], str | None]:
    if path is None:
        for name in ("toolpalette.toml", "pyproject.toml"):
            candidate = os.path.join(cwd, name)
            if os.path.isfile(candidate):
                table = _table_of(candidate)
                if table is not None:
                    return table, candidate
        return {}, None
    file = os.fspath(path)
    return _table_of(file) or {}, file


def _table_of(file: str) -> Mapping[str, Any] | None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

    name = os.path.basename(file)
    with open(file, encoding="utf-8") as text:
        content = text.read()
    try:
        data: dict[str, Any] = tomllib.loads(content)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{name}: not valid TOML ({exc})") from exc
    if name != "pyproject.toml":
        return data
    table = data.get("tool", {}).get("toolpalette")
    if table is None:
        return None
    if not isinstance(table, Mapping):
        raise ValueError(f"{name}: [tool.toolpalette] must be a table")
    return table


def _str_map(table: Mapping[str, Any], key: str) -> dict[str, str]:
    value = table.get(key, {})
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ValueError(f"toolpalette configuration: {key!r} must map strings to strings")
    return dict(value)


def _packs(table: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    value = table.get("packs", {})
    if not isinstance(value, Mapping) or not all(isinstance(v, Mapping) for v in value.values()):
        raise ValueError("toolpalette configuration: 'packs' must map pack names to tables")
    return {str(k): MappingProxyType(dict(v)) for k, v in value.items()}


def _worker_threads(table: Mapping[str, Any]) -> int | None:
    value = table.get("worker_threads")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError("toolpalette configuration: 'worker_threads' must be a positive integer")
    return value


def _check_names(rename: Mapping[str, str], prefix: Mapping[str, str]) -> None:
    if rename:
        # Imported only here: the tool module brings logging and threading, which a
        # command answered from the listing cache does without.
        from toolpalette._tools.tool import TOOL_NAME

        for old, new in rename.items():
            if not TOOL_NAME.match(new):
                raise ValueError(
                    f"toolpalette configuration: rename {old!r} -> {new!r}: tool names are "
                    "1-64 characters of letters, digits, '_' and '-'"
                )
    for pack, text in prefix.items():
        if not _PREFIX.match(text):
            raise ValueError(
                f"toolpalette configuration: prefix for pack {pack!r} is {text!r}: "
                "use letters, digits, '_' and '-' (e.g. 'files_')"
            )
