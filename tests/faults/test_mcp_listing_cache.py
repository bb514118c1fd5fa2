"""A listing kept on disk is a hint, never the truth: checked when read, confirmed live.

Before: a trusted server that changed a tool to destructive, its command and files
unchanged, had the tool offered to a new process's read-only thinker from the kept
listing, and the call ran. An edited cache file offered a tool named
``not a valid name!``, a description full of terminal escapes, or a read-only name
standing for a destructive remote tool. The file was named after the server alone, so
two projects with a server ``time`` took turns overwriting it; and a server's
``ttlMs: 0`` (the SDK's default) kept it for one second, so every process started it.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from toolpalette import Thinker, ToolHub, ToolSelector

pytest.importorskip("mcp", reason="the MCP client needs the mcp extra")

RAW = Path(__file__).parent / "servers" / "raw_server.py"
SDK = Path(__file__).parent / "servers" / "sdk_listing_server.py"
READ_ONLY = {"readOnlyHint": True, "destructiveHint": False}
DESTRUCTIVE = {"readOnlyHint": False, "destructiveHint": True}


def tool(name: str, **extra: Any) -> dict[str, Any]:
    fields = {"name": name, "description": f"The {name} tool.", "inputSchema": {"type": "object"}}
    return {**fields, **extra}


class Reader(Thinker):
    read_only: ClassVar[bool] = True

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().mcp_server("store")


class Server:
    """A stdio server whose tools are in a file it reads at each listing.

    The raw server (2025-era handshake: no ``ttlMs``), or with ``script=SDK`` the SDK's
    (2026-07-28 era, with the ``ttl_ms`` of the plan, 0 by default as the SDK's).
    """

    def __init__(self, folder: Path, name: str = "store", script: Path = RAW, **plan: Any) -> None:
        self.folder = folder
        self.script = script
        self.name = name
        self.tools_file = folder / f"{name}-tools.json"
        self.listings = folder / f"{name}-listings.log"
        self.calls = folder / f"{name}-calls.log"
        plan = {
            "tools_file": str(self.tools_file),
            "log": str(self.listings),
            "calls_log": str(self.calls),
            **plan,
        }
        text = json.dumps(plan)
        self.plan = folder / f"plan-{hashlib.sha256(text.encode()).hexdigest()[:16]}.json"
        self.plan.write_text(text)

    def lists(self, *tools: dict[str, Any]) -> None:
        self.tools_file.write_text(json.dumps(list(tools)))

    def table(self, **options: Any) -> dict[str, Any]:
        args = [str(self.script), str(self.plan)]
        return {"command": sys.executable, "args": args, "trusted": True, **options}

    def count(self, log: Path) -> int:
        return len(log.read_text().splitlines()) if log.exists() else 0

    def called(self) -> list[str]:
        return self.calls.read_text().splitlines() if self.calls.exists() else []


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("TOOLPALETTE_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def hubs(cache: Path) -> Iterator[Callable[..., ToolHub]]:
    """New hubs, as new processes would make them (one cache folder); closed after."""
    made: list[ToolHub] = []

    def make(**servers: dict[str, Any]) -> ToolHub:
        hub = ToolHub(autoload=False, config={}, mcp_servers=servers)
        made.append(hub)
        return hub

    yield make
    for hub in made:
        hub.close()


def stored_files(cache: Path) -> list[Path]:
    return sorted(cache.glob("mcp-*.json"))


def edit_stored(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Change a stored listing's answer in place (its key stays: the file still matches)."""
    data = json.loads(path.read_text())
    change(data["answer"])
    path.write_text(json.dumps(data))


# -- a kept listing is confirmed live before a tool of it runs ---------------------------


async def test_a_tool_now_destructive_is_not_run_from_the_kept_listing(
    tmp_path: Path, hubs: Callable[..., ToolHub]
) -> None:
    server = Server(tmp_path)
    server.lists(tool("drop", annotations=READ_ONLY), tool("peek", annotations=READ_ONLY))
    first = hubs(store=server.table())
    assert {p.name for p in first.providers_for_server("store")} == {"drop", "peek"}
    first.close()
    listed = server.count(server.listings)
    # The server now says drop is destructive; its command and files are as they were.
    server.lists(tool("drop", annotations=DESTRUCTIVE), tool("peek", annotations=READ_ONLY))
    later = hubs(store=server.table())
    thinker = later.bind(Reader)
    turn = await thinker.abegin_turn()
    assert set(turn.tool_names) == {"drop", "peek"}  # offered from the kept listing
    assert server.count(server.listings) == listed  # nothing started yet
    refused = await thinker.call("drop", {})
    assert (refused.status, refused.code) == (409, "tool_changed"), refused
    assert "drop" not in server.called()  # the server never got the call
    (problem,) = [p for p in later.problems() if p.item == "drop"]
    assert problem.kind == "invalid-tool"
    assert "the server now lists it with another annotations" in problem.reason
    # The live listing replaces the kept one: drop is no longer offered to the reader.
    await later.settle_servers(Reader)
    assert set((await thinker.abegin_turn()).tool_names) == {"peek"}
    assert (await thinker.call("peek", {})).text == "ok"
    assert server.called() == ["peek"]


async def test_a_tool_the_live_listing_confirms_runs_once_confirmed(
    tmp_path: Path, hubs: Callable[..., ToolHub]
) -> None:
    server = Server(tmp_path)
    server.lists(tool("peek", annotations=READ_ONLY))
    hubs(store=server.table()).providers_for_server("store")
    thinker = hubs(store=server.table()).bind(Reader)
    assert (await thinker.abegin_turn()).tool_names == ("peek",)
    assert (await thinker.call("peek", {})).text == "ok"
    assert (await thinker.call("peek", {})).text == "ok"
    assert server.called() == ["peek", "peek"]


async def test_a_tool_the_server_no_longer_lists_is_refused(
    tmp_path: Path, hubs: Callable[..., ToolHub]
) -> None:
    server = Server(tmp_path)
    server.lists(tool("gone", annotations=READ_ONLY))
    hubs(store=server.table()).providers_for_server("store")
    server.lists()
    thinker = hubs(store=server.table()).bind(Reader)
    assert (await thinker.abegin_turn()).tool_names == ("gone",)
    refused = await thinker.call("gone", {})
    assert (refused.status, refused.code) == (409, "tool_changed"), refused
    assert server.called() == []


# -- a kept listing passes the checks a live one does -------------------------------------


def test_an_edited_cache_file_gets_the_checks_of_a_live_listing(
    tmp_path: Path, hubs: Callable[..., ToolHub], cache: Path
) -> None:
    server = Server(tmp_path)
    server.lists(tool("peek", annotations=READ_ONLY), tool("other", annotations=READ_ONLY))
    hubs(store=server.table()).providers_for_server("store")
    (path,) = stored_files(cache)
    listed = server.count(server.listings)

    def inject(answer: dict[str, Any]) -> None:
        peek, other = answer["tools"]
        bad_name = {**other, "name": "not a valid name!", "remote_name": "not a valid name!"}
        loud = {**other, "description": "\x1b[2J\x1b[31m" + "x" * 20_000}
        answer["tools"] = [peek, bad_name, loud]

    edit_stored(path, inject)
    hub = hubs(store=server.table())
    assert [p.name for p in hub.providers_for_server("store")] == ["peek"]
    assert server.count(server.listings) == listed  # read from the disk, checked
    reasons = {p.item: p.reason for p in hub.problems()}
    assert "is not a valid tool name" in reasons["not a valid name!"]
    assert "its description is longer than 8192 characters" in reasons["other"]


def test_a_kept_name_standing_for_another_remote_tool_is_not_believed(
    tmp_path: Path, hubs: Callable[..., ToolHub], cache: Path
) -> None:
    server = Server(tmp_path)
    server.lists(tool("peek", annotations=READ_ONLY), tool("wipe", annotations=DESTRUCTIVE))
    hubs(store=server.table()).providers_for_server("store")
    (path,) = stored_files(cache)
    listed = server.count(server.listings)

    def remap(answer: dict[str, Any]) -> None:
        peek, wipe = answer["tools"]
        answer["tools"] = [peek, {**peek, "name": "look", "remote_name": wipe["remote_name"]}]

    edit_stored(path, remap)
    hub = hubs(store=server.table())
    offered = {p.name: p for p in hub.providers_for_server("store")}
    assert set(offered) == {"peek", "wipe"}  # the file was doubted: listed live instead
    assert server.count(server.listings) == listed + 1
    assert not offered["wipe"].read_only


async def test_a_kept_read_only_hint_for_a_destructive_tool_does_not_run_it(
    tmp_path: Path, hubs: Callable[..., ToolHub], cache: Path
) -> None:
    server = Server(tmp_path)
    server.lists(tool("wipe", annotations=DESTRUCTIVE))
    hubs(store=server.table()).providers_for_server("store")
    (path,) = stored_files(cache)

    def soften(answer: dict[str, Any]) -> None:
        answer["tools"][0]["annotations"] = dict(READ_ONLY)

    edit_stored(path, soften)
    thinker = hubs(store=server.table()).bind(Reader)
    assert (await thinker.abegin_turn()).tool_names == ("wipe",)
    refused = await thinker.call("wipe", {})
    assert (refused.status, refused.code) == (409, "tool_changed"), refused
    assert server.called() == []


def test_a_stored_problem_with_terminal_escapes_is_not_believed(
    tmp_path: Path, hubs: Callable[..., ToolHub], cache: Path
) -> None:
    server = Server(tmp_path)
    server.lists(tool("peek"))
    hubs(store=server.table()).providers_for_server("store")
    (path,) = stored_files(cache)
    listed = server.count(server.listings)
    forged = {"kind": "server", "reason": "\x1b]0;pwned\x07", "pack": "mcp:store"}
    edit_stored(path, lambda answer: answer["problems"].append(forged))
    hub = hubs(store=server.table())
    assert [p.name for p in hub.providers_for_server("store")] == ["peek"]
    assert server.count(server.listings) == listed + 1  # listed live
    assert all("\x1b" not in p.reason for p in hub.problems())


# -- where a listing is kept, and for how long --------------------------------------------


def test_two_servers_of_one_name_keep_a_file_each(
    tmp_path: Path, hubs: Callable[..., ToolHub], cache: Path
) -> None:
    one = tmp_path / "one"
    two = tmp_path / "two"
    one.mkdir(), two.mkdir()
    first, second = Server(one, "time"), Server(two, "time")
    first.lists(tool("now"))
    second.lists(tool("then"))
    assert [p.name for p in hubs(time=first.table()).providers_for_server("time")] == ["now"]
    assert [p.name for p in hubs(time=second.table()).providers_for_server("time")] == ["then"]
    assert len(stored_files(cache)) == 2
    assert all(path.name.startswith("mcp-time-") for path in stored_files(cache))
    listed = first.count(first.listings)
    again = hubs(time=first.table())
    assert [p.name for p in again.providers_for_server("time")] == ["now"]
    assert first.count(first.listings) == listed  # from its own file: not started


@pytest.mark.parametrize("plan", [{}, {"script": SDK}], ids=["no hint", "ttlMs 0"])
def test_a_listing_without_a_useful_hint_is_kept_for_ten_minutes(
    tmp_path: Path, hubs: Callable[..., ToolHub], cache: Path, plan: dict[str, Any]
) -> None:
    server = Server(tmp_path, **plan)
    server.lists(tool("peek"))
    hubs(store=server.table()).providers_for_server("store")
    (path,) = stored_files(cache)
    listed = server.count(server.listings)
    edit_stored(path, lambda answer: answer.update(stored=time.time() - 300))
    kept = hubs(store=server.table())
    assert [p.name for p in kept.providers_for_server("store")] == ["peek"]
    assert server.count(server.listings) == listed  # five minutes old: still served
    kept.close()
    edit_stored(path, lambda answer: answer.update(stored=time.time() - 660))
    stale = hubs(store=server.table())
    assert [p.name for p in stale.providers_for_server("store")] == ["peek"]
    assert server.count(server.listings) == listed + 1  # eleven minutes old: listed live


def test_a_listing_with_a_hint_is_kept_for_it(
    tmp_path: Path, hubs: Callable[..., ToolHub], cache: Path
) -> None:
    server = Server(tmp_path, script=SDK, ttl_ms=120_000)
    server.lists(tool("peek"))
    hubs(store=server.table()).providers_for_server("store")
    (path,) = stored_files(cache)
    listed = server.count(server.listings)
    edit_stored(path, lambda answer: answer.update(stored=time.time() - 180))
    assert [p.name for p in hubs(store=server.table()).providers_for_server("store")] == ["peek"]
    assert server.count(server.listings) == listed + 1  # past its two minutes
