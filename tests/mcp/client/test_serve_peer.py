"""toolpalette as its own peer: one hub serves a palette, another consumes it over MCP.

Every call goes through both pipelines: the consuming hub's (input, read-only binding,
timeout, output cap) and the serving hub's (the pack's tool, its errors). The serving
side is ``toolpalette.mcp.server`` in-process, and ``toolpalette serve`` over stdio.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

import pytest
from toolpalette import Executor, Thinker, ToolHub, ToolSelector
from toolpalette.testing import wait_until

from .conftest import PROCESS_WAIT, server_pids

pytest.importorskip("toolpalette_files", reason="the files pack is a first-party distribution")


def serving_hub(workspace: Path) -> ToolHub:
    return ToolHub(config={"packs": {"files": {"root": str(workspace)}}})


def test_a_served_palette_is_consumed_through_both_pipelines(
    make_hub: Callable[..., ToolHub], tmp_path: Path
):
    import toolpalette.mcp

    (tmp_path / "a.txt").write_text("served text")
    palette = toolpalette.mcp.server(serving_hub(tmp_path))
    hub = make_hub(mcp_servers={"palette": palette})
    names = {p.name for p in hub.providers_for_server("palette")}
    assert {"read_file", "write_file", "list_directory"} <= names
    ex = Executor(hub.catalog())
    read = ex.execute_sync("read_file", {"path": "a.txt"})
    assert not read.is_error, read
    assert "served text" in read.text
    # The serving pipeline's refusal is the tool's message: passed on as it is.
    missing = ex.execute_sync("read_file", {"path": "no-such.txt"})
    assert missing.is_error
    assert "no-such.txt" in missing.text
    # The consuming pipeline refuses bad input before anything is sent.
    bad = ex.execute_sync("read_file", {"path": 7})
    assert (bad.status, bad.code) == (400, "invalid_input")


class Reader(Thinker):
    read_only: ClassVar[bool] = True

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().mcp_server("palette")


def test_a_trusted_peers_read_only_tools_reach_a_read_only_thinker(
    make_hub: Callable[..., ToolHub], tmp_path: Path
):
    import toolpalette.mcp
    from toolpalette.mcp import MCPServerConfig

    palette = toolpalette.mcp.server(serving_hub(tmp_path))
    hub = make_hub(
        mcp_servers={"palette": MCPServerConfig("palette", server=palette, trusted=True)}
    )
    offered = set(hub.bind(Reader).begin_turn().tool_names)
    assert {"read_file", "list_directory"} <= offered
    assert "write_file" not in offered
    untrusted = make_hub(mcp_servers={"palette": toolpalette.mcp.server(serving_hub(tmp_path))})
    assert untrusted.bind(Reader).begin_turn().tool_names == ()


def test_toolpalette_serve_over_stdio_as_a_peer(make_hub: Callable[..., ToolHub], tmp_path: Path):
    command = shutil.which("toolpalette", path=str(Path(sys.executable).parent))
    if command is None:
        pytest.skip("the toolpalette command is not installed beside this interpreter")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    server = {
        "command": command,
        "args": ["serve", "--select", "toolpalette-files"],
        "env": {"TOOLPALETTE_FILES_ROOT": str(workspace)},
        "cwd": str(tmp_path),
    }
    hub = make_hub(mcp_servers={"peer": server})
    ex = Executor(hub.catalog())
    written = ex.execute_sync("write_file", {"path": "note.md", "content": "through both"})
    assert not written.is_error, written
    assert (workspace / "note.md").read_text() == "through both"
    listed = ex.execute_sync("list_directory", {"path": "."})
    assert "note.md" in json.dumps(listed.text)
    (pid,) = server_pids("serve")
    hub.close()
    wait_until(lambda: server_pids("serve") == [], timeout=PROCESS_WAIT)
    assert pid not in server_pids("serve")
