"""The error tree: structured fields, stdlib bases, pickling, and the drawn hierarchy."""

from __future__ import annotations

import pickle

import pytest
import toolpalette
from toolpalette import errors
from toolpalette.errors import (
    ConfigError,
    IncompatiblePluginError,
    InputProblem,
    InvalidInputError,
    InvalidManifestError,
    InvalidToolSchemaError,
    PluginError,
    PluginLoadError,
    PluginWarning,
    SkillNotFoundError,
    SkillWarning,
    ToolCollisionError,
    ToolDefinitionError,
    ToolError,
    ToolNotFoundError,
    ToolpaletteDeprecationWarning,
    ToolpaletteError,
    ToolpaletteWarning,
    UserError,
)

SAMPLES: list[ToolpaletteError] = [
    ToolpaletteError("plain base"),
    UserError("a developer mistake"),
    PluginError("a pack could not be used"),
    ToolDefinitionError(tool_name="t", reason="needs a description"),
    InvalidToolSchemaError(tool_name="t", errors=["a", "b"]),
    InvalidManifestError(jar="io.example.sql", field="name", reason="too long"),
    ConfigError(
        reason="not valid TOML: Invalid value", source="toolpalette.toml", line=3, column=9
    ),
    ConfigError(reason="'packs' must map pack names to tables"),
    ToolCollisionError(tool_name="t", first="A from a", second="B from b"),
    ToolCollisionError(tool_name="t", first="A", second="B", hint="rename B"),
    PluginLoadError(plugin_name="files", distribution="toolpalette-files 1.0", reason="boom"),
    PluginLoadError(plugin_name="files", distribution=None, reason="boom"),
    IncompatiblePluginError(plugin_name="files", required=">=2,<3", installed="0.1.0"),
    ToolNotFoundError(tool_name=None, available=["a", "b"]),
    ToolNotFoundError(tool_name="x", available=[]),
    SkillNotFoundError(skill_id="io.x/y", available=["io.x/z"]),
    InvalidInputError(tool_name="t", problems=[InputProblem("age", "integer")]),
    ToolError("No such file", code="not_found", status=404),
    ToolError("default code and status"),
]


@pytest.mark.parametrize("error", SAMPLES, ids=lambda e: type(e).__name__)
def test_errors_pickle_round_trip_with_their_fields(error: ToolpaletteError) -> None:
    clone = pickle.loads(pickle.dumps(error))
    assert type(clone) is type(error)
    assert str(clone) == str(error)
    assert clone.args == error.args
    assert vars(clone) == vars(error)


@pytest.mark.parametrize(
    ("cls", "bases"),
    [
        (UserError, (ToolpaletteError,)),
        (ToolDefinitionError, (UserError,)),
        (InvalidToolSchemaError, (UserError,)),
        (InvalidManifestError, (UserError, ValueError)),
        (ConfigError, (UserError, ValueError)),
        (ToolCollisionError, (ToolpaletteError, ValueError)),
        (PluginLoadError, (PluginError,)),
        (IncompatiblePluginError, (PluginError,)),
        (ToolNotFoundError, (ToolpaletteError, LookupError)),
        (SkillNotFoundError, (ToolpaletteError, LookupError)),
        (InvalidInputError, (ToolpaletteError, ValueError)),
        (ToolError, (ToolpaletteError,)),
        (PluginWarning, (ToolpaletteWarning,)),
        (SkillWarning, (ToolpaletteWarning,)),
        (ToolpaletteDeprecationWarning, (ToolpaletteWarning, DeprecationWarning)),
        (ToolpaletteWarning, (UserWarning,)),
    ],
)
def test_the_tree(cls: type, bases: tuple[type, ...]) -> None:
    for base in bases:
        assert issubclass(cls, base)


def test_developer_mistakes_are_kept_apart_from_run_time_refusals() -> None:
    run_time = [ToolCollisionError, ToolNotFoundError, InvalidInputError, ToolError, PluginError]
    for cls in run_time:
        assert not issubclass(cls, UserError), cls


def test_errors_all_is_sorted_and_resolves() -> None:
    assert errors.__all__ == sorted(errors.__all__)
    for name in errors.__all__:
        assert getattr(errors, name).__module__ == "toolpalette.errors"


def test_collision_error_names_both_sides_and_has_a_default_hint() -> None:
    error = ToolCollisionError(tool_name="search", first="A from pkg_a", second="B from pkg_b")
    assert (error.tool_name, error.first, error.second) == (
        "search",
        "A from pkg_a",
        "B from pkg_b",
    )
    assert "pkg_a" in str(error)
    assert "pkg_b" in str(error)
    assert error.hint
    assert "rename" in error.hint


def test_not_found_lists_the_available_names() -> None:
    error = ToolNotFoundError(tool_name="nope", available=["alpha", "beta"])
    assert error.available == ("alpha", "beta")
    assert "alpha, beta" in str(error)
    assert isinstance(error, LookupError)
    assert "none" in str(ToolNotFoundError(tool_name="nope", available=[]))


def test_invalid_input_message_is_built_from_problems_only() -> None:
    error = InvalidInputError(
        tool_name="t", problems=[InputProblem("age", "integer"), InputProblem("x[2]", "string")]
    )
    assert (
        str(error)
        == "Invalid input for tool 't': at age: expected integer; at x[2]: expected string"
    )
    assert str(InvalidInputError(tool_name="t", problems=[])).endswith("input refused")


def test_tool_error_keeps_code_status_and_user_message() -> None:
    error = ToolError("Not found: a.txt", code="not_found", status=404)
    assert (error.user_message, error.code, error.status) == ("Not found: a.txt", "not_found", 404)
    assert str(error) == "Not found: a.txt"


def test_plugin_load_error_names_distribution_when_known() -> None:
    with_dist = PluginLoadError(plugin_name="files", distribution="tp-files 1.2", reason="x")
    assert "tp-files 1.2" in str(with_dist)
    assert "from" not in str(PluginLoadError(plugin_name="files", distribution=None, reason="x"))


def test_public_errors_are_reexported_from_the_package() -> None:
    for name in ("InvalidInputError", "ToolCollisionError", "ToolError", "ToolNotFoundError"):
        assert getattr(toolpalette, name) is getattr(errors, name)


class FileMissing(ToolError):
    """What a pack might define: its own ToolError with its own constructor."""

    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(f"No file at {path}", code="not_found", status=404)


class BadDeclaration(ToolDefinitionError):
    """A subclass of a structured error with its own constructor."""

    def __init__(self, where: str) -> None:
        self.where = where
        super().__init__(tool_name="t", reason=f"bad at {where}")


@pytest.mark.parametrize("error", [FileMissing("a.txt"), BadDeclaration("line 3")])
def test_subclasses_with_their_own_constructor_pickle(error: ToolpaletteError) -> None:
    clone = pickle.loads(pickle.dumps(error))
    assert type(clone) is type(error)
    assert str(clone) == str(error)
    assert clone.args == error.args
    assert vars(clone) == vars(error)


def test_invalid_input_lists_a_bounded_number_of_problems() -> None:
    from toolpalette.errors import MAX_SHOWN_PROBLEMS, InputProblem, InvalidInputError

    problems = [InputProblem(f"items[{i}]", "integer") for i in range(10_000)]
    error = InvalidInputError(tool_name="bulk", problems=problems)
    assert len(error.problems) == 10_000
    assert str(error).count("expected integer") == MAX_SHOWN_PROBLEMS
    assert str(error).endswith(f"and {10_000 - MAX_SHOWN_PROBLEMS} more problems")
    assert len(str(error)) < 512


def test_config_error_names_the_file_and_the_place() -> None:
    error = ConfigError(
        reason="not valid TOML: Invalid value", source="host.toml", line=3, column=9
    )
    assert str(error) == "host.toml, line 3, column 9: not valid TOML: Invalid value"
    assert str(ConfigError(reason="bad")) == "toolpalette configuration: bad"
