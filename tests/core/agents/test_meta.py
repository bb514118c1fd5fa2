"""The meta-tools request_tools and request_skill: the catalog as an enum, checked twice."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest
from toolpalette import (
    RequestSkillProvider,
    RequestToolsProvider,
    Skill,
    SkillSelector,
    Thinker,
    ToolHub,
    ToolRegistry,
    ToolSelector,
    tool,
)
from toolpalette.testing import FakeTool


@tool(read_only=True)
def read_page(url: str) -> str:
    """Fetch a web page and return its text."""
    return url


@tool
def send_mail(to: str) -> str:
    """Send an e-mail to one address."""
    return to


@tool(read_only=True)
def weather(city: str) -> str:
    """Today's weather for a city."""
    return city


SKILLS = [
    Skill("write-sql", "Write safe SQL queries.", bundle="io.example.db", body="Bind values."),
    Skill("tidy-notes", "Keep notes tidy.", bundle="io.example.notes", body="One per topic."),
]


@pytest.fixture
def hub() -> ToolHub:
    hub = ToolHub(autoload=False, config={})
    hub.skills().add_skills(SKILLS, pack="code", distribution=None)
    return hub


class Asker(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return (
            ToolSelector()
            .tool(weather)
            .tool(send_mail, deferred=True)
            .tool(read_page, deferred=True)
        )

    @classmethod
    def declare_skills(cls) -> SkillSelector:
        return SkillSelector().prefix("io.example")


class Plain(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(weather)


def _schema_of(turn_tools: tuple[object, ...], name: str) -> dict[str, object]:
    for provider in turn_tools:
        if provider.name == name:  # type: ignore[attr-defined]
            return provider.input_schema  # type: ignore[attr-defined,no-any-return]
    raise AssertionError(f"{name} not offered")


def _members(schema: dict[str, object], field: str) -> list[dict[str, str]]:
    prop = schema["properties"][field]  # type: ignore[index]
    return prop["items"]["anyOf"]  # type: ignore[no-any-return]


# -- the providers -----------------------------------------------------------------------


def test_names_are_snake_case_and_fixed() -> None:
    tools, skills = RequestToolsProvider([]), RequestSkillProvider([])
    assert (tools.name, skills.name) == ("request_tools", "request_skill")
    for provider in (tools, skills):
        assert re.fullmatch(r"[a-z][a-z0-9_]*", provider.name)
        assert provider.description


def test_the_schema_is_an_anyof_of_one_name_enums_with_each_members_description() -> None:
    catalog = [("send_mail", "Send an e-mail."), ("read_page", "Fetch a page.")]
    schema = RequestToolsProvider(catalog).input_schema
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["required"] == ["names"]
    assert schema["additionalProperties"] is False
    assert _members(schema, "names") == [
        {"type": "string", "enum": ["send_mail"], "description": "Send an e-mail."},
        {"type": "string", "enum": ["read_page"], "description": "Fetch a page."},
    ]
    skill_schema = RequestSkillProvider([("io.x/a", "Does a.")]).input_schema
    assert _members(skill_schema, "skills") == [
        {"type": "string", "enum": ["io.x/a"], "description": "Does a."}
    ]


def test_the_catalog_is_not_in_the_description() -> None:
    provider = RequestToolsProvider([("send_mail", "Send an e-mail.")])
    assert "send_mail" not in provider.description
    assert "e-mail" not in provider.description


def test_request_tools_mutates_and_request_skill_reads() -> None:
    assert not RequestToolsProvider([]).read_only
    assert RequestSkillProvider([]).read_only


def test_two_instances_are_equal_and_one_registry_entry_the_newer_one() -> None:
    first = RequestToolsProvider([("a", "A.")])
    second = RequestToolsProvider([("b", "B.")])
    assert first == second
    assert hash(first) == hash(second)
    assert first != RequestSkillProvider([("a", "A.")])
    registry = ToolRegistry([first])
    version = registry.version
    # Rebuilt with another catalog: it replaces the stale one in place.
    assert registry.register(second) is second
    assert (len(registry), registry.version) == (1, version + 1)
    # The same catalog again changes nothing.
    assert registry.register(RequestToolsProvider([("b", "B.")])) is second
    assert registry.version == version + 1


def test_a_meta_tool_runs_only_for_a_bound_thinker() -> None:
    with pytest.raises(TypeError):
        RequestToolsProvider([("a", "A.")]).create(None)
    with pytest.raises(TypeError):
        RequestSkillProvider([("a", "A.")]).create(object())


# -- through a thinker ------------------------------------------------------------------


def test_the_thinkers_catalogs_become_the_schemas(hub: ToolHub) -> None:
    turn = hub.bind(Asker).begin_turn()
    assert turn.tool_names == ("weather", "request_tools", "request_skill")
    assert _members(_schema_of(turn.tools, "request_tools"), "names") == [
        {"type": "string", "enum": ["send_mail"], "description": "Send an e-mail to one address."},
        {
            "type": "string",
            "enum": ["read_page"],
            "description": "Fetch a web page and return its text.",
        },
    ]
    assert _members(_schema_of(turn.tools, "request_skill"), "skills") == [
        {
            "type": "string",
            "enum": ["io.example.db/write-sql"],
            "description": "Write safe SQL queries.",
        },
        {
            "type": "string",
            "enum": ["io.example.notes/tidy-notes"],
            "description": "Keep notes tidy.",
        },
    ]


def test_the_catalog_never_enters_the_prompt_as_free_text(hub: ToolHub) -> None:
    turn = hub.bind(Asker).begin_turn()
    assert turn.preamble == ""
    for provider in turn.tools:
        assert "send_mail" not in provider.description
        assert "write-sql" not in provider.description


def test_meta_tools_are_offered_only_with_a_non_empty_catalog(hub: ToolHub) -> None:
    assert hub.bind(Plain).begin_turn().tool_names == ("weather",)


async def test_the_catalog_shrinks_as_members_are_granted(hub: ToolHub) -> None:
    asker = hub.bind(Asker)
    asker.begin_turn()
    result = await asker.call("request_tools", {"names": ["send_mail"]})
    assert json.loads(result.text)["granted"] == ["send_mail"]
    turn = asker.begin_turn()
    assert [m["enum"][0] for m in _members(_schema_of(turn.tools, "request_tools"), "names")] == [
        "read_page"
    ]
    # The rebuilt meta-tool replaces the old one in place: one entry, same position.
    assert turn.tool_names == ("weather", "request_tools", "request_skill", "send_mail")
    await asker.call("request_tools", {"names": ["read_page"]})
    await asker.call(
        "request_skill", {"skills": ["io.example.db/write-sql", "io.example.notes/tidy-notes"]}
    )
    turn = asker.begin_turn()
    assert turn.tool_names == ("weather", "send_mail", "read_page")


@pytest.mark.parametrize("names", [[], [7], "send_mail", [["send_mail"]]])
async def test_a_request_that_is_not_a_list_of_names_is_refused(
    hub: ToolHub, names: object
) -> None:
    asker = hub.bind(Asker)
    asker.begin_turn()
    result = await asker.call("request_tools", {"names": names})
    assert (result.status, result.code) == (400, "invalid_input")
    assert hub.grants() == []
    assert "send_mail" not in asker.begin_turn().tool_names


async def test_a_mix_of_good_and_bad_names_grants_the_good_and_refuses_each_bad_one(
    hub: ToolHub,
) -> None:
    # Validation refused the whole request with "at names[1]: expected string" (issue 23).
    asker = hub.bind(Asker)
    asker.begin_turn()
    names = ["send_mail", "delete_everything", "SEND_MAIL", "send_mail ", "s\u0435nd_mail"]
    result = await asker.call("request_tools", {"names": names})
    assert result.status == 200
    outcome = json.loads(result.text)
    assert outcome["granted"] == ["send_mail"]
    hint = "not requestable here; you may request: read_page"
    assert outcome["refused"] == [
        {"name": "delete_everything", "reason": hint},
        {"name": "SEND_MAIL", "reason": hint},
        {"name": "names[3]", "reason": hint},  # not a tool name: never repeated back
        {"name": "names[4]", "reason": hint},
    ]
    assert "expected string" not in result.text
    assert "s\u0435nd_mail" not in result.text
    assert "send_mail " not in result.text
    assert asker.begin_turn().tool_names[-1] == "send_mail"


async def test_the_names_a_refusal_offers_are_bounded(hub: ToolHub) -> None:
    class Many(Thinker):
        tool_search = "enum"

        @classmethod
        def declare_compatible_tools(cls) -> ToolSelector:
            selector = ToolSelector()
            for i in range(60):
                selector = selector.provider(
                    FakeTool(f"tool_with_a_rather_long_name_{i:02d}", read_only=True), deferred=True
                )
            return selector

    thinker = hub.bind(Many)
    thinker.begin_turn()
    [refused] = thinker.admit("tool", ["nothing_like_it"])["refused"]
    reason = refused["reason"]
    assert reason.startswith(
        "not requestable here; you may request: tool_with_a_rather_long_name_00, "
    )
    assert reason.endswith(" more")
    assert len(reason) < 500


async def test_an_offered_name_in_a_request_reads_as_already_present(hub: ToolHub) -> None:
    asker = hub.bind(Asker)
    asker.begin_turn()
    result = await asker.call("request_tools", {"names": ["weather"]})
    assert json.loads(result.text)["already_present"] == ["weather"]


async def test_skill_ids_off_the_catalog_are_refused_one_by_one(hub: ToolHub) -> None:
    asker = hub.bind(Asker)
    asker.begin_turn()
    result = await asker.call(
        "request_skill", {"skills": ["io.example.db/drop-tables", "write-sql", "Not An Id"]}
    )
    outcome = json.loads(result.text)
    assert [r["name"] for r in outcome["refused"]] == [
        "io.example.db/drop-tables",
        "skills[1]",
        "skills[2]",
    ]
    assert all(
        r["reason"].startswith("not requestable here; you may request: io.example.")
        for r in outcome["refused"]
    )
    result = await asker.call("request_skill", {"skills": [{"id": "x"}]})
    assert (result.status, result.code) == (400, "invalid_input")
    assert asker.conversation.attached == ()


def test_names_off_the_catalog_are_refused_by_admit_itself(hub: ToolHub) -> None:
    asker = hub.bind(Asker)
    asker.begin_turn()
    outcome = asker.admit("tool", ["delete_everything", "SEND_MAIL"])
    assert outcome["granted"] == []
    assert [r["name"] for r in outcome["refused"]] == ["delete_everything", "SEND_MAIL"]
    assert all("not requestable here" in r["reason"] for r in outcome["refused"])
    outcome = asker.admit("skill", ["io.example.db/drop-tables"])
    assert [r["name"] for r in outcome["refused"]] == ["io.example.db/drop-tables"]
    assert asker.conversation.attached == ()
    assert "delete_everything" not in asker.begin_turn().tool_names
    assert [(g.kind, g.name, g.decision) for g in hub.grants()] == [
        ("tool", "delete_everything", "refused"),
        ("tool", "SEND_MAIL", "refused"),
        ("skill", "io.example.db/drop-tables", "refused"),
    ]


def test_an_offered_name_reads_as_already_present(hub: ToolHub) -> None:
    asker = hub.bind(Asker)
    asker.begin_turn()
    outcome = asker.admit("tool", ["weather"])
    assert (outcome["granted"], outcome["already_present"]) == ([], ["weather"])
    assert [g.decision for g in hub.grants()] == ["already_present"]


async def test_a_granted_name_asked_again_reads_as_already_present(hub: ToolHub) -> None:
    asker = hub.bind(Asker)
    asker.begin_turn()
    first = asker.admit("tool", ["send_mail"])
    again = asker.admit("tool", ["send_mail"])
    assert (first["granted"], again["already_present"]) == (["send_mail"], ["send_mail"])
    asker.admit("skill", ["io.example.db/write-sql"])
    assert asker.admit("skill", ["io.example.db/write-sql"])["already_present"] == [
        "io.example.db/write-sql"
    ]


def test_a_repeated_name_in_one_request_is_decided_once(hub: ToolHub) -> None:
    asker = hub.bind(Asker)
    asker.begin_turn()
    outcome = asker.admit("tool", ["send_mail", "send_mail"])
    assert outcome["granted"] == ["send_mail"]
    assert len(hub.grants()) == 1


async def test_the_schema_validates_what_the_catalog_allows(hub: ToolHub) -> None:
    turn = hub.bind(Asker).begin_turn()
    validator = jsonschema.Draft202012Validator(_schema_of(turn.tools, "request_tools"))
    assert validator.is_valid({"names": ["send_mail", "read_page"]})
    assert not validator.is_valid({"names": ["weather"]})
    assert not validator.is_valid({"names": ["send_mail"], "extra": 1})


async def test_a_name_asked_twice_is_decided_once(hub: ToolHub) -> None:
    # No uniqueItems (strict modes refuse it): the handler merges duplicates instead.
    asker = hub.bind(Asker)
    asker.begin_turn()
    result = await asker.call("request_tools", {"names": ["send_mail", "send_mail"]})
    assert json.loads(result.text)["granted"] == ["send_mail"]
    assert [(g.name, g.decision) for g in hub.grants()] == [("send_mail", "granted")]


@pytest.mark.parametrize(
    "names",
    [["send_mail"] * 10_000, [f"junk-name-{i}" for i in range(10_000)]],
    ids=["ten-thousand-repeats", "ten-thousand-junk"],
)
async def test_a_huge_request_is_refused_without_echo_or_grant(
    hub: ToolHub, names: list[str]
) -> None:
    asker = hub.bind(Asker)
    asker.begin_turn()
    result = await asker.call("request_tools", {"names": names})
    assert (result.status, result.code) == (400, "invalid_input")
    assert "junk-name" not in result.text
    assert hub.grants() == []
