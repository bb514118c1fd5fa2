"""``ToolInfo``: the one record of what a tool is, the provider contract."""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import pytest
from toolpalette import BoundTool, Origin, ToolDefinitionError, ToolInfo, ToolProvider, tool
from toolpalette.testing import FakeTool, as_provider, make_registry


@tool(
    read_only=False,
    destructive=False,
    idempotent=True,
    open_world=False,
    display_name="Archive",
    action_verb="Archiving",
    weight=3.0,
    metadata={"team": "ops"},
    concurrency_safe=True,
    timeout=12,
    output_cap=2048,
)
def archive(path: str) -> dict[str, int]:
    """Archive a file.

    Args:
        path: The file to archive.
    """
    return {"bytes": len(path)}


class Recorded(ToolProvider):
    """A third party's provider as the plugin author guide writes it: one record."""

    info = ToolInfo(
        name="recorded",
        description="Holds its record.",
        input_schema={"type": "object", "properties": {}},
        idempotent=True,
        timeout=5.0,
    )

    def create(self, parent: Any = None) -> BoundTool:
        return BoundTool(lambda value, ctx: "done", is_async=False, takes_context=False)


with pytest.warns(DeprecationWarning, match=r"HandWritten describes its tool by overriding") as _w:

    class HandWritten(ToolProvider):
        """A provider written to the earlier contract: properties overridden."""

        def __init__(self) -> None:
            self.reads = 0

        @property
        def name(self) -> str:
            self.reads += 1
            return "hand_written"

        description = property(lambda self: "Made by hand.")
        input_schema = property(lambda self: {"type": "object", "properties": {}})
        idempotent = property(lambda self: True)
        timeout = property(lambda self: 5.0)

        def create(self, parent: Any = None) -> BoundTool:
            return BoundTool(lambda value, ctx: "done", is_async=False, takes_context=False)


DEFINED_AT = _w[0]


def _fields(obj: object) -> dict[str, Any]:
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(ToolInfo)}


def test_every_field_of_the_record_is_a_provider_property() -> None:
    # A provider holds its record, and each field reads as the property of its name.
    for field in dataclasses.fields(ToolInfo):
        assert isinstance(getattr(ToolProvider, field.name), property), field.name
        assert getattr(Recorded(), field.name) == getattr(Recorded.info, field.name)


def test_a_provider_without_a_record_cannot_be_made() -> None:
    class Bare(ToolProvider):
        def create(self, parent: Any = None) -> BoundTool:
            raise NotImplementedError

    with pytest.raises(TypeError, match="abstract"):
        Bare()  # type: ignore[abstract]


def test_overriding_properties_warns_once_where_the_class_is_defined() -> None:
    assert DEFINED_AT.filename == __file__
    assert "define `info`" in str(DEFINED_AT.message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")

        class Narrower(HandWritten):  # a subclass of a warned class is not warned again
            timeout = property(lambda self: 1.0)

        class Recorded2(Recorded):  # nor is a provider that holds its record
            name = property(lambda self: "recorded2")

    assert Narrower().info.timeout == 1.0


def test_a_property_provider_missing_a_required_field_says_which() -> None:
    with pytest.warns(DeprecationWarning, match="define `info`"):

        class Nameless(ToolProvider):
            description = property(lambda self: "No name.")

            def create(self, parent: Any = None) -> BoundTool:
                raise NotImplementedError

    with pytest.raises(ToolDefinitionError, match="defines `info`, or else name, input_schema"):
        _ = Nameless().info


def test_a_property_that_reads_the_base_gets_the_default() -> None:
    with pytest.warns(DeprecationWarning, match="define `info`"):

        class Titled(ToolProvider):
            name = property(lambda self: "titled_tool")
            description = property(lambda self: "Reads super().")
            input_schema = property(lambda self: {"type": "object"})

            @property
            def display_name(self) -> str:
                return "Custom: " + super().display_name

            def create(self, parent: Any = None) -> BoundTool:
                raise NotImplementedError

    assert Titled().info.display_name == "Custom: Titled tool"


@pytest.mark.parametrize(
    "provider",
    [
        as_provider(archive),
        Recorded(),
        HandWritten(),
        FakeTool("fake", read_only=True, timeout=2.0),
    ],
    ids=["function", "recorded", "hand-written", "fake"],
)
def test_the_record_holds_what_the_properties_say(provider: ToolProvider) -> None:
    assert _fields(provider.info) == _fields(provider)


def test_a_declared_tool_keeps_every_option_in_its_record() -> None:
    info = as_provider(archive).info
    assert (info.read_only, info.destructive, info.idempotent, info.open_world) == (
        False,
        False,
        True,
        False,
    )
    assert (info.display_name, info.action_verb, info.weight) == ("Archive", "Archiving", 3.0)
    assert dict(info.metadata) == {"team": "ops"}
    assert (info.concurrency_safe, info.timeout, info.output_cap) == (True, 12, 2048)
    assert info.input_schema["properties"]["path"]["description"] == "The file to archive."


def test_a_hand_written_provider_gets_the_defaults_it_does_not_override() -> None:
    info = HandWritten().info
    assert (info.name, info.description, info.idempotent, info.timeout) == (
        "hand_written",
        "Made by hand.",
        True,
        5.0,
    )
    assert (info.read_only, info.destructive, info.open_world) == (False, True, True)
    assert (info.display_name, info.action_verb, info.weight) == ("Hand written", "Running", 1.0)
    assert (info.output_schema, info.concurrency_safe, info.output_cap) == (None, False, None)


def test_the_record_is_read_once_and_shared_by_an_origin_stamped_copy() -> None:
    provider = HandWritten()
    first = provider.info
    reads = provider.reads
    assert provider.info is first
    assert provider.reads == reads  # the properties are not read again
    stamped = provider.with_origin(Origin("pack", "dist", "1.0", None))
    assert stamped.info is first


def test_the_record_is_frozen_and_replace_makes_a_new_one() -> None:
    info = as_provider(archive).info
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.name = "other"  # type: ignore[misc]
    renamed = info.replace(name="stow")
    assert (renamed.name, info.name) == ("stow", "archive")
    assert renamed == dataclasses.replace(info, name="stow")
    assert renamed.replace(name="archive") == info
    with pytest.raises(TypeError):
        info.replace(colour="blue")


def test_records_are_values() -> None:
    one = ToolInfo(name="a", description="A.", input_schema={"type": "object"})
    two = ToolInfo(name="a", description="A.", input_schema={"type": "object"})
    assert one == two
    assert hash(one) == hash(two)
    assert one != one.replace(weight=2.0)


def test_an_empty_display_name_is_the_name_made_readable() -> None:
    info = ToolInfo(name="read_file", description="Read.", input_schema={"type": "object"})
    assert info.display_name == "Read file"
    assert info.replace(display_name="Reader").display_name == "Reader"


def test_the_registry_surface_is_written_from_the_record() -> None:
    registry = make_registry(archive, HandWritten())
    assert registry.versioned_surface().schemas == [
        {
            "name": p.info.name,
            "description": p.info.description,
            "input_schema": p.info.input_schema,
            **({"output_schema": p.info.output_schema} if p.info.output_schema else {}),
        }
        for p in registry.providers()
    ]
