"""docs/errors.md documents every error and warning, and its tree is the classes' own."""

from __future__ import annotations

import builtins
import inspect
import re
from pathlib import Path

from toolpalette import errors

DOC = (Path(__file__).resolve().parents[2] / "docs" / "errors.md").read_text(encoding="utf-8")


def test_every_error_and_warning_is_documented() -> None:
    for name in errors.__all__:
        assert f"`{name}" in DOC, name


def _doc_tree() -> dict[str, str | None]:
    """Each class the tree draws, with the class drawn as its parent (None at a root)."""
    block = DOC.split("```text", 1)[1].split("```", 1)[0]
    parents: dict[str, str | None] = {}
    stack: list[str] = []
    for line in block.splitlines():
        match = re.match(r"^([│├└─\s]*)(\w+)(?:\s+(.*))?$", line)
        if match is None:
            continue
        depth = len(match.group(1)) // 4
        name = match.group(2)
        stack = stack[:depth]
        parents[name] = stack[-1] if stack else None
        stack.append(name)
        # "(also ValueError)", or "(UserWarning)" beside a root: a stdlib base it has.
        for stdlib in re.findall(r"\((?:also )?(\w+)\)", match.group(3) or ""):
            assert issubclass(getattr(errors, name), getattr(builtins, stdlib)), (name, stdlib)
    return parents


def test_the_tree_is_the_classes_own() -> None:
    drawn = _doc_tree()
    classes = {
        name: cls
        for name in errors.__all__
        if isinstance(cls := getattr(errors, name), type) and issubclass(cls, BaseException)
    }
    assert sorted(drawn) == sorted(classes)
    for name, cls in classes.items():
        ours = [b.__name__ for b in cls.__mro__[1:] if b.__name__ in classes]
        assert drawn[name] == (ours[0] if ours else None), name


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
