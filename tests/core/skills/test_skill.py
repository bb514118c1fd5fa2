"""Skill objects built in code."""

from __future__ import annotations

import pickle

import pytest
from toolpalette import Skill
from toolpalette.errors import InvalidManifestError


def test_fields_of_a_code_built_skill():
    skill = Skill(
        "deploy",
        "Deploy the service.",
        bundle="io.example.ops",
        body="1. Build.\n2. Ship.",
        license="MIT",
        compatibility="Needs docker",
        metadata={"team": "ops"},
        allowed_tools=["run", "read_file"],
    )
    assert skill.id == "io.example.ops/deploy"
    assert (skill.name, skill.description, skill.license) == (
        "deploy",
        "Deploy the service.",
        "MIT",
    )
    assert skill.compatibility == "Needs docker"
    assert dict(skill.metadata) == {"team": "ops"}
    assert skill.allowed_tools == ("run", "read_file")
    assert skill.manifest.allowed_tools == "run read_file"
    assert skill.body() == "1. Build.\n2. Ship."
    assert skill.distribution is None
    assert skill.resources() == []
    assert repr(skill) == "<Skill io.example.ops/deploy from unknown module>"


def test_metadata_is_read_only():
    skill = Skill("x", "d", bundle="io.example.ops", metadata={"a": "b"})
    with pytest.raises(TypeError):
        skill.metadata["a"] = "c"  # type: ignore[index]


def test_a_wrong_type_raises_invalid_manifest_error():
    with pytest.raises(InvalidManifestError) as caught:
        Skill("x", "d", bundle="io.example.ops", metadata={"a": ["not", "a", "string"]})  # type: ignore[dict-item]
    assert caught.value.jar == "io.example.ops"
    assert caught.value.field.startswith("metadata")
    assert isinstance(caught.value, ValueError)
    assert pickle.loads(pickle.dumps(caught.value)).field == caught.value.field
