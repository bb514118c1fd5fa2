"""A thinker's palette as an MCP server, on the ``mcp`` SDK's low-level ``Server``.

It builds the server and wires its parts, each in a module of its own.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any, Final

import mcp_types as types
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.subscriptions import SubscriptionBus
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolpalette import ContentSelector, SkillSelector, Thinker, ToolHub, ToolSelector
from toolpalette._skills.registry import skills_of_distributions
from toolpalette.mcp._approvals import state_boundary
from toolpalette.mcp._channel import set_level
from toolpalette.mcp._content import ContentEndpoint
from toolpalette.mcp._principal import PaletteChoice, ThinkerFor
from toolpalette.mcp._raw import SentLines
from toolpalette.mcp._sessions import Sessions
from toolpalette.mcp._skills import SkillsEndpoint
from toolpalette.mcp._skills_ext import EXTENSION, DirectoryParams, GetSkillParams, SkillsExtension
from toolpalette.mcp._tasks import EXTENSION as TASKS
from toolpalette.mcp._tasks import TaskParams, TaskSettings, TasksExtension, UpdateTaskParams
from toolpalette.mcp._telemetry import ServerSpans, Timed
from toolpalette.mcp._tools import ToolsEndpoint

__all__ = ["DEFAULT_PAGE_SIZE", "PaletteServer", "selection_thinker", "server"]

DEFAULT_PAGE_SIZE: Final = 100
"""Tools per ``tools/list`` page."""
DEFAULT_LIST_TTL_MS: Final = 60_000
"""How long a 2026-07-28 client may keep a listing (``ttlMs``) before asking again."""


def server(
    hub: ToolHub,
    thinker: type[Thinker] | None = None,
    *,
    read_only: bool = False,
    page_size: int = DEFAULT_PAGE_SIZE,
    stateless: bool = False,
    list_ttl_ms: int = DEFAULT_LIST_TTL_MS,
    name: str = "toolpalette",
    state_keys: Sequence[bytes | str] | None = None,
    thinker_for: ThinkerFor | None = None,
    tasks: TaskSettings | None = None,
    subscription_bus: SubscriptionBus | None = None,
) -> PaletteServer:
    """An MCP server (the SDK's low-level ``Server``) serving ``thinker``'s palette.

    Without a thinker every installed tool (and skill) is served. ``read_only`` serves a
    read-only binding of it (an already read-only thinker stays so). ``stateless`` says
    no request belongs to a session (stateless HTTP): every request then shares one
    thinker that keeps no grants, and a deferred tool is decided at each call.
    ``state_keys`` seal the request state of a 2026-07-28 approval (``keys[0]`` seals,
    every key verifies; each at least 32 bytes of secret): give every worker of a
    deployment the same keys; without them a key is made for this process alone.
    ``thinker_for`` maps the verified principal of a request (over HTTP with
    authorization, see [`toolpalette.mcp.asgi_app()`][toolpalette.mcp.asgi_app]) to the
    thinker class it is served, or a [`PaletteChoice`][toolpalette.mcp.PaletteChoice];
    None serves ``thinker`` (with ``read_only``, every choice is read-only). ``tasks``
    (a `TaskSettings`) says where the tasks extension keeps its tasks: give every worker
    of a deployment the same store; None keeps them in this process's memory.
    ``subscription_bus`` is where the resource changes packs announce
    (`toolpalette.resource_updated`) are published for subscribed clients of both eras:
    the SDK's ``SubscriptionBus``, over a backend every worker shares to tell the
    clients of every worker; None keeps them in this process. Run it with
    ``server.run(...)`` over any stream pair, or mount
    [`toolpalette.mcp.asgi_app()`][toolpalette.mcp.asgi_app].

    Raises:
        ValueError: ``page_size``, ``list_ttl_ms`` or a state key is out of range.
        ToolpaletteError: the thinker's declarations do not resolve against ``hub``.
    """
    if thinker is None:
        thinker = selection_thinker(hub, (), read_only=read_only)
    elif read_only and not thinker.read_only:
        thinker = type(thinker.__name__, (thinker,), {"read_only": True})
    if read_only and thinker_for is not None:
        thinker_for = _read_only_choices(thinker_for)
    return PaletteServer(
        hub,
        thinker,
        page_size=page_size,
        stateless=stateless,
        list_ttl_ms=list_ttl_ms,
        name=name,
        state_keys=state_keys,
        thinker_for=thinker_for,
        tasks=tasks,
        subscription_bus=subscription_bus,
    )


def _read_only_choices(thinker_for: ThinkerFor) -> ThinkerFor:
    """``thinker_for`` with every choice read-only (the server is)."""

    def chosen(principal: Any) -> PaletteChoice:
        choice = thinker_for(principal)
        if isinstance(choice, PaletteChoice):
            return PaletteChoice(choice.thinker, read_only=True)
        return PaletteChoice(choice, read_only=True)

    return chosen


def selection_thinker(
    hub: ToolHub, names: Sequence[str], *, read_only: bool = False
) -> type[Thinker]:
    """A thinker class offering the installed distributions or import packages named.

    Each name is a distribution when one is installed under it, else an import
    package. With no names it offers every installed tool, skill, prompt and
    resource; with names, the skills, prompts and resources those distributions ship
    (a name that is no distribution selects the prompts and resources of the pack of
    that name). An MCP server's skills (the Skills extension) are never among them: a
    server does not re-serve the servers it is a client of.
    """
    distributions = {_canonical(p.distribution) for p in hub.plugins() if p.distribution}
    chosen = ToolSelector()
    for item in names:
        if _canonical(item) in distributions:
            chosen.distribution(item)
        else:
            chosen.package(item)
    skills = SkillSelector()
    content = ContentSelector()
    for item in names:
        if _canonical(item) in distributions:
            content.distribution(item)
        else:
            content.pack(item)
    if not names:
        content.all()
    else:  # installed and code-built skills only: never an MCP server's (re-served)
        for skill in skills_of_distributions(hub.skills(), names):  # opens only theirs
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
            if names:
                return skills
            local = SkillSelector()
            for skill in hub.skills().skills(remote=False):
                local.skill(skill.id)
            return local

        @classmethod
        def declare_content(cls) -> ContentSelector:
            return content

    Selection.read_only = read_only
    return Selection


def _canonical(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


class PaletteServer(Server[Any]):
    """The low-level MCP ``Server`` for one thinker class (see `server()`)."""

    def __init__(
        self,
        hub: ToolHub,
        thinker: type[Thinker],
        *,
        page_size: int = DEFAULT_PAGE_SIZE,
        stateless: bool = False,
        list_ttl_ms: int = DEFAULT_LIST_TTL_MS,
        name: str = "toolpalette",
        state_keys: Sequence[bytes | str] | None = None,
        thinker_for: ThinkerFor | None = None,
        tasks: TaskSettings | None = None,
        subscription_bus: SubscriptionBus | None = None,
    ) -> None:
        if page_size < 1:
            raise ValueError("page_size must be at least 1")
        if list_ttl_ms < 0:
            raise ValueError("list_ttl_ms must not be negative")
        boundary = state_boundary(state_keys, name)  # a bad key is refused now
        hub.resolve_thinker(thinker)  # a declaration error surfaces now, not mid-session
        sessions = Sessions(hub, thinker, stateless=stateless, thinker_for=thinker_for)
        skills = SkillsEndpoint(sessions)
        content = ContentEndpoint(hub, sessions, skills, page_size, subscription_bus)
        super().__init__(
            name,
            version=_version(),
            get_tool_input_schema=lambda name: sessions.shared().listing.schemas.get(name),
            on_list_prompts=content.list_prompts,
            on_get_prompt=content.get_prompt,
            on_list_resources=content.list_resources,
            on_list_resource_templates=content.list_resource_templates,
            on_read_resource=content.read_resource,
            on_subscribe_resource=content.subscribe,
            on_unsubscribe_resource=content.unsubscribe,
            on_subscriptions_listen=content.subscriptions.listen,
            on_completion=content.complete,
            lifespan=_lifespan,
        )
        self.hub = hub
        """The hub the palettes are resolved from."""
        self.thinker_class = thinker
        """The thinker class each session binds (unless ``thinker_for`` chooses another)."""
        self.sessions = sessions
        """Which thinker answers each request (``for_principal`` is the one choice)."""
        self.subscriptions = content.subscriptions
        """Who is subscribed to which resource (both eras), told of a pack's changes."""
        self.page_size = page_size
        """Tools per ``tools/list`` page."""
        self.stateless = stateless
        """Whether requests never belong to a session (stateless HTTP)."""
        self.list_ttl_ms = list_ttl_ms
        """The ``ttlMs`` cache hint of a 2026-07-28 listing."""
        self.sent_lines = SentLines()
        """The stdio lines that repeat a key, for the calls they carry (``_raw.py``)."""
        tools = ToolsEndpoint(
            sessions,
            page_size=page_size,
            list_ttl_ms=list_ttl_ms,
            stamp=lambda: self.server_info_stamp,
            lines=self.sent_lines,
        )
        self.tools_endpoint = tools
        """The ``tools/list`` and ``tools/call`` answers (also asked by ``_fast.py``)."""
        # Outermost first: every request in a span naming only what the server lists (in
        # place of the SDK's own, which names what the client sent) and timed; request
        # state verified before the tools see it, and the state of an input_required
        # answer sealed after.
        self.middleware[:] = [ServerSpans(sessions.lists)]  # the SDK's spans quote clients
        self.middleware.append(Timed(sessions.lists))
        self.middleware.append(boundary)
        self.middleware.append(tools.middleware)
        # Registered too: the SDK announces the tools capability, and holds requests that
        # come before the handshake, for the methods it has a handler of (see _tools.py).
        self.add_request_handler("tools/list", types.PaginatedRequestParams, tools.checked)
        self.add_request_handler("tools/call", types.CallToolRequestParams, tools.checked)
        self.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)
        extension = SkillsExtension(sessions, page_size=page_size, ttl_ms=list_ttl_ms)
        self.skills_extension = extension
        """The MCP Skills extension's handlers (declared when the palette has skills)."""
        if thinker_for is not None or hub.resolve_thinker(thinker).skills:
            self.extensions[EXTENSION] = {"directoryRead": True}
            self.add_request_handler(
                "skills/list", types.PaginatedRequestParams, extension.list_skills
            )
            self.add_request_handler("skills/get", GetSkillParams, extension.get_skill)
            self.add_request_handler(
                "resources/directory/read", DirectoryParams, extension.read_directory
            )
        self.tasks_extension = TasksExtension(tasks if tasks is not None else TaskSettings())
        """The tasks extension: where task-supporting calls become tasks (``_tasks.py``)."""
        tools.tasks = self.tasks_extension
        content.subscriptions.tasks = self.tasks_extension
        self.extensions[TASKS] = {}
        self.add_request_handler("tasks/get", TaskParams, self.tasks_extension.get)
        self.add_request_handler("tasks/update", UpdateTaskParams, self.tasks_extension.update)
        self.add_request_handler("tasks/cancel", TaskParams, self.tasks_extension.cancel)

    async def run_stdio(self) -> None:
        """Serve over this process's stdin and stdout until the client closes stdin.

        As the SDK's ``stdio_server`` does, with each line also read as the client wrote
        it (a key it repeats is refused, not dropped); while serving, descriptor 0 reads
        the null device and descriptor 1 writes to stderr, so nothing a tool does
        reaches the protocol.
        """
        from toolpalette.mcp._stdio import serve_stdio

        await serve_stdio(self, self.sent_lines)

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        """The SDK's options, announcing ``tools.listChanged`` (grants change the list).

        The Skills extension is also declared under ``experimental``: a 2025-era
        handshake's capabilities have no ``extensions`` (the SDK leaves it out there).
        Stateless, ``resources.subscribe`` is off: no connection outlives a request to
        carry an update (a 2026-07-28 client's ``subscriptions/listen`` stream does).
        """
        if notification_options is None:
            notification_options = NotificationOptions(tools_changed=not self.stateless)
        if experimental_capabilities is None:
            experimental_capabilities = {
                key: dict(self.extensions[key])
                for key in (EXTENSION, TASKS)
                if key in self.extensions
            }
        options = super().create_initialization_options(
            notification_options, experimental_capabilities, extensions
        )
        resources = options.capabilities.resources
        if self.stateless and resources is not None:  # no stream would carry an update
            resources = resources.model_copy(update={"subscribe": False})
            capabilities = options.capabilities.model_copy(update={"resources": resources})
            options = options.model_copy(update={"capabilities": capabilities})
        return options

    def get_capabilities(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
        *,
        protocol_version: str | None = None,
    ) -> types.ServerCapabilities:
        """The SDK's capabilities; on 2026-07-28 no list is announced as changing.

        The SDK derives every ``listChanged`` there from ``subscriptions/listen`` being
        served; here that stream carries resource updates only, since what a palette
        lists without a session never changes (its ack says the same).
        """
        found = super().get_capabilities(
            notification_options,
            experimental_capabilities,
            extensions,
            protocol_version=protocol_version,
        )
        if protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return found
        unchanging = {
            key: getattr(found, key).model_copy(update={"list_changed": False})
            for key in ("tools", "prompts", "resources")
            if getattr(found, key) is not None
        }
        return found.model_copy(update=unchanging)


@contextlib.asynccontextmanager
async def _lifespan(server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
    """While the server serves: its tasks extension is open (closed when the last ends)."""
    assert isinstance(server, PaletteServer)
    async with server.tasks_extension.serving():
        yield {}


def _version() -> str:
    from importlib.metadata import version

    return version("toolpalette")
