"""The registration and execution hooks, one test each (the palette hooks have theirs).

toolpalette_register_tools, toolpalette_register_skills,
toolpalette_register_mcp_servers and toolpalette_tool_error.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from toolpalette import Skill, Thinker, ToolHub, ToolSelector, hookimpl, tool


@tool(read_only=True)
def echo(text: str) -> str:
    """Echo the text."""
    return text


@tool(read_only=True)
def explode() -> str:
    """Always fails, with a secret in its message."""
    raise RuntimeError("sk-canary-4242")


def test_hook_toolpalette_register_tools() -> None:
    class Pack:
        @hookimpl
        def toolpalette_register_tools(self) -> list[Any]:
            return [echo]

    hub = ToolHub(autoload=False, config={})
    hub.add_plugin(Pack(), name="echoes")
    provider = hub.catalog().get_provider("echo")
    assert provider.origin is not None
    assert provider.origin.pack == "echoes"
    assert hub.problems() == []


def test_hook_toolpalette_register_skills() -> None:
    class Pack:
        @hookimpl
        def toolpalette_register_skills(self) -> Skill:
            return Skill("triage", "Sort incoming bugs.", bundle="io.example.ops", body="Steps.")

    hub = ToolHub(autoload=False, config={})
    hub.add_plugin(Pack(), name="ops")
    skill = hub.skills().skill("io.example.ops/triage")
    assert skill.body() == "Steps."
    assert skill.origin.pack == "ops"


@pytest.mark.parametrize("hook", ["toolpalette_register_tools", "toolpalette_register_skills"])
def test_a_register_hook_whose_result_raises_mid_way_keeps_what_came_before(hook: str) -> None:
    def produced() -> Any:
        if hook == "toolpalette_register_tools":
            yield echo
        else:
            yield Skill("triage", "Sort incoming bugs.", bundle="io.example.ops", body="Steps.")
        raise RuntimeError("sk-canary-4242")

    pack = type("Pack", (), {hook: hookimpl(lambda self: produced())})
    hub = ToolHub(autoload=False, config={})
    hub.add_plugin(pack(), name="ops")
    if hook == "toolpalette_register_tools":
        assert hub.catalog().has_tool("echo")
    else:
        assert hub.skills().skill("io.example.ops/triage").body() == "Steps."
    [problem] = [p for p in hub.problems() if p.kind == "hook"]
    assert (problem.pack, problem.kind) == ("ops", "hook")
    assert f"iterating what {hook} returned raised RuntimeError" in problem.reason


def test_hook_toolpalette_register_mcp_servers() -> None:
    class Good:
        @hookimpl
        def toolpalette_register_mcp_servers(self) -> list[dict[str, Any]]:
            return [
                {"name": "time", "command": ["python", "-m", "mcp_server_time"]},
                {"name": "docs", "url": "http://127.0.0.1:8123/mcp", "trusted": True},
                {"name": "broken", "command": "not a list"},
                42,
            ]

    class Clashing:
        @hookimpl
        def toolpalette_register_mcp_servers(self) -> dict[str, Any]:
            return {"name": "time", "url": "http://127.0.0.1:9/mcp"}

    hub = ToolHub(autoload=False, config={})
    hub.add_plugin(Good(), name="good")
    hub.add_plugin(Clashing(), name="clashing")
    servers = hub.mcp_servers()
    assert [(s.name, s.url, s.trusted, s.pack) for s in servers] == [
        ("docs", "http://127.0.0.1:8123/mcp", True, "good")
    ]
    kinds = sorted((p.kind, p.pack) for p in hub.problems())
    # Nothing listens on the "docs" URL: the catalog tried it, and says it cannot be used.
    assert kinds == [
        ("collision", "clashing"),
        ("garbage", "good"),
        ("garbage", "good"),
        ("server", "mcp:docs"),
    ]
    hub.close()


async def test_hook_toolpalette_tool_error() -> None:
    received: list[Any] = []
    delivered = threading.Event()

    class Reporter:
        @hookimpl
        def toolpalette_tool_error(self, report: Any) -> None:
            received.append(report)
            delivered.set()

    class Agent(Thinker):
        @classmethod
        def declare_compatible_tools(cls) -> ToolSelector:
            return ToolSelector().tool(explode)

    hub = ToolHub(autoload=False, config={})
    hub.add_plugin(Reporter(), name="reporter")
    agent = hub.bind(Agent)
    agent.begin_turn()
    result = await agent.call("explode", {})
    assert result.is_error
    assert result.status == 500
    assert "sk-canary-4242" not in result.text
    assert await asyncio.to_thread(delivered.wait, 10)
    (report,) = received
    assert report.tool == "explode"
    assert "sk-canary-4242" in str(report.error)  # the whole picture reaches the reporter


@pytest.mark.parametrize("bad", [None, 3, "text"])
def test_a_register_tools_hook_returning_garbage_is_a_problem(bad: object) -> None:
    class Pack:
        @hookimpl
        def toolpalette_register_tools(self) -> object:
            return bad

    hub = ToolHub(autoload=False, config={})
    hub.add_plugin(Pack(), name="garbage")
    assert len(hub.catalog()) == 0
    if bad is None:
        assert hub.problems() == []  # None means "no tools"
    else:
        assert [p.kind for p in hub.problems()] == ["garbage"]
