"""``tools/list`` and ``tools/call``: answered in one place, for every protocol era."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol

import anyio
import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.methods import validate_client_request
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, ValidationError

from toolpalette import AbortSignal, InvalidInputError, SearchToolsProvider, ToolResult
from toolpalette._agents.code_mode import PAUSE, RESUME
from toolpalette._tools.tool import TOOL_NAME
from toolpalette.mcp._approvals import (
    Answered,
    Asker,
    ScriptPause,
    answer_of,
    input_required,
    resume_of,
    script_state,
    state_nonce,
)
from toolpalette.mcp._call_tool import CALL_TOOL, CallToolProvider
from toolpalette.mcp._channel import McpChannel, Progress, resumed_from
from toolpalette.mcp._cursor import BadCursor
from toolpalette.mcp._principal import request_principal
from toolpalette.mcp._raw import SentLines, repeats_in
from toolpalette.mcp._sessions import Served, Sessions, is_meta

if TYPE_CHECKING:
    from toolpalette import ToolProvider

__all__ = ["ToolsEndpoint", "unknown_tool"]

logger = logging.getLogger("toolpalette.mcp")

_CANCELLED: Final = "The client cancelled the call."
_UNKNOWN: Final = frozenset({"unknown_tool", "not_offered"})
"""The pipeline's codes for a name it does not run: refused, absent or not offered."""


class TaskCalls(Protocol):
    """Where task-supporting calls go (the tasks extension, ``_tasks.py``)."""

    async def call(
        self,
        tools: ToolsEndpoint,
        ctx: ServerRequestContext[Any],
        served: Served,
        params: Mapping[str, Any],
        name: str,
        arguments: Any,
        provider: ToolProvider,
    ) -> dict[str, Any]:
        """The call's answer: direct, or its task."""
        ...


class ToolsEndpoint:
    """The ``tools/list`` and ``tools/call`` answers of a palette server.

    Args:
        sessions: which thinker answers each request.
        page_size: tools per ``tools/list`` page.
        list_ttl_ms: the ``ttlMs`` cache hint of a 2026-07-28 listing.
        stamp: the server-info ``_meta`` the SDK puts on every 2026-era result.
        lines: the stdio lines that repeat a key (``_raw.py``).
    """

    def __init__(
        self,
        sessions: Sessions,
        *,
        page_size: int,
        list_ttl_ms: int,
        stamp: Callable[[], Any],
        lines: SentLines,
    ) -> None:
        self._sessions = sessions
        self._page_size = page_size
        self._ttl = list_ttl_ms
        self._stamp = stamp
        self._lines = lines
        self._answered = Answered()
        self.tasks: TaskCalls | None = None
        """The tasks extension, when the server serves it: task-supporting calls go to it."""

    async def middleware(
        self, ctx: ServerRequestContext[Any], call_next: CallNext
    ) -> HandlerResult:
        """Answer ``tools/list`` and ``tools/call`` here; pass everything else on.

        (The SDK lets one more request reach its registered handler, from a client that
        skipped ``initialize`` but sent ``notifications/initialized``: that handler,
        `checked()`, gives the same answer.) A name that is not a string is refused
        first, as any other unknown name.
        """
        method = ctx.method
        if method != "tools/list" and method != "tools/call":
            return await call_next(ctx)
        if method == "tools/call" and ctx.params is not None:
            name = ctx.params.get("name")
            if not isinstance(name, str):
                raise unknown_tool(name)
        if not self._as_is(ctx):
            return await call_next(ctx)
        return await self._answer(ctx)

    async def checked(
        self, ctx: ServerRequestContext[Any], params: BaseModel | None
    ) -> dict[str, Any]:
        """The registered handler: the same answer for a request the SDK checked first."""
        return await self._answer(ctx)

    def _as_is(self, ctx: ServerRequestContext[Any]) -> bool:
        """Whether the SDK's checks would let ``ctx``'s request through unchanged.

        Before the handshake they would not; a 2026-era request carries its own
        envelope, which the SDK's own validator checks here.
        """
        params = ctx.params or {}
        if ctx.method == "tools/list":
            plain = isinstance(params.get("cursor"), (str, type(None)))
        else:
            plain = isinstance(params.get("name"), str) and isinstance(
                params.get("arguments"), (dict, type(None))
            )
        if not plain:
            return False
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return ctx.session.client_params is not None
        try:
            validate_client_request(ctx.method, ctx.protocol_version, ctx.params)
        except (KeyError, ValueError, ValidationError):
            return False
        return True

    async def _answer(self, ctx: ServerRequestContext[Any]) -> dict[str, Any]:
        """A ``tools/list`` page or a ``tools/call`` result, in wire form for ``ctx``'s era.

        Raises:
            MCPError: -32602 for an invalid or stale cursor, or an unknown tool.
        """
        params = ctx.params or {}
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        if ctx.method == "tools/list":
            result = self._page(ctx, params.get("cursor"), modern=modern)
        else:
            result = await self._call(ctx, params)
        if modern:  # what the SDK puts on every 2026-era result it serializes itself
            result.setdefault("resultType", "complete")
            result["_meta"] = {types.SERVER_INFO_META_KEY: self._stamp()}
        return result

    def _page(
        self, ctx: ServerRequestContext[Any], cursor: str | None, *, modern: bool
    ) -> dict[str, Any]:
        """One ``tools/list`` page in wire form, from the listing cached per palette.

        Raises:
            MCPError: -32602 for an invalid or stale cursor.
        """
        try:
            tools, following = self._sessions.for_request(ctx).listing.page(cursor, self._page_size)
        except BadCursor as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
        result: dict[str, Any] = {"tools": tools}
        if following is not None:
            result["nextCursor"] = following
        if modern:
            result["ttlMs"] = self._ttl
            result["cacheScope"] = "private"
        return result

    async def _call(
        self, ctx: ServerRequestContext[Any], params: Mapping[str, Any]
    ) -> dict[str, Any]:
        """One ``tools/call``, through the served thinker's pipeline, in wire form.

        Raises:
            MCPError: -32602 ``Unknown tool`` for a name the thinker does not run;
                -32600 for a request that repeats a key outside its arguments.
        """
        served = self._sessions.for_request(ctx)
        name: str = params["name"]
        arguments: Any = params.get("arguments")
        repeats = await repeats_in(ctx, self._lines)
        if repeats is not None:
            if repeats.elsewhere:
                raise MCPError(
                    code=types.INVALID_REQUEST, message="Invalid request: an object repeats a key."
                )
            if repeats.arguments is not None:
                arguments = repeats.arguments  # as sent: the pipeline refuses it (400)
        if arguments is None:
            arguments = {}
        if name == CALL_TOOL and name not in served.reachable:
            return await self._call_tool(ctx, served, params, arguments)
        return await self._named(ctx, served, params, name, arguments)

    async def _call_tool(
        self,
        ctx: ServerRequestContext[Any],
        served: Served,
        params: Mapping[str, Any],
        arguments: Any,
    ) -> dict[str, Any]:
        """``call_tool``: its input checked as any tool's, then the named tool's call."""
        provider = served.listing.by_name.get(CALL_TOOL)
        if not isinstance(provider, CallToolProvider):
            raise unknown_tool(CALL_TOOL)
        try:
            value = provider.parse_input(arguments)
        except InvalidInputError as exc:
            return {"content": [{"type": "text", "text": str(exc)}], "isError": True}
        name = value["name"]
        target = served.listing.by_name.get(name)
        if name == CALL_TOOL or (target is not None and is_meta(target)):
            raise unknown_tool(name)  # itself, or a meta-tool: called by their own names
        return await self._named(ctx, served, params, name, value.get("arguments", {}))

    async def _named(
        self,
        ctx: ServerRequestContext[Any],
        served: Served,
        params: Mapping[str, Any],
        name: str,
        arguments: Any,
    ) -> dict[str, Any]:
        """The call of tool ``name`` (offered or deferred), answered in wire form.

        On 2026-07-28 a call that stopped to ask (an approval, the tool's own question
        through its context, or a ``run_code`` script's call) answers
        ``input_required``; the retry re-runs it with every answer given so far (the
        tool's questions are asked in order, so the n-th question of a kind meets the
        n-th answer), or resumes the paused script. Each sealed state answers once: a
        replay is refused. A tool that failed after asking for a capability the client
        did not declare is -32021, naming it.
        """
        if self.tasks is not None:
            provider = served.listing.by_name.get(name) or served.reachable.get(name)
            if provider is not None and provider.task_support != "forbidden":
                return await self.tasks.call(self, ctx, served, params, name, arguments, provider)
        prepared = self.prepare(ctx, params)
        result, asker, pause, channel = await self._run(served, name, arguments, ctx, *prepared)
        return await self.finish(ctx, served, name, result, asker, pause, channel, prepared[0])

    def prepare(
        self, ctx: ServerRequestContext[Any], params: Mapping[str, Any]
    ) -> tuple[bool | None, Mapping[str, Any], Any]:
        """What a retry carries: the approval's answer, the tool's answers, a paused script.

        Raises:
            MCPError: -32602 for a request state that was already answered.
        """
        approved, answers = resumed_from(ctx, params)
        answer = answer_of(ctx, params)
        if answer is None:
            answer = approved
        nonce = state_nonce(params)
        if nonce is not None and not self._answered.first(nonce):
            raise MCPError(  # a replay: that state was answered; nothing runs or is kept
                code=types.INVALID_PARAMS, message="This request state was already answered."
            )
        return answer, answers, resume_of(ctx, params)

    async def finish(
        self,
        ctx: ServerRequestContext[Any],
        served: Served,
        name: str,
        result: ToolResult,
        asker: Asker,
        pause: ScriptPause,
        channel: McpChannel,
        answer: bool | None,
    ) -> dict[str, Any]:
        """A finished call's answer in wire form (or its ``input_required``).

        Raises:
            MCPError: -32602 ``Unknown tool``, or -32021 for a capability the tool needed.
        """
        if asker.input_required is not None:
            return input_required(asker.input_required, script_state(pause))
        if channel.input_required is not None:
            return {
                "resultType": "input_required",
                "inputRequests": channel.input_required,
                "requestState": channel.state(answer),
            }
        if result.is_error and channel.missing is not None:
            raise channel.missing_capability()  # the tool did not go on without it
        if result.is_error and result.code in _UNKNOWN:
            raise unknown_tool(name)
        provider = served.listing.by_name.get(name) or served.reachable.get(name)
        if (
            served.keeps_grants
            and provider is not None
            and is_meta(provider)
            and not result.is_error
        ):
            async with served.lock:
                changed = served.refresh()
            if changed:
                await ctx.session.send_tool_list_changed()
        structured = provider is not None and provider.output_schema is not None
        wire = _call_result(result, structured=structured)
        if isinstance(provider, SearchToolsProvider) and CALL_TOOL in served.listing.by_name:
            _note_call_tool(wire)
        return wire

    async def _run(
        self,
        served: Served,
        name: str,
        arguments: Any,
        ctx: ServerRequestContext[Any],
        answer: bool | None,
        answers: Mapping[str, Any],
        resume: Any = None,
    ) -> tuple[ToolResult, Asker, ScriptPause, McpChannel]:
        """The pipeline's result; the client's cancellation aborts the call (499).

        The call is made for the request's principal, through the request's
        `McpChannel`: the tool's context talks to the client through it, and it holds
        the request's `Asker`, which the thinker's approver asks when the call pauses
        for a person (the `Approval` names the channel); on 2026-07-28 the asker holds
        a ``run_code`` script's `ScriptPause` too. The call's task starts with the
        script's pause and the paused script a retry resumes (``resume``) in its
        context.
        """
        call, abort, progress, asker, pause, channel = self.start(
            served, name, arguments, ctx, answer, answers, resume
        )
        try:
            result = await asyncio.shield(call)
        except asyncio.CancelledError:
            abort.abort(_CANCELLED)
            with anyio.CancelScope(shield=True):
                result = await call
            logger.info("%s: %s (%s)", name, result.text, result.status)
            raise
        finally:
            await progress.close()
            if channel.sending:
                await channel.close()
        return result, asker, pause, channel

    def start(
        self,
        served: Served,
        name: str,
        arguments: Any,
        ctx: ServerRequestContext[Any],
        answer: bool | None,
        answers: Mapping[str, Any],
        resume: Any = None,
    ) -> tuple[asyncio.Future[ToolResult], AbortSignal, Progress, Asker, ScriptPause, McpChannel]:
        """Start the pipeline's call of ``name`` (see `_run()`); the caller awaits it."""
        abort = AbortSignal()
        progress = Progress(ctx)
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        pause = ScriptPause()
        asker = Asker(ctx, abort, answer, pause if modern else None)
        channel = McpChannel(ctx, abort, answers, name, asker)
        principal = request_principal(ctx)
        paused = PAUSE.set(pause if modern else None)
        resumed = RESUME.set(resume)
        try:
            call = asyncio.ensure_future(
                served.thinker.call(
                    name,
                    arguments,
                    abort=abort,
                    on_progress=progress.report,
                    deferred=True,
                    channel=channel,
                    principal=principal.name if principal is not None else None,
                )
            )
        finally:
            RESUME.reset(resumed)
            PAUSE.reset(paused)
        return call, abort, progress, asker, pause, channel


def unknown_tool(name: object) -> MCPError:
    """-32602 ``Unknown tool: NAME``: the name only when it is a well-formed tool name."""
    if isinstance(name, str) and TOOL_NAME.match(name):
        return MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {name}")
    return MCPError(code=types.INVALID_PARAMS, message="Unknown tool")


_CALL_TOOL_NOTE: Final = (
    " Behind a gateway that renames tools, call them through call_tool: "
    '{"name": NAME, "arguments": {...}} reaches each by the name given here.'
)


def _note_call_tool(wire: dict[str, Any]) -> None:
    """Tell a search's reader that ``call_tool`` reaches what it found, by that name."""
    found = wire.get("structuredContent")
    if wire.get("isError") or not isinstance(found, dict) or not found.get("tools"):
        return
    found = {**found, "note": str(found.get("note", "")) + _CALL_TOOL_NOTE}
    wire["structuredContent"] = found
    text = json.dumps(found, ensure_ascii=False, separators=(",", ":"))
    wire["content"] = [{"type": "text", "text": text}]


def _call_result(result: ToolResult, *, structured: bool) -> dict[str, Any]:
    """The pipeline's result as MCP's (wire form): failures are ``isError`` with its text."""
    if result.is_error:
        return {"content": [{"type": "text", "text": result.text}], "isError": True}
    wire: dict[str, Any] = {"content": result.content, "isError": False}
    if structured and result.structured is not None:
        wire["structuredContent"] = result.structured
    return wire
