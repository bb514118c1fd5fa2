"""Which thinker answers an MCP request, and what its palette lists: sessions and binding.

A stateful session (the 2025-era handshake over stdio or stateful HTTP) binds a
thinker of its own, which keeps its grants: a ``request_tools`` or ``search_tools``
grant shows in the session's next ``tools/list``. Requests with no session behind them
(stateless HTTP, and every request of the 2026-07-28 era, which carries its own
envelope) share one thinker bound with ``keep_grants=False``: its admissions are
decided, recorded and answered, and nothing is kept, so ``tools/list`` is the same for
every such request (the 2026-07-28 rule) and any worker answers any request.

Both serve the thinker's whole turn (the up-front palette and the meta-tools of its
``tool_search`` mode) and ``call_tool``, which reaches every tool the thinker may use.
Each thinker is bound with :func:`~toolpalette.mcp._approvals.approver_for`'s approver.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Final

from mcp.server.context import ServerRequestContext
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
from toolpalette.mcp._approvals import approver_for
from toolpalette.mcp._call_tool import CALL_TOOL, call_tool_for
from toolpalette.mcp._listing import listing_of

__all__ = ["Served", "Sessions", "is_meta"]

_STATE_KEY: Final = "toolpalette.session"
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
    """The thinkers of one server: one per stateful session, one shared by the rest.

    Args:
        hub: the hub the thinkers are bound on.
        thinker_class: the class each binds.
        stateless: no request belongs to a session (stateless HTTP).
    """

    def __init__(self, hub: ToolHub, thinker_class: type[Thinker], *, stateless: bool) -> None:
        self._hub = hub
        self._class = thinker_class
        self.stateless = stateless
        self._shared: Served | None = None
        self._lock = threading.Lock()

    def for_request(self, ctx: ServerRequestContext[Any]) -> Served:
        """The served thinker that answers ``ctx``'s request."""
        if self.stateless or ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return self.shared()
        state = _connection_state(ctx)
        if state is None:  # no per-connection state to keep: the request stands alone
            return self.shared()
        found: Served | None = state.get(_STATE_KEY)
        if found is None:
            found = state[_STATE_KEY] = Served(self._bind(keep=True), keeps_grants=True)
        return found

    def shared(self) -> Served:
        """The thinker every request without a session shares (it keeps no grants)."""
        with self._lock:
            if self._shared is None:
                self._shared = Served(self._bind(keep=False), keeps_grants=False)
            return self._shared

    def _bind(self, *, keep: bool) -> Thinker:
        bound: list[Thinker] = []
        approver = approver_for(lambda: bound[0] if bound else None)
        thinker = self._hub.bind(self._class, approver=approver, keep_grants=keep)
        bound.append(thinker)
        return thinker


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
