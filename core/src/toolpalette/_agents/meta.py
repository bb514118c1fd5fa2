"""The meta-tools ``request_tools`` and ``request_skill``: asking for more, inside a catalog.

Their input schema lists the catalog as ``oneOf`` ``const`` entries, each with that
member's own description, so a provider's native validation already refuses names off
the catalog; the admission code refuses them again, in case validation was bypassed.
The catalog never enters the prompt as free text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from toolpalette._tools.provider import BoundTool, ToolProvider

__all__ = ["Admitter", "CatalogEntry", "RequestSkillProvider", "RequestToolsProvider"]

CatalogEntry = tuple[str, str]
"""A catalog member: its name (or full skill id) and its description."""


class Admitter(Protocol):
    """What a meta-tool's parent (the bound thinker) does with a request."""

    def admit(self, kind: str, names: Sequence[str]) -> dict[str, Any]:
        """Decide every name; returns ``{"granted": [...], "refused": [...], ...}``."""
        ...


def _catalog_schema(field: str, noun: str, catalog: Sequence[CatalogEntry]) -> dict[str, Any]:
    members = [{"const": name, "description": description} for name, description in catalog]
    return {
        "type": "object",
        "properties": {
            field: {
                "type": "array",
                "description": f"The {noun} to request, by name.",
                "items": {"oneOf": members},
                "minItems": 1,
                "uniqueItems": True,
            }
        },
        "required": [field],
        "additionalProperties": False,
    }


class _RequestProvider(ToolProvider):
    """Common ground of the two meta-tools; equal to any other instance of its type."""

    _kind: str
    _field: str
    _noun: str
    _name: str
    _description: str

    def __init__(self, catalog: Sequence[CatalogEntry]) -> None:
        self.catalog: tuple[CatalogEntry, ...] = tuple(catalog)
        """The members the model may ask for, in catalog order."""
        self._schema = _catalog_schema(self._field, self._noun, self.catalog)

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
    def concurrency_safe(self) -> bool:
        return False

    def create(self, parent: Any = None) -> BoundTool:
        if parent is None or not hasattr(parent, "admit"):
            raise TypeError(f"{self._name} runs only for a bound thinker")
        kind, field = self._kind, self._field

        def call(value: dict[str, Any], _context: Any) -> dict[str, Any]:
            result: dict[str, Any] = parent.admit(kind, list(value[field]))
            return result

        return BoundTool(call, is_async=False, takes_context=False)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))


class RequestToolsProvider(_RequestProvider):
    """``request_tools``: admit deferred tools from the thinker's catalog, from the next turn.

    Mutating (it widens the palette), so a read-only thinker's sweep removes it.
    """

    _kind = "tool"
    _field = "names"
    _noun = "tools"
    _name = "request_tools"
    _description = (
        "Ask for more tools. Each allowed value of `names` is a tool you may request, with "
        "what it does. Granted tools become available from your next turn."
    )


class RequestSkillProvider(_RequestProvider):
    """``request_skill``: attach skills to the conversation, from the next turn on.

    Read-only (it changes only what the model reads), so it survives the sweep.
    """

    _kind = "skill"
    _field = "skills"
    _noun = "skills"
    _name = "request_skill"
    _description = (
        "Ask for skills: instructions for specific kinds of work. Each allowed value of "
        "`skills` is a skill you may request, with what it is for. Granted skills are added "
        "to your instructions from your next turn."
    )

    @property
    def read_only(self) -> bool:
        return True
