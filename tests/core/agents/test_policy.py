"""ToolPolicy: what a run is offered, and which calls and grants are allowed, denied or asked."""

from __future__ import annotations

import asyncio
from typing import Any

from toolpalette import (
    Decision,
    FunctionToolProvider,
    Thinker,
    ToolHub,
    ToolPolicy,
    ToolSelector,
    tool,
)
from toolpalette.testing import await_until


@tool(read_only=True)
def peek() -> str:
    """Look."""
    return "seen"


@tool
def push() -> str:
    """Change."""
    return "pushed"


PEEK, PUSH = FunctionToolProvider(peek), FunctionToolProvider(push)


def test_the_default_allows_everything() -> None:
    policy = ToolPolicy()
    for provider in (PEEK, PUSH):
        assert policy.offers(provider)
        assert policy.decide_call(None, provider, {}) is Decision.ALLOW
        assert policy.decide_grant(None, "tool", provider.name, provider) is Decision.ALLOW
    assert policy.decide_grant(None, "skill", "io.x/a", object()) is Decision.ALLOW


def test_deny_is_never_offered_called_or_granted() -> None:
    policy = ToolPolicy(deny=["push", "io.x/a"])
    assert not policy.offers(PUSH)
    assert policy.offers(PEEK)
    assert policy.decide_call(None, PUSH, {}) is Decision.DENY
    assert policy.decide_grant(None, "tool", "push", PUSH) is Decision.DENY
    assert policy.decide_grant(None, "skill", "io.x/a", object()) is Decision.DENY


def test_ask_names_need_approval_for_calls_and_grants() -> None:
    policy = ToolPolicy(ask=["peek"])
    assert policy.offers(PEEK)
    assert policy.decide_call(None, PEEK, {}) is Decision.ASK
    assert policy.decide_grant(None, "tool", "peek", PEEK) is Decision.ASK
    assert policy.decide_call(None, PUSH, {}) is Decision.ALLOW


def test_ask_for_mutating_asks_for_every_mutating_tool_only() -> None:
    policy = ToolPolicy(ask_for_mutating=True)
    assert policy.decide_call(None, PUSH, {}) is Decision.ASK
    assert policy.decide_call(None, PEEK, {}) is Decision.ALLOW
    assert policy.decide_grant(None, "tool", "push", PUSH) is Decision.ASK


def test_deny_wins_over_ask() -> None:
    policy = ToolPolicy(deny=["push"], ask=["push"], ask_for_mutating=True)
    assert policy.decide_call(None, PUSH, {}) is Decision.DENY


def test_decisions_have_the_pipelines_values() -> None:
    assert [d.value for d in Decision] == ["allow", "deny", "ask"]


def test_the_repr_shows_the_options() -> None:
    text = repr(ToolPolicy(deny=["b", "a"], ask=["c"], ask_for_mutating=True))
    assert text == "ToolPolicy(deny=['a', 'b'], ask=['c'], ask_for_mutating=True)"


class Both(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(peek).tool(push)


async def test_a_subclass_decides_per_input() -> None:
    class NoPush(ToolPolicy):
        def decide_call(self, thinker: Any, provider: Any, value: Any) -> Decision:
            assert isinstance(thinker, Both)
            return Decision.DENY if provider.name == "push" else Decision.ALLOW

    thinker = ToolHub(autoload=False, config={}).bind(Both, policy=NoPush())
    thinker.begin_turn()
    assert (await thinker.call("peek", {})).status == 200
    result = await thinker.call("push", {})
    assert (result.status, result.code) == (403, "denied")


async def test_ask_without_an_approver_pauses_until_resolved_not_refused() -> None:
    # A thinker always has a human in the loop: ask pauses with a pending approval.
    thinker = ToolHub(autoload=False, config={}).bind(Both, policy=ToolPolicy(ask=["peek"]))
    thinker.begin_turn()
    task = asyncio.ensure_future(thinker.call("peek", {}))
    [approval] = await await_until(thinker.pending_approvals)
    thinker.resolve_approval(approval.token, approve=True)
    assert (await asyncio.wait_for(task, 10)).status == 200


def test_a_denied_tool_is_not_offered() -> None:
    policy = ToolPolicy(deny=["push"])
    turn = ToolHub(autoload=False, config={}).bind(Both, policy=policy).begin_turn()
    assert turn.tool_names == ("peek",)


def test_a_meta_tool_call_is_not_asked_about_its_grants_are() -> None:
    from toolpalette import RequestToolsProvider

    policy = ToolPolicy(ask_for_mutating=True)
    meta = RequestToolsProvider([("push", "Change.")])
    assert not meta.read_only
    assert policy.decide_call(None, meta, {"names": ["push"]}) is Decision.ALLOW
    assert policy.decide_grant(None, "tool", "push", PUSH) is Decision.ASK
    assert ToolPolicy(deny=["request_tools"]).decide_call(None, meta, {}) is Decision.DENY
