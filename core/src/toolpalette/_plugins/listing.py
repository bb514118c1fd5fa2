"""Tool listings, cached across processes so that listing imports no pack.

A listing (every tool's name, description, read-only flag and provenance, and the
problems found building it) is stored in one JSON file under the user's cache folder,
keyed on everything that could change it: the core's version and its own ``RECORD``, the
interpreter (its version and executable), the host's renames and prefixes, and each
installed pack's entry point and the exact contents of its distribution's ``RECORD``
(which lists every installed file with its hash, so any reinstall or upgrade changes it).
A stale cache is never trusted: a key that does not match to the last digit is a miss,
and a miss rebuilds the listing by importing the packs. Packs that cannot be
fingerprinted (editable installs, whose sources change without their ``RECORD``
changing, plugins added in code) make the listing uncacheable.

The folder is the platform's user cache folder (``platformdirs``: ``~/.cache`` or
``$XDG_CACHE_HOME`` on Linux, ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on
Windows), under ``toolpalette``. ``TOOLPALETTE_CACHE_DIR`` moves the cache;
``TOOLPALETTE_NO_CACHE=1`` turns it off (see :mod:`toolpalette._plugins.switches`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from toolpalette._plugins.problems import Problem
from toolpalette._plugins.switches import Switches

if TYPE_CHECKING:
    from toolpalette._tools.provider import ToolProvider

__all__ = ["Listing", "ToolInfo", "cache_file", "key_of", "load", "store"]

_FORMAT = 2


@dataclass(frozen=True)
class ToolInfo:
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
    def of(cls, provider: ToolProvider) -> ToolInfo:
        """The listing entry of a provider."""
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

    tools: tuple[ToolInfo, ...]
    """The tools, sorted by name."""
    problems: tuple[Problem, ...]
    """What was skipped while building the listing, and why."""
    cached: bool
    """Whether it was read from the cache (no pack was imported)."""


def cache_file(switches: Switches) -> str | None:
    """The cache file, or None when caching is off."""
    if switches.no_cache:
        return None
    if switches.cache_dir:
        return os.path.join(switches.cache_dir, "listing.json")
    import platformdirs

    return os.path.join(platformdirs.user_cache_dir("toolpalette", appauthor=False), "listing.json")


def key_of(installed: str, switches: Switches, settings: Mapping[str, Any]) -> str:
    """The cache key: what is installed, the switches, the host's settings, the interpreter.

    ``installed`` is :func:`toolpalette._plugins.installed.fingerprint` (the core and
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


def load(path: str, key: str) -> Listing | None:
    """The listing cached in ``path`` under exactly ``key``, or None (any doubt is a miss)."""
    try:
        with open(path, encoding="utf-8") as text:
            data = json.loads(text.read())
        if data.get("key") != key:
            return None
        tools = tuple(ToolInfo(**entry) for entry in data["tools"])
        problems = tuple(Problem(**entry) for entry in data["problems"])
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    return Listing(tools, problems, cached=True)


def store(path: str, key: str, listing: Listing) -> None:
    """Write ``listing`` under ``key``, atomically; a cache that cannot be written is skipped."""
    data = {
        "key": key,
        "tools": [asdict(tool) for tool in listing.tools],
        "problems": [asdict(problem) for problem in listing.problems],
    }
    import tempfile

    folder = os.path.dirname(path)
    with contextlib.suppress(OSError):
        os.makedirs(folder, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=folder, prefix=".listing-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(data, out, ensure_ascii=False)
            os.replace(temp, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)
