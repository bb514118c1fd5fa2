"""What an MCP server sends is bounded: its stderr, its listing, its answers, its texts.

Before: a chatty server's stderr filled an unlinked temporary file without limit; a
10 MB input schema made ``bind`` take a hundred seconds; a ``nextCursor`` that never
ends was cut silently at a thousand pages; a 20 MB answer was read in time quadratic in
its length before it was refused (and any answer never ending its line was waited for
until the timeout); a title of 200,000 characters full of terminal escapes reached
``toolpalette show`` and ``serve``'s clients; DEL and the C1 controls passed the
control character check. Each bound is now named where it is passed.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from toolpalette import Executor, ToolHub
from toolpalette.testing import run_cli

pytest.importorskip("mcp", reason="the MCP client needs the mcp extra")

RAW = Path(__file__).parent / "servers" / "raw_server.py"
MIB = 1024 * 1024


def raw(plan: dict[str, Any], folder: Path, **options: Any) -> dict[str, Any]:
    """The configuration of a raw server following ``plan`` (written into ``folder``)."""
    text = json.dumps(plan)
    path = folder / f"plan-{hashlib.sha256(text.encode()).hexdigest()[:16]}.json"
    path.write_text(text)
    return {"command": sys.executable, "args": [str(RAW), str(path)], **options}


def tool(name: str, **extra: Any) -> dict[str, Any]:
    fields = {"name": name, "description": f"The {name} tool.", "inputSchema": {"type": "object"}}
    return {**fields, **extra}


@pytest.fixture
def make_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Hubs of raw servers: ``make_hub(name=(plan, options), ...)``; closed after the test."""
    monkeypatch.setenv("TOOLPALETTE_CACHE_DIR", str(tmp_path / "cache"))
    hubs: list[ToolHub] = []

    def make(**plans: Any) -> ToolHub:
        servers = {}
        for name, plan in plans.items():
            plan, options = plan if isinstance(plan, tuple) else (plan, {})
            servers[name] = raw(plan, tmp_path, **options)
        hub = ToolHub(autoload=False, config={}, mcp_servers=servers)
        hubs.append(hub)
        return hub

    yield make
    for hub in hubs:
        hub.close()


def deleted_files_over(size: int) -> list[str]:
    """This process's open descriptors on deleted files larger than ``size`` bytes."""
    found = []
    for entry in Path("/proc/self/fd").iterdir():
        try:
            target = os.readlink(entry)
            if target.endswith("(deleted)") and os.stat(entry).st_size > size:
                found.append(target)
        except OSError:
            continue
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_chatty_servers_stderr_is_kept_as_a_bounded_tail(make_hub: Any) -> None:
    plan = {"stderr": 20 * MIB, "last_words": "the last words", "exit": 1}
    hub = make_hub(chatty=plan)
    assert hub.providers_for_server("chatty") == []
    (problem,) = hub.problems()
    assert problem.reason.endswith("; its last output: the last words"), problem.reason
    assert deleted_files_over(MIB) == []  # no file holds what it wrote


def test_a_tool_over_the_bound_on_its_bytes_is_refused_and_the_others_stay(
    make_hub: Any,
) -> None:
    wide = {f"p{i}": {"type": "string", "description": "x" * 40} for i in range(8000)}
    wide_tool = tool("wide", inputSchema={"type": "object", "properties": wide})
    hub = make_hub(big={"tools": [wide_tool, tool("fine")]})
    assert [p.name for p in hub.providers_for_server("big")] == ["fine"]
    (problem,) = hub.problems()
    assert (problem.kind, problem.item) == ("invalid-tool", "wide")
    assert "more than 262144 bytes (the bound on one tool of an MCP server)" in problem.reason


def test_a_page_over_the_bound_on_a_message_is_refused_at_once(make_hub: Any) -> None:
    huge = {"type": "object", "description": "x" * (6 * MIB)}
    hub = make_hub(huge={"tools": [tool("huge", inputSchema=huge), tool("fine")]})
    assert hub.providers_for_server("huge") == []
    (problem,) = hub.problems()
    assert problem.kind == "server"
    assert "over the 4194304-byte bound on a message" in problem.reason


def test_a_listing_that_never_ends_is_cut_at_the_bound_and_says_so(make_hub: Any) -> None:
    hub = make_hub(endless={"endless": True})
    names = [p.name for p in hub.providers_for_server("endless")]
    assert names == [f"t{i}" for i in range(100)]
    (problem,) = hub.problems()
    assert problem.kind == "server"
    assert "more than 100 pages (the bound on one server's listing)" in problem.reason


def test_more_tools_than_the_bound_are_cut_and_say_so(make_hub: Any) -> None:
    hub = make_hub(many={"tools": [tool(f"t{i}") for i in range(1500)]})
    assert len(hub.providers_for_server("many")) == 1000
    (problem,) = hub.problems()
    assert "more than 1000 tools (the bound on one server's tools)" in problem.reason


async def test_an_answer_over_the_cap_is_refused_before_its_line_ends(
    make_hub: Any, tmp_path: Path
) -> None:
    sent = tmp_path / "sent"
    calls = {
        "endless_line": {"do": "partial", "bytes": 6 * MIB, "marker": str(sent)},
        "long_line": {"do": "big", "bytes": 6 * MIB},
        "ping": {"do": "text", "text": "pong"},
    }
    tools = [tool(name) for name in calls]
    hub = make_hub(
        partial=({"tools": tools, "calls": calls}, {"timeout": 600}),
        whole=({"tools": tools, "calls": calls}, {"timeout": 600, "prefix": "w_"}),
    )
    registry = await asyncio.to_thread(hub.catalog)
    executor = Executor(registry, output_cap=64 * MIB, timeout=600)
    # The server never ends its line: the refusal comes once the cap is passed.
    cut = await executor.execute("endless_line", {})
    assert (cut.status, cut.code) == (413, "output_too_large"), cut
    assert "4194304 bytes" in cut.text
    # A whole line over the cap is refused and skipped: the connection goes on.
    long = await executor.execute("w_long_line", {})
    assert (long.status, long.code) == (413, "output_too_large"), long
    after = await executor.execute("w_ping", {})
    assert after.text == "pong", after


TITLED = [
    tool("loud", title="\x1b[2J\x1b[31m" * 25_000),
    tool("c1", title="Fine\x9b31m"),
    tool("del", description="Deletes\x7f."),
    tool("c1_text", description="Next line\x85here."),
    tool("escaped", annotations={"title": "\x1b]0;pwned\x07"}),
    tool("fine", title="A fine title"),
]


def test_titles_and_descriptions_are_checked_for_length_and_controls(
    make_hub: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    hub = make_hub(texts={"tools": TITLED})
    assert [p.name for p in hub.providers_for_server("texts")] == ["fine"]
    refused = {p.item: p.reason for p in hub.problems()}
    assert sorted(refused) == ["c1", "c1_text", "del", "escaped", "loud"]
    assert "its title is longer than 256 characters" in refused["loud"]
    assert "its title holds control characters" in refused["c1"]
    assert "its description holds control characters" in refused["del"]
    assert "its description holds control characters" in refused["c1_text"]
    assert "its annotations' title holds control characters" in refused["escaped"]
    assert run_cli(["show", "loud"], hub=hub) == 1  # not offered: nothing of it printed
    out = capsys.readouterr()
    assert "\x1b" not in out.out + out.err


async def test_the_cap_on_a_stdio_message_is_set_per_server(make_hub: Any) -> None:
    calls = {"mid": {"do": "big", "bytes": 2 * MIB}, "ping": {"do": "text", "text": "pong"}}
    tools = [tool(name) for name in calls]
    hub = make_hub(narrow=({"tools": tools, "calls": calls}, {"max_message": MIB}))
    registry = await asyncio.to_thread(hub.catalog)
    executor = Executor(registry, output_cap=64 * MIB)
    cut = await executor.execute("mid", {})
    assert (cut.status, cut.code) == (413, "output_too_large"), cut
    assert f"{MIB} bytes" in cut.text
    assert (await executor.execute("ping", {})).text == "pong"
