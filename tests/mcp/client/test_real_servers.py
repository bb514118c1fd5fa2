"""Tools of real MCP servers, written elsewhere, run through toolpalette's pipeline.

``mcp-server-time`` and ``mcp-server-git`` (PyPI) and
``@modelcontextprotocol/server-filesystem`` (npm): listing, a successful call, each
server's own error shape, read-only filtering, a collision with a pack, a server killed
and restarted, and no process left behind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest
from toolpalette import Thinker, ToolHub, ToolSelector, tool
from toolpalette.testing import plugin_of, wait_until

from .conftest import PROCESS_WAIT, alive, peer, server_pids

TIME = "TOOLPALETTE_MCP_TIME"
GIT = "TOOLPALETTE_MCP_GIT"
FILESYSTEM = "TOOLPALETTE_MCP_FILESYSTEM"


def time_server(**extra: Any) -> dict[str, Any]:
    return {"command": peer(TIME), "args": ["--local-timezone", "UTC"], **extra}


def call(hub: ToolHub, name: str, arguments: dict[str, Any]) -> Any:
    from toolpalette import Executor

    return Executor(hub.catalog()).execute_sync(name, arguments)


# -- mcp-server-time ---------------------------------------------------------------------


def test_time_lists_its_tools_with_the_server_as_origin(make_hub: Callable[..., ToolHub]):
    hub = make_hub(mcp_servers={"time": time_server()})
    tools = {p.name: p for p in hub.providers_for_server("time")}
    assert set(tools) == {"get_current_time", "convert_time"}
    current = tools["get_current_time"]
    assert current.origin is not None
    assert current.origin.server == "time"
    assert current.input_schema["type"] == "object"
    assert "timezone" in current.input_schema["properties"]
    # The server says readOnlyHint, but it is not trusted: its tools count as mutating.
    assert current.annotations["readOnlyHint"] is True
    assert current.read_only is False
    assert hub.problems() == []


def test_time_answers_a_call(make_hub: Callable[..., ToolHub]):
    hub = make_hub(mcp_servers={"time": time_server()})
    result = call(hub, "get_current_time", {"timezone": "Europe/Paris"})
    assert not result.is_error, result
    assert json.loads(result.text)["timezone"] == "Europe/Paris"


def test_time_error_is_the_servers_own_message(make_hub: Callable[..., ToolHub]):
    hub = make_hub(mcp_servers={"time": time_server()})
    result = call(hub, "get_current_time", {"timezone": "Nowhere/Atlantis"})
    assert (result.is_error, result.status, result.code) == (True, 422, "tool_error")
    assert "Nowhere/Atlantis" in result.text  # the tool's own words reach the model


def test_pipeline_refuses_input_the_schema_refuses(make_hub: Callable[..., ToolHub]):
    hub = make_hub(mcp_servers={"time": time_server()})
    result = call(hub, "get_current_time", {"timezone": 3})
    assert (result.status, result.code) == (400, "invalid_input")
    assert "timezone" in result.text


# -- mcp-server-git ------------------------------------------------------------------------


def test_git_lists_and_answers(make_hub: Callable[..., ToolHub], git_repo: Path):
    hub = make_hub(
        mcp_servers={"git": {"command": peer(GIT), "args": ["--repository", str(git_repo)]}}
    )
    names = {p.name for p in hub.providers_for_server("git")}
    assert {"git_status", "git_log", "git_commit"} <= names
    status = call(hub, "git_status", {"repo_path": str(git_repo)})
    assert not status.is_error, status
    assert "notes.txt" in status.text
    log = call(hub, "git_log", {"repo_path": str(git_repo)})
    assert "first" in log.text


def test_git_error_shape(make_hub: Callable[..., ToolHub], git_repo: Path, tmp_path: Path):
    hub = make_hub(
        mcp_servers={"git": {"command": peer(GIT), "args": ["--repository", str(git_repo)]}}
    )
    elsewhere = tmp_path / "not-a-repo"
    elsewhere.mkdir()
    result = call(hub, "git_status", {"repo_path": str(elsewhere)})
    assert (result.is_error, result.code) == (True, "tool_error")
    assert "not-a-repo" in result.text


# -- @modelcontextprotocol/server-filesystem -------------------------------------------------


def fs_server(root: Path, **extra: Any) -> dict[str, Any]:
    return {"command": peer(FILESYSTEM), "args": [str(root)], **extra}


def test_filesystem_lists_and_reads(make_hub: Callable[..., ToolHub], tmp_path: Path):
    (tmp_path / "hello.txt").write_text("hello from disk\n")
    hub = make_hub(mcp_servers={"fs": fs_server(tmp_path)})
    names = {p.name for p in hub.providers_for_server("fs")}
    assert {"read_text_file", "write_file", "list_directory"} <= names
    result = call(hub, "read_text_file", {"path": str(tmp_path / "hello.txt")})
    assert not result.is_error, result
    assert "hello from disk" in result.text


def test_filesystem_error_shape(make_hub: Callable[..., ToolHub], tmp_path: Path):
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (tmp_path / "secret.txt").write_text("no")
    hub = make_hub(mcp_servers={"fs": fs_server(allowed)})
    result = call(hub, "read_text_file", {"path": str(tmp_path / "secret.txt")})
    assert (result.is_error, result.code) == (True, "tool_error")
    assert "outside allowed directories" in result.text


def test_filesystem_writes_through_the_pipeline(make_hub: Callable[..., ToolHub], tmp_path: Path):
    hub = make_hub(mcp_servers={"fs": fs_server(tmp_path)})
    result = call(hub, "write_file", {"path": str(tmp_path / "new.txt"), "content": "made"})
    assert not result.is_error, result
    assert (tmp_path / "new.txt").read_text() == "made"


# -- trust and read-only thinkers ------------------------------------------------------------


class Reader(Thinker):
    read_only: ClassVar[bool] = True

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().mcp_server("git").mcp_server("time")


def test_read_only_thinker_gets_no_tool_of_an_untrusted_server(
    make_hub: Callable[..., ToolHub], git_repo: Path
):
    hub = make_hub(
        mcp_servers={
            "git": {"command": peer(GIT), "args": ["--repository", str(git_repo)]},
            "time": time_server(),
        }
    )
    assert hub.bind(Reader).begin_turn().tool_names == ()


def test_trusted_servers_read_only_hints_are_believed(
    make_hub: Callable[..., ToolHub], git_repo: Path
):
    args = ["--repository", str(git_repo)]
    hub = make_hub(
        mcp_servers={
            "git": {"command": peer(GIT), "args": args, "trusted": True},
            "time": time_server(trusted=True),
        }
    )
    offered = set(hub.bind(Reader).begin_turn().tool_names)
    assert {"git_status", "git_log", "get_current_time", "convert_time"} <= offered
    assert "git_commit" not in offered  # readOnlyHint false
    assert "git_add" not in offered


@pytest.mark.asyncio
async def test_read_only_thinker_call_of_a_mutating_remote_tool_is_refused(
    make_hub: Callable[..., ToolHub], tmp_path: Path
):
    class Writer(Thinker):
        read_only: ClassVar[bool] = True

        @classmethod
        def declare_compatible_tools(cls) -> ToolSelector:
            return ToolSelector().mcp_server("fs")

    hub = make_hub(mcp_servers={"fs": fs_server(tmp_path, trusted=True)})
    thinker = hub.bind(Writer)
    turn = thinker.begin_turn()
    assert "read_text_file" in turn.tool_names
    assert "write_file" not in turn.tool_names
    result = await thinker.call("write_file", {"path": str(tmp_path / "x"), "content": "x"})
    assert result.is_error
    assert result.status in (403, 404)
    assert not (tmp_path / "x").exists()


# -- collisions with packs -----------------------------------------------------------------------


@tool(read_only=True)
def get_current_time(timezone: str) -> str:
    """A pack's own clock."""
    return f"pack time in {timezone}"


def test_a_collision_with_a_pack_offers_neither(make_hub: Callable[..., ToolHub]):
    hub = make_hub(mcp_servers={"time": time_server()})
    hub.add_plugin(plugin_of(get_current_time), name="clock")
    names = set(hub.catalog().tool_names())
    assert "get_current_time" not in names
    assert "convert_time" in names
    collisions = [p for p in hub.problems() if p.kind == "collision"]
    assert len(collisions) == 1
    assert "MCP server 'time'" in collisions[0].reason
    assert "'clock'" in collisions[0].reason


def test_a_server_prefix_resolves_the_collision(make_hub: Callable[..., ToolHub]):
    hub = make_hub(mcp_servers={"time": time_server(prefix="time_")})
    hub.add_plugin(plugin_of(get_current_time), name="clock")
    catalog = hub.catalog()
    assert {"get_current_time", "time_get_current_time", "time_convert_time"} <= set(
        catalog.tool_names()
    )
    assert [p for p in hub.problems() if p.kind == "collision"] == []
    remote = call(hub, "time_get_current_time", {"timezone": "UTC"})
    assert json.loads(remote.text)["timezone"] == "UTC"
    local = call(hub, "get_current_time", {"timezone": "UTC"})
    assert local.text == "pack time in UTC"


def test_a_rename_per_server(make_hub: Callable[..., ToolHub]):
    hub = make_hub(mcp_servers={"time": time_server(rename={"convert_time": "tz_convert"})})
    assert {p.name for p in hub.providers_for_server("time")} == {
        "get_current_time",
        "tz_convert",
    }
    result = call(
        hub, "tz_convert", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "UTC"}
    )
    assert not result.is_error, result


# -- crashes, restarts and processes ---------------------------------------------------------------


def test_a_killed_server_is_restarted_on_the_next_call(make_hub: Callable[..., ToolHub]):
    hub = make_hub(mcp_servers={"time": time_server()})
    assert not call(hub, "get_current_time", {"timezone": "UTC"}).is_error
    (first,) = server_pids("mcp-server-time")
    os.kill(first, signal.SIGKILL)
    wait_until(lambda: not alive(first), timeout=PROCESS_WAIT)
    connection = hub.mcp().connection("time")
    wait_until(lambda: not connection.connected, timeout=PROCESS_WAIT)  # the pool noticed
    again = call(hub, "get_current_time", {"timezone": "UTC"})
    assert not again.is_error, again
    (second,) = server_pids("mcp-server-time")
    assert second != first
    assert hub.mcp().connection("time").starts == 2


def test_closing_the_hub_ends_every_server_process(
    make_hub: Callable[..., ToolHub], git_repo: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("TOOLPALETTE_NO_CACHE", "1")  # listed live: both servers start
    hub = make_hub(
        mcp_servers={
            "time": time_server(),
            "git": {"command": peer(GIT), "args": ["--repository", str(git_repo)]},
        }
    )
    hub.catalog()
    pids = server_pids("mcp-server-")
    assert len(pids) == 2
    hub.close()
    wait_until(lambda: not any(alive(pid) for pid in pids), timeout=PROCESS_WAIT)
    after = call(hub, "get_current_time", {"timezone": "UTC"})
    assert after.is_error  # the hub is closed: its servers' tools answer, they do not hang


def test_interpreter_exit_ends_every_server_process(tmp_path: Path):
    script = textwrap.dedent(
        f"""
        import os, sys
        from toolpalette import ToolHub, Executor
        hub = ToolHub(autoload=False, config={{}}, mcp_servers={{
            "time": {{"command": {peer(TIME)!r}, "args": ["--local-timezone", "UTC"]}},
        }})
        result = Executor(hub.catalog()).execute_sync("get_current_time", {{"timezone": "UTC"}})
        assert not result.is_error, result
        me = os.getpid()
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    stat = open(f"/proc/{{entry}}/stat").read()
                except OSError:
                    continue
                if int(stat.rsplit(")", 1)[1].split()[1]) == me:
                    print(entry)
        # no hub.close(): the interpreter's exit must stop the server
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    pids = [int(line) for line in done.stdout.split()]
    assert pids, "the server was not started"
    wait_until(lambda: not any(alive(pid) for pid in pids), timeout=PROCESS_WAIT)


def test_a_server_that_does_not_start_is_a_problem(
    make_hub: Callable[..., ToolHub], tmp_path: Path
):
    missing = tmp_path / "no-such-server"
    hub = make_hub(mcp_servers={"ghost": {"command": str(missing)}})
    assert hub.providers_for_server("ghost") == []
    (problem,) = hub.problems()
    assert (problem.kind, problem.pack) == ("server", "mcp:ghost")
    assert "not found" in problem.reason
