"""A server's listing kept on disk, so that a process that does not call it need not start it.

Every listing a hub reads from a stdio or HTTP server is stored, as the hub offers it
(each tool's offered name, texts and schemas, and the problems), in the listing cache
(``mcp-NAME.json``, see :mod:`toolpalette._plugins.listing`). A later hub whose
server has the same fingerprint takes its tools from there until the server starts
for another reason (a call), when the live listing replaces them. So
``toolpalette call`` of a pack's tool, ``list`` and ``show`` beside configured servers
start none of them once each was listed, and a thinker starts a server only when it
calls one of its tools.

The fingerprint (:func:`fingerprint`) is what would change what the server lists:
its configuration (command, arguments, working folder, URL, name, prefix, renames,
exclusions, trust; the environment and headers it gets, hashed, never stored), the program it runs
and every argument that names a file (path, size, modification time), and toolpalette
itself (:func:`~toolpalette._plugins.listing.server_key`). A server can change its
tools without any of that changing, so a stored listing is also stale after the
server's ``ttlMs`` hint, or :data:`MAX_AGE` without one. In-process servers are never
stored, and ``TOOLPALETTE_NO_CACHE`` turns the cache off.

The ``answer`` stored: ``stored`` (seconds since the epoch), ``ttl`` (seconds, or
null), ``tools`` (each the fields of an :class:`~toolpalette._mcp_client.provider.MCPToolProvider`:
``name``, ``remote_name``, ``description``, ``input_schema``, ``output_schema``,
``annotations``, ``title``) and ``problems`` (each a problem's fields).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from typing import Any, Final

from toolpalette._mcp_client.config import MCPServerConfig
from toolpalette._mcp_client.connection import Connection
from toolpalette._mcp_client.offered import Offer
from toolpalette._mcp_client.provider import MCPToolProvider
from toolpalette._plugins import listing as _listing
from toolpalette._plugins.problems import Problem
from toolpalette._plugins.switches import Switches

__all__ = ["MAX_AGE", "Stored", "fingerprint", "load", "store"]

MAX_AGE: Final = 3600.0
"""Seconds a stored listing serves when the server gave no ``ttlMs`` hint."""
_FIELDS: Final = (
    "name",
    "remote_name",
    "description",
    "input_schema",
    "output_schema",
    "annotations",
    "title",
)


class Stored:
    """Where one server's listing is kept, under which key (None: it cannot be kept)."""

    def __init__(self, switches: Switches, config: MCPServerConfig) -> None:
        self.config = config
        self.path: str | None = None
        self.key: str | None = None
        if config.server is not None or switches.no_cache:
            return
        found = fingerprint(config)
        if found is None:
            return
        self.path = _listing.cache_file(switches, f"mcp-{config.name}")
        if self.path is not None:
            self.key = _listing.server_key(switches, found)


def load(stored: Stored, connection: Connection) -> tuple[Offer, float] | None:
    """The stored listing's offer and when it goes stale (``time.monotonic``), or None.

    None on any doubt: another key, a stale or unreadable file, another shape.
    """
    if stored.path is None or stored.key is None:
        return None
    answer = _listing.load_answer(stored.path, stored.key)
    if not isinstance(answer, dict):
        return None
    try:
        age = time.time() - float(answer["stored"])
        ttl = answer.get("ttl")
        life = float(ttl) if ttl is not None else MAX_AGE
        if not 0 <= age < life:
            return None
        providers = tuple(
            MCPToolProvider(connection, **{name: entry[name] for name in _FIELDS})
            for entry in answer["tools"]
        )
        problems = tuple(Problem(**entry) for entry in answer["problems"])
    except (KeyError, TypeError, ValueError):
        return None
    return Offer(providers, problems), time.monotonic() + life - age


def store(stored: Stored, offer: Offer, ttl: float | None) -> None:
    """Keep ``offer`` (a live listing's) for the next process; skipped when it cannot be."""
    if stored.path is None or stored.key is None:
        return
    tools = [
        {
            "name": p.name,
            "remote_name": p.remote_name,
            "description": p.description,
            "input_schema": p.input_schema,
            "output_schema": p.output_schema,
            "annotations": dict(p.annotations),
            "title": p.title,
        }
        for p in offer.providers
    ]
    answer = {
        "stored": time.time(),
        "ttl": ttl,
        "tools": tools,
        "problems": [vars(problem) for problem in offer.problems],
    }
    _listing.store_answer(stored.path, stored.key, answer)


def fingerprint(config: MCPServerConfig) -> dict[str, Any] | None:
    """What would change what ``config``'s server lists, or None when it cannot be known.

    None for an in-process server, and when the environment or headers name a variable
    that is not set (the server cannot start).
    """
    if config.server is not None:
        return None
    try:
        env = config.process_env()
        headers = config.http_headers()
    except ValueError:
        return None
    secrets = hashlib.sha256(json.dumps([env, headers], sort_keys=True).encode()).hexdigest()
    found: dict[str, Any] = {
        "name": config.name,
        "command": config.command,
        "args": list(config.args),
        "cwd": config.cwd,
        "url": config.url,
        "trusted": config.trusted,
        "prefix": config.prefix,
        "rename": dict(config.rename),
        "exclude": sorted(config.exclude),
        "pack": config.pack,
        "secrets": secrets,
    }
    if config.command is not None:
        program = shutil.which(config.command, path=env.get("PATH"))
        files = [program] if program else [config.command]
        folder = config.cwd or os.getcwd()
        files += [os.path.join(folder, arg) for arg in config.args]
        found["files"] = [_stat(path) for path in files]
    return found


def _stat(path: str) -> list[Any] | None:
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return [path, info.st_size, info.st_mtime_ns, info.st_ino]
