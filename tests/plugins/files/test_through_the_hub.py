"""The pack behind a real hub and executor: the host's configuration reaches the tools."""

from __future__ import annotations

from toolpalette import Executor, ToolContext, ToolHub
from toolpalette_files import hooks
from toolpalette_files.tools import TOOLS


def _executor(root):
    hub = ToolHub(autoload=False, config={"packs": {"files": {"root": str(root)}}})
    hub.add_plugin(hooks, name="files")
    catalog = hub.catalog()
    return Executor(catalog, config_for=lambda p: hub.pack_config(p.origin.pack)), catalog


async def test_configured_root_reaches_the_tools(workspace, monkeypatch):
    monkeypatch.delenv("TOOLPALETTE_FILES_ROOT", raising=False)
    (workspace / "a.txt").write_text("hello\n")
    executor, catalog = _executor(workspace)
    assert catalog.tool_names() == sorted(tool.__name__ for tool in TOOLS)
    result = await executor.execute("read_file", {"path": "a.txt"}, context=ToolContext())
    assert not result.is_error
    assert result.structured["content"] == "hello\n"


async def test_refusals_reach_the_model_as_tool_errors(workspace):
    executor, _ = _executor(workspace)
    result = await executor.execute("read_file", {"path": "../x"}, context=ToolContext())
    assert (result.is_error, result.status, result.code) == (True, 403, "outside_workspace")
    assert "outside the workspace" in result.text
