"""ToolRegistry: duplicates, collisions, None names, versions, surfaces, callbacks, removal."""

from __future__ import annotations

import dataclasses
import importlib
import json
import logging
import os
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pydantic
import pytest
from toolpalette import (
    Origin,
    RequestToolsProvider,
    SurfaceDiff,
    Tool,
    ToolCollisionError,
    ToolNotFoundError,
    ToolRegistry,
    function_tool,
    tool,
)
from toolpalette.errors import PluginWarning, ToolDefinitionError
from toolpalette.testing import as_provider, fake_tool, make_registry


class Note(pydantic.BaseModel):
    text: str


@tool(read_only=True)
class ReadNote(Tool):
    """Read a note."""

    def run(self, input: Note) -> str:
        return input.text


@tool
class WriteNote(Tool):
    """Write a note."""

    def run(self, input: Note) -> str:
        return input.text


class Untagged(Tool):
    """A Tool subclass someone forgot to decorate."""

    def run(self, input: Note) -> str:
        return input.text


@tool(read_only=True)
def search(query: str) -> str:
    """Search."""
    return query


# -- modules written to disk, so two classes really live in two modules ----------------

PACK_SOURCE = '''
from __future__ import annotations

import pydantic

from toolpalette import Tool, tool


class Query(pydantic.BaseModel):
    text: str


@tool(name="shared_name")
class {cls}(Tool):
    """{cls} answers."""

    def run(self, input: Query) -> str:
        return "{cls}"
'''


@pytest.fixture
def write_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[str], ModuleType]]:
    monkeypatch.syspath_prepend(str(tmp_path))
    created: list[str] = []

    def write(cls: str) -> ModuleType:
        name = f"tp_pack_{cls.lower()}_{uuid.uuid4().hex[:8]}"
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(PACK_SOURCE.format(cls=cls)))
        created.append(name)
        return importlib.import_module(name)

    yield write
    for name in created:
        sys.modules.pop(name, None)


# -- registering, idempotence, collisions ---------------------------------------------


def test_register_each_kind_of_tool(tool_registry: ToolRegistry) -> None:
    fake = fake_tool("fake")
    assert tool_registry.register(ReadNote) == as_provider(ReadNote)
    assert tool_registry.register(search) == as_provider(search)
    assert tool_registry.register(fake) is fake
    assert tool_registry.tool_names() == ["fake", "read_note", "search"]
    assert [p.name for p in tool_registry.providers()] == ["read_note", "search", "fake"]
    assert tool_registry.version == 3
    assert len(tool_registry) == 3


def test_same_class_twice_is_one_entry_keeping_its_position(tool_registry: ToolRegistry) -> None:
    first = tool_registry.register(ReadNote)
    tool_registry.register(WriteNote)
    version = tool_registry.version
    again = tool_registry.register(ReadNote)
    assert again is first
    assert tool_registry.version == version
    assert [p.name for p in tool_registry.providers()] == ["read_note", "write_note"]


def test_same_function_twice_is_one_entry(tool_registry: ToolRegistry) -> None:
    tool_registry.register(search)
    tool_registry.register(as_provider(search))
    tool_registry.register_all(search, search)
    assert tool_registry.version == 1
    assert len(tool_registry) == 1


def test_same_provider_object_twice_is_one_entry(tool_registry: ToolRegistry) -> None:
    fake = fake_tool("fake")
    tool_registry.register(fake)
    tool_registry.register(fake)
    assert tool_registry.version == 1


def test_two_classes_from_two_modules_collide(
    tool_registry: ToolRegistry, write_module: Callable[[str], ModuleType]
) -> None:
    alpha, beta = write_module("Alpha"), write_module("Beta")
    tool_registry.register(alpha.Alpha)
    with pytest.raises(ToolCollisionError) as info:
        tool_registry.register(beta.Beta)
    error = info.value
    assert error.tool_name == "shared_name"
    assert alpha.__name__ in error.first
    assert beta.__name__ in error.second
    assert alpha.__name__ in str(error)
    assert beta.__name__ in str(error)
    assert "rename" in error.hint
    assert tool_registry.version == 1
    assert tool_registry.get_provider("shared_name") == as_provider(alpha.Alpha)


def test_collision_names_both_distributions_when_known(
    tool_registry: ToolRegistry, write_module: Callable[[str], ModuleType]
) -> None:
    alpha, beta = write_module("Alpha"), write_module("Beta")
    first, second = as_provider(alpha.Alpha), as_provider(beta.Beta)
    first.origin = Origin(
        pack="alpha", distribution="toolpalette-alpha", version="1.0", module=alpha.__name__
    )
    second.origin = Origin(
        pack="beta", distribution="toolpalette-beta", version="2.3", module=beta.__name__
    )
    tool_registry.register(first)
    with pytest.raises(ToolCollisionError) as info:
        tool_registry.register(second)
    message = str(info.value)
    for part in ("toolpalette-alpha 1.0", "toolpalette-beta 2.3", alpha.__name__, beta.__name__):
        assert part in message


def test_two_fakes_with_one_name_collide(tool_registry: ToolRegistry) -> None:
    tool_registry.register(fake_tool("x"))
    with pytest.raises(ToolCollisionError):
        tool_registry.register(fake_tool("x"))


# -- re-registering: the same tool rebuilt replaces the old in place ---------------------

PACK = Origin(pack="notes", distribution="toolpalette-notes", version="1.0")


def _from(origin: Origin | None, **options: Any) -> Any:
    fake = fake_tool("search", **options)
    fake.origin = origin
    return fake


def test_a_tool_rebuilt_by_its_pack_replaces_the_old_in_its_place(
    tool_registry: ToolRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    diffs: list[SurfaceDiff] = []
    tool_registry.on_surface_changed(diffs.append)
    old = _from(PACK, description="Search the notes.")
    tool_registry.register_all(fake_tool("first"), old, fake_tool("last"))
    # The same type from the same pack (a later version of it, even): an upsert.
    new = _from(dataclasses.replace(PACK, version="1.1"), description="Search every note.")
    with caplog.at_level(logging.DEBUG, logger="toolpalette.registry"):
        assert tool_registry.register(new) is new
    assert tool_registry.get_provider("search") is new
    assert [p.name for p in tool_registry.providers()] == ["first", "search", "last"]
    assert tool_registry.version == 4
    assert diffs[-1] == SurfaceDiff(4, changed=("search",))
    assert "re-registered 'search'" in caplog.text
    assert [r.levelno for r in caplog.records] == [logging.DEBUG]


def test_a_rebuilt_meta_tool_replaces_the_stale_one_and_an_unchanged_one_changes_nothing(
    tool_registry: ToolRegistry,
) -> None:
    # A reconcile hook that rebuilds a meta-tool with a new catalog: equal providers
    # (a meta-tool is equal to any other of its type) with another description.
    stale = RequestToolsProvider([("a", "Tool a.")])
    tool_registry.register(stale)
    assert tool_registry.register(RequestToolsProvider([("a", "Tool a.")])) is stale
    assert tool_registry.version == 1
    fresh = RequestToolsProvider([("a", "Tool a."), ("b", "Tool b.")])
    assert tool_registry.register(fresh) is fresh
    assert tool_registry.version == 2
    items = tool_registry.get_provider("request_tools").input_schema["properties"]["names"]
    assert [m["enum"] for m in items["items"]["anyOf"]] == [["a"], ["b"]]


def test_another_type_from_the_same_pack_collides_naming_both(
    tool_registry: ToolRegistry,
) -> None:
    tool_registry.register(_from(PACK))
    other = function_tool("search", "Search.", {"type": "object"}, lambda: "")
    other.origin = PACK
    with pytest.raises(ToolCollisionError) as caught:
        tool_registry.register(other)
    assert "FakeTool 'search'" in caught.value.first
    assert "_FunctionSchemaTool 'search'" in caught.value.second
    assert tool_registry.version == 1


def test_the_same_type_from_another_distribution_collides_naming_both(
    tool_registry: ToolRegistry,
) -> None:
    tool_registry.register(_from(PACK))
    elsewhere = Origin(pack="notes", distribution="notes-fork", version="2.0")
    with pytest.raises(ToolCollisionError) as caught:
        tool_registry.register(_from(elsewhere))
    assert "toolpalette-notes 1.0" in str(caught.value)
    assert "notes-fork 2.0" in str(caught.value)
    assert tool_registry.version == 1


@pytest.mark.parametrize(
    "origins", [(None, None), (PACK, None), (None, PACK), (Origin(), Origin())]
)
def test_tools_of_unknown_origin_are_never_taken_for_each_other(
    tool_registry: ToolRegistry, origins: tuple[Origin | None, Origin | None]
) -> None:
    tool_registry.register(_from(origins[0]))
    with pytest.raises(ToolCollisionError):
        tool_registry.register(_from(origins[1]))


# -- matches -----------------------------------------------------------------------------


def test_matches_says_whether_the_registered_tool_has_this_input_schema() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    registry = make_registry(fake_tool("search", input_schema=schema))
    assert registry.matches("search", {"properties": {"q": {"type": "string"}}, "type": "object"})
    assert not registry.matches("search", {"type": "object"})
    assert not registry.matches("unknown", schema)
    assert not registry.matches(None, schema)
    assert registry.matches("search", as_provider(registry.get_provider("search")).input_schema)


def test_a_function_and_a_class_under_one_name_collide(tool_registry: ToolRegistry) -> None:
    @tool(name="read_note")
    def impostor(text: str) -> str:
        """Impostor."""
        return text

    tool_registry.register(ReadNote)
    with pytest.raises(ToolCollisionError) as info:
        tool_registry.register(impostor)
    assert "ReadNote" in info.value.first
    assert "impostor" in info.value.second


def test_registering_what_is_not_a_tool_fails_and_changes_nothing(
    tool_registry: ToolRegistry,
) -> None:
    with pytest.raises(ToolDefinitionError):
        tool_registry.register(lambda: None)
    assert tool_registry.version == 0


# -- classes without @tool ------------------------------------------------------------


def test_register_skips_a_class_without_tool_with_a_warning(tool_registry: ToolRegistry) -> None:
    with pytest.warns(PluginWarning, match="Untagged"):
        assert tool_registry.register(Untagged) is None
    assert len(tool_registry) == 0
    assert tool_registry.version == 0


def test_register_all_skips_and_keeps_the_rest(tool_registry: ToolRegistry) -> None:
    with pytest.warns(PluginWarning):
        registered = tool_registry.register_all(ReadNote, Untagged, search)
    assert [p.name for p in registered] == ["read_note", "search"]


def test_unregister_skips_a_class_without_tool_with_a_warning(tool_registry: ToolRegistry) -> None:
    tool_registry.register(ReadNote)
    with pytest.warns(PluginWarning, match="Untagged"):
        assert tool_registry.unregister(Untagged) is False
    assert tool_registry.version == 1


def test_constructor_registers_in_order() -> None:
    with pytest.warns(PluginWarning):
        registry = ToolRegistry([search, Untagged, ReadNote])
    assert [p.name for p in registry.providers()] == ["search", "read_note"]


# -- None and unknown names ------------------------------------------------------------


def test_none_is_an_unknown_name_to_lookups() -> None:
    registry = make_registry("beta", "alpha")
    with pytest.raises(TypeError):
        registry.has_tool(None)  # type: ignore[arg-type]
    with pytest.raises(ToolNotFoundError) as info:
        registry.get_provider(None)
    assert info.value.tool_name is None
    assert info.value.available == ("alpha", "beta")
    assert "alpha, beta" in str(info.value)
    with pytest.raises(ToolNotFoundError) as info:
        registry.create_tool(None)
    assert info.value.available == ("alpha", "beta")


@pytest.mark.parametrize("name", [123, [], ("a",), b"alpha"])
def test_non_string_names_are_unknown_to_lookups(name: Any) -> None:
    registry = make_registry("alpha")
    with pytest.raises(ToolNotFoundError):
        registry.get_provider(name)


@pytest.mark.parametrize("name", ["ALPHA", "alpha ", "\uff41\uff4c\uff50\uff48\uff41", "", "alp"])
def test_lookups_are_exact(name: str) -> None:
    registry = make_registry("alpha")
    assert not registry.has_tool(name)
    with pytest.raises(ToolNotFoundError):
        registry.get_provider(name)


def test_has_tool_and_unregister_refuse_none() -> None:
    registry = make_registry("alpha")
    with pytest.raises(TypeError):
        registry.has_tool(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        registry.has_tool(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        registry.unregister(None)
    assert registry.has_tool("alpha")
    assert registry.version == 1


def test_unknown_name_lists_the_available_tools() -> None:
    registry = make_registry("b", "a")
    with pytest.raises(ToolNotFoundError, match="Available tools: a, b"):
        registry.get_provider("c")
    with pytest.raises(ToolNotFoundError, match="Available tools: none"):
        ToolRegistry().create_tool("c")


# -- unregister, replace, retain, version ---------------------------------------------


def test_unregister_by_name_provider_function_and_class(tool_registry: ToolRegistry) -> None:
    fake = fake_tool("fake")
    tool_registry.register_all(fake, search, ReadNote, WriteNote)
    assert tool_registry.unregister("fake") is True
    assert tool_registry.unregister(search) is True
    assert tool_registry.unregister(ReadNote) is True
    assert tool_registry.unregister(as_provider(WriteNote)) is True
    assert len(tool_registry) == 0
    assert tool_registry.version == 8


def test_unregister_is_state_idempotent(tool_registry: ToolRegistry) -> None:
    tool_registry.register(ReadNote)
    assert tool_registry.unregister(ReadNote) is True
    version = tool_registry.version
    assert tool_registry.unregister(ReadNote) is False
    assert tool_registry.unregister("read_note") is False
    assert tool_registry.unregister("never_there") is False
    assert tool_registry.version == version


def test_unregister_a_different_provider_under_the_name_removes_nothing(
    tool_registry: ToolRegistry,
) -> None:
    kept = fake_tool("x")
    tool_registry.register(kept)
    assert tool_registry.unregister(fake_tool("x")) is False
    assert tool_registry.get_provider("x") is kept


def test_reads_never_bump_the_version() -> None:
    registry = make_registry("a", "b")
    version = registry.version
    registry.tool_names()
    registry.providers()
    registry.versioned_surface().serialized()
    registry.get_provider("a")
    registry.has_tool("a")
    registry.concurrent_safe_tools()
    list(registry)
    repr(registry)
    assert registry.version == version == 2


def test_replace_keeps_the_position_and_bumps_once() -> None:
    registry = make_registry("a", "b", "c")
    new_b = fake_tool("b")
    registry.replace(new_b)
    assert registry.get_provider("b") is new_b
    assert registry.versioned_surface().names == ("a", "b", "c")
    assert registry.version == 4
    registry.replace(new_b)
    assert registry.version == 4
    registry.replace(fake_tool("d"))
    assert registry.versioned_surface().names == ("a", "b", "c", "d")


def test_retain_removes_the_rest_at_once() -> None:
    registry = make_registry("c", "a", "b", "d")
    assert registry.retain(["a", "zzz"]) == ["b", "c", "d"]
    assert registry.tool_names() == ["a"]
    assert registry.version == 5
    assert registry.retain(["a"]) == []
    assert registry.version == 5


def test_names_sorted_providers_in_registration_order() -> None:
    registry = make_registry("zeta", "alpha", "mid")
    assert registry.tool_names() == ["alpha", "mid", "zeta"]
    assert [p.name for p in registry] == ["zeta", "alpha", "mid"]
    assert registry.has_tool("alpha")
    with pytest.raises(TypeError, match="has_tool"):
        assert "alpha" in registry  # one spelling: has_tool
    assert repr(registry) == "<ToolRegistry v3: alpha, mid, zeta>"
    assert repr(ToolRegistry()) == "<ToolRegistry v0: empty>"


# -- surfaces -------------------------------------------------------------------------


def test_versioned_surface_is_one_object_per_version() -> None:
    registry = make_registry("a")
    surface = registry.versioned_surface()
    assert registry.versioned_surface() is surface
    assert surface.serialized() is surface.serialized()
    registry.register(fake_tool("b"))
    newer = registry.versioned_surface()
    assert newer is not surface
    assert (surface.version, surface.names) == (1, ("a",))
    assert (newer.version, newer.names) == (2, ("a", "b"))


def test_surface_schemas_and_serialization() -> None:
    registry = ToolRegistry([search, ReadNote])
    surface = registry.versioned_surface()
    assert [s["name"] for s in surface.schemas] == ["search", "read_note"]
    assert surface.schemas[0]["input_schema"] == as_provider(search).input_schema
    assert json.loads(surface.serialized()) == surface.schemas


def test_serialization_is_byte_equal_for_the_same_order() -> None:
    first = ToolRegistry([search, ReadNote, WriteNote, fake_tool("f", read_only=True)])
    second = ToolRegistry([search, ReadNote, WriteNote, fake_tool("f", read_only=True)])
    assert first.versioned_surface().serialized() == second.versioned_surface().serialized()
    third = ToolRegistry([ReadNote, search, WriteNote, fake_tool("f", read_only=True)])
    assert first.versioned_surface().serialized() != third.versioned_surface().serialized()


def test_output_schema_is_part_of_the_surface_only_when_published() -> None:
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    registry = make_registry(fake_tool("with", output_schema=schema), "without")
    with_out, without = registry.versioned_surface().schemas
    assert with_out["output_schema"] == schema
    assert "output_schema" not in without


# -- callbacks ------------------------------------------------------------------------


def test_surface_changed_callback_receives_name_sorted_diffs(tool_registry: ToolRegistry) -> None:
    diffs: list[SurfaceDiff] = []
    remove = tool_registry.on_surface_changed(diffs.append)
    tool_registry.register_all(*(fake_tool(n) for n in ("c", "a", "d", "b")))
    tool_registry.register(tool_registry.get_provider("a"))  # no change, no diff
    tool_registry.retain(["b"])
    tool_registry.replace(fake_tool("b"))
    tool_registry.unregister("b")
    remove()
    tool_registry.register(fake_tool("late"))
    assert diffs == [
        SurfaceDiff(1, added=("c",)),
        SurfaceDiff(2, added=("a",)),
        SurfaceDiff(3, added=("d",)),
        SurfaceDiff(4, added=("b",)),
        SurfaceDiff(5, removed=("a", "c", "d")),
        SurfaceDiff(6, changed=("b",)),
        SurfaceDiff(7, removed=("b",)),
    ]


def test_a_raising_callback_is_logged_not_propagated(
    tool_registry: ToolRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[int] = []

    def broken(diff: SurfaceDiff) -> None:
        raise RuntimeError("callback bug")

    tool_registry.on_surface_changed(broken)
    tool_registry.on_surface_changed(lambda diff: seen.append(diff.version))
    with caplog.at_level(logging.ERROR, logger="toolpalette.registry"):
        tool_registry.register(fake_tool("a"))
    assert tool_registry.has_tool("a")
    assert seen == [1]
    assert any(r.exc_info and "callback bug" in str(r.exc_info[1]) for r in caplog.records)


def test_removing_a_callback_twice_is_harmless(tool_registry: ToolRegistry) -> None:
    remove = tool_registry.on_surface_changed(lambda diff: None)
    remove()
    remove()


# -- concurrency-safe filter and draining removal -------------------------------------


def test_concurrent_safe_tools() -> None:
    registry = make_registry(
        fake_tool("ro", read_only=True),
        fake_tool("rw"),
        fake_tool("rw_safe", concurrency_safe=True),
        fake_tool("ro_unsafe", read_only=True, concurrency_safe=False),
        search,
        WriteNote,
    )
    assert [p.name for p in registry.concurrent_safe_tools()] == ["ro", "rw_safe", "search"]


def test_removal_drains_in_flight_handles() -> None:
    fake = fake_tool("slow", result=lambda value: "done")
    registry = make_registry(fake)
    provider = registry.get_provider("slow")
    bound = registry.create_tool("slow", parent="p")
    assert registry.unregister("slow")
    assert bound.invoke(provider.parse_input({})) == "done"
    assert fake.call_count == 1
    with pytest.raises(ToolNotFoundError):
        registry.get_provider("slow")
    with pytest.raises(ToolNotFoundError):
        registry.create_tool("slow")


def test_a_class_tool_handle_outlives_its_registration(tool_registry: ToolRegistry) -> None:
    tool_registry.register(ReadNote)
    bound = tool_registry.create_tool("read_note")
    tool_registry.unregister(ReadNote)
    assert bound.invoke(Note(text="still here")) == "still here"


SURFACE_SCRIPT = """
import enum, hashlib, sys
from typing import Literal
import pydantic
from toolpalette import Tool, ToolRegistry, tool
from toolpalette.testing import fake_tool

class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"

class Options(pydantic.BaseModel):
    tags: frozenset[str] = frozenset()
    colour: Colour = Colour.RED
    mode: Literal["z", "a", "m"] = "z"

@tool(read_only=True)
class Paint(Tool):
    '''Paint things.'''
    def run(self, input: Options) -> str:
        return ""

@tool
def search(query: str, limit: int = 10, fields: set[str] | None = None) -> list[str]:
    '''Search.

    Args:
        query: What to look for.
    '''
    return []

registry = ToolRegistry([Paint, search, fake_tool("fake", metadata={"b": 1, "a": 2})])
sys.stdout.write(hashlib.sha256(registry.versioned_surface().serialized()).hexdigest())
"""


def test_serialization_is_byte_equal_across_processes_and_hash_seeds() -> None:
    digests = set()
    for seed in ("0", "1", "12345"):
        result = subprocess.run(
            [sys.executable, "-c", SURFACE_SCRIPT],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        digests.add(result.stdout)
    assert len(digests) == 1


def test_a_lone_surrogate_in_one_tool_does_not_break_the_surface() -> None:
    registry = make_registry(fake_tool("ok"), fake_tool("odd", description="Odd \ud800 text"))
    data = registry.versioned_surface().serialized()
    data.decode("utf-8")  # valid UTF-8: the surrogate is escaped
    assert b"\\ud800" in data
    assert json.loads(data) == registry.versioned_surface().schemas
