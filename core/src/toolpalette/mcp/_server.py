"""A thinker's palette as an MCP server, on the ``mcp`` SDK's low-level ``Server``.

Every MCP session gets a thinker of its own (its conversation, grants and approvals):
``tools/list`` pages through the thinker's current offer, ``tools/call`` runs through
the thinker's pipeline, and a grant made through ``request_tools`` shows in the next
listing, announced by ``notifications/tools/list_changed``. Requests with no session
behind them (stateless HTTP, and the 2026-07-28 protocol era, where every request
stands alone) share one thinker and see its up-front palette, without the meta-tools.
The thinker's skills are prompts, and their files resources (``skill://``).
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import mimetypes
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Final
from urllib.parse import quote, unquote, urlsplit

import anyio
import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.shared.exceptions import MCPError
from mcp_types.methods import validate_client_request
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, ValidationError

from toolpalette import (
    AbortSignal,
    RequestSkillProvider,
    RequestToolsProvider,
    Skill,
    SkillSelector,
    Thinker,
    ToolHub,
    ToolProvider,
    ToolResult,
    ToolSelector,
)
from toolpalette.mcp._cursor import BadCursor
from toolpalette.mcp._listing import listing_of
from toolpalette.mcp._telemetry import timed

__all__ = ["DEFAULT_PAGE_SIZE", "PaletteServer", "selection_thinker", "server"]

logger = logging.getLogger("toolpalette.mcp")

DEFAULT_PAGE_SIZE: Final = 100
"""Tools per ``tools/list`` page."""
DEFAULT_LIST_TTL_MS: Final = 60_000
"""How long a 2026-07-28 client may keep a listing (``ttlMs``) before asking again."""
RESOURCE_NOT_FOUND: Final = -32002
"""The MCP specification's error code for an unknown resource."""
SKILL_FILE_TEMPLATE: Final = "skill://{bundle}/{skill}/{path}"
"""The URI template of a skill's files (a ``/`` in PATH may stay as it is, or be quoted)."""
_STATE_KEY: Final = "toolpalette.session"
_CANCELLED: Final = "The client cancelled the call."


def server(
    hub: ToolHub,
    thinker: type[Thinker] | None = None,
    *,
    read_only: bool = False,
    page_size: int = DEFAULT_PAGE_SIZE,
    stateless: bool = False,
    list_ttl_ms: int = DEFAULT_LIST_TTL_MS,
    name: str = "toolpalette",
) -> PaletteServer:
    """An MCP server (the SDK's low-level ``Server``) serving ``thinker``'s palette.

    Without a thinker every installed tool (and skill) is served. ``read_only`` serves
    a read-only binding of it (an already read-only thinker stays so). ``stateless``
    says no request belongs to a session (stateless HTTP): every request then sees
    the up-front palette, without meta-tools. Run it with ``server.run(...)`` over
    any stream pair, or mount :func:`toolpalette.mcp.asgi_app`.

    Raises:
        ValueError: ``page_size`` or ``list_ttl_ms`` is out of range.
        ToolpaletteError: the thinker's declarations do not resolve against ``hub``.
    """
    if thinker is None:
        thinker = selection_thinker(hub, (), read_only=read_only)
    elif read_only and not thinker.read_only:
        thinker = type(thinker.__name__, (thinker,), {"read_only": True})
    return PaletteServer(
        hub,
        thinker,
        page_size=page_size,
        stateless=stateless,
        list_ttl_ms=list_ttl_ms,
        name=name,
    )


def selection_thinker(
    hub: ToolHub, names: Sequence[str], *, read_only: bool = False
) -> type[Thinker]:
    """A thinker class offering the installed distributions or import packages named.

    Each name is a distribution when one is installed under it, else an import
    package. With no names it offers every installed tool and skill; with names, the
    skills those distributions ship.
    """
    distributions = {_canonical(p.distribution) for p in hub.plugins() if p.distribution}
    wanted = {_canonical(n) for n in names}
    chosen = ToolSelector()
    for item in names:
        if _canonical(item) in distributions:
            chosen.distribution(item)
        else:
            chosen.package(item)
    skills = SkillSelector()
    if not names:
        skills.all()
    else:
        for skill in hub.skills().skills():
            if skill.distribution and _canonical(skill.distribution) in wanted:
                skills.skill(skill.id)

    class Selection(Thinker):
        """The tools of the installed distributions and packages chosen to be served."""

        @classmethod
        def declare_compatible_tools(cls) -> ToolSelector:
            if names:
                return chosen
            everything = ToolSelector()
            for provider in hub.catalog().providers():
                everything.provider(provider)
            return everything

        @classmethod
        def declare_skills(cls) -> SkillSelector:
            return skills

    Selection.read_only = read_only
    return Selection


def _canonical(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _is_meta(provider: ToolProvider) -> bool:
    return isinstance(provider, (RequestToolsProvider, RequestSkillProvider))


class _Session:
    """One MCP session's thinker, and the listing of what it serves now."""

    def __init__(self, thinker: Thinker, *, with_meta: bool) -> None:
        self.thinker = thinker
        self.with_meta = with_meta
        self.lock = asyncio.Lock()
        self.version = -1
        self.listing = listing_of(())
        self.refresh()

    def refresh(self) -> bool:
        """Reconcile the thinker's palette; whether what it serves changed."""
        turn = self.thinker.begin_turn()
        if turn.version == self.version:
            return False
        self.version = turn.version
        served = tuple(p for p in turn.tools if self.with_meta or not _is_meta(p))
        before = self.listing.digest
        self.listing = listing_of(served)
        return self.listing.digest != before

    def skills(self) -> dict[str, Skill]:
        hub = self.thinker.hub
        declared = hub.resolve_thinker(type(self.thinker)).skills
        return {s.id: s for s in declared}


class PaletteServer(Server[Any]):
    """The low-level MCP ``Server`` for one thinker class (see :func:`server`)."""

    def __init__(
        self,
        hub: ToolHub,
        thinker: type[Thinker],
        *,
        page_size: int = DEFAULT_PAGE_SIZE,
        stateless: bool = False,
        list_ttl_ms: int = DEFAULT_LIST_TTL_MS,
        name: str = "toolpalette",
    ) -> None:
        if page_size < 1:
            raise ValueError("page_size must be at least 1")
        if list_ttl_ms < 0:
            raise ValueError("list_ttl_ms must not be negative")
        hub.resolve_thinker(thinker)  # a declaration error surfaces now, not mid-session
        super().__init__(
            name,
            version=_version(),
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_resource_templates,
            on_read_resource=self._read_resource,
        )
        self.hub = hub
        """The hub the palettes are resolved from."""
        self.thinker_class = thinker
        """The thinker class each session binds."""
        self.page_size = page_size
        """Tools per ``tools/list`` page."""
        self.stateless = stateless
        """Whether requests never belong to a session (stateless HTTP)."""
        self.list_ttl_ms = list_ttl_ms
        """The ``ttlMs`` cache hint of a 2026-07-28 listing."""
        self._shared: _Session | None = None
        self._shared_lock = threading.Lock()
        self.middleware.append(timed)  # after the SDK's own, which makes the spans
        self.middleware.append(self._tools)
        # Registered too: the SDK announces the tools capability, and holds requests that
        # come before the handshake, for the methods it has a handler of (see _tools).
        self.add_request_handler("tools/list", types.PaginatedRequestParams, self._checked)
        self.add_request_handler("tools/call", types.CallToolRequestParams, self._checked)
        self.add_request_handler("logging/setLevel", types.SetLevelRequestParams, _set_level)

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        """The SDK's options, announcing ``tools.listChanged`` (grants change the list)."""
        if notification_options is None:
            notification_options = NotificationOptions(tools_changed=not self.stateless)
        return super().create_initialization_options(
            notification_options, experimental_capabilities, extensions
        )

    # -- sessions --------------------------------------------------------------------

    def _bind(self) -> Thinker:
        thinker: Thinker

        def refuse(approval: Any) -> None:
            # Nobody to ask over MCP: what the policy would ask a person about is refused.
            thinker.resolve_approval(approval.token, approve=False)

        thinker = self.hub.bind(self.thinker_class, approver=refuse)
        return thinker

    def _session(self, ctx: ServerRequestContext[Any]) -> _Session:
        if self.stateless or ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return self._shared_session()
        state = _connection_state(ctx)
        if state is None:  # no per-connection state to keep: the request stands alone
            return self._shared_session()
        found: _Session | None = state.get(_STATE_KEY)
        if found is None:
            found = state[_STATE_KEY] = _Session(self._bind(), with_meta=True)
        return found

    def _shared_session(self) -> _Session:
        with self._shared_lock:
            if self._shared is None:
                self._shared = _Session(self._bind(), with_meta=False)
            return self._shared

    # -- tools -----------------------------------------------------------------------

    async def _tools(self, ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
        """The one way ``tools/list`` and ``tools/call`` are answered, in every protocol era.

        The SDK would validate a request's params against the protocol's models, and
        validate and dump the answer again; but a listing is served as it was serialized
        once per palette, and a call's arguments are validated by the pipeline. So a
        request the SDK's checks pass as it is (:meth:`_as_is`) is answered here
        (:meth:`_answer`). Any other goes on to the SDK, which refuses it: before the
        handshake, with params of another shape, or a 2026-era envelope that does not
        validate. (The SDK lets one more through, from a client that skipped
        ``initialize`` but sent ``notifications/initialized``: its registered handler,
        :meth:`_checked`, gives the same answer.) A name that is not a string is refused
        first, as any other unknown name.
        """
        method = ctx.method
        if method != "tools/list" and method != "tools/call":
            return await call_next(ctx)
        if method == "tools/call" and ctx.params is not None:
            name = ctx.params.get("name")
            if not isinstance(name, str):
                raise _unknown_tool(json.dumps(name, ensure_ascii=False, default=repr))
        if not self._as_is(ctx):
            return await call_next(ctx)
        return await self._answer(ctx)

    async def _checked(
        self, ctx: ServerRequestContext[Any], params: BaseModel | None
    ) -> dict[str, Any]:
        """The registered handler: :meth:`_answer` for a request the SDK checked first."""
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
            result = await self._call(ctx, params["name"], params.get("arguments"))
        if modern:  # what the SDK puts on every 2026-era result it serializes itself
            result["resultType"] = "complete"
            result["_meta"] = {types.SERVER_INFO_META_KEY: self.server_info_stamp}
        return result

    def _page(
        self, ctx: ServerRequestContext[Any], cursor: str | None, *, modern: bool
    ) -> dict[str, Any]:
        """One ``tools/list`` page in wire form, from the listing cached per palette.

        Raises:
            MCPError: -32602 for an invalid or stale cursor.
        """
        try:
            tools, following = self._session(ctx).listing.page(cursor, self.page_size)
        except BadCursor as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
        result: dict[str, Any] = {"tools": tools}
        if following is not None:
            result["nextCursor"] = following
        if modern:
            result["ttlMs"] = self.list_ttl_ms
            result["cacheScope"] = "private"
        return result

    async def _call(
        self, ctx: ServerRequestContext[Any], name: str, arguments: dict[str, Any] | None
    ) -> dict[str, Any]:
        """One ``tools/call`` through the session's pipeline, answered in wire form.

        Raises:
            MCPError: -32602 ``Unknown tool`` for a name this session is not offered.
        """
        session = self._session(ctx)
        provider = session.listing.by_name.get(name)
        if provider is None:
            raise _unknown_tool(name)
        result = await self._run(session, name, arguments if arguments is not None else {}, ctx)
        if _is_meta(provider) and not result.is_error:
            async with session.lock:
                changed = session.refresh()
            if changed:
                await ctx.session.send_tool_list_changed()
        return _call_result(result, structured=provider.output_schema is not None)

    async def _run(
        self,
        session: _Session,
        name: str,
        arguments: Mapping[str, Any],
        ctx: ServerRequestContext[Any],
    ) -> ToolResult:
        """The pipeline's result; the client's cancellation aborts the call (499)."""
        abort = AbortSignal()
        progress = _Progress(ctx)
        call = asyncio.ensure_future(
            session.thinker.call(name, arguments, abort=abort, on_progress=progress.report)
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
        return result

    # -- skills ----------------------------------------------------------------------

    async def _list_prompts(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        skills = self._session(ctx).skills()
        prompts = [
            types.Prompt(name=s.id, title=s.name, description=s.description)
            for s in skills.values()
        ]
        return types.ListPromptsResult(prompts=prompts)

    async def _get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        skill = self._session(ctx).skills().get(params.name)
        if skill is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown prompt: {params.name}")
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

    async def _list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        resources = []
        for skill in self._session(ctx).skills().values():
            try:
                paths = skill.resources()
            except OSError:
                logger.exception("the files of skill %s could not be listed", skill.id)
                continue
            for relpath in paths:
                resources.append(
                    types.Resource(
                        uri=skill_uri(skill, relpath),
                        name=f"{skill.id}/{relpath}",
                        mime_type=mimetypes.guess_type(relpath)[0] or "text/plain",
                    )
                )
        return types.ListResourcesResult(resources=resources)

    async def _list_resource_templates(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        """The ``skill://`` template of skill files, when the palette has skills."""
        templates = []
        if self._session(ctx).skills():
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

    async def _read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        skill_id, relpath = _parse_skill_uri(uri)
        skill = self._session(ctx).skills().get(skill_id)
        if skill is None:
            raise MCPError(code=RESOURCE_NOT_FOUND, message=f"Resource not found: {uri}")
        try:
            data = skill.resource(relpath)
        except ValueError as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
        except OSError:
            raise MCPError(code=RESOURCE_NOT_FOUND, message=f"Resource not found: {uri}") from None
        mime = mimetypes.guess_type(relpath)[0]
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


async def _set_level(
    ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams
) -> types.EmptyResult:
    """Accept a handshake-era client's ``logging/setLevel``: no log notification is sent."""
    return types.EmptyResult()


def _unknown_tool(shown: str) -> MCPError:
    """-32602 ``Unknown tool: NAME``; a name longer than any tool's is shortened."""
    if len(shown) > 64:  # no tool name is longer: this one is not worth echoing in full
        shown = shown[:61] + "..."
    return MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {shown}")


def _connection_state(ctx: ServerRequestContext[Any]) -> dict[str, Any] | None:
    """The SDK's per-connection scratch state for ``ctx``'s connection, if it can be had.

    The SDK keeps a dict of state per client connection (``Connection.state``) and
    exposes it through ``mcp.server.context.Context.connection``; but mcp 2.3's runner
    hands handlers and middleware a ``ServerRequestContext``, which carries no
    ``connection``, and its ``ServerSession`` keeps the connection private. Nothing
    public reaches per-connection state yet, so this one function reads the session's
    ``_connection``; where it is not there, None (each request then stands alone).
    """
    connection = getattr(ctx.session, "_connection", None)
    state = getattr(connection, "state", None)
    return state if isinstance(state, dict) else None


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
        raise MCPError(
            code=types.INVALID_PARAMS,
            message="Invalid resource URI: expected skill://BUNDLE/SKILL/PATH",
        )
    if parts.query or parts.fragment:
        raise MCPError(code=types.INVALID_PARAMS, message="Invalid resource URI: no query allowed")
    return f"{parts.netloc}/{unquote(name)}", unquote(relpath)


class _Progress:
    """Forwards a call's progress reports, in order, as MCP progress notifications.

    Reports may come from a worker thread (a sync tool): they are queued onto the
    event loop and sent by one task, started at the first report; :meth:`close` sends
    what is left before the call's result goes out. The SDK drops them when the
    client asked for no progress.
    """

    __slots__ = ("_loop", "_queue", "_sender", "_session")

    def __init__(self, ctx: ServerRequestContext[Any]) -> None:
        self._session = ctx.session
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[tuple[float, float | None, str | None] | None] | None = None
        self._sender: asyncio.Future[None] | None = None

    def report(self, done: float, total: float | None, message: str | None) -> None:
        self._loop.call_soon_threadsafe(self._put, (done, total, message))

    def _put(self, item: tuple[float, float | None, str | None]) -> None:
        if self._queue is None:
            self._queue = asyncio.Queue()
            self._sender = asyncio.ensure_future(self._send(self._queue))
        self._queue.put_nowait(item)

    async def _send(
        self, queue: asyncio.Queue[tuple[float, float | None, str | None] | None]
    ) -> None:
        while True:
            item = await queue.get()
            if item is None:
                return
            try:
                await self._session.report_progress(*item)
            except Exception:  # a closed stream: the result will not arrive either
                logger.debug("a progress notification could not be sent", exc_info=True)

    async def close(self) -> None:
        """Send the reports still queued, before the call's result goes out."""
        # Reports sent before the tool returned were queued on the loop before its result
        # resumed this call, so the queue holds every one of them by now.
        if self._queue is not None and self._sender is not None:
            with anyio.CancelScope(shield=True):
                self._queue.put_nowait(None)
                await self._sender


def _call_result(result: ToolResult, *, structured: bool) -> dict[str, Any]:
    """The pipeline's result as MCP's (wire form): failures are ``isError`` with its text."""
    if result.is_error:
        return {"content": [{"type": "text", "text": result.text}], "isError": True}
    wire: dict[str, Any] = {"content": result.content, "isError": False}
    if structured and result.structured is not None:
        wire["structuredContent"] = result.structured
    return wire


def _version() -> str:
    from importlib.metadata import version

    return version("toolpalette")
