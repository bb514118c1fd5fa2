"""``task_support``: declared on ``@tool`` and ``function_tool``, kept on the record, exported."""

from __future__ import annotations

import pytest
from toolpalette import ToolDefinitionError, ToolInfo, function_tool, tool
from toolpalette.testing import as_provider

_SCHEMA = {"type": "object", "properties": {}}


def test_a_tool_runs_as_a_task_only_when_it_declares_so() -> None:
    def plain() -> str:
        """Plain."""
        return "x"

    assert as_provider(tool(plain)).info.task_support == "forbidden"


@pytest.mark.parametrize("support", ["optional", "required"])
def test_tool_and_function_tool_carry_the_declaration(support: str) -> None:
    @tool(task_support=support)  # type: ignore[call-overload]
    def slow() -> str:
        """Slow."""
        return "x"

    made = function_tool("slow_fn", "Slow.", _SCHEMA, lambda: "x", task_support=support)  # type: ignore[arg-type]
    assert as_provider(slow).task_support == support
    assert made.info.task_support == support


def test_an_unknown_value_is_refused_with_the_values_named() -> None:
    with pytest.raises(ToolDefinitionError, match="forbidden, optional, required"):
        tool(task_support="always")  # type: ignore[call-overload]
    with pytest.raises(ToolDefinitionError, match="task_support"):
        function_tool("x", "X.", _SCHEMA, lambda: "x", task_support="sometimes")  # type: ignore[arg-type]


def test_the_record_has_the_field_with_its_default() -> None:
    info = ToolInfo(name="t", description="T.", input_schema=_SCHEMA)
    assert info.task_support == "forbidden"
    assert info.replace(task_support="required").task_support == "required"
