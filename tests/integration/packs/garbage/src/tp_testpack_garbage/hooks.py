"""Hooks of a test pack whose register hooks return garbage next to one good tool."""

from __future__ import annotations

from typing import Any

import toolpalette


class _Foreign(toolpalette.ToolProvider):
    """A hand-built provider whose name and schema are given."""

    def __init__(self, name: str, schema: Any) -> None:
        self._record = toolpalette.ToolInfo(
            name=name, description="A hand-built tool.", input_schema=schema
        )

    @property
    def info(self) -> toolpalette.ToolInfo:
        return self._record

    def create(self, parent: Any = None) -> toolpalette.BoundTool:
        return toolpalette.BoundTool(lambda v, c: None, is_async=False, takes_context=False)


@toolpalette.tool(read_only=True)
def fine() -> str:
    """The one good tool of the garbage pack."""
    return "fine"


def not_a_tool() -> None:
    """A plain function without @tool."""


@toolpalette.tool
def no_description() -> None:
    pass


OBJECT = {"type": "object", "properties": {"x": {"type": "string"}}}
REMOTE = {"type": "object", "properties": {"x": {"$ref": "https://example.invalid/x.json"}}}
FILE_REF = {"type": "object", "properties": {"x": {"$ref": "file:///etc/hostname"}}}
INVALID = {"type": "object", "properties": 5}


@toolpalette.hookimpl
def toolpalette_register_tools() -> Any:
    return [
        42,
        None,
        object(),
        not_a_tool,
        no_description,
        _Foreign("bad name!", OBJECT),
        _Foreign("invalid_schema", INVALID),
        _Foreign("remote_ref", REMOTE),
        _Foreign("file_ref", FILE_REF),
        fine,
    ]


@toolpalette.hookimpl(specname="toolpalette_register_tools")
def toolpalette_register_a_number() -> Any:
    return 7


@toolpalette.hookimpl(specname="toolpalette_register_tools")
def toolpalette_register_nothing() -> Any:
    return None
