"""Read-only thinkers keep a read-only request_tools; read_skill_file opens a skill's files."""

from __future__ import annotations

import json

import pytest
from toolpalette import (
    ReadOnlyPalette,
    Skill,
    SkillSelector,
    Thinker,
    ToolHub,
    ToolRegistry,
    ToolSelector,
    tool,
)
from toolpalette._agents.meta import ReadSkillFileProvider
from toolpalette.errors import ToolError


@tool(read_only=True)
def run_query(sql: str) -> str:
    """Run a read-only SQL query."""
    return sql


@tool
def drop_table(table: str) -> str:
    """Drop a table."""
    return table


@tool(read_only=True)
def ask() -> str:
    """Ask the user."""
    return "yes"


class Analyst(Thinker):
    read_only = True

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return (
            ToolSelector().tool(ask).tool(run_query, deferred=True).tool(drop_table, deferred=True)
        )


class OnlyMutatingDeferred(Thinker):
    read_only = True

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(ask).tool(drop_table, deferred=True)


@pytest.fixture
def hub() -> ToolHub:
    return ToolHub(autoload=False, config={})


async def test_a_read_only_thinker_can_request_its_read_only_deferred_tools(hub: ToolHub) -> None:
    analyst = hub.bind(Analyst)
    turn = analyst.begin_turn()
    assert turn.tool_names == ("ask", "request_tools")
    [meta] = [p for p in turn.tools if p.name == "request_tools"]
    assert meta.read_only
    members = meta.input_schema["properties"]["names"]["items"]["anyOf"]
    assert [m["enum"][0] for m in members] == ["run_query"]  # only the read-only one
    result = await analyst.call("request_tools", {"names": ["run_query"]})
    assert json.loads(result.text)["granted"] == ["run_query"]
    turn = analyst.begin_turn()
    assert "run_query" in turn.tool_names
    assert (await analyst.call("run_query", {"sql": "select 1"})).text == "select 1"


async def test_a_read_only_thinker_still_cannot_have_a_mutating_tool(hub: ToolHub) -> None:
    analyst = hub.bind(Analyst)
    analyst.begin_turn()
    result = await analyst.call("request_tools", {"names": ["drop_table"]})  # not in its enum
    refused = [
        {"name": "drop_table", "reason": "this agent is read-only and the tool changes things"}
    ]
    assert json.loads(result.text)["refused"] == refused
    assert analyst.admit("tool", ["drop_table"])["refused"] == refused
    assert "drop_table" not in analyst.begin_turn().tool_names


def test_no_request_tools_when_only_mutating_tools_are_deferred(hub: ToolHub) -> None:
    assert hub.bind(OnlyMutatingDeferred).begin_turn().tool_names == ("ask",)


def test_the_read_only_request_tools_survives_the_sweep(hub: ToolHub) -> None:
    analyst = hub.bind(Analyst)
    analyst.begin_turn()
    registry = ToolRegistry([analyst.palette.get_provider("request_tools")])
    assert ReadOnlyPalette.sweep(registry) == []


# -- read_skill_file ----------------------------------------------------------------------------

GUIDE = "# Guide\nBind every value.\n"
WITH_FILES = Skill(
    "write-sql",
    "Write safe SQL.",
    bundle="io.example.db",
    body="See references/guide.md.",
    resources={"references/guide.md": GUIDE, "assets/logo.bin": b"\xff\xfe\x00"},
)
WITHOUT_FILES = Skill("plan", "Plan work.", bundle="io.example.db", body="Plan first.")


class Writer(Thinker):
    read_only = True

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(ask)

    @classmethod
    def declare_skills(cls) -> SkillSelector:
        return SkillSelector().prefix("io.example.db")


@pytest.fixture
def skilled() -> ToolHub:
    hub = ToolHub(autoload=False, config={})
    hub.skills().add_skills([WITH_FILES, WITHOUT_FILES], pack="code", distribution=None)
    return hub


async def test_read_skill_file_appears_once_a_skill_with_files_is_attached(
    skilled: ToolHub,
) -> None:
    writer = skilled.bind(Writer)
    assert "read_skill_file" not in writer.begin_turn().tool_names
    await writer.call("request_skill", {"skills": ["io.example.db/plan"]})
    assert "read_skill_file" not in writer.begin_turn().tool_names  # plan has no files
    await writer.call("request_skill", {"skills": ["io.example.db/write-sql"]})
    turn = writer.begin_turn()
    assert "read_skill_file" in turn.tool_names  # a read-only thinker keeps it
    [reader] = [p for p in turn.tools if p.name == "read_skill_file"]
    assert reader.read_only
    assert reader.input_schema["properties"]["file"]["enum"] == [
        "io.example.db/write-sql/assets/logo.bin",
        "io.example.db/write-sql/references/guide.md",
    ]
    result = await writer.call(
        "read_skill_file", {"file": "io.example.db/write-sql/references/guide.md"}
    )
    assert result.text == GUIDE


@pytest.mark.parametrize(
    "file",
    [
        "io.example.db/write-sql/../../etc/passwd",
        "io.example.db/write-sql/SKILL.md",
        "io.example.db/write-sql/references/other.md",
        "references/guide.md",
    ],
)
async def test_read_skill_file_reads_only_its_catalog(skilled: ToolHub, file: str) -> None:
    writer = skilled.bind(Writer)
    writer.begin_turn()
    await writer.call("request_skill", {"skills": ["io.example.db/write-sql"]})
    writer.begin_turn()
    result = await writer.call("read_skill_file", {"file": file})
    assert (result.status, result.code) == (400, "invalid_input")


async def test_a_binary_file_is_refused_with_a_reason(skilled: ToolHub) -> None:
    writer = skilled.bind(Writer)
    writer.begin_turn()
    await writer.call("request_skill", {"skills": ["io.example.db/write-sql"]})
    writer.begin_turn()
    result = await writer.call(
        "read_skill_file", {"file": "io.example.db/write-sql/assets/logo.bin"}
    )
    assert (result.status, result.code) == (415, "not_text")


def test_the_provider_refuses_paths_outside_the_skill_even_past_validation() -> None:
    provider = ReadSkillFileProvider([(WITH_FILES, "../escape.md")])
    bound = provider.create(None)
    with pytest.raises(ToolError) as caught:
        bound.invoke({"file": "io.example.db/write-sql/../escape.md"})
    assert caught.value.status == 404
