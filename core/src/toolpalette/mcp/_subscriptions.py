"""Subscriptions: 2025-era `resources/subscribe`, 2026-07-28 `subscriptions/listen`.

A client is told when a pack says a resource changed, and (listening) of its tasks' status.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import Any, Final, Literal, Protocol, cast

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectSendStream
from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import (
    SUBSCRIPTION_ID_META_KEY,
    InMemorySubscriptionBus,
    ListenHandler,
    ResourceUpdated,
    ServerEvent,
    SubscriptionBus,
)
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import event_matches, event_to_notification

from toolpalette._tools.changes import hear_resource_updates

__all__ = ["SUBSCRIBED_KEY", "Subscriptions", "TaskWatch"]

logger = logging.getLogger("toolpalette.mcp")

SUBSCRIBED_KEY: Final = "toolpalette.subscribed"
"""Where a 2025-era connection keeps the URIs it subscribed to."""
_SENDER_KEY: Final = "toolpalette.subscribed.sender"
"""Where it keeps a session that sends on its standalone channel (not a request's)."""


class TaskWatch(Protocol):
    """The tasks a listen stream may watch (the tasks extension, `_tasks.py`)."""

    async def honor(self, ctx: ServerRequestContext[Any], task_ids: Sequence[Any]) -> list[str]:
        """The ids that name the caller's tasks (raises -32021 without the extension)."""
        ...

    def watch(
        self, ctx: ServerRequestContext[Any], task_ids: Sequence[str]
    ) -> AsyncGenerator[dict[str, Any], None]:
        """Each task's state, now and at each status change, until it ends."""
        ...


class _TaskNotification(types.Notification[dict[str, Any], str]):
    """``notifications/tasks`` (SEP-2663; the SDK has no model of it)."""

    method: Literal["notifications/tasks"] = "notifications/tasks"
    params: dict[str, Any]


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
        self.tasks: TaskWatch | None = None
        """The tasks a stream may ask for by ``taskIds`` (None: none, the ids ignored)."""
        self._watching: set[MemoryObjectSendStream[Any]] = set()
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
        task_ids = (params.notifications.model_extra or {}).get("taskIds")
        if self.tasks is None or not isinstance(task_ids, list):
            return await self._streams(ctx, params.model_copy(update={"notifications": honored}))
        watched = await self.tasks.honor(ctx, task_ids)
        return await self._listen_with_tasks(ctx, honored, watched, self.tasks)

    async def _listen_with_tasks(
        self,
        ctx: ServerRequestContext[Any],
        honored: types.SubscriptionFilter,
        task_ids: list[str],
        tasks: TaskWatch,
    ) -> types.SubscriptionsListenResult:
        """A stream that also carries ``notifications/tasks`` for ``task_ids``.

        As the SDK's `ListenHandler` serves one: the ack first, every frame tagged with
        the subscription id, a backlog of 1024 frames at most (then the stream ends).
        """
        subscription_id = ctx.request_id
        if subscription_id is None:
            raise MCPError(types.INVALID_REQUEST, "subscriptions/listen requires a request id")
        meta: dict[str, Any] = {SUBSCRIPTION_ID_META_KEY: subscription_id}
        uris = frozenset(honored.resource_subscriptions or ())
        send, receive = anyio.create_memory_object_stream[Any](1024)

        def deliver(event: ServerEvent) -> None:
            if event_matches(honored, uris, event):
                try:
                    send.send_nowait(event)
                except anyio.WouldBlock:
                    logger.warning("a listen stream's backlog is full; it ends")
                    send.close()
                except anyio.ClosedResourceError:
                    pass

        async def pump() -> None:
            watching = tasks.watch(ctx, task_ids)
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                async with contextlib.aclosing(watching):
                    async for task in watching:
                        try:
                            send.send_nowait(_TaskNotification(params={**task, "_meta": meta}))
                        except anyio.WouldBlock:
                            logger.warning("a listen stream's backlog is full; it ends")
                            send.close()
                            return

        acked = honored.model_dump(by_alias=True, exclude_none=True)
        acked["taskIds"] = task_ids
        ack = types.SubscriptionsAcknowledgedNotification(
            params=types.SubscriptionsAcknowledgedNotificationParams(
                notifications=types.SubscriptionFilter.model_validate(acked), _meta=meta
            )
        )
        stop = self.bus.subscribe(deliver)
        self._watching.add(send)
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(pump)
                await ctx.session.send_notification(ack, related_request_id=subscription_id)
                async for item in receive:
                    sent = item if isinstance(item, _TaskNotification) else None
                    notification = sent or event_to_notification(item, meta)
                    await ctx.session.send_notification(
                        cast(Any, notification), related_request_id=subscription_id
                    )
                group.cancel_scope.cancel()
        finally:
            stop()
            self._watching.discard(send)
            send.close()
            receive.close()
        return types.SubscriptionsListenResult(_meta=meta)

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
        for stream in list(self._watching):
            stream.close()


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
