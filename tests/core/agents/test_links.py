"""What goes together: a tool's skills in the preamble, and a skill's required tools.

A tool names its skills (``@tool(skills=...)``, or its pack's ``TOOLPALETTE_SKILLS``):
while it is offered, the preamble says which of them the model may ask for, and
``search_skills`` lists them first. A skill lists what it needs under
``metadata: {"toolpalette.requires": ...}``: a thinker whose tools miss it does not
offer it (a problem says why), and granting it grants the tools it requires.
"""

from __future__ import annotations

import types
from typing import Any

import pytest
from toolpalette import (
    Decision,
    Skill,
    SkillSelector,
    Thinker,
    ToolDefinitionError,
    ToolHub,
    ToolPolicy,
    ToolSelector,
    hookimpl,
    tool,
)


@tool(read_only=True, skills=["io.example.db/write-sql"])
def run_query(sql: str) -> str:
    """Run one read-only SQL query."""
    return sql


@tool(read_only=True)
def describe_table(table: str) -> str:
    """Describe a table's columns."""
    return table


@tool(read_only=True)
def send_note(text: str) -> str:
    """Send a short note."""
    return text


WRITE_SQL = Skill(
    "write-sql", "Write safe SQL queries.", bundle="io.example.db", body="Bind values."
)
MIGRATE = Skill(
    "migrate",
    "Change a database's schema safely.",
    bundle="io.example.db",
    body="Back up first.",
    metadata={"toolpalette.requires": "describe_table run_query"},
)
NEEDS_GIT = Skill(
    "rebase",
    "Rebase a branch safely.",
    bundle="io.example.git",
    body="Fetch first.",
    metadata={"toolpalette.requires": "git_rebase pack:git"},
)


def hub_with(*skills: Skill) -> ToolHub:
    hub = ToolHub(autoload=False)
    hub.skills().add_skills(list(skills), pack="code", distribution=None)
    return hub


def thinker_class(selector: ToolSelector, skills: SkillSelector, mode: str = "auto") -> type:
    return type(
        "Linked",
        (Thinker,),
        {
            "tool_search": mode,
            "declare_compatible_tools": classmethod(lambda cls: selector),
            "declare_skills": classmethod(lambda cls: skills),
        },
    )


def test_an_offered_tool_names_its_skill_in_the_preamble():
    hub = hub_with(WRITE_SQL)
    cls = thinker_class(ToolSelector().tool(run_query), SkillSelector().prefix("io.example"))
    turn = hub.bind(cls).begin_turn()
    assert '<tool name="run_query">' in turn.preamble
    assert "Skills for this tool (ask with request_skill): io.example.db/write-sql." in (
        turn.preamble
    )


async def test_a_granted_tool_names_its_skill_from_the_next_turn():
    hub = hub_with(WRITE_SQL)
    selector = ToolSelector().tool(run_query, deferred=True).tool(send_note)
    thinker = hub.bind(thinker_class(selector, SkillSelector().all()))
    assert "write-sql" not in thinker.begin_turn().preamble
    thinker.admit("tool", ["run_query"])
    assert "io.example.db/write-sql" in thinker.begin_turn().preamble
    thinker.admit("skill", ["io.example.db/write-sql"])
    preamble = thinker.begin_turn().preamble
    assert "Skills for this tool" not in preamble  # attached now: in the preamble itself
    assert "Bind values." in preamble


def test_search_tools_names_a_found_tools_skills():
    hub = hub_with(WRITE_SQL)
    selector = ToolSelector().tool(run_query, deferred=True).tool(send_note, deferred=True)
    thinker = hub.bind(thinker_class(selector, SkillSelector().all(), mode="search"))
    thinker.begin_turn()
    found = thinker.search("tool", "run a SQL query", 5)
    skills = {t["name"]: t.get("skills") for t in found["tools"]}
    assert skills["run_query"] == ["io.example.db/write-sql"]
    assert skills.get("send_note") is None


def test_a_packs_hooks_module_links_its_tools_to_skills():
    module = types.ModuleType("acme_sql_hooks")

    @hookimpl
    def toolpalette_register_tools() -> list[Any]:
        return [send_note]

    module.toolpalette_register_tools = toolpalette_register_tools  # type: ignore[attr-defined]
    module.TOOLPALETTE_SKILLS = {"send_note": ["io.example.db/write-sql"]}  # type: ignore[attr-defined]
    hub = hub_with(WRITE_SQL)
    hub.add_plugin(module, "acme")
    provider = hub.catalog().get_provider("send_note")
    assert hub.linked_skills(provider) == ("io.example.db/write-sql",)
    cls = thinker_class(ToolSelector().tool("send_note"), SkillSelector().all())
    assert "io.example.db/write-sql" in hub.bind(cls).begin_turn().preamble


def test_search_skills_lists_the_skills_of_the_tools_held_first():
    tidy = Skill("tidy-sql", "Write tidy SQL queries.", bundle="io.example.aaa", body="x")
    hub = hub_with(tidy, WRITE_SQL)
    cls = thinker_class(ToolSelector().tool(run_query), SkillSelector().all(), mode="search")
    thinker = hub.bind(cls)
    thinker.begin_turn()
    found = thinker.search("skill", "write SQL queries", 2)
    assert found["skills"][0]["name"] == "io.example.db/write-sql"


def test_skills_must_be_skill_ids():
    with pytest.raises(ToolDefinitionError, match="skill id"):
        tool(skills=["write-sql"])
    with pytest.raises(ToolDefinitionError, match="list of skill ids"):
        tool(skills="io.example.db/write-sql")


def test_a_skill_whose_required_tool_is_missing_is_not_offered_and_says_why():
    hub = hub_with(WRITE_SQL, NEEDS_GIT)
    cls = thinker_class(ToolSelector().tool(run_query), SkillSelector().all(), mode="enum")
    thinker = hub.bind(cls)
    turn = thinker.begin_turn()
    [request] = [t for t in turn.tools if t.name == "request_skill"]
    listed = [e["enum"][0] for e in request.input_schema["properties"]["skills"]["items"]["anyOf"]]
    assert listed == ["io.example.db/write-sql"]
    outcome = thinker.admit("skill", ["io.example.git/rebase"])
    assert [r["name"] for r in outcome["refused"]] == ["io.example.git/rebase"]
    [problem] = [p for p in hub.problems() if p.kind == "skill-requirement"]
    assert problem.item == "io.example.git/rebase"
    assert "git_rebase, pack:git" in problem.reason
    assert "Linked" in problem.reason


async def test_granting_a_skill_grants_the_tools_it_requires():
    hub = hub_with(MIGRATE)
    selector = ToolSelector().tool(run_query, deferred=True).tool(describe_table, deferred=True)
    thinker = hub.bind(thinker_class(selector, SkillSelector().all(), mode="enum"))
    thinker.begin_turn()
    assert thinker.admit("skill", ["io.example.db/migrate"])["granted"] == ["io.example.db/migrate"]
    assert {"describe_table", "run_query"} <= set(thinker.begin_turn().tool_names)
    reasons = {r.name: r.reason for r in hub.grants() if r.kind == "tool"}
    assert reasons == {
        "describe_table": "required by the skill io.example.db/migrate",
        "run_query": "required by the skill io.example.db/migrate",
    }


def test_the_policy_still_decides_a_required_tool():
    class NoQueries(ToolPolicy):
        def decide_grant(self, thinker: Any, kind: str, name: str, item: Any) -> Decision:
            return Decision.DENY if name == "run_query" else Decision.ALLOW

    hub = hub_with(MIGRATE)
    selector = ToolSelector().tool(run_query, deferred=True).tool(describe_table, deferred=True)
    thinker = hub.bind(thinker_class(selector, SkillSelector().all()), policy=NoQueries())
    thinker.begin_turn()
    thinker.admit("skill", ["io.example.db/migrate"])
    offered = thinker.begin_turn().tool_names
    assert "describe_table" in offered
    assert "run_query" not in offered
    assert ("run_query", "refused") in [(r.name, r.decision) for r in hub.grants()]


def test_request_skill_lists_the_skills_the_classs_tools_name_first():
    first = Skill("aaa-notes", "Keep notes.", bundle="io.example.aaa", body="x")
    hub = hub_with(first, WRITE_SQL)
    cls = thinker_class(ToolSelector().tool(run_query), SkillSelector().all(), mode="enum")
    [request] = [t for t in hub.bind(cls).begin_turn().tools if t.name == "request_skill"]
    choices = request.input_schema["properties"]["skills"]["items"]["anyOf"]
    listed = [c["enum"][0] for c in choices]
    assert listed == ["io.example.db/write-sql", "io.example.aaa/aaa-notes"]
