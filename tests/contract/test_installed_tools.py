"""Contract tests over every installed tool and skill: name, description, schemas, a sample call.

Parametrized over whatever the environment has installed (the nox ``tests`` session
installs the first-party packs and skilljars as built distributions), so a new pack is
held to the same contract without a line of test code.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from toolpalette import ToolHub, ToolProvider
from toolpalette.testing import check_tool

HUB = ToolHub()
TOOLS = HUB.catalog().providers()
SKILLS = HUB.skills().skills()


def sample(schema: dict[str, Any], root: dict[str, Any]) -> Any:
    """A small value that the schema accepts (enough for the schemas packs publish)."""
    if "$ref" in schema:
        target: Any = root
        for key in schema["$ref"].lstrip("#/").split("/"):
            target = target[key]
        return sample(target, root)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return sample(schema[key][0], root)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    kind = schema.get("type", "object")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object":
        props = schema.get("properties", {})
        return {name: sample(props[name], root) for name in schema.get("required", [])}
    if kind == "array":
        return [sample(schema.get("items", {}), root) for _ in range(schema.get("minItems", 0))]
    if kind == "string":
        return "x" * max(1, schema.get("minLength", 1))
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    return False if kind == "boolean" else None


def ids(providers: list[ToolProvider]) -> list[str]:
    return [p.name for p in providers]


def test_something_is_installed() -> None:
    assert TOOLS, "no tool pack is installed: install the first-party packs (nox -s tests)"
    assert SKILLS, "no skilljar is installed"


@pytest.mark.parametrize("provider", TOOLS, ids=ids(TOOLS))
def test_tool_is_well_formed(provider: ToolProvider) -> None:
    check_tool(provider)  # name, description, schemas, an export to every format
    assert provider.origin is not None
    assert provider.origin.distribution


@pytest.mark.parametrize("provider", TOOLS, ids=ids(TOOLS))
def test_a_sample_call_validates(provider: ToolProvider) -> None:
    value = sample(provider.input_schema, provider.input_schema)
    provider.parse_input(json.dumps(value))


@pytest.mark.parametrize("skill", SKILLS, ids=[s.id for s in SKILLS])
def test_skill_is_well_formed(skill: Any) -> None:
    bundle, _, name = skill.id.partition("/")
    assert bundle == skill.bundle
    assert name == skill.name
    assert skill.description.strip()
    assert skill.body().strip()
    assert skill.distribution


def test_installed_packs_and_jars_have_no_problems() -> None:
    HUB.skills().load_all()
    assert [str(p) for p in HUB.problems()] == []
