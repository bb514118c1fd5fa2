"""The specification's front-matter rules, checked leniently."""

from __future__ import annotations

import pytest
from toolpalette import SkillManifest
from toolpalette._skills.jar import bundle_id_problem
from toolpalette._skills.manifest import (
    coerce_front_matter,
    lint_manifest,
    suggest_name,
)


def check(data, folder="my-skill"):
    coerced = coerce_front_matter(data, folder)
    if coerced.manifest is None:
        return coerced
    linted = lint_manifest(coerced.manifest, folder)
    linted.warnings[:0] = coerced.warnings
    return linted


def test_a_conforming_manifest_has_no_warnings():
    result = check(
        {
            "name": "my-skill",
            "description": "Does things.",
            "license": "MIT",
            "compatibility": "Python 3.10+",
            "metadata": {"author": "me"},
            "allowed-tools": "read_file edit_file",
        }
    )
    assert result.error is None
    assert result.warnings == []
    assert result.manifest == SkillManifest(
        name="my-skill",
        description="Does things.",
        license="MIT",
        compatibility="Python 3.10+",
        metadata={"author": "me"},
        allowed_tools="read_file edit_file",
    )


@pytest.mark.parametrize(
    ("name", "complaint"),
    [
        ("My-Skill", "uppercase"),
        ("-my-skill", "starts or ends with a hyphen"),
        ("my-skill-", "starts or ends with a hyphen"),
        ("my--skill", "consecutive hyphens"),
        ("my_skill", "other than letters, digits and hyphens"),
        ("my.skill", "other than letters, digits and hyphens"),
    ],
)
def test_cosmetic_name_problems_warn_and_load(name, complaint):
    result = check({"name": name, "description": "d"}, folder=name)
    assert result.manifest is not None
    assert result.manifest.name == name
    assert len(result.warnings) == 1
    assert complaint in result.warnings[0]
    assert "e.g. 'my-skill'" in result.warnings[0]


def test_name_folder_mismatch_warns_and_keeps_the_declared_name():
    result = check({"name": "other-name", "description": "d"}, folder="my-skill")
    assert result.manifest is not None
    assert result.manifest.name == "other-name"
    assert result.warnings == [
        "name 'other-name' does not match its folder 'my-skill'; rename one of them"
    ]


@pytest.mark.parametrize("name", ["données", "über-tool", "技能", "σκιά-2"])
def test_non_ascii_lowercase_names_are_valid(name):
    assert check({"name": name, "description": "d"}, folder=name).warnings == []


def test_non_ascii_uppercase_is_still_uppercase():
    result = check({"name": "Über", "description": "d"}, folder="Über")
    assert any("uppercase" in warning for warning in result.warnings)


def test_folder_is_compared_after_nfkc_normalization():
    decomposed = "cafe\u0301"  # e + combining acute: NFKC gives "café"
    assert check({"name": "café", "description": "d"}, folder=decomposed).warnings == []


@pytest.mark.parametrize(
    ("field", "value", "limit"),
    [("name", "a" * 65, 64), ("description", "d" * 1025, 1024), ("compatibility", "c" * 501, 500)],
)
def test_over_long_fields_warn_and_load(field, value, limit):
    data = {"name": "a" * 65 if field == "name" else "my-skill", "description": "d"}
    data[field] = value
    result = check(data, folder=data["name"])
    assert result.manifest is not None
    assert result.warnings == [
        f"{field} is {len(value)} characters, over the specification's {limit}; shorten it"
    ]


@pytest.mark.parametrize("length", [1024, 1])
def test_description_at_the_limits_is_fine(length):
    assert check({"name": "my-skill", "description": "d" * length}).warnings == []


def test_unknown_keys_warn_and_are_ignored():
    result = check({"name": "my-skill", "description": "d", "version": "1", "author": "x"})
    assert result.manifest is not None
    assert "unknown front-matter keys author, version are ignored" in result.warnings[0]


@pytest.mark.parametrize("description", [None, "", "   "])
def test_a_missing_or_empty_description_skips_the_skill(description):
    data = (
        {"name": "my-skill"}
        if description is None
        else {"name": "my-skill", "description": description}
    )
    result = check(data)
    assert result.manifest is None
    assert result.error is not None
    assert result.error.startswith("no description")


def test_a_missing_name_falls_back_to_the_folder_with_a_warning():
    result = check({"description": "d"}, folder="my-skill")
    assert result.manifest is not None
    assert result.manifest.name == "my-skill"
    assert result.warnings == ["no name: the folder name 'my-skill' is used; add name: my-skill"]


@pytest.mark.parametrize("name", ["a/b", "two words", "tab\there"])
def test_a_name_that_cannot_be_in_an_id_skips_the_skill(name):
    result = check({"name": name, "description": "d"})
    assert result.manifest is None
    assert result.error is not None
    assert "cannot be part of a skill id" in result.error


def test_metadata_keeps_strings_and_drops_nested_values():
    result = check(
        {"name": "my-skill", "description": "d", "metadata": {"a": "1", "b": {"c": "d"}}}
    )
    assert result.manifest is not None
    assert result.manifest.metadata == {"a": "1"}
    assert result.warnings == [
        "metadata values for b are not strings; they are ignored (metadata maps strings to strings)"
    ]


def test_metadata_that_is_not_a_mapping_is_ignored():
    result = check({"name": "my-skill", "description": "d", "metadata": ["a"]})
    assert result.manifest is not None
    assert result.manifest.metadata == {}
    assert len(result.warnings) == 1


def test_allowed_tools_as_a_list_is_joined_with_a_warning():
    result = check({"name": "my-skill", "description": "d", "allowed-tools": ["a", "b"]})
    assert result.manifest is not None
    assert result.manifest.allowed_tools == "a b"
    assert "space-delimited" in result.warnings[0]


def test_a_non_string_scalar_is_read_as_text_with_a_warning():
    result = check({"name": "my-skill", "description": "d", "license": 2})
    assert result.manifest is not None
    assert result.manifest.license == "2"
    assert result.warnings == ["license is not a string; it is read as '2': quote it"]


def test_the_manifest_model_refuses_wrong_types():
    with pytest.raises(ValueError, match="description"):
        SkillManifest.model_validate({"name": "x", "description": ["not", "text"]})


@pytest.mark.parametrize(
    ("name", "expected"),
    [("My Skill", "my-skill"), ("--a__b--", "a-b"), ("PDF.Tools", "pdf-tools"), ("!!!", "skill")],
)
def test_suggest_name(name, expected):
    assert suggest_name(name) == expected


@pytest.mark.parametrize("bundle", ["io.example", "io.example.sql", "com.acme-corp.x2", "a.b"])
def test_valid_bundle_ids(bundle):
    assert bundle_id_problem(bundle) is None


@pytest.mark.parametrize(
    "bundle",
    [
        "example",
        "IO.Example",
        "io..example",
        ".io.example",
        "io.example.",
        "io.-x",
        "io.ex_ample",
        "io/example",
        "",
    ],
)
def test_invalid_bundle_ids(bundle):
    problem = bundle_id_problem(bundle)
    assert problem is not None
    assert "reverse-DNS" in problem
