"""A thinker's skills over MCP: prompts, and their files as ``skill://`` resources."""

from __future__ import annotations

import base64
import logging
import mimetypes
from typing import Any, Final
from urllib.parse import quote, unquote, urlsplit

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolpalette import Skill
from toolpalette._skills.paths import check_relpath
from toolpalette._skills.skill import MAX_FILE_BYTES
from toolpalette.mcp._sessions import Sessions

__all__ = ["RESOURCE_NOT_FOUND", "SKILL_FILE_TEMPLATE", "SkillsEndpoint", "skill_uri"]

logger = logging.getLogger("toolpalette.mcp")

RESOURCE_NOT_FOUND: Final = -32002
"""The 2025-era MCP specification's error code for an unknown resource (2026-07-28: -32602)."""
SKILL_FILE_TEMPLATE: Final = "skill://{bundle}/{skill}/{path}"
"""The URI template of a skill's files (a ``/`` in PATH may stay as it is, or be quoted)."""
_NOT_FOUND: Final = "Resource not found."
_BAD_URI: Final = "Invalid resource URI: expected skill://BUNDLE/SKILL/PATH"


class SkillsEndpoint:
    """The prompts and resources handlers of a palette server."""

    def __init__(self, sessions: Sessions) -> None:
        self._sessions = sessions

    async def list_prompts(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        skills = self._sessions.for_request(ctx).skills()
        prompts = [
            types.Prompt(name=s.id, title=s.name, description=s.description)
            for s in skills.values()
        ]
        return types.ListPromptsResult(prompts=prompts)

    async def get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        skill = self._sessions.for_request(ctx).skills().get(params.name)
        if skill is None:
            raise MCPError(code=types.INVALID_PARAMS, message="Unknown prompt.")
        try:
            body = skill.body()
        except (OSError, UnicodeDecodeError):
            logger.exception("the instructions of skill %s could not be read", skill.id)
            raise MCPError(
                code=types.INTERNAL_ERROR, message="The skill's instructions could not be read."
            ) from None
        message = types.PromptMessage(
            role="user", content=types.TextContent(type="text", text=body)
        )
        return types.GetPromptResult(description=skill.description, messages=[message])

    async def list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        resources = []
        for skill in self._sessions.for_request(ctx).skills().values():
            try:
                paths = skill.resources()
            except OSError:
                logger.exception("the files of skill %s could not be listed", skill.id)
                continue
            resources.append(
                types.Resource(
                    uri=skill_uri(skill, "SKILL.md"),
                    name=skill.name,
                    description=skill.description,
                    mime_type="text/markdown",
                )
            )
            for relpath in paths:
                resources.append(
                    types.Resource(
                        uri=skill_uri(skill, relpath),
                        name=f"{skill.id}/{relpath}",
                        mime_type=mimetypes.guess_type(relpath)[0] or "text/plain",
                    )
                )
        return types.ListResourcesResult(resources=resources)

    async def list_resource_templates(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        """The ``skill://`` template of skill files, when the palette has skills."""
        templates = []
        if self._sessions.for_request(ctx).skills():
            templates.append(
                types.ResourceTemplate(
                    name="skill-file",
                    title="A file of a skill",
                    uri_template=SKILL_FILE_TEMPLATE,
                    description="A file in a skill's folder: BUNDLE/SKILL is the skill's id "
                    "(prompts/list), PATH the file's path inside the folder.",
                )
            )
        return types.ListResourceTemplatesResult(resource_templates=templates)

    async def read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        """One listed file of a skill, at most `MAX_FILE_BYTES`.

        Raises:
            MCPError: -32602 for a URI of another shape, a path that leaves the skill's
                folder, or a file over the limit; for a file the skill does not list (or
                cannot be read), -32002 on the 2025 era and -32602 on 2026-07-28, which
                gives up -32002 (as the Skills extension has it too).
        """
        uri = str(params.uri)
        skill_id, relpath = _parse_skill_uri(uri)
        skill = self._sessions.for_request(ctx).skills().get(skill_id)
        not_found = (
            types.INVALID_PARAMS
            if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
            else RESOURCE_NOT_FOUND
        )
        if skill is None:
            raise MCPError(code=not_found, message=_NOT_FOUND)
        try:
            data = _read_listed(skill, relpath)
        except ValueError:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message="Invalid resource URI: the path must stay inside the skill's folder.",
            ) from None
        except OSError:
            raise MCPError(code=not_found, message=_NOT_FOUND) from None
        if len(data) > MAX_FILE_BYTES:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"The file is larger than {MAX_FILE_BYTES} bytes; it cannot be read here.",
            )
        mime = "text/markdown" if relpath.endswith(".md") else mimetypes.guess_type(relpath)[0]
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            blob = base64.b64encode(data).decode("ascii")
            contents: Any = types.BlobResourceContents(
                uri=uri, blob=blob, mime_type=mime or "application/octet-stream"
            )
        else:
            contents = types.TextResourceContents(
                uri=uri, text=text, mime_type=mime or "text/plain"
            )
        return types.ReadResourceResult(contents=[contents])


def _read_listed(skill: Skill, relpath: str) -> bytes:
    """The file at ``relpath`` if the skill lists it, at most one byte past the limit.

    Raises:
        ValueError: the path is not a plain relative path inside the skill.
        OSError: the skill does not list it, or it cannot be read.
    """
    check_relpath(relpath)
    if relpath == "SKILL.md":
        return skill.skill_file()
    if relpath not in skill.resources():
        raise FileNotFoundError("not a listed file of the skill")
    return skill.resource(relpath, limit=MAX_FILE_BYTES)


def skill_uri(skill: Skill, relpath: str) -> str:
    """``skill://BUNDLE/SKILL/PATH`` for one file of a skill (path segments quoted)."""
    return f"skill://{skill.bundle}/{skill.name}/{quote(relpath, safe='/')}"


def _parse_skill_uri(uri: str) -> tuple[str, str]:
    """The skill id and relative path of a ``skill://`` URI; the loader's rules apply later.

    Raises:
        MCPError: -32602 for a URI of another scheme or shape.
    """
    parts = urlsplit(uri)
    name, _, relpath = parts.path.lstrip("/").partition("/")
    if parts.scheme != "skill" or not parts.netloc or not name or not relpath:
        raise MCPError(code=types.INVALID_PARAMS, message=_BAD_URI)
    if parts.query or parts.fragment:
        raise MCPError(code=types.INVALID_PARAMS, message="Invalid resource URI: no query allowed")
    return f"{parts.netloc}/{unquote(name)}", unquote(relpath)
