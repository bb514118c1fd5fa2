"""What both adapters share: a result's text for a framework, and a plain tool provider."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from toolpalette._tools.provider import BoundTool, ToolProvider
from toolpalette._tools.result import ToolResult
from toolpalette._tools.tool import TOOL_NAME
from toolpalette.errors import ToolDefinitionError

__all__ = ["ForeignToolProvider", "failure_text"]


def failure_text(result: ToolResult) -> str:
    """A failed result as the model reads it in a framework without an error flag."""
    return f"Error ({result.status} {result.code}): {result.text}"


class ForeignToolProvider(ToolProvider):
    """A tool another framework defined, run through toolpalette's pipeline.

    The pipeline validates the input against ``input_schema`` (the framework's own
    schema), then ``run`` gets the validated JSON object. The tool is mutating unless
    declared ``read_only`` (a foreign tool's effects are not known), and calls do not
    overlap unless it is read-only.
    """

    def __init__(
        self,
        name: str,
        description: str,
        input_schema: Mapping[str, Any],
        run: Callable[[dict[str, Any]], Awaitable[Any]],
        *,
        read_only: bool = False,
    ) -> None:
        if not TOOL_NAME.match(name):
            raise ToolDefinitionError(
                tool_name=name, reason="names are 1-64 characters of letters, digits, '_' and '-'"
            )
        if input_schema.get("type") != "object":
            raise ToolDefinitionError(tool_name=name, reason="its input schema is not an object")
        self._name = name
        self._description = description or name
        self._schema = dict(input_schema)
        self._run = run
        self._read_only = read_only

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        return self._description

    @property
    def input_schema(self) -> dict[str, Any]:
        return self._schema

    @property
    def read_only(self) -> bool:
        return self._read_only

    def create(self, parent: Any = None) -> BoundTool:
        run = self._run

        async def call(value: dict[str, Any], _context: Any) -> Any:
            return await run(dict(value))

        return BoundTool(call, is_async=True, takes_context=False)
