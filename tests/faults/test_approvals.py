"""Approvals: a raising, hanging or awaitable approver leaves nothing pending and no false grant.

Each test binds a thinker whose policy asks about ``push`` (calls and grants), watches
its pending approvals through the leak check, and reads the grant record the hub keeps.
"""

from __future__ import annotations

import asyncio
import gc
import warnings
from typing import Any

import pytest
from toolpalette import (
    AbortSignal,
    Approval,
    Thinker,
    ToolHub,
    ToolPolicy,
    ToolSelector,
    tool,
)
from toolpalette.testing import LeakCheck, await_until

RAN: list[str] = []


@tool
def push() -> str:
    """Change something."""
    RAN.append("push")
    return "pushed"


@tool(read_only=True)
def peek() -> str:
    """Look."""
    return "seen"


class Pusher(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(peek).tool(push)


class Requester(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(peek).tool(push, deferred=True)


@pytest.fixture(autouse=True)
def _clear_ran() -> None:
    RAN.clear()


@pytest.fixture
def hub() -> ToolHub:
    return ToolHub(autoload=False, config={})


def bind(hub: ToolHub, cls: type[Thinker], leaks: LeakCheck, approver: Any) -> Thinker:
    thinker = leaks.watch(hub.bind(cls, policy=ToolPolicy(ask=["push"]), approver=approver))
    thinker.begin_turn()
    return thinker


def records(hub: ToolHub) -> list[tuple[str, str, str]]:
    return [(r.kind, r.name, r.decision) for r in hub.grants()]


# -- paused calls ----------------------------------------------------------------------


async def test_a_raising_approver_refuses_the_call_and_leaves_nothing_to_resolve(
    hub: ToolHub, faults_leaks: LeakCheck
) -> None:
    asked: list[Approval] = []

    def broken(approval: Approval) -> None:
        asked.append(approval)
        raise RuntimeError("pager down")

    thinker = bind(hub, Pusher, faults_leaks, broken)
    result = await thinker.call("push", {})
    assert (result.status, result.code) == (403, "denied")
    assert thinker.pending_approvals() == []
    # The regression: resolving the stale token recorded a grant for a call that never ran.
    with pytest.raises(KeyError):
        thinker.resolve_approval(asked[0].token, approve=True)
    assert records(hub) == []
    assert RAN == []


async def test_an_async_approver_that_raises_refuses_the_call(
    hub: ToolHub, faults_leaks: LeakCheck
) -> None:
    async def broken(approval: Approval) -> None:
        await asyncio.sleep(0)
        raise RuntimeError("pager down")

    thinker = bind(hub, Pusher, faults_leaks, broken)
    result = await thinker.call("push", {})
    assert (result.status, result.code) == (403, "denied")
    assert thinker.pending_approvals() == []
    assert RAN == []


async def test_an_approver_returning_a_queue_put_is_awaited(
    hub: ToolHub, faults_leaks: LeakCheck
) -> None:
    queue: asyncio.Queue[Approval] = asyncio.Queue()
    thinker = bind(hub, Pusher, faults_leaks, queue.put)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a "coroutine was never awaited" fails the test
        call = asyncio.ensure_future(thinker.call("push", {}))
        approval = await asyncio.wait_for(queue.get(), 10)
        assert thinker.pending_approvals() == [approval]
        thinker.resolve_approval(approval.token, approve=True)
        result = await asyncio.wait_for(call, 10)
        gc.collect()
    assert result.status == 200, result.text
    assert RAN == ["push"]
    assert records(hub) == [("call", "push", "granted")]


async def test_a_hanging_approver_can_still_be_answered(
    hub: ToolHub, faults_leaks: LeakCheck
) -> None:
    full: asyncio.Queue[Approval] = asyncio.Queue(maxsize=1)
    full.put_nowait(Approval("x", "call", "peek", None, 0))  # every put now waits forever
    thinker = bind(hub, Pusher, faults_leaks, full.put)
    call = asyncio.ensure_future(thinker.call("push", {}))
    [approval] = await await_until(thinker.pending_approvals)
    thinker.resolve_approval(approval.token, approve=False)
    result = await asyncio.wait_for(call, 10)
    assert (result.status, result.code) == (403, "denied")
    assert thinker.pending_approvals() == []
    assert full.qsize() == 1  # the hung delivery was cancelled, not left running
    assert RAN == []


async def test_an_aborted_call_withdraws_its_approval(
    hub: ToolHub, faults_leaks: LeakCheck
) -> None:
    asked: list[Approval] = []
    thinker = bind(hub, Pusher, faults_leaks, asked.append)
    abort = AbortSignal()
    call = asyncio.ensure_future(thinker.call("push", {}, abort=abort))
    await await_until(thinker.pending_approvals)
    abort.abort("The user left.")
    result = await asyncio.wait_for(call, 10)
    assert (result.status, result.code, result.text) == (499, "aborted", "The user left.")
    assert thinker.pending_approvals() == []
    with pytest.raises(KeyError):
        thinker.resolve_approval(asked[0].token, approve=True)
    assert records(hub) == []
    assert RAN == []


async def test_a_cancelled_call_withdraws_its_approval(
    hub: ToolHub, faults_leaks: LeakCheck
) -> None:
    thinker = bind(hub, Pusher, faults_leaks, None)
    call = asyncio.ensure_future(thinker.call("push", {}))
    await await_until(thinker.pending_approvals)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert thinker.pending_approvals() == []


def test_a_call_whose_loop_closed_cannot_be_resolved_later(
    hub: ToolHub, faults_leaks: LeakCheck
) -> None:
    asked: list[Approval] = []
    thinker = bind(hub, Pusher, faults_leaks, asked.append)
    loop = asyncio.new_event_loop()
    call = loop.create_task(thinker.call("push", {}))
    loop.run_until_complete(await_until(lambda: asked))  # the call is paused now
    call.cancel()
    loop.run_until_complete(asyncio.gather(call, return_exceptions=True))
    loop.close()
    with pytest.raises(KeyError):
        thinker.resolve_approval(asked[0].token, approve=True)
    assert records(hub) == []


# -- pending grants --------------------------------------------------------------------


async def test_a_grant_approver_returning_an_awaitable_is_awaited_on_the_callers_loop(
    hub: ToolHub, faults_leaks: LeakCheck
) -> None:
    queue: asyncio.Queue[Approval] = asyncio.Queue()
    thinker = bind(hub, Requester, faults_leaks, queue.put)
    result = await thinker.call("request_tools", {"names": ["push"]})
    assert result.status == 200, result.text
    approval = await asyncio.wait_for(queue.get(), 10)
    assert (approval.kind, approval.name) == ("tool", "push")
    thinker.resolve_approval(approval.token, approve=True)
    assert "push" in thinker.begin_turn().tool_names
    assert records(hub) == [("tool", "push", "pending"), ("tool", "push", "granted")]


async def test_a_grant_whose_async_approver_fails_is_withdrawn_and_recorded_refused(
    hub: ToolHub, faults_leaks: LeakCheck
) -> None:
    async def broken(approval: Approval) -> None:
        await asyncio.sleep(0)
        raise RuntimeError("pager down")

    thinker = bind(hub, Requester, faults_leaks, broken)
    result = await thinker.call("request_tools", {"names": ["push"]})
    assert result.status == 200, result.text
    await await_until(lambda: len(records(hub)) == 2)
    assert records(hub) == [("tool", "push", "pending"), ("tool", "push", "refused")]
    assert thinker.pending_approvals() == []
    assert "push" not in thinker.begin_turn().tool_names
