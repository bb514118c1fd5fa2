"""Tools of the healthy test pack."""

from __future__ import annotations

from typing import Any

import pydantic
import toolpalette


@toolpalette.tool(read_only=True)
def echo(text: str) -> str:
    """Return the text unchanged.

    Args:
        text: What to echo.
    """
    return text


class CounterInput(pydantic.BaseModel):
    """Input of counter."""

    start: int = 0


@toolpalette.tool(name="counter")
class Counter(toolpalette.Tool):
    """Count up by one from a start value."""

    def run(self, input: CounterInput) -> int:
        return input.start + 1


class UpperProvider(toolpalette.ToolProvider):
    """A provider built by hand, with its own schema."""

    info = toolpalette.ToolInfo(
        name="upper",
        description="Upper-case a text.",
        input_schema={
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
        read_only=True,
    )

    def create(self, parent: Any = None) -> toolpalette.BoundTool:
        return toolpalette.BoundTool(
            lambda value, _ctx: value["text"].upper(), is_async=False, takes_context=False
        )

    def __eq__(self, other: object) -> bool:
        return type(other) is UpperProvider

    def __hash__(self) -> int:
        return hash(UpperProvider)


UPPER = UpperProvider()
