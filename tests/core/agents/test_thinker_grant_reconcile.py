"""A grant between turns is added on its own, and the palette is what a whole reconcile makes.

After a grant, ``begin_turn`` adds the granted tools and rebuilds ``request_tools``
instead of reconciling the whole palette. Each test runs two thinkers through the same
grants; the second one's palette is touched directly before each turn (a registration
undone at once), which forces the whole reconcile. Their turns must offer the same
names, in the same order, with the same schemas.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from toolpalette import SurfaceDiff, Thinker, ToolHub, ToolRegistry, ToolSelector, hookimpl, tool


@tool(read_only=True)
def weather(city: str) -> str:
    """Today's weather for a city."""
    return city


@tool
def send_mail(to: str) -> str:
    """Send an e-mail to one address."""
    return to


@tool(read_only=True)
def read_page(url: str) -> str:
    """Fetch a web page."""
    return url


@tool(read_only=True)
def search(query: str) -> str:
    """Search the web."""
    return query


@tool
def delete_page(url: str) -> str:
    """Delete a web page."""
    return url


@tool(read_only=True)
def scratch(text: str) -> str:
    """A tool nobody declares, registered and removed to force a whole reconcile."""
    return text


@tool(read_only=True)
def from_hook(text: str) -> str:
    """A tool a reconcile hook adds at every turn."""
    return text


class Assistant(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return (
            ToolSelector()
            .tool(weather)
            .tool(send_mail)
            .tool(read_page, deferred=True)
            .tool(search, deferred=True)
            .tool(delete_page, deferred=True)
        )


class Auditor(Assistant):
    read_only = True


class AddsATool:
    """A reconcile hook that registers one more tool at every turn."""

    @hookimpl
    def toolpalette_reconcile(self, registry: ToolRegistry) -> None:
        registry.register(from_hook)


def whole_reconcile(thinker: Thinker) -> None:
    """Touch the palette directly, so the next turn reconciles all of it."""
    thinker.palette.register(scratch)
    thinker.palette.unregister(scratch)


def offer(turn: Any) -> tuple[tuple[str, ...], bytes]:
    return turn.tool_names, turn.schemas_json("openai_chat")


@pytest.mark.parametrize("cls", [Assistant, Auditor])
@pytest.mark.parametrize("hooked", [False, True], ids=["no hook", "a hook adds a tool"])
def test_a_grant_offers_what_the_whole_reconcile_offers(cls: type[Thinker], hooked: bool) -> None:
    hub = ToolHub(autoload=False, config={})
    if hooked:
        hub.add_plugin(AddsATool(), name="adds")
    granted, whole = hub.bind(cls), hub.bind(cls)
    assert offer(granted.begin_turn()) == offer(whole.begin_turn())
    for names in (["read_page"], ["search", "delete_page"], ["nothing_like_it"]):
        assert granted.admit("tool", names) == whole.admit("tool", names)
        whole_reconcile(whole)
        turn = granted.begin_turn()
        assert offer(turn) == offer(whole.begin_turn())
        assert ("from_hook" in turn.tool_names) is hooked
        assert "send_mail" not in turn.tool_names or cls is Assistant
    assert set(turn.tool_names) >= {"read_page", "search"}
    assert ("delete_page" in turn.tool_names) is (cls is Assistant)
    # Nothing left to request: every deferred tool is granted, or mutating for the Auditor.
    assert "request_tools" not in turn.tool_names


def test_a_grant_changes_the_granted_tool_and_request_tools_only() -> None:
    hub = ToolHub(autoload=False, config={})
    assistant = hub.bind(Assistant)
    first = assistant.begin_turn()
    diffs: list[SurfaceDiff] = []
    assistant.palette.on_surface_changed(diffs.append)
    assistant.admit("tool", ["search"])
    turn = assistant.begin_turn()
    assert [(d.added, d.removed, d.changed) for d in diffs] == [
        (("search",), (), ()),
        ((), (), ("request_tools",)),
    ]
    assert turn.tool_names == (*first.tool_names, "search")
    catalog = next(
        s for s in turn.schemas("openai_chat") if s["function"]["name"] == "request_tools"
    )
    assert "search" not in str(catalog["function"]["parameters"])
    assert "read_page" in str(catalog["function"]["parameters"])


def test_granting_the_last_deferred_tool_withdraws_request_tools() -> None:
    hub = ToolHub(autoload=False, config={})
    granted, whole = hub.bind(Assistant), hub.bind(Assistant)
    granted.begin_turn()
    whole.begin_turn()
    names = ["read_page", "search", "delete_page"]
    assert granted.admit("tool", names)["granted"] == names
    whole.admit("tool", names)
    whole_reconcile(whole)
    turn = granted.begin_turn()
    assert offer(turn) == offer(whole.begin_turn())
    assert "request_tools" not in turn.tool_names
    assert turn.tool_names[-3:] == tuple(names)


@pytest.mark.parametrize("fmt", ["openai_chat", "anthropic", "mcp"])
def test_the_serialized_schemas_after_grants_are_the_canonical_json(fmt: str) -> None:
    hub = ToolHub(autoload=False, config={})
    assistant = hub.bind(Assistant)
    turns = [assistant.begin_turn()]
    for names in (["read_page"], ["search"], ["delete_page"]):
        turns[-1].schemas_json(fmt)  # kept for the next turn's serialization
        assistant.admit("tool", names)
        turns.append(assistant.begin_turn())
    for turn in turns:
        canonical = json.dumps(turn.schemas(fmt), sort_keys=True, separators=(",", ":"))
        assert turn.schemas_json(fmt) == canonical.encode("utf-8")
    assert b'"name":"delete_page"' in turns[-1].schemas_json(fmt)
    assert b'"name":"delete_page"' not in turns[-2].schemas_json(fmt)
