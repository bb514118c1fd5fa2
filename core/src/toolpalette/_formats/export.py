"""Tool schemas in each model provider's own format, in registration order."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final, Literal

from toolpalette._schema import strict as _strict
from toolpalette._schema.strict import Dialect
from toolpalette._tools.info import ToolInfo
from toolpalette._tools.provider import ToolProvider

__all__ = [
    "FORMATS",
    "NAMESPACES",
    "NATIVE_SEARCH",
    "Format",
    "export",
    "export_deferred",
    "export_json",
    "qualifies_strict",
    "strict_report",
]

Format = Literal["openai_chat", "openai_responses", "anthropic", "mcp"]


def qualifies_strict(schema: Any, dialect: Dialect = "openai") -> bool:
    """Whether ``dialect``'s strict mode accepts ``schema`` as it stands (see ``strict.py``)."""
    return _strict.qualifies(schema, dialect)


_DIALECT: dict[str, Dialect] = {
    "openai_chat": "openai",
    "openai_responses": "openai",
    "anthropic": "anthropic",
}
"""The strict subset each format's provider enforces (MCP has no strict mode)."""


def _parameters(p: ToolInfo, fmt: str, normalize: bool) -> tuple[dict[str, Any], bool]:
    """The schema to send for ``p`` in ``fmt``, and whether to mark it ``strict``."""
    schema = p.input_schema
    dialect = _DIALECT[fmt]
    if normalize:
        normalized = _strict.normalize(schema, dialect)
        if normalized.ok:
            return normalized.schema, True
    return schema, _strict.qualifies(schema, dialect)


def _openai_chat(p: ToolInfo, normalize: bool = False) -> dict[str, Any]:
    schema, strict = _parameters(p, "openai_chat", normalize)
    function: dict[str, Any] = {"name": p.name, "description": p.description, "parameters": schema}
    if strict:
        function["strict"] = True
    return {"type": "function", "function": function}


def _openai_responses(p: ToolInfo, normalize: bool = False) -> dict[str, Any]:
    schema, strict = _parameters(p, "openai_responses", normalize)
    return {
        "type": "function",
        "name": p.name,
        "description": p.description,
        "parameters": schema,
        "strict": strict,
    }


def _anthropic(p: ToolInfo, normalize: bool = False) -> dict[str, Any]:
    schema, strict = _parameters(p, "anthropic", normalize)
    tool: dict[str, Any] = {"name": p.name, "description": p.description, "input_schema": schema}
    if strict:
        tool["strict"] = True
    return tool


def _mcp(p: ToolInfo, normalize: bool = False) -> dict[str, Any]:
    # MCP's tool annotations: the only format with fields for them. destructiveHint and
    # idempotentHint mean something only for a tool that changes things (the spec).
    annotations: dict[str, Any] = {
        "title": p.display_name,
        "readOnlyHint": p.read_only,
        "openWorldHint": p.open_world,
    }
    if not p.read_only:
        annotations["destructiveHint"] = p.destructive
        annotations["idempotentHint"] = p.idempotent
    tool: dict[str, Any] = {
        "name": p.name,
        "title": p.display_name,
        "description": p.description,
        "inputSchema": p.input_schema,
        "annotations": annotations,
    }
    output = p.output_schema
    if output is not None and output.get("type") == "object":  # MCP wants an object
        tool["outputSchema"] = output
    if p.task_support != "forbidden":  # the tasks extension's declaration (absent: never)
        tool["execution"] = {"taskSupport": p.task_support}
    return tool


FORMATS: dict[str, Callable[[ToolInfo, bool], dict[str, Any]]] = {
    "openai_chat": _openai_chat,
    "openai_responses": _openai_responses,
    "anthropic": _anthropic,
    "mcp": _mcp,
}
"""Every supported format, by name."""


def _converter(fmt: str) -> Callable[[ToolInfo, bool], dict[str, Any]]:
    try:
        return FORMATS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}") from None


def export(
    providers: Iterable[ToolProvider], fmt: Format, *, strict: bool = False
) -> list[dict[str, Any]]:
    """The providers' schemas in format ``fmt``, in the order given.

    ``strict=True`` normalizes each schema into the provider's strict subset where it
    can (see `strict_report()` for the tools it could not); the model's input must
    then pass through `restore_input()` on the way in,
    as a strict thinker's calls do.

    Raises:
        ValueError: ``fmt`` is not a supported format.
    """
    convert = _converter(fmt)
    return [convert(p.info, strict) for p in providers]


NATIVE_SEARCH: Final[Mapping[str, Mapping[str, Any]]] = MappingProxyType(
    {
        "anthropic": MappingProxyType(
            {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
        ),
        "openai_responses": MappingProxyType({"type": "tool_search"}),
    }
)
"""The provider's own tool search, by format: Anthropic's BM25 tool search server tool,
and the Responses API's hosted ``tool_search``. Formats not listed have none."""


NAMESPACES: Final = frozenset({"openai_responses"})
"""The formats that group tools into namespaces (the Responses API's ``namespace``
tool: a name and a description the model sees, and functions found by its search)."""

Namespace = tuple[str, str, Sequence[str]]
"""A group of deferred tools: its name, its description, its tools' names."""


def export_deferred(
    providers: Iterable[ToolProvider],
    fmt: Format,
    *,
    strict: bool = False,
    namespaces: Iterable[Namespace] = (),
) -> list[dict[str, Any]]:
    """The provider's search tool, then ``providers`` marked ``defer_loading: true``.

    What follows the offered tools in a request that lets the provider's own search
    find the deferred ones (`NATIVE_SEARCH`). In a format with namespaces
    (`NAMESPACES`), the tools each of ``namespaces`` names are one
    ``namespace`` item, where its first tool would be, holding them marked so (the
    model sees the namespace's name and description only); elsewhere they stay apart.

    Raises:
        ValueError: ``fmt`` is not a supported format, or has no search of its own.
    """
    convert = _converter(fmt)
    search = NATIVE_SEARCH.get(fmt)
    if search is None:
        raise ValueError(f"{fmt} has no tool search of its own; use search_tools")
    grouped: dict[str, Namespace] = {}
    if fmt in NAMESPACES:
        for space in namespaces:
            for name in space[2]:
                grouped.setdefault(name, space)
    exported: list[dict[str, Any]] = [dict(search)]
    spaces: dict[str, dict[str, Any]] = {}
    for provider in providers:
        tool = convert(provider.info, strict)
        tool["defer_loading"] = True
        found = grouped.get(provider.name)
        if found is None:
            exported.append(tool)
            continue
        item = spaces.get(found[0])
        if item is None:
            item = {"type": "namespace", "name": found[0], "description": found[1], "tools": []}
            spaces[found[0]] = item
            exported.append(item)
        item["tools"].append(tool)
    return exported


def export_json(providers: Iterable[ToolProvider], fmt: Format, *, strict: bool = False) -> bytes:
    """`export()` as canonical JSON bytes: the same palette gives the same bytes."""
    text = json.dumps(export(providers, fmt, strict=strict), sort_keys=True, separators=(",", ":"))
    return text.encode("utf-8")


def strict_report(
    providers: Iterable[ToolProvider], fmt: Format, *, strict: bool = False
) -> dict[str, tuple[str, ...]]:
    """Why each tool that is not sent as ``strict`` in ``fmt`` is not, by tool name.

    With ``strict=True``, the reasons normalization could not remove; tools sent as
    strict are left out, so an empty mapping means every tool is strict. MCP has no
    strict mode: every tool is reported for it.

    Raises:
        ValueError: ``fmt`` is not a supported format.
    """
    _converter(fmt)
    dialect = _DIALECT.get(fmt)
    report: dict[str, tuple[str, ...]] = {}
    for p in providers:
        info = p.info
        if dialect is None:
            report[info.name] = ("MCP has no strict mode",)
            continue
        if strict:
            reasons = _strict.normalize(info.input_schema, dialect).problems
        else:
            reasons = tuple(_strict.problems(info.input_schema, dialect))
        if reasons:
            report[info.name] = reasons
    return report
