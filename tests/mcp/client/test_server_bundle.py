"""An MCP server deferred whole: its tools are one catalog entry, found and granted as one."""

from __future__ import annotations

import pytest
import toolpalette.mcp
from toolpalette import Thinker, ToolHub, ToolSelector
from toolpalette.testing import FakeTool, plugin_of

pytest.importorskip("mcp", reason="the MCP tests need the mcp extra")


class Remote(Thinker):
    tool_search = "search"

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().mcp_server("billing", deferred="bundle").tool(LOCAL, deferred=True)


LOCAL = FakeTool("local_note", description="Write a note about a meeting.", result={"ok": 1})


def served_hub() -> ToolHub:
    hub = ToolHub(autoload=False, config={})
    tools = [
        FakeTool("create_invoice", description="Create an invoice.", result={"id": 7}),
        FakeTool("void_invoice", description="Void an invoice.", result={"void": True}),
    ]
    hub.add_plugin(plugin_of(*tools), name="billing")
    return hub


async def test_a_servers_tools_are_one_bundle():
    hub = served_hub()

    class Billing(Thinker):
        @classmethod
        def declare_compatible_tools(cls) -> ToolSelector:
            return ToolSelector().tool("create_invoice").tool("void_invoice")

    server = toolpalette.mcp.server(hub, Billing)
    with ToolHub(autoload=False, config={}, mcp_servers={"billing": server}) as remote_hub:
        thinker = remote_hub.bind(Remote)
        assert thinker.begin_turn().tool_names == ("search_tools",)
        found = thinker.search("tool", "void an invoice", 5)
        [bundle] = found["bundles"]
        assert bundle["name"] == "billing"
        # No description declared: the bundle says which tools the server lists (a
        # toolpalette server lists its call_tool too).
        assert bundle["description"].startswith("Tools of billing: create_invoice, void_invoice")
        names = [t["name"] for t in found["tools"]]
        assert names[:2] == ["create_invoice", "void_invoice"]
        assert "local_note" not in names
        result = await thinker.call("void_invoice", {})
    assert not result.is_error, result.text
    assert result.text == '{"void":true}'
