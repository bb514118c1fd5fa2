"""The MCP Skills extension served: ``skills/list``, ``skills/get``, ``resources/directory/read``.

See docs/architecture.md ("Skills over MCP") for the entries and what is left out.
"""

from __future__ import annotations

import hashlib
import json
import logging
import mimetypes
import threading
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import quote, unquote, urlsplit

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolpalette import Skill
from toolpalette._skills.extension import (
    DIRECTORY_MIME,
    EXTENSION,
    MAX_FILES,
    MAX_TOTAL_BYTES,
    FileEntry,
    digest,
    entry_problem,
    served_front_matter,
)
from toolpalette._skills.loader import FrontMatterError
from toolpalette._skills.paths import check_relpath
from toolpalette.mcp._cursor import BadCursor, decode, encode
from toolpalette.mcp._sessions import Sessions

__all__ = ["EXTENSION", "SKILL_FILE", "SkillEntries", "SkillsExtension"]

logger = logging.getLogger("toolpalette.mcp")

SKILL_FILE: Final = "SKILL.md"
_KEPT: Final = 4096
"""The most skill entries kept (a server serves far fewer skills)."""


class GetSkillParams(types.RequestParams):
    """``skills/get``: the URI of a skill's ``SKILL.md``."""

    uri: str


class DirectoryParams(types.PaginatedRequestParams):
    """``resources/directory/read``: a directory's URI, and a cursor."""

    uri: str


@dataclass(frozen=True)
class Entry:
    """One skill as the extension serves it (``wire``), and its directories."""

    skill_id: str
    wire: dict[str, Any]
    directories: dict[str, list[dict[str, Any]]]
    """Each directory's URI (no trailing slash) to its direct children, sorted by URI."""


class SkillEntries:
    """The entry of each skill, built once per skill object and kept."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[int, tuple[Skill, Entry | None]] = {}

    def entry(self, skill: Skill) -> Entry | None:
        """The skill's entry, or None when the extension cannot carry it (logged once)."""
        with self._lock:
            found = self._kept.get(id(skill))
        if found is not None and found[0] is skill:
            return found[1]
        entry = _build(skill)
        with self._lock:
            if len(self._kept) >= _KEPT:
                self._kept.clear()
            self._kept[id(skill)] = (skill, entry)
        return entry


def _build(skill: Skill) -> Entry | None:
    """Read every file of ``skill`` and make its entry; None (logged) when it cannot be."""
    try:
        skill_file = skill.skill_file()
        front = served_front_matter(skill_file)
        paths = skill.resources()
        files = [_file(skill, SKILL_FILE, skill_file)]
        room = MAX_TOTAL_BYTES - len(skill_file)
        for relpath in paths[: MAX_FILES - 1]:
            data = skill.resource(relpath, limit=max(room, 0))
            room -= len(data)
            if room < 0:  # over the limit: read no further
                logger.warning(
                    "skill %s is left out of the Skills extension: its files add up to more "
                    "than the extension's %d bytes",
                    skill.id,
                    MAX_TOTAL_BYTES,
                )
                return None
            files.append(_file(skill, relpath, data))
    except (OSError, ValueError, FrontMatterError, UnicodeDecodeError) as exc:
        logger.warning("skill %s is left out of the Skills extension: %r", skill.id, exc)
        return None
    if len(paths) + 1 > MAX_FILES:
        logger.warning(
            "skill %s is left out of the Skills extension: it has %d files, more than the "
            "extension's %d",
            skill.id,
            len(paths) + 1,
            MAX_FILES,
        )
        return None
    problem = entry_problem(skill.name, front, files)
    if problem is not None:
        logger.warning("skill %s is left out of the Skills extension: %s", skill.id, problem)
        return None
    wire = {
        "uri": file_uri(skill, SKILL_FILE),
        "frontmatter": front,
        "resources": [entry.wire() for entry in files],
    }
    return Entry(skill.id, wire, _directories(skill, [SKILL_FILE, *paths]))


def _file(skill: Skill, relpath: str, data: bytes) -> FileEntry:
    return FileEntry(file_uri(skill, relpath), digest(data), len(data))


def _directories(skill: Skill, paths: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Every directory of the skill (its root first) and its direct children."""
    root = root_uri(skill)
    children: dict[str, dict[str, dict[str, Any]]] = {root: {}}
    for relpath in paths:
        parts = relpath.split("/")
        parent = root
        for depth, part in enumerate(parts):
            here = f"{parent}/{quote(part)}"
            if depth == len(parts) - 1:
                mime = "text/markdown" if relpath == SKILL_FILE else _mime(relpath)
                children[parent][here] = {"uri": here, "name": part, "mimeType": mime}
            else:
                children[parent][here] = {"uri": here, "name": part, "mimeType": DIRECTORY_MIME}
                children.setdefault(here, {})
            parent = here
    return {uri: [kids[key] for key in sorted(kids)] for uri, kids in children.items()}


def _mime(relpath: str) -> str:
    if relpath.endswith(".md"):
        return "text/markdown"
    return mimetypes.guess_type(relpath)[0] or "text/plain"


def root_uri(skill: Skill) -> str:
    """``skill://BUNDLE/NAME``: the skill's directory (no trailing slash)."""
    return f"skill://{skill.bundle}/{quote(skill.name)}"


def file_uri(skill: Skill, relpath: str) -> str:
    """``skill://BUNDLE/NAME/PATH`` for one file of the skill (path segments quoted)."""
    return f"{root_uri(skill)}/{quote(relpath, safe='/')}"


class SkillsExtension:
    """The extension's request handlers for a palette server.

    Args:
        sessions: which thinker answers each request.
        page_size: entries (or directory children) per page.
        ttl_ms: the ``ttlMs`` cache hint of a 2026-07-28 answer.
    """

    def __init__(self, sessions: Sessions, *, page_size: int, ttl_ms: int) -> None:
        self._sessions = sessions
        self._page_size = page_size
        self._ttl = ttl_ms
        self.entries = SkillEntries()
        """The entries built so far."""

    async def _entries(self, ctx: ServerRequestContext[Any]) -> list[Entry]:
        skills = list(self._sessions.for_request(ctx).skills().values())
        built = await anyio.to_thread.run_sync(lambda: [self.entries.entry(s) for s in skills])
        return sorted((e for e in built if e is not None), key=lambda e: e.wire["uri"])

    def _cached(self, ctx: ServerRequestContext[Any], result: dict[str, Any]) -> dict[str, Any]:
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            result["ttlMs"] = self._ttl
            result["cacheScope"] = "private"
        return result

    async def list_skills(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams
    ) -> dict[str, Any]:
        """One page of entries, sorted by URI; a cursor names the listing it was cut from.

        Raises:
            MCPError: -32602 for a cursor this server did not issue, or a stale one.
        """
        entries = await self._entries(ctx)
        key = _listing_digest([e.wire for e in entries])
        start = _position(params.cursor, key, len(entries))
        page = entries[start : start + self._page_size]
        result: dict[str, Any] = {"skills": [e.wire for e in page]}
        if start + self._page_size < len(entries):
            result["nextCursor"] = encode(key, start + self._page_size)
        return self._cached(ctx, result)

    async def get_skill(
        self, ctx: ServerRequestContext[Any], params: GetSkillParams
    ) -> dict[str, Any]:
        """The entry of the skill whose ``SKILL.md`` is ``params.uri``.

        Raises:
            MCPError: -32602 when no skill served here has that URI.
        """
        skill = self._skill_at(ctx, params.uri)
        entry = None
        if skill is not None:
            entry = await anyio.to_thread.run_sync(self.entries.entry, skill)
        if entry is None or entry.wire["uri"] != params.uri:
            raise MCPError(code=types.INVALID_PARAMS, message="No skill is served at that URI.")
        return self._cached(ctx, {"skill": entry.wire})

    async def read_directory(
        self, ctx: ServerRequestContext[Any], params: DirectoryParams
    ) -> dict[str, Any]:
        """The direct children of a directory of a served skill, one page.

        Raises:
            MCPError: -32602 when the URI is not a directory of a served skill, or the
                cursor was not issued for it.
        """
        found = None
        for entry in await self._entries(ctx):
            children = entry.directories.get(params.uri)
            if children is not None:
                found = children
                break
        if found is None:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message="That URI is not a directory resource of a served skill.",
            )
        key = _listing_digest([params.uri, found])
        start = _position(params.cursor, key, len(found))
        result: dict[str, Any] = {"resources": found[start : start + self._page_size]}
        if start + self._page_size < len(found):
            result["nextCursor"] = encode(key, start + self._page_size)
        return result

    def _skill_at(self, ctx: ServerRequestContext[Any], uri: str) -> Skill | None:
        """The served skill whose ``SKILL.md`` has ``uri``, or None."""
        parts = urlsplit(uri)
        path = parts.path.lstrip("/")
        name, _, rest = path.partition("/")
        if parts.scheme != "skill" or not parts.netloc or rest != SKILL_FILE or parts.query:
            return None
        try:
            check_relpath(unquote(name))
        except ValueError:
            return None
        return self._sessions.for_request(ctx).skills().get(f"{parts.netloc}/{unquote(name)}")


def _listing_digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _position(cursor: str | None, key: str, total: int) -> int:
    if cursor is None:
        return 0
    try:
        return decode(cursor, key, total)
    except BadCursor:
        raise MCPError(
            code=types.INVALID_PARAMS,
            message="Invalid cursor: it was not issued for this listing, or the listing "
            "changed since; list again from the start.",
        ) from None
