"""The SDK client's warning on a deferred tool called by name, and the guide's way to silence it.

The host guide's serving page says the warning comes, why, and gives a filter; this runs
the SDK's client on both eras against a palette whose deferred tool is called by name.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import palette_fixture as fx
import pytest
import toolpalette.mcp
from mcp import Client
from toolpalette import ToolHub

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "host-guide" / "serving.md"
WARNING = "not listed by server, cannot validate"


def _guide_filter() -> logging.Filter:
    text = GUIDE.read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"^```python\n(.*?)^```", text, re.M | re.S) if "Filter" in b]
    namespace: dict[str, object] = {}
    # The class as the guide writes it; the test installs it itself, and takes it out.
    exec(block.replace('logging.getLogger("client").addFilter', "_ = "), namespace)
    found = namespace["DeferredToolsAreUnlisted"]
    assert isinstance(found, type)
    made = found()
    assert isinstance(made, logging.Filter)
    return made


@pytest.fixture
def sdk_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.WARNING, logger="client")
    return caplog


async def _call_by_name_and_through_call_tool(mode: str) -> tuple[str, str]:
    server = toolpalette.mcp.server(ToolHub(), fx.Searching)
    async with Client(server, mode=mode) as client:
        direct = await client.call_tool("secret_lookup", {"key": "a"})
        wrapped = await client.call_tool(
            "call_tool", {"name": "secret_lookup", "arguments": {"key": "b"}}
        )
    return direct.content[0].text, wrapped.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_deferred_call_by_name_warns_and_the_guides_filter_silences_it(
    sdk_log: pytest.LogCaptureFixture, mode: str
) -> None:
    assert await _call_by_name_and_through_call_tool(mode) == ("value of a", "value of b")
    warned = [r for r in sdk_log.records if WARNING in r.getMessage()]
    assert [r.getMessage().split()[1] for r in warned] == ["secret_lookup"]  # not call_tool
    sdk_log.clear()
    silencer = _guide_filter()
    logging.getLogger("client").addFilter(silencer)
    try:
        await _call_by_name_and_through_call_tool(mode)
    finally:
        logging.getLogger("client").removeFilter(silencer)
    assert [r for r in sdk_log.records if WARNING in r.getMessage()] == []
