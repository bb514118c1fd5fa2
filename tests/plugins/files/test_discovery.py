"""The pack is found through its entry point, like any third-party pack."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

from packaging.requirements import Requirement
from toolpalette.testing import as_provider

EXPECTED = {
    "read_file": True,
    "list_directory": True,
    "search_files": True,
    "file_info": True,
    "write_file": False,
    "edit_file": False,
    "make_directory": False,
    "move_path": False,
}


def test_discoverable_through_its_entry_point():
    (ep,) = importlib.metadata.entry_points(group="toolpalette.plugins", name="files")
    assert ep.value == "toolpalette_files.hooks"
    assert ep.dist is not None
    assert ep.dist.name == "toolpalette-files"
    (core,) = [r for r in map(Requirement, ep.dist.requires or []) if r.name == "toolpalette"]
    assert "0.1.0" in core.specifier
    assert "1.0" not in core.specifier


def test_hook_registers_every_tool_with_its_read_only_flag():
    (ep,) = importlib.metadata.entry_points(group="toolpalette.plugins", name="files")
    hooks = ep.load()
    providers = [as_provider(t) for t in hooks.toolpalette_register_tools()]
    assert {p.name: p.read_only for p in providers} == EXPECTED
    for provider in providers:
        assert provider.description
        assert provider.output_schema is not None
        assert "ctx" not in provider.input_schema["properties"]


def test_hooks_module_does_not_import_the_tools():
    code = "import sys, toolpalette_files.hooks;print('toolpalette_files.tools' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_mutating_tools_serialize_on_the_path():
    from toolpalette_files import tools

    write = as_provider(tools.write_file)
    first = write.parse_input({"path": "a/./b.txt", "content": "x"})
    second = write.parse_input({"path": "a/b.txt", "content": "y"})
    other = write.parse_input({"path": "c.txt", "content": "y"})
    assert write.resource_key(first) == write.resource_key(second)
    assert write.resource_key(first) != write.resource_key(other)
    move = as_provider(tools.move_path)
    moved = move.parse_input({"source": "a/b.txt", "destination": "z"})
    assert move.resource_key(moved) == write.resource_key(second)
