"""The front-matter JSON Schema shipped in the core as package data."""

from __future__ import annotations

import json
from importlib.resources import files

import jsonschema
import pytest
from toolpalette._skills.manifest import manifest_json_schema


def shipped():
    text = files("toolpalette._skills").joinpath("skill-manifest.schema.json").read_text("utf-8")
    return json.loads(text)


def test_the_shipped_schema_is_the_models_schema():
    # Regenerate with: json.dumps(manifest_json_schema(), indent=2, ensure_ascii=False)
    assert shipped() == manifest_json_schema()


def test_the_shipped_schema_is_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(shipped())


def test_a_conforming_front_matter_validates():
    data = {"name": "my-skill", "description": "d", "metadata": {"a": "b"}, "allowed-tools": "x y"}
    jsonschema.validate(data, shipped())


@pytest.mark.parametrize(
    "data",
    [
        {"name": "my-skill"},
        {"name": "my-skill", "description": ""},
        {"name": "my-skill", "description": "d" * 1025},
        {"name": "a" * 65, "description": "d"},
        {"name": "my-skill", "description": "d", "compatibility": "c" * 501},
        {"name": "my-skill", "description": "d", "metadata": {"a": 1}},
        {"name": "my-skill", "description": "d", "version": "1"},
    ],
)
def test_what_the_loader_forgives_the_schema_flags(data):
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, shipped())
