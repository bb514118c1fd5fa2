"""A server's listing kept on disk, so that a process that does not call it need not start it."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from typing import Any, Final

from toolpalette._mcp_client import offered as _offered
from toolpalette._mcp_client.config import MCPServerConfig
from toolpalette._mcp_client.connection import Connection
from toolpalette._mcp_client.listing import MIN_TTL, Fetched
from toolpalette._mcp_client.offered import Offer
from toolpalette._plugins import listing as _listing
from toolpalette._plugins.problems import Problem
from toolpalette._plugins.switches import Switches
from toolpalette._tools.tool import CONTROL_CHARACTERS

__all__ = ["DEFAULT_TTL", "MAX_AGE", "Stored", "file_name", "fingerprint", "load", "store"]

DEFAULT_TTL: Final = 600.0
"""Seconds a stored listing serves when the server gave no ``ttlMs`` hint, or one of a
second or less (0 included)."""
MAX_AGE: Final = DEFAULT_TTL
"""The former name of `DEFAULT_TTL`."""
_PROBLEM_KINDS: Final = frozenset({"server", "invalid-tool", "collision"})
_PROBLEM_TEXT: Final = 4096
_FIELDS: Final = (
    "name",
    "remote_name",
    "description",
    "input_schema",
    "output_schema",
    "annotations",
    "title",
    "task_support",
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
        self.path = _listing.cache_file(switches, file_name(config, found))
        if self.path is not None:
            self.key = _listing.server_key(switches, found)


def load(stored: Stored, connection: Connection) -> tuple[Offer, float] | None:
    """The stored listing's offer and when it goes stale (``time.monotonic``), or None.

    The stored tools go through the checks of a live listing (`offer()`:
    names, texts, schemas, sizes); each provider is marked `from_disk`, so that
    its first call waits for the live listing to confirm it. None on any doubt:
    another key, a stale or unreadable file, another shape, a tool stored under
    another name than its server's would give it, a stored problem that is not one.
    """
    if stored.path is None or stored.key is None:
        return None
    answer = _listing.load_answer(stored.path, stored.key)
    if not isinstance(answer, dict):
        return None
    try:
        age = time.time() - float(answer["stored"])
        life = _life(answer.get("ttl"))
        if not 0 <= age < life:
            return None
        entries = answer["tools"]
        kept = [_Kept(entry, stored.config) for entry in entries]
        problems = tuple(_problem(entry) for entry in answer["problems"])
    except (KeyError, TypeError, ValueError):
        return None
    made = _offered.offer(connection, Fetched(list(kept), None))
    for provider in made.providers:
        provider.from_disk = True
    return Offer(made.providers, problems + made.problems), time.monotonic() + life - age


def _life(ttl: Any) -> float:
    """Seconds a listing stored with hint ``ttl`` serves (see `DEFAULT_TTL`)."""
    if ttl is None:
        return DEFAULT_TTL
    seconds = float(ttl)
    return seconds if seconds > MIN_TTL else DEFAULT_TTL


class _Kept:
    """A stored tool, read by `offer()` as it reads the SDK's ``Tool``.

    Raises:
        ValueError: a field has the wrong type, or the stored name is not the one the
            server's configuration gives the tool.
    """

    def __init__(self, entry: Any, config: MCPServerConfig) -> None:
        if not isinstance(entry, dict) or set(entry) != set(_FIELDS):
            raise ValueError("not a stored tool")
        self.name = _typed(entry["remote_name"], str)
        if entry["name"] != config.name_for(self.name):
            raise ValueError("stored under another name")
        self.description = _typed(entry["description"], str)
        self.input_schema = _typed(entry["input_schema"], dict)
        output = entry["output_schema"]
        self.output_schema = None if output is None else _typed(output, dict)
        title = entry["title"]
        self.title = None if title is None else _typed(title, str)
        self.annotations = _Annotations(_typed(entry["annotations"], dict))
        self.execution = _Execution(_typed(entry["task_support"], str))


class _Execution:
    """A stored tool's ``execution``, as ``offered`` reads the SDK's ``ToolExecution``."""

    def __init__(self, task_support: str) -> None:
        self.task_support = task_support


class _Annotations:
    """Stored annotations, as ``offered`` reads the SDK's ``ToolAnnotations``."""

    def __init__(self, fields: dict[str, Any]) -> None:
        self._fields = fields

    def model_dump(self, **_options: Any) -> dict[str, Any]:
        return {key: value for key, value in self._fields.items() if value is not None}


def _typed(value: Any, kind: type) -> Any:
    if not isinstance(value, kind):
        raise ValueError(f"expected {kind.__name__}")
    return value


def _problem(entry: Any) -> Problem:
    """A stored problem, if it is one a listing makes (plain text within bounds)."""
    if not isinstance(entry, dict):
        raise ValueError("not a stored problem")
    problem = Problem(**entry)
    if problem.kind not in _PROBLEM_KINDS:
        raise ValueError("not a listing's problem")
    for text in vars(problem).values():
        if text is not None and (
            not isinstance(text, str)
            or len(text) > _PROBLEM_TEXT
            or any(c in CONTROL_CHARACTERS for c in text)
        ):
            raise ValueError("not a listing's problem")
    return problem


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
            "task_support": p.task_support,
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


def file_name(config: MCPServerConfig, found: dict[str, Any]) -> str:
    """``mcp-NAME-DIGEST``: the cache file of a server, from its fingerprint ``found``.

    The digest is of the server's configuration (what `fingerprint()` holds but the
    files' sizes and times) and, for a stdio server, the folder its relative arguments
    are read from: two projects with a server of one name keep a file each.
    """
    configured = {key: value for key, value in found.items() if key != "files"}
    if config.command is not None:
        configured["folder"] = os.path.abspath(config.cwd or os.getcwd())
    text = json.dumps(configured, sort_keys=True, default=str)
    return f"mcp-{config.name}-{hashlib.sha256(text.encode()).hexdigest()[:16]}"


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
