"""``@tool``, ``ToolSpec``, ``get_spec``, ``Tool`` and ``ToolContext``.

``get_spec`` is internal (how the registry reads what ``@tool`` recorded): these are
its unit tests, so they import it from its module.
"""

from __future__ import annotations

import dataclasses
import threading

import pydantic
import pytest
from toolpalette import Tool, ToolContext, ToolSpec, tool
from toolpalette._tools.tool import MAX_GUIDANCE, get_spec
from toolpalette.errors import ToolDefinitionError
from toolpalette.testing import as_provider


class Query(pydantic.BaseModel):
    text: str


def test_bare_decorator_attaches_a_default_spec_and_returns_the_function() -> None:
    def ping() -> str:
        """Ping."""
        return "pong"

    decorated = tool(ping)
    assert decorated is ping
    assert get_spec(ping) == ToolSpec()
    assert ping() == "pong"


def test_decorator_with_options_records_every_option() -> None:
    def key(value: object) -> str:
        return "k"

    def refiner(schema: dict[str, object]) -> None:
        return None

    @tool(
        name="search-docs",
        description="Search the docs.",
        display_name="Search docs",
        action_verb="Searching",
        weight=2.5,
        read_only=True,
        concurrency_safe=False,
        resource_key=key,
        timeout=3.0,
        output_cap=1000,
        metadata={"team": "docs"},
        refine_schema=refiner,
        model_dependent=True,
        grade="large",
        guidance="Search the docs before answering a question about them.",
    )
    def search(text: str) -> str:
        return text

    spec = get_spec(search)
    assert spec is not None
    assert spec.name == "search-docs"
    assert spec.description == "Search the docs."
    assert spec.display_name == "Search docs"
    assert spec.action_verb == "Searching"
    assert spec.weight == 2.5
    assert spec.read_only is True
    assert spec.concurrency_safe is False
    assert spec.resource_key is key
    assert spec.timeout == 3.0
    assert spec.output_cap == 1000
    assert spec.metadata == {"team": "docs"}
    assert spec.refine_schema is refiner
    assert spec.model_dependent is True
    assert spec.grade == "large"
    assert spec.guidance == "Search the docs before answering a question about them."


def test_defaults_a_tool_is_mutating_unless_declared() -> None:
    spec = ToolSpec()
    assert spec.read_only is False
    assert spec.concurrency_safe is None
    assert spec.metadata == {}
    assert spec.weight == 1.0


def test_annotation_defaults_are_the_mcp_specifications() -> None:
    spec = ToolSpec()
    assert (spec.destructive, spec.idempotent, spec.open_world) == (True, False, True)


def test_empty_parentheses_work_like_the_bare_decorator() -> None:
    @tool()
    def ping() -> str:
        """Ping."""
        return "pong"

    assert get_spec(ping) == ToolSpec()


def test_object_and_options_together_are_refused() -> None:
    def ping() -> None: ...

    with pytest.raises(TypeError):
        tool(ping, name="x")  # type: ignore[call-overload]


@pytest.mark.parametrize(
    "name", ["", "has space", "a" * 65, "dots.are.out", "slash/no", "ünï", "new\nline"]
)
def test_invalid_names_are_refused_at_decoration(name: str) -> None:
    with pytest.raises(ToolDefinitionError) as info:
        tool(name=name)
    assert "1-64 characters" in info.value.reason


@pytest.mark.parametrize("name", ["a", "A-b_9", "x" * 64, "search", "read_file"])
def test_valid_names(name: str) -> None:
    assert tool(name=name)


@pytest.mark.parametrize("timeout", [0, -1, -0.5])
def test_non_positive_timeout_is_refused(timeout: float) -> None:
    with pytest.raises(ToolDefinitionError, match="timeout"):
        tool(timeout=timeout)


@pytest.mark.parametrize("cap", [0, -10])
def test_non_positive_output_cap_is_refused(cap: int) -> None:
    with pytest.raises(ToolDefinitionError, match="output_cap"):
        tool(output_cap=cap)


def test_guidance_is_kept_on_the_spec_and_the_record() -> None:
    text = "Call this first.\n\tThen read what it returns."

    @tool(read_only=True, guidance=text)
    def start() -> str:
        """Start here."""
        return "started"

    assert get_spec(start).guidance == text  # type: ignore[union-attr]
    assert as_provider(start).guidance == text
    assert as_provider(start).info.guidance == text
    assert ToolSpec().guidance is None


@pytest.mark.parametrize(
    ("guidance", "reason"),
    [
        ("", "non-empty"),
        ("   \n", "non-empty"),
        (42, "non-empty string"),
        ("x" * (MAX_GUIDANCE + 1), f"at most {MAX_GUIDANCE} characters"),
        ("Use it\x1b[31m now", "control characters"),
        ("Nul\x00", "control characters"),
    ],
)
def test_guidance_that_is_not_a_short_text_is_refused(guidance: object, reason: str) -> None:
    with pytest.raises(ToolDefinitionError, match=reason):
        tool(guidance=guidance)  # type: ignore[call-overload]


def test_guidance_of_the_longest_length_is_accepted() -> None:
    assert tool(guidance="x" * MAX_GUIDANCE) is not None


def test_unknown_options_are_refused() -> None:
    with pytest.raises(TypeError):
        tool(colour="red")  # type: ignore[call-overload]


def test_a_plain_class_cannot_be_a_tool() -> None:
    class NotATool:
        pass

    with pytest.raises(ToolDefinitionError, match=r"subclass toolpalette\.Tool"):
        tool(NotATool)


def test_a_non_callable_cannot_be_a_tool() -> None:
    with pytest.raises(ToolDefinitionError):
        tool(read_only=True)(42)


def test_class_spec_is_not_inherited() -> None:
    @tool(read_only=True)
    class Base(Tool):
        """Base."""

        def run(self, input: Query) -> str:
            return input.text

    class Child(Base):
        """Child without its own @tool."""

    assert get_spec(Base) is not None
    assert get_spec(Child) is None


def test_get_spec_of_undecorated_objects_is_none() -> None:
    def plain() -> None: ...

    assert get_spec(plain) is None
    assert get_spec(42) is None
    assert get_spec(Tool) is None


def test_tool_keeps_its_parent_and_run_is_abstract_by_convention() -> None:
    parent = object()
    instance = Tool(parent)
    assert instance.parent is parent
    with pytest.raises(NotImplementedError):
        instance.run(None)


def test_tool_context_defaults_are_fresh_per_instance() -> None:
    first, second = ToolContext(), ToolContext()
    assert first.parent is None
    assert isinstance(first.abort, threading.Event)
    assert first.abort is not second.abort
    assert not first.abort.is_set()
    assert first.config == {}
    assert (first.call_id, first.run_id, first.thread_id) == (None, None, None)


def test_tool_context_and_spec_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        ToolContext().parent = 1  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ToolSpec().name = "x"  # type: ignore[misc]
