"""An MCP server's skills through the Skills extension, as registry skills, verified on read.

See docs/architecture.md ("Skills over MCP") for the bundle ids and what is verified.
"""

from __future__ import annotations

import base64
import logging
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import unquote, urlsplit

from toolpalette._plugins.problems import Problem
from toolpalette._skills.extension import (
    EXTENSION,
    MAX_FILES,
    MAX_TOTAL_BYTES,
    SKILL_NAME,
    digest,
    is_digest,
    served_front_matter,
)
from toolpalette._skills.jar import bundle_id_problem
from toolpalette._skills.loader import FrontMatterError
from toolpalette._skills.manifest import coerce_front_matter, lint_manifest
from toolpalette._skills.skill import Skill
from toolpalette._tools.provider import Origin
from toolpalette.errors import MCPServerError, SkillIntegrityError

if TYPE_CHECKING:
    from toolpalette._mcp_client.connection import Connection

__all__ = ["MAX_PAGES", "bundle_prefix", "server_skills"]

logger = logging.getLogger("toolpalette.mcp")

MAX_PAGES: Final = 100
"""The most ``skills/list`` pages read from one server."""
_SKILL_FILE: Final = "SKILL.md"
_LABEL: Final = re.compile(r"[^a-z0-9-]+")


def bundle_prefix(server: str) -> str | None:
    """``mcp.LABEL``, the bundle prefix of server ``server``'s skills; None if none fits."""
    label = _label(server)
    if not label:
        return None
    prefix = f"mcp.{label}"
    return None if bundle_id_problem(prefix) else prefix


def _label(text: str) -> str:
    """``text`` as one DNS label: lowercase, runs of other characters as one hyphen."""
    label = _LABEL.sub("-", text.lower()).strip("-")
    return re.sub("-{2,}", "-", label)[:63].strip("-")


def _bundle_of(prefix: str, segments: list[str]) -> str | None:
    """The bundle id of a skill whose path before its name is ``segments``."""
    labels = [_label(part) for segment in segments for part in segment.split(".")]
    bundle = ".".join([prefix, *(label for label in labels if label)])
    return None if bundle_id_problem(bundle) else bundle


def declares(capabilities: Any) -> bool:
    """Whether the server's capabilities declare the Skills extension."""
    for field in ("extensions", "experimental"):
        found = getattr(capabilities, field, None)
        if isinstance(found, Mapping) and isinstance(found.get(EXTENSION), Mapping):
            return True
    return False


@dataclass(frozen=True)
class _Listed:
    """One file of an entry: what its bytes must be."""

    digest: str
    size: int


class RemoteSource:
    """A skill's files read from its MCP server, each checked against the skill entry.

    A file whose size or digest differs from the entry's, a ``SKILL.md`` whose front
    matter differs from the entry's, or a file the entry does not list is refused with
    `SkillIntegrityError`; its content is never returned.
    """

    def __init__(
        self,
        connection: Connection,
        skill_id: str,
        uri: str,
        front_matter: dict[str, Any],
        files: dict[str, _Listed],
        timeout: float,
    ) -> None:
        self._connection = connection
        self._skill_id = skill_id
        self._uri = uri
        self._root = uri[: -len(_SKILL_FILE)]
        self._front = front_matter
        self._files = files
        self._timeout = timeout
        self._lock = threading.Lock()
        self._skill_file: bytes | None = None

    def skill_file(self) -> bytes:
        """The verified ``SKILL.md`` (its digest, size and front matter checked)."""
        with self._lock:
            if self._skill_file is not None:
                return self._skill_file
        data = self._read(self._uri)
        try:
            front = served_front_matter(data)
        except FrontMatterError as exc:
            raise self._refused(self._uri, f"its front matter cannot be read ({exc})") from None
        if front != self._front:
            raise self._refused(self._uri, "its front matter differs from the skill entry's")
        with self._lock:
            self._skill_file = data
        return data

    def body(self) -> str:
        from toolpalette._skills.loader import split_body

        return split_body(self.skill_file())

    def resource(self, relpath: str, limit: int | None = None) -> bytes:
        from urllib.parse import quote

        data = self._read(self._root + quote(relpath, safe="/"))
        return data if limit is None else data[: limit + 1]

    def resources(self) -> list[str]:
        paths = [unquote(uri[len(self._root) :]) for uri in self._files if uri != self._uri]
        return sorted(paths)

    def _read(self, uri: str) -> bytes:
        listed = self._files.get(uri)
        if listed is None:
            raise self._refused(uri, "the skill entry does not list it")
        try:
            result = self._connection.loop.run(
                self._connection.read_resource(uri, self._timeout), self._timeout + 5
            )
        except SkillIntegrityError:
            raise
        except Exception as exc:
            raise FileNotFoundError(f"{uri} could not be read from its server: {exc}") from None
        data = _content_bytes(result, uri)
        if data is None:
            raise FileNotFoundError(f"{uri}: the server sent no content for it")
        if len(data) != listed.size:
            raise self._refused(uri, f"it is {len(data)} bytes, the entry says {listed.size}")
        if digest(data) != listed.digest:
            raise self._refused(uri, "its sha256 digest differs from the skill entry's")
        return data

    def _refused(self, uri: str, reason: str) -> SkillIntegrityError:
        logger.warning("skill %s: %s refused: %s", self._skill_id, uri, reason)
        return SkillIntegrityError(skill_id=self._skill_id, uri=uri, reason=reason)


def _content_bytes(result: Any, uri: str) -> bytes | None:
    """The bytes of ``uri`` in a ``ReadResourceResult`` (text as UTF-8, a blob decoded)."""
    for content in getattr(result, "contents", None) or []:
        if str(getattr(content, "uri", uri)) != uri:
            continue
        text = getattr(content, "text", None)
        if isinstance(text, str):
            return text.encode("utf-8")
        blob = getattr(content, "blob", None)
        if isinstance(blob, str):
            try:
                return base64.b64decode(blob, validate=True)
            except ValueError:
                return None
    return None


def server_skills(connection: Connection, server: str) -> tuple[list[Skill], list[Problem]]:
    """The skills server ``server`` serves through the extension, with what was refused.

    Connects to the server when it is not connected (its configured timeouts apply).
    A server that does not declare the extension serves none, and that is no problem.
    """
    pack = f"mcp:{server}"
    prefix = bundle_prefix(server)
    if prefix is None:
        reason = f"server name {server!r} gives no bundle id for its skills; rename it"
        return [], [Problem("invalid-jar", reason, pack, None, None)]
    timeout = connection.config.connect_timeout
    try:
        entries = connection.loop.run(_list(connection), timeout * 2 + 5)
    except MCPServerError as exc:
        return [], [Problem("server", f"its skills could not be listed: {exc.reason}", pack)]
    except Exception as exc:
        reason = f"its skills could not be listed: {type(exc).__name__}: {exc}"
        return [], [Problem("server", reason, pack, None, None)]
    origin = Origin(pack, None, None, None)
    skills: list[Skill] = []
    problems: list[Problem] = []
    for entry in entries:
        skill, problem = _skill(connection, entry, prefix, origin, timeout)
        if skill is not None:
            skills.append(skill)
        if problem is not None:
            problems.append(problem)
    return skills, problems


async def _list(connection: Connection) -> list[Any]:
    """Every entry of the server's ``skills/list`` ([] if it does not declare the extension)."""
    import mcp_types as types

    await connection.client()
    if not declares(connection.capabilities()):
        return []
    entries: list[Any] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        params = types.PaginatedRequestParams(cursor=cursor)
        page = await connection.request("skills/list", params, connection.config.connect_timeout)
        found = page.get("skills")
        if not isinstance(found, list):
            raise ValueError("its skills/list answer has no skills array")
        entries.extend(found)
        cursor = page.get("nextCursor")
        if not isinstance(cursor, str) or not cursor or cursor in seen:
            return entries
        seen.add(cursor)
    return entries


def _skill(
    connection: Connection, entry: Any, prefix: str, origin: Origin, timeout: float
) -> tuple[Skill | None, Problem | None]:
    """One entry as a registry skill, or the problem that keeps it out."""
    pack = origin.pack
    uri = entry.get("uri") if isinstance(entry, dict) else None
    if not isinstance(uri, str):
        return None, Problem("invalid-skill", "skipped: an entry has no uri", pack, None, None)
    parts = urlsplit(uri)
    segments = [parts.netloc, *parts.path.split("/")[1:]] if parts.scheme else []
    if len(segments) < 3 or segments[-1] != _SKILL_FILE or not all(segments[:-1]):
        return None, _skip(pack, uri, "its uri does not end in NAME/SKILL.md")
    name = unquote(segments[-2])
    front = entry.get("frontmatter")
    if not isinstance(front, dict) or front.get("name") != name or not SKILL_NAME.fullmatch(name):
        return None, _skip(pack, uri, "its name is not valid, or differs from its front matter")
    files = _files(entry.get("resources"), uri)
    if isinstance(files, str):
        return None, _skip(pack, uri, files)
    bundle = _bundle_of(prefix, segments[:-2])
    if bundle is None:
        return None, _skip(pack, uri, "its path gives no valid bundle id")
    check = coerce_front_matter(front, name)
    if check.manifest is not None:
        linted = lint_manifest(check.manifest, name)
        check.manifest, check.error = linted.manifest, linted.error
    if check.manifest is None:
        return None, _skip(pack, uri, check.error or "unusable front matter")
    source = RemoteSource(connection, f"{bundle}/{name}", uri, front, files, timeout)
    return Skill._from_source(check.manifest, bundle=bundle, source=source, origin=origin), None


def _files(resources: Any, uri: str) -> dict[str, _Listed] | str:
    """The entry's files by URI, or why the entry cannot be used."""
    if resources == "dynamic":
        return "its files are dynamic, so they cannot be verified; it is not loaded"
    if not isinstance(resources, list):
        return "it has no resources list"
    root = uri[: -len(_SKILL_FILE)]
    files: dict[str, _Listed] = {}
    for item in resources:
        if not isinstance(item, dict):
            return "a resource is not an object"
        where, sha, size = item.get("uri"), item.get("digest"), item.get("size")
        if not isinstance(where, str) or not (where == uri or where.startswith(root)):
            return "a resource lies outside the skill"
        if not is_digest(sha) or not isinstance(size, int) or size < 0 or where in files:
            return f"resource {where} has no valid digest and size, or is listed twice"
        files[where] = _Listed(str(sha), size)
    if uri not in files:
        return "its resources do not list its SKILL.md"
    if len(files) > MAX_FILES:
        return f"it has {len(files)} files, more than the extension's {MAX_FILES}"
    total = sum(f.size for f in files.values())
    if total > MAX_TOTAL_BYTES:
        return f"its files add up to {total} bytes, more than the extension's {MAX_TOTAL_BYTES}"
    return files


def _skip(pack: str | None, uri: str, reason: str) -> Problem:
    return Problem("invalid-skill", f"skipped: {reason}", pack, None, uri)
