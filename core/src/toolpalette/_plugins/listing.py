"""Tool listings, cached across processes so that listing imports no pack.

A listing (every tool's name, description, read-only flag and provenance, and the
problems found building it) is stored in one JSON file under the user's cache folder,
keyed on everything that could change it: the core's version, the Python version, the
host's renames and prefixes, and each installed pack's entry point and the exact
contents of its distribution's ``RECORD`` (which lists every installed file with its
hash, so any reinstall or upgrade changes it). A stale cache is never trusted: a key
that does not match to the last digit is a miss, and a miss rebuilds the listing by
importing the packs. Packs that cannot be fingerprinted (editable installs, whose
sources change without their ``RECORD`` changing, plugins added in code) make the
listing uncacheable.

``TOOLPALETTE_CACHE_DIR`` moves the cache; ``TOOLPALETTE_NO_CACHE=1`` turns it off.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from toolpalette._plugins.problems import Problem
from toolpalette._tools.provider import ToolProvider

__all__ = ["CACHE_DIR_ENV", "NO_CACHE_ENV", "Listing", "ToolInfo", "cache_file", "load", "store"]

CACHE_DIR_ENV = "TOOLPALETTE_CACHE_DIR"
"""Where the listing cache lives (default: the user's cache folder)."""
NO_CACHE_ENV = "TOOLPALETTE_NO_CACHE"
"""Set to a non-empty value other than ``0`` to neither read nor write the cache."""
_FORMAT = 1


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


def cache_file() -> Path | None:
    """The cache file, or None when caching is off."""
    if os.environ.get(NO_CACHE_ENV, "0") not in ("", "0"):
        return None
    folder = os.environ.get(CACHE_DIR_ENV)
    if folder:
        return Path(folder) / "listing.json"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "toolpalette" / "listing.json"


def key_of(fingerprints: Iterable[str | None], settings: Mapping[str, Any]) -> str | None:
    """The cache key of a set of packs and host settings; None when one pack has no print."""
    digest = hashlib.sha256()
    header = {"format": _FORMAT, "python": sys.version, "settings": settings}
    digest.update(json.dumps(header, sort_keys=True, default=str).encode())
    for fingerprint in fingerprints:
        if fingerprint is None:
            return None
        digest.update(b"\0" + fingerprint.encode())
    return digest.hexdigest()


def load(key: str) -> Listing | None:
    """The cached listing stored under exactly ``key``, or None (any doubt is a miss)."""
    path = cache_file()
    if path is None:
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("key") != key:
            return None
        tools = tuple(ToolInfo(**entry) for entry in data["tools"])
        problems = tuple(Problem(**entry) for entry in data["problems"])
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    return Listing(tools, problems, cached=True)


def store(key: str, listing: Listing) -> None:
    """Write ``listing`` under ``key``, atomically; a cache that cannot be written is skipped."""
    path = cache_file()
    if path is None:
        return
    data = {
        "key": key,
        "tools": [asdict(tool) for tool in listing.tools],
        "problems": [asdict(problem) for problem in listing.problems],
    }
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".listing-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(data, out, ensure_ascii=False)
            os.replace(temp, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)
