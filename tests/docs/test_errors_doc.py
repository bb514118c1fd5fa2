"""docs/errors.md documents every error and warning, with the module's own tree."""

from __future__ import annotations

import inspect
from pathlib import Path

from toolpalette import errors

DOC = (Path(__file__).resolve().parents[2] / "docs" / "errors.md").read_text(encoding="utf-8")


def test_every_error_and_warning_is_documented() -> None:
    for name in errors.__all__:
        assert f"`{name}" in DOC, name


def test_the_tree_is_the_modules_tree() -> None:
    module_tree = [line.strip() for line in (errors.__doc__ or "").splitlines() if "──" in line]
    doc_tree = [line.strip() for line in DOC.split("```text", 1)[1].split("```", 1)[0].splitlines()]
    assert module_tree
    assert [line for line in doc_tree if "──" in line] == module_tree


def test_the_documented_fields_are_the_real_ones() -> None:
    for cls in (
        errors.ToolDefinitionError,
        errors.InvalidToolSchemaError,
        errors.InvalidManifestError,
        errors.ToolCollisionError,
        errors.PluginLoadError,
        errors.IncompatiblePluginError,
        errors.ToolNotFoundError,
        errors.SkillNotFoundError,
        errors.InvalidInputError,
        errors.ToolError,
    ):
        fields = [p for p in inspect.signature(cls).parameters if p != "self"]
        assert f"`{cls.__name__}({', '.join(fields)}" in DOC.replace('="tool_error"', "").replace(
            "=422", ""
        ), cls.__name__
