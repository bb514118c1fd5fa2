"""Tool schemas in each model provider's own format, in registration order.

Formats: ``openai_chat`` (Chat Completions), ``openai_responses`` (Responses API),
``anthropic`` (Messages) and ``mcp`` (``tools/list``). ``strict: true`` is set for the
OpenAI formats only where the schema qualifies for strict mode: every object closed
(``additionalProperties: false``) with every property required, and no ``default``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any, Literal

from toolpalette._tools.provider import ToolProvider

__all__ = ["FORMATS", "Format", "export", "export_json", "qualifies_strict"]

Format = Literal["openai_chat", "openai_responses", "anthropic", "mcp"]


_NOT_STRICT: frozenset[str] = frozenset(
    {
        "allOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "dependentRequired",
        "dependentSchemas",
        "patternProperties",
        "unevaluatedProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "unevaluatedItems",
        "contains",
        "minContains",
        "maxContains",
        "uniqueItems",
    }
)
"""Keywords OpenAI's strict mode refuses (a schema using one is sent without ``strict``)."""
_SCHEMA_MAPS = ("properties", "$defs", "definitions")
"""Keywords whose value maps names to subschemas (the names are not keywords)."""
_DATA = ("const", "enum", "examples", "description", "title", "required")
"""Keywords whose value is data, not a subschema."""


def qualifies_strict(schema: Any) -> bool:
    """Whether OpenAI's strict mode accepts ``schema`` as it stands.

    Conservative: when in doubt (a keyword strict mode refuses), it says no, and the
    tool is sent without ``strict``; the pipeline validates its input either way.
    """
    if not isinstance(schema, dict):
        return True
    if "default" in schema or not _NOT_STRICT.isdisjoint(schema):
        return False
    kind = schema.get("type")
    if kind == "object" or (isinstance(kind, list) and "object" in kind) or "properties" in schema:
        properties = schema.get("properties") or {}
        if schema.get("additionalProperties") is not False:
            return False
        if sorted(schema.get("required") or []) != sorted(properties):
            return False
    for key, value in schema.items():
        if key in _DATA:
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            children: list[Any] = list(value.values())
        elif isinstance(value, list):
            children = value
        else:
            children = [value]
        if not all(qualifies_strict(child) for child in children):
            return False
    return True


def _openai_chat(p: ToolProvider) -> dict[str, Any]:
    function: dict[str, Any] = {
        "name": p.name,
        "description": p.description,
        "parameters": p.input_schema,
    }
    if qualifies_strict(p.input_schema):
        function["strict"] = True
    return {"type": "function", "function": function}


def _openai_responses(p: ToolProvider) -> dict[str, Any]:
    return {
        "type": "function",
        "name": p.name,
        "description": p.description,
        "parameters": p.input_schema,
        "strict": qualifies_strict(p.input_schema),
    }


def _anthropic(p: ToolProvider) -> dict[str, Any]:
    return {"name": p.name, "description": p.description, "input_schema": p.input_schema}


def _mcp(p: ToolProvider) -> dict[str, Any]:
    tool: dict[str, Any] = {
        "name": p.name,
        "title": p.display_name,
        "description": p.description,
        "inputSchema": p.input_schema,
        "annotations": {"readOnlyHint": p.read_only, "title": p.display_name},
    }
    if p.output_schema is not None:
        tool["outputSchema"] = p.output_schema
    return tool


FORMATS: dict[str, Callable[[ToolProvider], dict[str, Any]]] = {
    "openai_chat": _openai_chat,
    "openai_responses": _openai_responses,
    "anthropic": _anthropic,
    "mcp": _mcp,
}
"""Every supported format, by name."""


def export(providers: Iterable[ToolProvider], fmt: Format) -> list[dict[str, Any]]:
    """The providers' schemas in format ``fmt``, in the order given.

    Raises:
        ValueError: ``fmt`` is not a supported format.
    """
    try:
        convert = FORMATS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}") from None
    return [convert(p) for p in providers]


def export_json(providers: Iterable[ToolProvider], fmt: Format) -> bytes:
    """:func:`export` as canonical JSON bytes: the same palette gives the same bytes."""
    text = json.dumps(export(providers, fmt), sort_keys=True, separators=(",", ":"))
    return text.encode("utf-8")
