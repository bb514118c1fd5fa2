"""The pack is found through its entry point, like any third-party pack."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

from packaging.requirements import Requirement
from toolpalette.testing import as_provider

EXPECTED = {"list_tables": True, "describe_table": True, "query": True, "execute": False}


def test_discoverable_through_its_entry_point():
    (ep,) = importlib.metadata.entry_points(group="toolpalette.plugins", name="sqlite")
    assert ep.value == "toolpalette_sqlite.hooks"
    assert ep.dist is not None
    assert ep.dist.name == "toolpalette-sqlite"
    (core,) = [r for r in map(Requirement, ep.dist.requires or []) if r.name == "toolpalette"]
    assert "0.1.0" in core.specifier
    assert "1.0" not in core.specifier


def test_hook_registers_every_tool_with_its_read_only_flag():
    (ep,) = importlib.metadata.entry_points(group="toolpalette.plugins", name="sqlite")
    providers = [as_provider(t) for t in ep.load().toolpalette_register_tools()]
    assert {p.name: p.read_only for p in providers} == EXPECTED
    for provider in providers:
        assert provider.description
        assert provider.output_schema is not None
        assert "ctx" not in provider.input_schema["properties"]


def test_hooks_module_does_not_import_the_tools():
    code = "import sys, toolpalette_sqlite.hooks; print('toolpalette_sqlite.tools' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
