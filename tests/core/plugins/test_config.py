"""Host configuration: files, code arguments, validation, renamed providers."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

import pytest
from toolpalette import BoundTool, FunctionToolProvider, ToolInfo, ToolProvider, tool
from toolpalette._plugins.config import HubConfig, load_config
from toolpalette._plugins.config import renamed as rename
from toolpalette.errors import ConfigError, InvalidInputError


@tool(read_only=True)
def search(query: str, limit: int = 3) -> list[str]:
    """Search.

    Args:
        query: What to look for.
        limit: How many.
    """
    return [query] * limit


def test_nothing_configured_is_empty(tmp_path: Path):
    config = load_config(cwd=tmp_path)
    assert config == HubConfig()
    assert config.pack_config("files") == {}


def test_a_mapping_is_the_table_itself():
    config = load_config({"rename": {"a": "b"}, "prefix": {"p": "p_"}, "packs": {"p": {"x": 1}}})
    assert (dict(config.rename), dict(config.prefix)) == ({"a": "b"}, {"p": "p_"})
    assert config.pack_config("p") == {"x": 1}
    assert config.source is None


def test_toolpalette_toml_in_the_working_directory_wins_over_pyproject(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[tool.toolpalette.prefix]\np = "py_"\n')
    (tmp_path / "toolpalette.toml").write_text('[prefix]\np = "tp_"\n')
    config = load_config(cwd=tmp_path)
    assert config.prefix == {"p": "tp_"}
    assert config.source == str(tmp_path / "toolpalette.toml")


def test_pyproject_tool_table_is_read(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "host"\n\n[tool.toolpalette.packs.files]\nroot = "/srv"\n'
    )
    assert load_config(cwd=tmp_path).pack_config("files") == {"root": "/srv"}


def test_a_pyproject_without_our_table_is_no_configuration(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "host"\n')
    assert load_config(cwd=tmp_path) == HubConfig()


def test_an_explicit_path_is_read(tmp_path: Path):
    path = tmp_path / "elsewhere.toml"
    path.write_text('[rename]\n"beta.search" = "find"\n')
    config = load_config(str(path), cwd=tmp_path / "nowhere")
    assert config.rename == {"beta.search": "find"}


def test_a_missing_explicit_path_is_an_error(tmp_path: Path):
    with pytest.raises(OSError):
        load_config(tmp_path / "missing.toml")


def test_code_arguments_win_key_by_key():
    config = load_config(
        {"rename": {"a": "b", "c": "d"}, "prefix": {"p": "p_"}},
        rename={"a": "z"},
        prefix={"q": "q_"},
    )
    assert config.rename == {"a": "z", "c": "d"}
    assert config.prefix == {"p": "p_", "q": "q_"}


@pytest.mark.parametrize(
    "table",
    [
        {"rename": {"a": "not valid!"}},
        {"rename": {"a": 3}},
        {"rename": ["a"]},
        {"prefix": {"p": "bad prefix "}},
        {"prefix": {"p": ""}},
        {"packs": {"p": 3}},
        {"packs": []},
    ],
)
def test_invalid_configuration_is_refused_with_a_message(table: dict[str, object]):
    with pytest.raises(ValueError, match="toolpalette configuration"):
        load_config(table)


def test_invalid_toml_names_the_file_and_the_place(tmp_path: Path):
    (tmp_path / "toolpalette.toml").write_text('[prefix]\nfiles = "f_"\nsqlite = db_\n')
    with pytest.raises(ConfigError) as raised:
        load_config(cwd=tmp_path)
    error = raised.value
    assert isinstance(error, ValueError)
    assert (error.source, error.line, error.column) == ("toolpalette.toml", 3, 10)
    assert str(error).startswith("toolpalette.toml, line 3, column 10: not valid TOML: ")


def test_invalid_toml_at_the_end_of_the_file_names_where_it_ends(tmp_path: Path):
    (tmp_path / "toolpalette.toml").write_text("rename = {")
    with pytest.raises(ConfigError) as raised:
        load_config(cwd=tmp_path)
    assert (raised.value.line, raised.value.column) == (1, 11)
    assert "(at the end of the file)" in raised.value.reason


def test_an_explicit_file_is_named_as_the_host_gave_it(tmp_path: Path):
    path = tmp_path / "conf" / "host.toml"
    path.parent.mkdir()
    path.write_text("worker_threads = 0\n")
    with pytest.raises(ConfigError, match=r"host\.toml: 'worker_threads' must be a positive"):
        load_config(str(path))


def test_unknown_keys_are_logged_and_are_problems_with_a_suggestion(
    caplog: pytest.LogCaptureFixture,
):
    with caplog.at_level(logging.WARNING, logger="toolpalette.config"):
        config = load_config({"renames": {}, "colour": "blue"})
    assert "renames" in caplog.text
    renames, colour = sorted(config.problems, key=lambda p: p.item or "")[::-1]
    assert (renames.kind, renames.item, renames.fatal) == ("config", "renames", True)
    assert renames.reason.endswith("is ignored (did you mean 'rename'?)")
    assert colour.item == "colour"
    assert "did you mean" not in colour.reason


def test_a_pack_specific_rename_wins_over_a_general_one_and_over_a_prefix():
    config = load_config(
        {"rename": {"search": "find", "beta.search": "beta_find"}, "prefix": {"beta": "b_"}}
    )
    assert config.name_for("beta", "search") == "beta_find"
    assert config.name_for("alpha", "search") == "find"
    assert config.name_for("beta", "other") == "b_other"
    assert config.name_for("gamma", "other") == "other"
    assert config.name_for("io.example", "search") == "find"


def test_pack_config_is_read_only():
    view = load_config({"packs": {"p": {"root": "/srv"}}}).pack_config("p")
    with pytest.raises(TypeError):
        view["root"] = "/"  # type: ignore[index]


def test_a_renamed_provider_delegates_everything_but_the_name():
    inner = FunctionToolProvider(search)
    renamed = rename(inner, "find")
    assert renamed.name == "find"
    assert renamed.description == inner.description
    assert renamed.input_schema == inner.input_schema
    assert renamed.output_schema == inner.output_schema
    assert renamed.read_only is True
    value = renamed.parse_input({"query": "q", "limit": 2})
    assert renamed.create().invoke(value) == ["q", "q"]


def test_renamed_providers_are_equal_when_they_wrap_equal_providers_under_one_name():
    a = rename(FunctionToolProvider(search), "find")
    b = rename(FunctionToolProvider(search), "find")
    assert a == b
    assert hash(a) == hash(b)
    assert a != rename(FunctionToolProvider(search), "seek")


def test_a_renamed_provider_refuses_input_under_its_new_name():
    renamed = rename(FunctionToolProvider(search), "find")
    with pytest.raises(InvalidInputError) as caught:
        renamed.parse_input({"query": 3})
    assert caught.value.tool_name == "find"
    assert "find" in str(caught.value)


def test_a_renamed_provider_needs_a_valid_name():
    with pytest.raises(ValueError, match="not a valid tool name"):
        rename(FunctionToolProvider(search), "x" * 65)


class Described(ToolProvider):
    """A hand-written provider with a value of its own for every field of the record."""

    def __init__(self, schema_fails: bool = False) -> None:
        self.schema_fails = schema_fails

    @property
    def info(self) -> ToolInfo:
        if self.schema_fails:
            raise RuntimeError("the schema cannot be built")
        return ToolInfo(
            name="described",
            description="Described by hand.",
            input_schema={"type": "object"},
            output_schema={"type": "object"},
            read_only=True,
            destructive=False,
            idempotent=True,
            open_world=False,
            display_name="Hand-made",
            action_verb="Describing",
            weight=4.0,
            metadata={"k": "v"},
            concurrency_safe=False,
            timeout=3.0,
            output_cap=999,
            guidance="Describe first.",
        )

    # Answered without the record, as a listing and a rename read them.
    name = property(lambda self: "described")
    description = property(lambda self: "Described by hand.")
    read_only = property(lambda self: True)
    display_name = property(lambda self: "Hand-made")

    def create(self, parent: Any = None) -> BoundTool:
        return BoundTool(lambda value, ctx: "ok", is_async=False, takes_context=False)


def test_a_renamed_provider_serves_every_field_of_the_record_but_the_name():
    inner = Described()
    renamed = rename(inner, "told")
    for field in dataclasses.fields(ToolInfo):
        if field.name != "name":
            assert getattr(renamed, field.name) == getattr(inner, field.name), field.name
    assert renamed.info == inner.info.replace(name="told")


def test_a_derived_display_name_follows_the_new_name_and_a_declared_one_stays():
    assert rename(FunctionToolProvider(search), "find").info.display_name == "Find"
    assert rename(Described(), "told").info.display_name == "Hand-made"


def test_reading_a_renamed_tools_flags_does_not_build_its_schema():
    # A listing reads name, description and flags; a schema that cannot be built is
    # reported where the catalog builds it, not raised by a listing.
    renamed = rename(Described(schema_fails=True), "told")
    assert (renamed.name, renamed.description, renamed.read_only) == (
        "told",
        "Described by hand.",
        True,
    )
    with pytest.raises(RuntimeError, match="cannot be built"):
        _ = renamed.info


def test_a_collision_report_names_the_tool_and_the_name_it_is_offered_under():
    described = rename(FunctionToolProvider(search), "find").describe()
    assert "'search'" in described
    assert described.endswith("offered as 'find'")
