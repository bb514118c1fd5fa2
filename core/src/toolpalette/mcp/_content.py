"""Prompts and resources over MCP: the packs' beside the skills', paged, completed.

``prompts/*``, ``resources/*`` and ``completion/complete`` of a palette server: what
the served thinker declares (``declare_content``) after its skills (``_skills.py``).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeVar

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import SubscriptionBus
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolpalette import AbortSignal, OfferedContent, PackPrompt, ToolContext, ToolHub
from toolpalette.mcp._channel import McpChannel, resumed_from
from toolpalette.mcp._cursor import BadCursor, decode, encode
from toolpalette.mcp._sessions import Sessions
from toolpalette.mcp._skills import RESOURCE_NOT_FOUND, SkillsEndpoint
from toolpalette.mcp._subscriptions import Subscriptions

__all__ = ["ContentEndpoint"]

logger = logging.getLogger("toolpalette.mcp")

DEFAULT_PAGE: Final = 100
"""Prompts, resources or templates per page."""
_NOT_FOUND: Final = "Resource not found."
T = TypeVar("T")


class ContentEndpoint:
    """The prompts, resources and completions handlers of a palette server.

    Args:
        hub: the hub whose packs ship the prompts and resources.
        sessions: which thinker answers each request.
        skills: the skills' own prompts and resources (listed first).
        page_size: items per page.
        bus: where resource changes are published (see `Subscriptions`).
    """

    def __init__(
        self,
        hub: ToolHub,
        sessions: Sessions,
        skills: SkillsEndpoint,
        page_size: int,
        bus: SubscriptionBus | None = None,
    ) -> None:
        self._hub = hub
        self._sessions = sessions
        self._skills = skills
        self._page = page_size
        self.subscriptions = Subscriptions(self.offers, bus)
        """The clients subscribed to resources, on both eras."""

    def _offered(self, ctx: ServerRequestContext[Any]) -> OfferedContent:
        thinker = self._sessions.for_request(ctx).thinker
        try:
            return self._hub.content_for(type(thinker))
        except Exception:
            logger.exception("the packs' prompts and resources could not be collected")
            return OfferedContent()

    # -- prompts -------------------------------------------------------------------

    async def list_prompts(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        skills = (await self._skills.list_prompts(ctx, None)).prompts
        packs = [
            types.Prompt(
                name=p.name,
                title=p.title,
                description=p.description,
                arguments=[
                    types.PromptArgument(
                        name=a.name, description=a.description, required=a.required
                    )
                    for a in p.arguments
                ]
                or None,
            )
            for p in self._offered(ctx).prompts
        ]
        page, following = self._cut([*skills, *packs], params, lambda p: p.name)
        return types.ListPromptsResult(prompts=page, next_cursor=following)

    async def get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult | types.InputRequiredResult:
        """A pack's prompt, rendered (or a skill's).

        A prompt that takes a context may ask the client (``ctx.elicit``): on
        2026-07-28 the request then answers ``input_required``, and the retry renders it
        again with the answers, as a tool's call is (``_channel.py``).

        Raises:
            MCPError: -32602 for bad arguments or an unknown prompt; -32603 when the
                pack's function fails (its exception is logged, never sent).
        """
        found = self._offered(ctx).prompt(params.name)
        if found is None:
            return await self._skills.get_prompt(ctx, params)
        channel = None
        try:
            if found.context_param is None:
                messages = found.render(params.arguments)
            else:
                answers = resumed_from(ctx, ctx.params or {})[1]
                channel = McpChannel(ctx, AbortSignal(), answers, found.name)
                messages = await _rendered(found, params.arguments, channel)
        except _Stopped:
            assert channel is not None
            return types.InputRequiredResult.model_validate(
                {
                    "resultType": "input_required",
                    "inputRequests": channel.input_required,
                    "requestState": channel.state(None),
                }
            )
        except ValueError as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Invalid arguments: {exc}") from None
        except Exception:
            logger.exception("prompt %s raised", found.name)
            raise MCPError(
                code=types.INTERNAL_ERROR, message="The prompt could not be rendered."
            ) from None
        return types.GetPromptResult.model_validate(
            {"description": found.description, "messages": messages}
        )

    # -- resources -----------------------------------------------------------------

    async def list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        skills = (await self._skills.list_resources(ctx, None)).resources
        packs = [
            types.Resource.model_validate(
                {
                    "uri": r.uri,
                    "name": r.name,
                    "title": r.title,
                    "description": r.description,
                    "mimeType": r.mime_type,
                }
            )
            for r in self._offered(ctx).resources
            if not r.templated
        ]
        page, following = self._cut([*skills, *packs], params, lambda r: str(r.uri))
        return types.ListResourcesResult(resources=page, next_cursor=following)

    async def list_resource_templates(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        skills = (await self._skills.list_resource_templates(ctx, None)).resource_templates
        packs = [
            types.ResourceTemplate(
                name=r.name,
                title=r.title,
                uri_template=r.uri,
                description=r.description,
                mime_type=r.mime_type,
            )
            for r in self._offered(ctx).resources
            if r.templated
        ]
        page, following = self._cut([*skills, *packs], params, lambda t: t.uri_template)
        return types.ListResourceTemplatesResult(resource_templates=page, next_cursor=following)

    async def read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        """A pack's resource, or a skill's file (``skill://``).

        Raises:
            MCPError: -32002 for a URI nothing offered serves (-32602 on 2026-07-28,
                as SEP-2164 says; the skills' -32602 for
                a URI of another scheme when no pack resource is offered); -32603 when
                the pack's function fails (its exception is logged, never sent).
        """
        uri = str(params.uri)
        offered = self._offered(ctx)
        if uri.startswith("skill://") or not offered.resources:
            return await self._skills.read_resource(ctx, params)  # its own refusals
        found = offered.resource_for(uri)
        if found is None:
            raise _not_found(ctx, uri)
        try:
            contents = found[0].read(uri)
        except Exception:
            logger.exception("resource %s raised", found[0].uri)
            raise MCPError(
                code=types.INTERNAL_ERROR, message="The resource could not be read."
            ) from None
        return types.ReadResourceResult.model_validate({"contents": contents})

    async def subscribe(
        self, ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        """A 2025-era session's ``resources/subscribe`` of an offered resource.

        The connection is then sent ``notifications/resources/updated`` whenever a
        pack says that URI changed (`toolpalette.resource_updated`).

        Raises:
            MCPError: -32002 for a URI the palette does not offer.
        """
        uri = str(params.uri)
        if not self.offers(ctx, uri):
            raise _not_found(ctx, uri)
        self.subscriptions.subscribe(ctx, uri)
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        self.subscriptions.unsubscribe(ctx, str(params.uri))
        return types.EmptyResult()

    def offers(self, ctx: ServerRequestContext[Any], uri: str) -> bool:
        """Whether the palette answering ``ctx`` offers ``uri`` (a skill's file, or a pack's)."""
        if uri.startswith("skill://"):
            return True
        return self._offered(ctx).resource_for(uri) is not None

    # -- completions ---------------------------------------------------------------

    async def complete(
        self, ctx: ServerRequestContext[Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        """Completions of a pack prompt's argument or a pack template's parameter."""
        offered = self._offered(ctx)
        ref, argument = params.ref, params.argument
        values: list[str] = []
        if isinstance(ref, types.PromptReference):
            found = offered.prompt(ref.name)
            if found is not None:
                values = _safe(lambda: found.complete(argument.name, argument.value))
        else:
            template = next((r for r in offered.resources if r.uri == ref.uri), None)
            if template is not None:
                values = _safe(lambda: template.complete(argument.name, argument.value))
        return types.CompleteResult(
            completion=types.Completion(values=values, total=len(values), has_more=False)
        )

    # -- paging --------------------------------------------------------------------

    def _cut(
        self, items: Sequence[T], params: types.PaginatedRequestParams | None, key: Any
    ) -> tuple[list[T], str | None]:
        """One page of ``items`` and the cursor of the next (None: the last page).

        Raises:
            MCPError: -32602 for a cursor this server did not issue for this list.
        """
        digest = hashlib.md5(
            "\n".join(key(i) for i in items).encode("utf-8"), usedforsecurity=False
        ).hexdigest()
        cursor = params.cursor if params is not None else None
        start = 0
        if cursor is not None:
            try:
                start = decode(cursor, digest, len(items))
            except BadCursor as exc:
                raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
        end = start + self._page
        following = encode(digest, end) if end < len(items) else None
        return list(items[start:end]), following


def _not_found(ctx: ServerRequestContext[Any], uri: str) -> MCPError:
    """An unknown resource: -32002 on the 2025 era, -32602 on 2026-07-28 (SEP-2164)."""
    modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
    code = types.INVALID_PARAMS if modern else RESOURCE_NOT_FOUND
    return MCPError(code=code, message=_NOT_FOUND, data={"uri": uri})


class _Stopped(Exception):
    """The prompt stopped to ask the client (2026-07-28)."""


async def _rendered(
    found: PackPrompt, arguments: Mapping[str, str] | None, channel: McpChannel
) -> list[dict[str, Any]]:
    """``found`` rendered in a task its channel's question cancels (then `_Stopped`)."""
    task = asyncio.ensure_future(found.arender(arguments, ToolContext(channel=channel)))
    loop = asyncio.get_running_loop()

    def stop(_reason: str) -> None:
        loop.call_soon_threadsafe(task.cancel)

    unsubscribe = channel.abort_signal.subscribe(stop)
    try:
        return await task
    except asyncio.CancelledError:
        if channel.input_required is None or not task.cancelled():
            raise
        raise _Stopped from None
    finally:
        unsubscribe()
        await channel.close()


def _safe(complete: Any) -> list[str]:
    try:
        values: list[str] = complete()
    except Exception:
        logger.exception("a completion function raised")
        return []
    return values
