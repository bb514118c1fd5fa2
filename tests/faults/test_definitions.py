"""Definitions a pack or host gets subtly wrong are refused with a clear reason.

Each case passed before: a name ending in a newline (``$`` matches before a final
newline), a timeout too large to wait on, a skill resource that told whether a file
outside the skill exists, and a hook's ``None`` item called "not a tool".
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
import toolpalette
from toolpalette import SkillRegistry, ToolError, ToolHub, tool
from toolpalette.errors import ToolDefinitionError
from toolpalette.testing import FakeTool, fake_tool, make_registry, plugin_of


def _ok() -> str:
    """Answer."""
    return "ok"


@pytest.mark.parametrize("name", ["evil\n", "evil\r", "ev il", "", "x" * 65])
def test_a_tool_name_with_a_trailing_newline_is_refused(name: str) -> None:
    with pytest.raises(ToolDefinitionError, match="names are 1-64 characters"):
        tool(name=name)(_ok)
    with pytest.raises(ToolDefinitionError):
        FakeTool(name)


def test_a_rename_target_or_prefix_with_a_trailing_newline_is_refused() -> None:
    with pytest.raises(ValueError, match="tool names are"):
        ToolHub(autoload=False, rename={"a": "b\n"})
    with pytest.raises(ValueError, match="prefix"):
        ToolHub(autoload=False, prefix={"p": "p_\n"})


async def test_a_tool_error_code_with_a_trailing_newline_becomes_the_generic_code() -> None:
    def raises(_value: object) -> str:
        raise ToolError("nope", code="bad\n", status=409)

    registry = make_registry(fake_tool("t", result=raises))
    result = await toolpalette.execute(registry, "t", {})
    assert (result.status, result.code) == (409, "tool_error")


@pytest.mark.parametrize("timeout", [math.inf, 1e10, 86_401, math.nan, -1, 0, True])
def test_a_timeout_that_cannot_be_waited_on_is_refused_at_definition(timeout: float) -> None:
    with pytest.raises(ToolDefinitionError, match="timeout must be"):
        tool(timeout=timeout)(_ok)


async def test_the_longest_allowed_timeout_still_runs() -> None:
    registry = make_registry(tool(name="long_ok", timeout=86_400)(_ok))
    result = await toolpalette.execute(registry, "long_ok", {})
    assert (result.status, result.text) == (200, "ok")


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_a_skill_resource_does_not_tell_whether_a_file_outside_exists(tmp_path: Path) -> None:
    jar = tmp_path / "jar"
    folder = jar / "alpha"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: alpha\ndescription: Does a thing.\n---\nBody\n")
    (tmp_path / "exists.txt").write_text("secret")
    (folder / "to-existing").symlink_to(tmp_path / "exists.txt")
    (folder / "to-missing").symlink_to(tmp_path / "missing.txt")
    registry = SkillRegistry()
    registry.add_directory("io.example.faults", jar)
    skill = registry.skill("io.example.faults/alpha")
    answers = set()
    for name in ("to-existing", "to-missing", "not-there"):
        with pytest.raises(FileNotFoundError) as info:
            skill.resource(name)
        answers.add((type(info.value), str(info.value).replace(name, "NAME")))
    assert len(answers) == 1


def test_a_hook_returning_none_among_tools_is_told_what_is_wrong() -> None:
    hub = ToolHub(autoload=False)
    hub.add_plugin(plugin_of(tool(_ok), None), name="halfway")
    assert [p.name for p in hub.providers_for_pack("halfway")] == ["_ok"]
    reasons = [p.reason for p in hub.problems() if p.pack == "halfway"]
    assert len(reasons) == 1
    assert "not a tool" not in reasons[0]
    assert "return None for no tools at all, or leave it out of the list" in reasons[0]


def test_a_hook_returning_none_alone_offers_nothing_and_is_no_problem() -> None:
    class Nothing:
        @toolpalette.hookimpl
        def toolpalette_register_tools(self) -> None:
            return None

    hub = ToolHub(autoload=False)
    hub.add_plugin(Nothing(), name="empty")
    assert hub.providers_for_pack("empty") == []
    assert [p for p in hub.problems() if p.pack == "empty"] == []
