"""Resource subscriptions on both eras: a pack's `resource_updated` reaches subscribers.

A 2026-07-28 client opens a ``subscriptions/listen`` stream; a 2025-era session calls
``resources/subscribe``. Either way it is told when the pack says a subscribed URI
changed, in process, over stdio, over HTTP, and through two workers when every worker
sees the change; a bus shared between servers carries a change to the other's clients.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import notes_fixture as fx
import pytest
import toolpalette.mcp
from mcp import Client, StdioServerParameters
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourceUpdated
from mcp.shared.exceptions import MCPError
from toolpalette import ToolHub
from toolpalette.testing import leak_check

HERE = Path(__file__).parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
LEGACY_ONLY = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


@pytest.fixture(autouse=True)
def notes() -> Iterator[None]:
    before = dict(fx.NOTES)
    yield
    fx.NOTES.clear()
    fx.NOTES.update(before)


def palette(**options: Any) -> toolpalette.mcp.PaletteServer:
    return toolpalette.mcp.server(ToolHub(autoload=False), fx.Notes, **options)


class Updates:
    """A legacy client's message handler: the URIs of ``notifications/resources/updated``."""

    def __init__(self) -> None:
        self.send, self.receive = anyio.create_memory_object_stream[str](16)

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            await self.send.send(str(message.params.uri))

    async def next(self) -> str:
        with anyio.fail_after(10):
            return await self.receive.receive()

    def close(self) -> None:
        self.send.close()
        self.receive.close()


@asynccontextmanager
async def updates() -> AsyncIterator[Updates]:
    found = Updates()
    try:
        yield found
    finally:
        found.close()


async def next_event(subscription: Any) -> Any:
    with anyio.fail_after(10):
        return await subscription.__anext__()


# -- in process -------------------------------------------------------------------------


async def test_a_default_client_listens_to_offered_resources_and_hears_their_changes():
    async with Client(palette()) as client:
        assert client.protocol_version == "2026-07-28"
        resources = client.server_capabilities.resources
        assert resources is not None
        assert resources.subscribe
        assert not resources.list_changed
        wanted = ["notes://today", "notes://day/monday", "notes://elsewhere"]
        async with client.listen(resource_subscriptions=wanted, tools_list_changed=True) as sub:
            # Only what the palette offers is honored, and no list change (none would come).
            assert sub.honored.resource_subscriptions == wanted[:2]
            assert not sub.honored.tools_list_changed
            await client.call_tool("write_note", {"text": "x", "day": "tuesday"})  # unsubscribed
            await client.call_tool("write_note", {"text": "gym", "day": "monday"})
            event = await next_event(sub)
            assert event == ResourceUpdated(uri="notes://day/monday")
            assert (await client.read_resource(event.uri)).contents[0].text == "gym"
            toolpalette.resource_updated("notes://today")  # from the test itself: any code
            assert await next_event(sub) == ResourceUpdated(uri="notes://today")


@LEGACY_ONLY
async def test_a_2025_session_is_told_of_its_subscriptions_only_until_it_unsubscribes():
    async with updates() as seen, Client(palette(), mode="legacy", message_handler=seen) as client:
        assert client.session.initialize_result is not None
        resources = client.session.initialize_result.capabilities.resources
        assert resources is not None
        assert resources.subscribe
        await client.subscribe_resource("notes://today")
        await client.subscribe_resource("notes://day/monday")
        with pytest.raises(MCPError) as caught:
            await client.subscribe_resource("notes://elsewhere")
        assert caught.value.code == -32002
        await client.call_tool("write_note", {"text": "x", "day": "tuesday"})
        await client.call_tool("write_note", {"text": "gym", "day": "monday"})
        assert await seen.next() == "notes://day/monday"
        await client.unsubscribe_resource("notes://day/monday")
        await client.call_tool("write_note", {"text": "swim", "day": "monday"})
        await client.call_tool("write_note", {"text": "ok"})
        assert await seen.next() == "notes://today"


async def test_a_stateless_server_does_not_offer_2025_subscriptions():
    async with Client(palette(stateless=True), mode="legacy") as client:
        assert client.session.initialize_result is not None
        resources = client.session.initialize_result.capabilities.resources
        assert resources is not None
        assert not resources.subscribe


async def test_a_change_announced_on_another_thread_reaches_the_stream():
    async with Client(palette()) as client:
        async with client.listen(resource_subscriptions=["notes://today"]) as sub:
            await anyio.to_thread.run_sync(toolpalette.resource_updated, "notes://today")
            assert await next_event(sub) == ResourceUpdated(uri="notes://today")


@LEGACY_ONLY
async def test_a_shared_bus_carries_another_workers_change_to_both_eras():
    bus = InMemorySubscriptionBus()  # stands for a backend every worker publishes to
    served = palette(subscription_bus=bus)
    async with Client(served) as modern, updates() as seen:
        async with Client(served, mode="legacy", message_handler=seen) as legacy:
            await legacy.subscribe_resource("notes://today")
            async with modern.listen(resource_subscriptions=["notes://today"]) as sub:
                await bus.publish(ResourceUpdated(uri="notes://today"))  # another worker's
                assert await next_event(sub) == ResourceUpdated(uri="notes://today")
                assert await seen.next() == "notes://today"


def test_a_server_no_longer_referenced_stops_hearing_changes():
    import gc
    import weakref

    served = palette()
    gone = weakref.ref(served.subscriptions)
    del served
    gc.collect()
    assert gone() is None
    toolpalette.resource_updated("notes://today")  # nobody left: nothing happens


# -- stdio and HTTP -----------------------------------------------------------------------


def serve_command(*args: str) -> list[str]:
    code = "import sys; from toolpalette._cli import main; sys.exit(main())"
    return [sys.executable, "-c", code, "serve", *args]


def stdio() -> StdioServerParameters:
    command = serve_command("--thinker", "notes_fixture:Notes")
    return StdioServerParameters(command=command[0], args=command[1:], env=ENV)


async def listen_and_write(target: Any, writer: Any = None) -> None:
    """A default client's stream hears the change a tool call makes (on ``writer``'s
    connection, when given: maybe another worker)."""
    async with Client(target) as client:
        async with client.listen(resource_subscriptions=["notes://today"]) as sub:
            if writer is None:
                await client.call_tool("write_note", {"text": "written"})
            else:
                async with Client(writer) as other:
                    await other.call_tool("write_note", {"text": "written"})
            assert await next_event(sub) == ResourceUpdated(uri="notes://today")
        assert (await client.read_resource("notes://today")).contents[0].text == "written"


async def subscribe_and_write(target: Any) -> None:
    """A 2025-era session is told of the change its own tool call makes."""
    async with updates() as seen, Client(target, mode="legacy", message_handler=seen) as client:
        await client.subscribe_resource("notes://today")
        await client.call_tool("write_note", {"text": "written"})
        assert await seen.next() == "notes://today"


@LEGACY_ONLY
async def test_over_stdio_both_eras_hear_the_change_a_tool_makes():
    async with leak_check(deadline=10):
        await listen_and_write(stdio())
        await subscribe_and_write(stdio())


@pytest.fixture
def http_server(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    """``toolpalette serve --http ARGS`` (with several workers, the note is a watched
    file); yields its URL."""
    import test_serve_http_workers as workers

    if "--workers" in request.param:
        watched = tmp_path / "today.txt"
        watched.write_text("nothing yet")
        monkeypatch.setitem(workers.ENV, "NOTES_WATCH_FILE", str(watched))
    with workers.serving("--thinker", "notes_fixture:Notes", *request.param) as served:
        yield served.url


@LEGACY_ONLY
@pytest.mark.parametrize("http_server", [[]], indirect=True)
async def test_over_http_both_eras_hear_the_change_a_tool_makes(http_server: str):
    await listen_and_write(http_server)
    await subscribe_and_write(http_server)


@pytest.mark.parametrize("http_server", [["--workers", "2"]], indirect=True)
async def test_two_workers_tell_a_listener_of_a_change_every_worker_sees(http_server: str):
    from test_serve_http_workers import fresh_connections

    for _ in range(4):  # each write on a fresh connection: either worker may run it
        await listen_and_write(http_server, writer=fresh_connections(http_server))
