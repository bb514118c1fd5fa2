"""Resource subscriptions: 2025-era `resources/subscribe`, 2026-07-28 `subscriptions/listen`.

Either way a client is told when a pack says a resource changed (`resource_updated`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Callable
from typing import Any, Final

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ResourceUpdated,
    ServerEvent,
    SubscriptionBus,
)

from toolpalette._tools.changes import hear_resource_updates

__all__ = ["SUBSCRIBED_KEY", "Subscriptions"]

logger = logging.getLogger("toolpalette.mcp")

SUBSCRIBED_KEY: Final = "toolpalette.subscribed"
"""Where a 2025-era connection keeps the URIs it subscribed to."""
_SENDER_KEY: Final = "toolpalette.subscribed.sender"
"""Where it keeps a session that sends on its standalone channel (not a request's)."""


class Subscriptions:
    """Who is subscribed to which resource, on either era, and telling them of changes.

    A 2025-era subscription is kept in the SDK's per-connection state, so it ends with
    its connection; a 2026-07-28 one is a `subscriptions/listen` stream, served by the
    SDK's `ListenHandler` over ``bus``. A pack's `resource_updated` is published on
    ``bus``, and this server's own listener of the bus tells the 2025-era connections:
    a bus shared by several processes (the SDK's ``SubscriptionBus``, over a backend of
    the host's) carries both eras' changes between them.

    Args:
        known: whether the palette that answers a request offers a resource URI (a
            subscription to any other is refused, or left out of a stream's ack).
        bus: where changes are published; None: one in this process only.
    """

    def __init__(
        self,
        known: Callable[[ServerRequestContext[Any], str], bool],
        bus: SubscriptionBus | None = None,
    ) -> None:
        self._known = known
        self.bus: SubscriptionBus = bus if bus is not None else InMemorySubscriptionBus()
        """Where changes are published, and the listen streams hear them."""
        self._streams = ListenHandler(self.bus)
        self._connections: weakref.WeakSet[Any] = weakref.WeakSet()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._stop_bus = self.bus.subscribe(self._to_connections)
        self._stop_hearing = hear_resource_updates(self.heard)

    # -- the 2025 era --------------------------------------------------------------

    def subscribe(self, ctx: ServerRequestContext[Any], uri: str) -> bool:
        """Subscribe the connection of ``ctx`` to ``uri``; False when it has no state."""
        connection = _connection(ctx)
        state = getattr(connection, "state", None)
        if not isinstance(state, dict):
            return False
        self._loop = asyncio.get_running_loop()
        state.setdefault(SUBSCRIBED_KEY, set()).add(uri)
        state[_SENDER_KEY] = ctx.session  # sends without a request: the standalone stream
        self._connections.add(connection)
        return True

    def unsubscribe(self, ctx: ServerRequestContext[Any], uri: str) -> None:
        """End the subscription of the connection of ``ctx`` to ``uri`` (if any)."""
        state = getattr(_connection(ctx), "state", None)
        if isinstance(state, dict):
            state.get(SUBSCRIBED_KEY, set()).discard(uri)

    # -- the 2026-07-28 era --------------------------------------------------------

    async def listen(
        self, ctx: ServerRequestContext[Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        """One `subscriptions/listen` stream, until the client ends it.

        Its ack honors the URIs the palette offers, and no list change: what a palette
        lists without a session never changes (every such request is answered alike),
        so none would ever come.
        """
        self._loop = asyncio.get_running_loop()
        wanted = params.notifications.resource_subscriptions or []
        kept = [uri for uri in dict.fromkeys(wanted) if self._known(ctx, uri)]
        honored = types.SubscriptionFilter(resource_subscriptions=kept or None)
        return await self._streams(ctx, params.model_copy(update={"notifications": honored}))

    # -- changes -------------------------------------------------------------------

    def heard(self, uri: str) -> None:
        """A pack said ``uri`` changed (on any thread): publish it on the serving loop."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return  # nobody ever subscribed here
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(self._publish, uri)

    def _publish(self, uri: str) -> None:
        self._spawn(self.bus.publish(ResourceUpdated(uri)))

    def _to_connections(self, event: ServerEvent) -> None:
        """The bus's event, sent to every 2025-era connection subscribed to its URI."""
        if not isinstance(event, ResourceUpdated):
            return
        for connection in list(self._connections):
            state = connection.state
            if event.uri in state.get(SUBSCRIBED_KEY, ()):
                self._spawn(_send(state, event.uri))

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def close(self) -> None:
        """Stop hearing changes, and end every listen stream gracefully."""
        self._stop_hearing()
        self._stop_bus()
        self._streams.close()


async def _send(state: dict[str, Any], uri: str) -> None:
    """``notifications/resources/updated`` to one connection; a closed one is forgotten."""
    sender = state.get(_SENDER_KEY)
    if sender is None:
        return
    try:
        await sender.send_resource_updated(uri)
    except Exception:
        logger.debug("a subscribed connection could not be told; it is forgotten", exc_info=True)
        state.pop(SUBSCRIBED_KEY, None)
        state.pop(_SENDER_KEY, None)


def _connection(ctx: ServerRequestContext[Any]) -> Any:
    """The SDK's connection of ``ctx``'s request (private there: see `connection_state`)."""
    return getattr(ctx.session, "_connection", None)
