"""Input models from signatures and docstrings, and how a return value becomes JSON."""

from __future__ import annotations

import inspect
import re
import warnings
from collections.abc import Callable, Mapping
from types import GenericAlias
from typing import Any, get_type_hints

import pydantic

from toolpalette._tools.result import FASTMCP_WRAPPED, WRAPPED, mentions_content
from toolpalette._tools.tool import ToolContext
from toolpalette.errors import ToolDefinitionError

__all__ = [
    "function_input_model",
    "output_schema",
    "output_type",
    "split_docstring",
    "summary_of",
    "wrapped_schema",
]


_SECTION = re.compile(r"^(Args|Arguments|Parameters|Returns|Yields|Raises|Examples?|Notes?):\s*$")
_PARAM_LINE = re.compile(r"^\s{2,}(\*{0,2}\w+)(?:\s*\([^)]*\))?\s*:\s*(.*)$")


def split_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its description and per-parameter texts."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    indent: int | None = None  # of the parameter lines; deeper lines continue one
    for line in lines:
        header = _SECTION.match(line)
        if header:
            section, current = header.group(1), None
            continue
        if section is None:
            summary.append(line)
        elif section in ("Args", "Arguments", "Parameters"):
            match = _PARAM_LINE.match(line)
            depth = len(line) - len(line.lstrip())
            if match and (indent is None or depth <= indent):
                indent = depth if indent is None else indent
                current = match.group(1).lstrip("*")
                params[current] = match.group(2).strip()
            elif current and line.strip():
                params[current] = f"{params[current]} {line.strip()}"
    return "\n".join(summary).strip(), params


def summary_of(doc: str | None) -> str:
    """The description part of a Google-style docstring, its sections left unread.

    The same text `split_docstring()` returns first: all a listing needs.
    """
    if not doc:
        return ""
    summary: list[str] = []
    for line in inspect.cleandoc(doc).splitlines():
        if _SECTION.match(line):
            break
        summary.append(line)
    return "\n".join(summary).strip()


def function_input_model(
    fn: Callable[..., Any], tool_name: str, param_docs: dict[str, str]
) -> tuple[type[pydantic.BaseModel], str | None]:
    """Build the input model of a function tool from its signature.

    Returns the model and the name of the parameter that receives the ToolContext (if
    any). Every other parameter must be annotated and passable by keyword.
    """
    try:
        hints = get_type_hints(fn, include_extras=True)
    except Exception as exc:
        raise ToolDefinitionError(
            tool_name=tool_name, reason=f"its annotations cannot be resolved ({exc})"
        ) from exc
    fields: dict[str, Any] = {}
    context_param: str | None = None
    for param in inspect.signature(fn).parameters.values():
        annotation = hints.get(param.name, inspect.Parameter.empty)
        if annotation is ToolContext:
            context_param = param.name
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            raise ToolDefinitionError(
                tool_name=tool_name,
                reason=f"parameter {param.name!r} must be passable by keyword "
                "(no *args, **kwargs or positional-only parameters)",
            )
        if annotation is inspect.Parameter.empty:
            raise ToolDefinitionError(
                tool_name=tool_name, reason=f"parameter {param.name!r} needs a type annotation"
            )
        if param.name.startswith("_") or (
            param.name.startswith("model_") and hasattr(pydantic.BaseModel, param.name)
        ):
            raise ToolDefinitionError(
                tool_name=tool_name,
                reason=f"parameter {param.name!r} cannot be an input field "
                "(a leading underscore, or a pydantic BaseModel attribute); rename it",
            )
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (
            annotation,
            pydantic.Field(default, description=param_docs.get(param.name)),
        )
    try:
        with warnings.catch_warnings():
            # A parameter named like a BaseModel method (``schema``, ``json``) works: the
            # field shadows the method on the input model, which only the core reads.
            warnings.filterwarnings("ignore", r"Field name .* shadows an attribute", UserWarning)
            model: type[pydantic.BaseModel] = pydantic.create_model(
                f"{tool_name}_input",
                __config__=pydantic.ConfigDict(extra="forbid", protected_namespaces=()),
                **fields,
            )
    except (pydantic.PydanticUserError, TypeError, ValueError) as exc:
        raise ToolDefinitionError(
            tool_name=tool_name, reason=f"its parameters cannot form an input model ({exc})"
        ) from exc
    return model, context_param


def output_schema(annotation: Any) -> dict[str, Any] | None:
    """The output schema of a return type, or None when output ships as text.

    See `output_type()`, which also checks that the type can be serialized.
    """
    return output_type(annotation, "<tool>")[1]


def wrapped_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The schema of ``{"result": VALUE}`` for a value of ``schema``, marked as wrapping.

    The value's ``$defs`` move to the top, where its ``#/$defs/...`` references resolve.
    """
    inner = dict(schema)
    defs = inner.pop("$defs", None)
    wrapped: dict[str, Any] = {
        "type": "object",
        "properties": {"result": inner},
        "required": ["result"],
        WRAPPED: True,
        FASTMCP_WRAPPED: True,
    }
    if defs is not None:
        wrapped["$defs"] = defs
    return wrapped


def output_type(
    annotation: Any, tool_name: str
) -> tuple[pydantic.TypeAdapter[Any] | None, dict[str, Any] | None]:
    """How a tool's return value becomes JSON: a TypeAdapter of its return annotation.

    Returns the adapter (None when the value ships as it is: no annotation, ``str``,
    rich content, or a type pydantic cannot describe on this Python) and the output
    schema: a type whose JSON is an object (a pydantic model, a dataclass, a TypedDict,
    ``dict[str, X]``) publishes its own; any other declared type the schema of
    ``{"result": VALUE}`` (`wrapped_schema()`); text, ``None``, ``Any`` and
    undescribed values publish none. Built once per tool, so a return annotation
    pydantic cannot serialize is refused when the tool is defined, not at its first call.

    Raises:
        ToolDefinitionError: pydantic cannot serialize the annotation to JSON.
    """
    if annotation is None or annotation is inspect.Signature.empty or annotation is str:
        return None, None
    if mentions_content(annotation):
        return None, None
    # On Python 3.10 a generic alias (list[X]) is an instance of type: name it in full.
    plain = isinstance(annotation, type) and not isinstance(annotation, GenericAlias)
    label = annotation.__name__ if plain else repr(annotation)
    try:
        adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(annotation)
        schema = adapter.json_schema(mode="serialization")
    except pydantic.PydanticUserError as exc:
        if exc.code == "typed-dict-version":
            # typing.TypedDict before Python 3.12: not describable, so shipped as it is.
            return None, None
        # pydantic's first sentence says what failed; its advice (arbitrary types,
        # custom core schemas) is for model authors, not for a tool's return value.
        detail = str(exc).splitlines()[0].split(". ", 1)[0].rstrip(".")
        raise ToolDefinitionError(
            tool_name=tool_name,
            reason=f"its return annotation {label} cannot be serialized to JSON "
            f"({detail}); return a pydantic model, a dataclass, a TypedDict, JSON "
            "types, or rich content (Image, Audio, File)",
        ) from exc
    if annotation is type(None) or not schema:  # nothing to describe: None, Any
        return adapter, None
    if schema.get("type") == "object":
        return adapter, schema
    return adapter, wrapped_schema(schema)
