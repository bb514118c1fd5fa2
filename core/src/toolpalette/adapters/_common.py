"""What both adapters share: a result's text for a framework, and a foreign tool as ours."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from toolpalette._tools.function_tool import function_tool
from toolpalette._tools.provider import ToolProvider
from toolpalette._tools.result import ToolResult

__all__ = ["failure_text", "foreign_tool"]


def failure_text(result: ToolResult) -> str:
    """A failed result as the model reads it in a framework without an error flag."""
    return f"Error ({result.status} {result.code}): {result.text}"


def foreign_tool(
    name: str,
    description: str,
    input_schema: Mapping[str, Any],
    run: Callable[[dict[str, Any]], Awaitable[Any]],
    *,
    read_only: bool = False,
) -> ToolProvider:
    """A tool another framework defined, run through toolpalette's pipeline.

    The pipeline validates the input against ``input_schema`` (the framework's own
    schema), then ``run`` gets the validated JSON object. The tool is mutating unless
    declared ``read_only`` (a foreign tool's effects are not known), and calls do not
    overlap unless it is read-only. A tool without a description is described by its
    name.

    Raises:
        ToolDefinitionError: the name cannot be a toolpalette tool's.
        InvalidToolSchemaError: the schema is not valid JSON Schema of type ``object``.
    """

    async def call(**value: Any) -> Any:
        return await run(value)

    return function_tool(name, description or name, input_schema, call, read_only=read_only)
