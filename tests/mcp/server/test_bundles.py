"""Bundles over MCP: one ``search_tools`` call finds a pack deferred whole and loads its tools.

Through the SDK's own client in its default mode, the 2025-era session and without
sessions, and over HTTP from ``toolpalette serve --workers 2`` with the installed packs:
the bundle's tools come back in the answer, each callable at once.
"""

from __future__ import annotations

import types
from typing import Any

import pytest
import toolpalette.mcp
from mcp import Client
from toolpalette import Thinker, ToolHub, ToolSelector, hookimpl
from toolpalette.testing import FakeTool

MODES = [("auto", False), ("legacy", False), ("legacy", True)]
IDS = ["default", "session", "stateless"]


def pack(name: str, tools: list[FakeTool], described: str) -> types.ModuleType:
    module = types.ModuleType(name)

    @hookimpl
    def toolpalette_register_tools() -> list[Any]:
        return list(tools)

    module.toolpalette_register_tools = toolpalette_register_tools  # type: ignore[attr-defined]
    module.TOOLPALETTE_BUNDLE = described  # type: ignore[attr-defined]
    return module


class TwoBundles(Thinker):
    tool_search = "search"

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return (
            ToolSelector()
            .package("mcp_billing", deferred="bundle")
            .package("mcp_weather", deferred="bundle")
        )


@pytest.fixture
def hub() -> ToolHub:
    hub = ToolHub(autoload=False)
    billing = [
        FakeTool("create_invoice", description="Create an invoice.", result={"id": 7}),
        FakeTool("void_invoice", description="Void an invoice.", result={"void": True}),
    ]
    weather = [FakeTool("forecast", description="A city's forecast.", result={"sun": 1})]
    hub.add_plugin(pack("mcp_billing", billing, "Invoices: create and void them."))
    hub.add_plugin(pack("mcp_weather", weather, "Weather forecasts of cities."))
    return hub


@pytest.mark.parametrize(("mode", "stateless"), MODES, ids=IDS)
async def test_one_search_finds_a_bundle_and_its_tools_are_called(
    hub: ToolHub, mode: str, stateless: bool
):
    server = toolpalette.mcp.server(hub, TwoBundles, stateless=stateless)
    async with Client(server, mode=mode) as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        assert "create_invoice" not in listed
        assert "search_tools" in listed
        found = await client.call_tool("search_tools", {"query": "void an invoice", "limit": 1})
        assert not found.is_error, found.content[0].text
        answer = found.structured_content
        assert answer is not None
        [bundle] = answer["bundles"]
        assert bundle["name"] == "mcp_billing"
        assert bundle["description"] == "Invoices: create and void them."
        assert [t["name"] for t in answer["tools"]] == ["create_invoice", "void_invoice"]
        called = await client.call_tool("void_invoice", {})
    assert not called.is_error, called.content[0].text
    assert called.content[0].text == '{"void":true}'
    decided = [(r.name, r.decision) for r in hub.grants() if r.name == "void_invoice"]
    assert ("void_invoice", "granted") in decided


async def test_two_http_workers_find_an_installed_pack_and_call_its_tool(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
):
    pytest.importorskip("toolpalette_files", reason="the test serves the first-party packs")
    pytest.importorskip("toolpalette_sqlite", reason="the test serves the first-party packs")
    import test_serve_http_workers as workers

    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")
    monkeypatch.setitem(workers.ENV, "TOOLPALETTE_FILES_ROOT", str(tmp_path))
    with workers.serving("--thinker", "bundle_fixture:TwoPacks", "--workers", "2") as served:
        async with Client(workers.fresh_connections(served.url)) as client:
            found = await client.call_tool(
                "search_tools", {"query": "list the files of a directory", "limit": 1}
            )
            assert not found.is_error, found.content[0].text
            answer = found.structured_content
            assert answer is not None
            assert [b["name"] for b in answer["bundles"]] == ["toolpalette_files"]
            assert "list_directory" in [t["name"] for t in answer["tools"]]
            listed = await client.call_tool("list_directory", {"path": "."})
    assert not listed.is_error, listed.content[0].text
    assert "notes.txt" in listed.content[0].text
