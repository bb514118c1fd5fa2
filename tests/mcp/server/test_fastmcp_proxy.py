"""A palette proxied by FastMCP's `create_proxy`, through the host guide's adapter.

The guide's "Behind a FastMCP proxy" block runs as written; a FastMCP client of the
proxy, on either era, lists the palette's tools and resources, calls a tool through
the palette's pipeline (a refusal included), and reads a resource.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import content_fixture as fx
import pytest
import toolpalette.mcp
from toolpalette import ToolHub
from toolpalette.testing import leak_check

fastmcp = pytest.importorskip(
    "fastmcp", reason="FastMCP is not installed: the test-peers group brings it"
)

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "host-guide" / "serving.md"


def guide_adapter() -> dict[str, Any]:
    """The namespace of the guide's adapter block, run as written."""
    text = GUIDE.read_text(encoding="utf-8")
    section = text.split("## Behind a FastMCP proxy", 1)[1]
    (code,) = re.findall(r"^```python\n(.*?)^```", section.split("\n## ", 1)[0], re.M | re.S)
    namespace: dict[str, Any] = {"__name__": "guide_adapter"}
    exec(compile(code, str(GUIDE), "exec"), namespace)
    return namespace


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_fastmcp_proxy_of_a_palette_lists_calls_and_reads(mode: str):
    hub = ToolHub(autoload=False)
    hub.add_plugin(fx, name="docs")
    proxy = guide_adapter()["proxy_of"](toolpalette.mcp.server(hub, fx.ByPack), name="gateway")
    async with leak_check(deadline=10):
        async with fastmcp.Client(proxy, mode=mode) as client:
            tools = {t.name for t in await client.list_tools()}
            called = await client.call_tool("ping", {})
            refused = await client.call_tool("ping", {"extra": 1}, raise_on_error=False)
            guide = await client.read_resource("docs://guide")
            resources = {str(r.uri) for r in await client.list_resources()}
    assert tools == {"ping", "call_tool"}
    assert called.content[0].text == "pong"
    assert refused.is_error
    assert refused.content[0].text.startswith("Invalid input for tool 'ping'")  # the pipeline's
    assert guide[0].text == fx.guide()
    assert {"docs://guide", "docs://logo"} <= resources
