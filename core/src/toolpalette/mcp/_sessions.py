"""Which thinker answers an MCP request, and what its palette lists: sessions and binding."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Final

from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_REQUEST
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolpalette import (
    RequestSkillProvider,
    RequestToolsProvider,
    SearchSkillsProvider,
    SearchToolsProvider,
    Skill,
    Thinker,
    ToolHub,
    ToolProvider,
)
from toolpalette._tools.registry import lookup
from toolpalette.mcp._approvals import approver_for
from toolpalette.mcp._call_tool import CALL_TOOL, call_tool_for
from toolpalette.mcp._listing import listing_of
from toolpalette.mcp._principal import PaletteChoice, Principal, ThinkerFor, request_principal

__all__ = ["Served", "Sessions", "connection_state", "is_meta"]

_STATE_KEY: Final = "toolpalette.session"
_OWNER_KEY: Final = "toolpalette.session.principal"
_OTHER_PALETTE: Final = (
    "This token is served another palette than the one this session was opened with; "
    "open a new session with it."
)
_META: Final = (
    RequestToolsProvider,
    RequestSkillProvider,
    SearchToolsProvider,
    SearchSkillsProvider,
)


def is_meta(provider: ToolProvider) -> bool:
    """Whether ``provider`` is a meta-tool that asks for more (a request or a search)."""
    return isinstance(provider, _META)


class Served:
    """One thinker as served: its listing, and what ``call_tool`` may reach.

    Args:
        thinker: the bound thinker.
        keeps_grants: whether its grants are kept (a stateful session's are), so that
            the listing follows them.
    """

    def __init__(self, thinker: Thinker, *, keeps_grants: bool) -> None:
        self.thinker = thinker
        self.keeps_grants = keeps_grants
        self.lock = asyncio.Lock()
        self.version = -1
        self.listing = listing_of(())
        self.reachable: dict[str, ToolProvider] = {}
        """The tools ``call_tool`` may run: offered ones (no meta-tool) and deferred ones."""
        self.refresh()

    def refresh(self) -> bool:
        """Reconcile the thinker's palette; whether what it lists changed."""
        turn = self.thinker.begin_turn()
        if turn.version == self.version:
            return False
        self.version = turn.version
        offered = turn.tools
        reachable = {p.name: p for p in self.thinker.deferred_tools()}
        reachable.update((p.name, p) for p in offered if not is_meta(p))
        listed = offered
        if CALL_TOOL not in reachable:  # a palette's own tool of that name keeps it
            listed = (*offered, call_tool_for(reachable.values()))
        self.reachable = reachable
        before = self.listing.digest
        self.listing = listing_of(listed)
        return self.listing.digest != before

    def skills(self) -> dict[str, Skill]:
        """The skills the thinker declares, by id (prompts and resources)."""
        hub = self.thinker.hub
        declared = hub.resolve_thinker(type(self.thinker)).skills
        return {s.id: s for s in declared}


class Sessions:
    """The thinkers of one server: one per stateful session, one per choice for the rest.

    Args:
        hub: the hub the thinkers are bound on.
        thinker_class: the class each binds (the one a principal maps to by default).
        stateless: no request belongs to a session (stateless HTTP).
        thinker_for: a host's mapping of a verified principal to what it is served;
            None serves every principal ``thinker_class``.
    """

    def __init__(
        self,
        hub: ToolHub,
        thinker_class: type[Thinker],
        *,
        stateless: bool,
        thinker_for: ThinkerFor | None = None,
    ) -> None:
        self._hub = hub
        self._class = thinker_class
        self.stateless = stateless
        self._thinker_for = thinker_for
        self._shared: dict[type[Thinker], Served] = {}
        self._read_only: dict[type[Thinker], type[Thinker]] = {}
        self._lock = threading.Lock()

    def for_request(self, ctx: ServerRequestContext[Any]) -> Served:
        """The served thinker that answers ``ctx``'s request."""
        state = None
        if not self.stateless and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            state = connection_state(ctx)  # None: the request stands alone
        return self.for_principal(request_principal(ctx), state)

    def for_principal(self, principal: Principal | None, state: dict[str, Any] | None) -> Served:
        """The served thinker for a request made for ``principal`` (None: no authorization).

        ``state`` is the per-connection state of the request's stateful session, or None
        when the request has no session. The principal's name comes with each call
        (``Thinker.call(principal=...)``), never set on the thinker: a shared thinker
        serves many principals at once.

        Raises:
            MCPError: the session was opened by another principal (-32600).
        """
        if state is None:
            return self.shared(self.class_for(principal))
        owner = principal.identity if principal is not None else None
        chosen = self.class_for(principal)  # per request: from the token presented now
        found: Served | None = state.get(_STATE_KEY)
        if found is None:
            found = Served(self._bind(chosen, keep=True), keeps_grants=True)
            state[_STATE_KEY], state[_OWNER_KEY] = found, owner
        elif state.get(_OWNER_KEY) != owner:
            raise MCPError(INVALID_REQUEST, "This session belongs to another principal.")
        elif type(found.thinker) is not chosen:
            raise MCPError(INVALID_REQUEST, _OTHER_PALETTE)
        return found

    def lists(self, method: str, name: str) -> bool:
        """Whether the server lists ``name`` for ``method`` (``tools/call``, ``prompts/get``).

        A tool of the catalog or of the default palette's listing (its meta-tools and
        ``call_tool``), or a skill's id: names the server made, never a client's text.
        """
        if method == "prompts/get":
            return self._hub.skills().get(name) is not None
        if name in self.shared().listing.by_name:
            return True
        return lookup(self._hub.catalog(), name) is not None

    def class_for(self, principal: Principal | None) -> type[Thinker]:
        """The thinker class ``principal`` is served (the host's mapping's choice)."""
        if principal is None or self._thinker_for is None:
            return self._class
        chosen = self._thinker_for(principal)
        if chosen is None:
            return self._class
        if not isinstance(chosen, PaletteChoice):
            return chosen
        cls = chosen.thinker or self._class
        return self._read_only_of(cls) if chosen.read_only and not cls.read_only else cls

    def shared(self, thinker_class: type[Thinker] | None = None) -> Served:
        """The thinker the requests without a session share for a class (keeps no grants)."""
        cls = thinker_class or self._class
        found = self._shared.get(cls)
        if found is not None:
            return found
        with self._lock:
            found = self._shared.get(cls)
            if found is None:
                found = self._shared[cls] = Served(self._bind(cls, keep=False), keeps_grants=False)
            return found

    def _read_only_of(self, cls: type[Thinker]) -> type[Thinker]:
        """One read-only subclass per class, so its requests share one thinker."""
        with self._lock:
            found = self._read_only.get(cls)
            if found is None:
                names = {"__module__": cls.__module__, "__qualname__": cls.__qualname__}
                found = type(cls.__name__, (cls,), {"read_only": True, **names})
                self._read_only[cls] = found
            return found

    def _bind(self, cls: type[Thinker], *, keep: bool) -> Thinker:
        bound: list[Thinker] = []
        approver = approver_for(lambda: bound[0] if bound else None)
        thinker = self._hub.bind(cls, approver=approver, keep_grants=keep)
        bound.append(thinker)
        return thinker


def connection_state(ctx: ServerRequestContext[Any]) -> dict[str, Any] | None:
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
