"""What the read-only commands print, cached across processes so that they import no pack.

The cache's files and keys: docs/architecture.md ("The listing cache").
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from toolpalette._plugins.discovery import PLUGIN_GROUP, SKILLJAR_GROUP
from toolpalette._plugins.installed import Installed, fingerprint, snapshot
from toolpalette._plugins.problems import Problem
from toolpalette._plugins.switches import Switches

if TYPE_CHECKING:
    from toolpalette._plugins.config import HubConfig
    from toolpalette._tools.provider import ToolProvider

__all__ = [
    "ListedTool",
    "Listing",
    "Miss",
    "cache_file",
    "key_of",
    "load",
    "load_answer",
    "load_installed",
    "packs_key",
    "server_key",
    "settings_of",
    "skills_key",
    "store",
    "store_answer",
]

_FORMAT: Final = 4


@dataclass(frozen=True)
class ListedTool:
    """What listing a tool needs: no schema, no import of its pack."""

    name: str
    """The tool's name (after the host's renames and prefixes)."""
    description: str
    """What the model reads."""
    read_only: bool
    """Whether the tool leaves the world unchanged."""
    pack: str | None
    """The pack's entry point name."""
    distribution: str | None
    """The distribution that ships it."""
    version: str | None
    """That distribution's version."""
    module: str | None
    """The module that defines it."""
    server: str | None = None
    """The MCP server that serves it, for an MCP server's tool."""

    @classmethod
    def of(cls, provider: ToolProvider) -> ListedTool:
        """The listing entry of a provider.

        Reads the three properties, not ``provider.info``: that would build the tool's
        schemas, which a listing never does.
        """
        origin = provider.origin
        return cls(
            provider.name,
            provider.description,
            provider.read_only,
            origin.pack if origin else None,
            origin.distribution if origin else None,
            origin.version if origin else None,
            origin.module if origin else None,
            origin.server if origin else None,
        )


@dataclass(frozen=True)
class Listing:
    """Every available tool (sorted by name) and every problem, and whether from cache."""

    tools: tuple[ListedTool, ...]
    """The tools, sorted by name."""
    problems: tuple[Problem, ...]
    """What was skipped while building the listing, and why."""
    cached: bool
    """Whether it was read from the cache (no pack was imported)."""


def cache_file(switches: Switches, name: str = "listing") -> str | None:
    """The cache file of answer ``name`` (``listing``, ``show``...), or None when caching is off."""
    if switches.no_cache:
        return None
    if switches.cache_dir:
        return os.path.join(switches.cache_dir, f"{name}.json")
    import platformdirs

    folder = platformdirs.user_cache_dir("toolpalette", appauthor=False)
    return os.path.join(folder, f"{name}.json")


def key_of(installed: str, switches: Switches, settings: Mapping[str, Any]) -> str:
    """The cache key: what is installed, the switches, the host's settings, the interpreter.

    ``installed`` is `toolpalette._plugins.installed.fingerprint()` (the core and
    every pack distribution, with their ``RECORD``).
    """
    header = {
        "format": _FORMAT,
        "installed": installed,
        "python": sys.version,
        "executable": sys.executable,
        "only": sorted(switches.only) if switches.only is not None else None,
        "blocked": sorted(switches.blocked),
        "autoload_disabled": switches.autoload_disabled,
        "settings": settings,
    }
    return hashlib.sha256(json.dumps(header, sort_keys=True, default=str).encode()).hexdigest()


def settings_of(config: HubConfig) -> dict[str, Any]:
    """The host's settings that change what the packs offer: renames and prefixes."""
    return {"rename": dict(config.rename), "prefix": dict(config.prefix)}


def packs_key(
    switches: Switches,
    settings: Mapping[str, Any],
    *,
    autoload: bool = True,
    installed: Installed | None = None,
) -> str | None:
    """The key of every answer about the installed packs, or None when it cannot be cached.

    Args:
        switches: The environment switches (which packs are used).
        settings: The host's `settings_of()`.
        autoload: Whether installed packs are discovered at all (the environment can
            also turn it off); without it, nothing installed matters.
        installed: The snapshot of what is installed to fingerprint (a new one by
            default): a cold listing finds its packs in the same one.
    """
    used = autoload and switches.discovers
    digest = fingerprint(PLUGIN_GROUP, switches.uses, installed) if used else "off"
    return None if digest is None else key_of(digest, switches, settings)


def skills_key(switches: Switches) -> str | None:
    """The key of the skilljars' listing, or None when a skilljar cannot be fingerprinted.

    Every installed skilljar is used whenever discovery is on, whatever the pack
    switches say; its ``SKILL.md`` files are in its ``RECORD``.
    """
    installed = fingerprint(SKILLJAR_GROUP, _every) if switches.discovers else "off"
    return None if installed is None else key_of(installed, switches, {"skilljars": True})


def _every(_name: str) -> bool:
    return True


_NO_GROUP: Final = "toolpalette.no-group"


def server_key(
    switches: Switches, server: Mapping[str, Any], installed: Installed | None = None
) -> str | None:
    """The key of one MCP server's cached listing, or None when it cannot be cached.

    ``server`` is the server's fingerprint (a JSON object: its configuration and the
    programs it runs); the core's version and ``RECORD`` count too, as for the packs
    (toolpalette's checks decide which of the server's tools are offered).
    """
    core = fingerprint(_NO_GROUP, _none, installed)
    return None if core is None else key_of(core, switches, {"mcp_server": server})


def _none(_name: str) -> bool:
    return False


def load(path: str, key: str) -> Listing | None:
    """The listing cached in ``path`` under exactly ``key``, or None (any doubt is a miss)."""
    data = _read(path, key)
    if data is None:
        return None
    try:
        tools = tuple(ListedTool(**entry) for entry in data["tools"])
        problems = tuple(Problem(**entry) for entry in data["problems"])
    except (TypeError, KeyError):
        return None
    return Listing(tools, problems, cached=True)


def store(path: str, key: str, listing: Listing) -> None:
    """Write ``listing`` under ``key``, atomically; a cache that cannot be written is skipped."""
    data = {  # plain values only: vars() is what asdict() gives, without its deep copy
        "key": key,
        "tools": [vars(tool) for tool in listing.tools],
        "problems": [vars(problem) for problem in listing.problems],
    }
    _write(path, data)


@dataclass(frozen=True)
class Miss:
    """A listing the cache did not hold, and what reading it computed, for the build to reuse.

    A cold listing would otherwise read what is installed and fingerprint it twice: once
    to look in the cache, once more to store what it built.
    """

    installed: Installed | None
    """The snapshot the key was computed from (None when none could be taken)."""
    key: str | None
    """The cache key, or None when the listing cannot be cached."""


def load_installed(switches: Switches, settings: Mapping[str, Any]) -> Listing | Miss:
    """The installed packs' listing from the cache, or a `Miss`; imports no pack.

    What ``PackCatalog(config, switches).listing()`` reads first, for a caller that
    builds the catalog only on a miss (the command line): it hands the `Miss` to
    ``listing(miss=...)``.
    """
    path = cache_file(switches)
    installed = snapshot() if switches.discovers else None
    # A snapshot that could not be taken cannot be fingerprinted either (nor cached).
    cacheable = path is not None and (installed is not None or not switches.discovers)
    key = packs_key(switches, settings, installed=installed) if cacheable else None
    found = load(path, key) if path is not None and key is not None else None
    return found if found is not None else Miss(installed, key)


def load_answer(path: str, key: str) -> Any | None:
    """The answer (any JSON value) cached in ``path`` under exactly ``key``, or None."""
    data = _read(path, key)
    return None if data is None else data.get("answer")


def store_answer(path: str, key: str, answer: Any) -> None:
    """Write ``answer`` (a JSON value) under ``key``, atomically; skipped when it cannot be."""
    _write(path, {"key": key, "answer": answer})


def _read(path: str, key: str) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as text:
            data = json.loads(text.read())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("key") == key else None


def _write(path: str, data: dict[str, Any]) -> None:
    try:
        text = json.dumps(data, ensure_ascii=False)
    except (TypeError, ValueError):  # not JSON: nothing to cache
        return
    import tempfile

    folder = os.path.dirname(path)
    with contextlib.suppress(OSError):
        os.makedirs(folder, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=folder, prefix=".listing-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(temp, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)
