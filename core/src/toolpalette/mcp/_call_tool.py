"""``call_tool``: the meta-tool an MCP client calls any tool of the catalog through.

Its annotations are the least permissive of the tools it can reach.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any, Final

from toolpalette import ToolInfo, ToolProvider
from toolpalette._tools.provider import BoundTool

__all__ = ["CALL_TOOL", "CallToolProvider", "call_tool_for"]

CALL_TOOL: Final = "call_tool"
"""The name ``call_tool`` is served under."""

_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "name": {
            "type": "string",
            "description": "The tool's name: one listed here, or one search_tools found.",
        },
        "arguments": {
            "type": "object",
            "description": "The tool's input, as its input schema says (default: {}).",
        },
    },
    "required": ["name"],
    "additionalProperties": False,
}


class CallToolProvider(ToolProvider):
    """``call_tool``, with the annotations of what it can reach.

    Use `call_tool_for()`, which shares one provider per combination of
    annotations. Its input is checked as any tool's is (`parse_input()`, the
    published schema and the strict JSON policy); the server runs the named tool.
    """

    def __init__(
        self, *, read_only: bool, destructive: bool, idempotent: bool, open_world: bool
    ) -> None:
        self._annotations = (read_only, destructive, idempotent, open_world)
        self._record = ToolInfo(
            name=CALL_TOOL,
            description="Call any tool you may use by its name, listed or not (for example "
            "one search_tools found): give its name and its arguments. The answer is that "
            "tool's own.",
            input_schema=_SCHEMA,
            read_only=read_only,
            destructive=destructive,
            idempotent=idempotent,
            open_world=open_world,
        )

    @property
    def info(self) -> ToolInfo:
        return self._record

    def create(self, parent: Any = None) -> BoundTool:
        raise TypeError("call_tool is run by the MCP server, not through a thinker")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._annotations == self._annotations

    def __hash__(self) -> int:
        return hash((type(self), self._annotations))


_MADE: dict[tuple[bool, bool, bool, bool], CallToolProvider] = {}
_LOCK = threading.Lock()


def call_tool_for(reachable: Iterable[ToolProvider]) -> CallToolProvider:
    """The ``call_tool`` whose annotations are the least permissive of ``reachable``.

    With nothing to reach it is read-only and closed-world (it can do nothing).
    """
    read_only = idempotent = True
    destructive = open_world = False
    for provider in reachable:
        if not provider.read_only:
            read_only = False
            destructive = destructive or provider.destructive
            idempotent = idempotent and provider.idempotent
        open_world = open_world or provider.open_world
    key = (read_only, destructive, idempotent, open_world)
    with _LOCK:
        found = _MADE.get(key)
        if found is None:
            found = _MADE[key] = CallToolProvider(
                read_only=key[0], destructive=key[1], idempotent=key[2], open_world=key[3]
            )
    return found
