"""What hooks, policies and approvers raise is contained, ``BaseException`` included.

``SystemExit``, ``GeneratorExit`` or a ``BaseException`` subclass of a pack's or a host's
own is a failure like any exception: a reconcile hook is skipped, a grant hook's failure
is logged, a policy or approver that raises refuses, and nothing is left granted or
pending by it. Only ``KeyboardInterrupt`` passes on, after the approval it interrupted
is withdrawn.
"""

from __future__ import annotations

from typing import Any

import pytest
from toolpalette import (
    Approval,
    Executor,
    Thinker,
    ToolContext,
    ToolHub,
    ToolPolicy,
    ToolRegistry,
    ToolSelector,
    hookimpl,
    tool,
)
from toolpalette.testing import LeakCheck, await_until

RAN: list[str] = []


class HostStop(BaseException):
    """A host's own ``BaseException`` (as some frameworks define to unwind)."""


RAISED = [SystemExit, GeneratorExit, HostStop]
IDS = ["SystemExit", "GeneratorExit", "a BaseException of its own"]


@tool
def push() -> str:
    """Change something."""
    RAN.append("push")
    return "pushed"


@tool(read_only=True)
def peek() -> str:
    """Look."""
    return "seen"


class Requester(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(peek).tool(push, deferred=True)


class Pusher(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(peek).tool(push)


@pytest.fixture(autouse=True)
def _clear_ran() -> None:
    RAN.clear()


def records(hub: ToolHub) -> list[tuple[str, str, str]]:
    return [(r.kind, r.name, r.decision) for r in hub.grants()]


def raising(error: BaseException) -> Any:
    def raise_it(*_args: Any, **_kwargs: Any) -> Any:
        raise error

    return raise_it


# -- hooks ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", RAISED, ids=IDS)
async def test_a_reconcile_hook_raising_a_base_exception_is_skipped(
    kind: type[BaseException], faults_leaks: LeakCheck
) -> None:
    error = kind()

    class Breaks:
        @hookimpl
        def toolpalette_reconcile(self) -> None:
            raise error

    hub = ToolHub(autoload=False, config={})
    hub.add_plugin(Breaks(), name="breaks")
    thinker = faults_leaks.watch(hub.bind(Pusher))
    assert thinker.begin_turn().tool_names == ("peek", "push")
    assert (await thinker.call("peek", {})).status == 200


def test_a_reconcile_hook_raising_keyboard_interrupt_ends_the_turn(
    faults_leaks: LeakCheck,
) -> None:
    class Interrupts:
        @hookimpl
        def toolpalette_reconcile(self) -> None:
            raise KeyboardInterrupt

    hub = ToolHub(autoload=False, config={})
    hub.add_plugin(Interrupts(), name="interrupts")
    with pytest.raises(KeyboardInterrupt):
        faults_leaks.watch(hub.bind(Pusher)).begin_turn()


@pytest.mark.parametrize("kind", RAISED, ids=IDS)
async def test_a_grant_hook_raising_a_base_exception_leaves_a_consistent_grant(
    kind: type[BaseException], faults_leaks: LeakCheck
) -> None:
    error = kind()

    class Breaks:
        @hookimpl
        def toolpalette_grant(self) -> None:
            raise error

    hub = ToolHub(autoload=False, config={})
    hub.add_plugin(Breaks(), name="breaks")
    thinker = faults_leaks.watch(hub.bind(Requester))
    thinker.begin_turn()
    result = await thinker.call("request_tools", {"names": ["push"]})
    # The regression: a 500 told the model it failed, yet the tool was granted and ran.
    assert result.status == 200, result.text
    assert '"granted":["push"]' in result.text
    assert records(hub) == [("tool", "push", "granted")]
    assert "push" in thinker.begin_turn().tool_names
    assert (await thinker.call("push", {})).status == 200


# -- policies and approvers of grants --------------------------------------------------


@pytest.mark.parametrize("kind", RAISED, ids=IDS)
async def test_an_approver_raising_during_request_tools_refuses_and_leaves_nothing_pending(
    kind: type[BaseException], faults_leaks: LeakCheck
) -> None:
    error = kind()
    hub = ToolHub(autoload=False, config={})
    thinker = hub.bind(Requester, policy=ToolPolicy(ask=["push"]), approver=raising(error))
    faults_leaks.watch(thinker).begin_turn()
    result = await thinker.call("request_tools", {"names": ["push"]})
    assert result.status == 200, result.text
    assert "the approver failed" in result.text
    assert thinker.pending_approvals() == []
    assert records(hub) == [("tool", "push", "refused")]
    assert "push" not in thinker.begin_turn().tool_names


@pytest.mark.parametrize("kind", RAISED, ids=IDS)
async def test_an_async_approver_raising_during_request_tools_withdraws_the_grant(
    kind: type[BaseException], faults_leaks: LeakCheck
) -> None:
    error = kind()

    async def approver(_approval: Approval) -> None:
        raise error

    hub = ToolHub(autoload=False, config={})
    thinker = hub.bind(Requester, policy=ToolPolicy(ask=["push"]), approver=approver)
    faults_leaks.watch(thinker).begin_turn()
    result = await thinker.call("request_tools", {"names": ["push"]})
    assert result.status == 200, result.text
    # The regression: the delivery task's SystemExit went through the event loop.
    await await_until(lambda: len(records(hub)) == 2)
    assert records(hub) == [("tool", "push", "pending"), ("tool", "push", "refused")]
    assert thinker.pending_approvals() == []
    assert "push" not in thinker.begin_turn().tool_names


class GrantPolicy(ToolPolicy):
    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error

    def decide_grant(self, thinker: Any, kind: str, name: str, item: Any) -> Any:
        raise self.error


@pytest.mark.parametrize("kind", RAISED, ids=IDS)
async def test_a_grant_policy_raising_a_base_exception_refuses(
    kind: type[BaseException], faults_leaks: LeakCheck
) -> None:
    error = kind()
    hub = ToolHub(autoload=False, config={})
    thinker = faults_leaks.watch(hub.bind(Requester, policy=GrantPolicy(error)))
    thinker.begin_turn()
    result = await thinker.call("request_tools", {"names": ["push"]})
    assert result.status == 200, result.text
    assert "the policy failed" in result.text
    assert records(hub) == [("tool", "push", "refused")]
    assert "push" not in thinker.begin_turn().tool_names


def test_an_approver_interrupted_by_keyboard_interrupt_leaves_nothing_pending(
    faults_leaks: LeakCheck,
) -> None:
    hub = ToolHub(autoload=False, config={})
    thinker = hub.bind(
        Requester, policy=ToolPolicy(ask=["push"]), approver=raising(KeyboardInterrupt())
    )
    faults_leaks.watch(thinker).begin_turn()
    with pytest.raises(KeyboardInterrupt):
        thinker.admit("tool", ["push"])
    assert thinker.pending_approvals() == []
    assert records(hub) == []  # neither pending nor granted: nothing was decided


# -- policies and approvers of calls ---------------------------------------------------


@pytest.mark.parametrize("kind", RAISED, ids=IDS)
async def test_an_async_call_approver_raising_a_base_exception_denies(
    kind: type[BaseException], faults_leaks: LeakCheck
) -> None:
    error = kind()

    async def approver(_approval: Approval) -> None:
        raise error

    hub = ToolHub(autoload=False, config={})
    thinker = hub.bind(Pusher, policy=ToolPolicy(ask=["push"]), approver=approver)
    faults_leaks.watch(thinker).begin_turn()
    # The regression: SystemExit in the delivery task went through the event loop.
    result = await thinker.call("push", {})
    assert (result.status, result.code) == (403, "denied")
    assert thinker.pending_approvals() == []
    assert RAN == []
    assert (await thinker.call("peek", {})).status == 200  # the loop lives on


class CallPolicy(ToolPolicy):
    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error

    def decide_call(self, thinker: Any, provider: Any, value: Any) -> Any:
        raise self.error


@pytest.mark.parametrize("kind", RAISED, ids=IDS)
async def test_a_call_policy_or_approver_raising_a_base_exception_denies(
    kind: type[BaseException], faults_leaks: LeakCheck
) -> None:
    error = kind()
    hub = ToolHub(autoload=False, config={})
    thinker = faults_leaks.watch(hub.bind(Pusher, policy=CallPolicy(error)))
    thinker.begin_turn()
    assert (await thinker.call("push", {})).code == "denied"
    run = ToolContext(run_id="base-exceptions")
    by_policy = Executor(ToolRegistry([push]), policy=raising(error), context=run)
    assert (await by_policy.execute("push", {})).code == "denied"
    by_approver = Executor(
        ToolRegistry([push]), policy=lambda p, v: "ask", approve=raising(error), context=run
    )
    assert (await by_approver.execute("push", {})).code == "denied"
    assert by_approver.execute_sync("push", {}).code == "denied"
    assert RAN == []
