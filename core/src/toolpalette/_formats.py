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

from toolpalette._provider import ToolProvider

__all__ = ["FORMATS", "Format", "export", "export_json", "qualifies_strict"]

Format = Literal["openai_chat", "openai_responses", "anthropic", "mcp"]


def qualifies_strict(schema: Any) -> bool:
    """Whether OpenAI's strict mode accepts ``schema`` as it stands."""
    if isinstance(schema, list):
        return all(qualifies_strict(item) for item in schema)
    if not isinstance(schema, dict):
        return True
    if "default" in schema:
        return False
    if schema.get("type") == "object" or "properties" in schema:
        properties = schema.get("properties") or {}
        if schema.get("additionalProperties") is not False:
            return False
        if sorted(schema.get("required") or []) != sorted(properties):
            return False
    return all(qualifies_strict(v) for k, v in schema.items() if k != "const")


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
