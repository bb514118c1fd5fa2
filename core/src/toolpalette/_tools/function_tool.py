"""``function_tool``: a tool from a function and a hand-written JSON Schema, in one call."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Hashable, Mapping
from types import MappingProxyType
from typing import Any, get_type_hints

from toolpalette._schema import checks as _schema
from toolpalette._tools.info import TaskSupport, ToolInfo
from toolpalette._tools.provider import ToolProvider
from toolpalette._tools.tool import TOOL_NAME, BoundTool, ToolContext, ToolSpec, check_spec
from toolpalette.errors import ToolDefinitionError

__all__ = ["function_tool"]


def function_tool(
    name: str,
    description: str,
    input_schema: Mapping[str, Any],
    fn: Callable[..., Any],
    *,
    output_schema: Mapping[str, Any] | None = None,
    display_name: str | None = None,
    action_verb: str | None = None,
    weight: float = 1.0,
    read_only: bool = False,
    destructive: bool = True,
    idempotent: bool = False,
    open_world: bool = True,
    concurrency_safe: bool | Callable[[Any], bool] | None = None,
    resource_key: Callable[[Any], Hashable | None] | None = None,
    timeout: float | None = None,
    output_cap: int | None = None,
    metadata: Mapping[str, Any] | None = None,
    model_dependent: bool = False,
    grade: str | None = None,
    guidance: str | None = None,
    task_support: TaskSupport = "forbidden",
) -> ToolProvider:
    """A tool named ``name`` that validates input against ``input_schema`` and runs ``fn``.

    ``fn`` (a function, ``async def`` or not) receives the validated input as keyword
    arguments, one per property sent: a property it has no parameter for is not passed,
    unless it takes ``**kwargs``. A parameter annotated ``ToolContext`` receives the
    call's context, as in an ``@tool`` function. What it returns ships as an ``@tool``
    function's value without a return annotation does: text, JSON values or rich content.
    ``output_schema`` publishes the shape of a JSON object it returns. The keyword
    options are ``@tool``'s (``refine_schema`` aside: the schema is already yours), with
    the same defaults and checks; ``concurrency_safe`` and ``resource_key`` callables
    receive the validated input (a dict).

    Raises:
        ToolDefinitionError: the name, the description, an option or ``fn``'s
            parameters cannot make a tool (a parameter without a default that the
            schema does not require, a required property ``fn`` cannot take).
        InvalidToolSchemaError: a schema is not valid, refers outside itself, or the
            input schema is not of type ``object``.
    """
    if not isinstance(name, str) or not TOOL_NAME.match(name):
        raise ToolDefinitionError(
            tool_name=str(name), reason="names are 1-64 characters of letters, digits, '_' and '-'"
        )
    if not isinstance(description, str) or not description.strip():
        raise ToolDefinitionError(tool_name=name, reason="it needs a non-empty description")
    if not callable(fn):
        raise ToolDefinitionError(tool_name=name, reason="fn must be a function")
    spec = ToolSpec(
        name=name,
        description=description.strip(),
        display_name=display_name,
        action_verb=action_verb,
        weight=weight,
        read_only=read_only,
        destructive=destructive,
        idempotent=idempotent,
        open_world=open_world,
        concurrency_safe=concurrency_safe,
        resource_key=resource_key,
        timeout=timeout,
        output_cap=output_cap,
        metadata=MappingProxyType(dict(metadata or {})),
        model_dependent=model_dependent,
        grade=grade,
        guidance=guidance,
        task_support=task_support,
    )
    check_spec(spec, fn)
    schema = dict(input_schema)
    _schema.check_schema(schema, name)
    output = dict(output_schema) if output_schema is not None else None
    if output is not None:
        _schema.check_schema(output, name, what="output")
    info = spec.record(name, description.strip(), schema, output)
    return _FunctionSchemaTool(fn, spec, info)


class _FunctionSchemaTool(ToolProvider):
    """What `function_tool()` returns: its record, the function, and the spec's decisions.

    Equal to another for the same function with the same record.
    """

    def __init__(self, fn: Callable[..., Any], spec: ToolSpec, info: ToolInfo) -> None:
        self.function = fn
        """The function the tool runs."""
        self._spec = spec
        self._info = info
        self._context, self._accepted = _parameters(fn, info.name, info.input_schema)
        self._is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            type(fn).__call__  # an object whose __call__ is async
        )

    @property
    def info(self) -> ToolInfo:
        """The record, built with the tool."""
        return self._info

    def is_concurrency_safe(self, value: Any) -> bool:
        """As ``concurrency_safe`` says, or its callable decides for this input."""
        return self._spec.is_concurrency_safe(value)

    def resource_key(self, value: Any) -> Hashable | None:
        """The ``resource_key`` callable's key for this input, if there is one."""
        return self._spec.key_for(value)

    def grade_for(self, parent: Any) -> str | None:
        """The grade of a ``model_dependent`` tool: its own, else its parent's."""
        return self._spec.grade_for(parent)

    def create(self, parent: Any = None) -> BoundTool:
        """The runnable tool: ``fn`` called with the validated input's properties."""
        fn, context_param, accepted = self.function, self._context, self._accepted

        def call(value: dict[str, Any], context: ToolContext) -> Any:
            if accepted is None:
                kwargs = dict(value)
            else:
                kwargs = {key: item for key, item in value.items() if key in accepted}
            if context_param is not None:
                kwargs[context_param] = context
            return fn(**kwargs)

        return BoundTool(call, is_async=self._is_async, takes_context=context_param is not None)

    def _defined_in(self) -> str:
        fn = self.function
        return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', self.name)}"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _FunctionSchemaTool):
            return NotImplemented
        return self.function is other.function and self._info == other._info

    def __hash__(self) -> int:
        return hash((_FunctionSchemaTool, id(self.function), self._info.name))


def _parameters(
    fn: Callable[..., Any], name: str, schema: Mapping[str, Any]
) -> tuple[str | None, frozenset[str] | None]:
    """The parameter that receives the context, and the input keys ``fn`` takes (None: all).

    Raises:
        ToolDefinitionError: a call with input the schema accepts could not bind.
    """
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        raise ToolDefinitionError(tool_name=name, reason="fn's signature cannot be read") from None
    try:
        hints = get_type_hints(fn)
    except Exception:  # unresolvable annotations: read them as written
        hints = {}
    context: str | None = None
    takes: set[str] = set()
    needs: set[str] = set()
    any_key = False
    for param in signature.parameters.values():
        annotation = hints.get(param.name, param.annotation)
        if param.kind is param.VAR_KEYWORD:
            any_key = True
        elif param.kind is param.VAR_POSITIONAL:
            continue
        elif annotation is ToolContext or annotation == "ToolContext":
            context = param.name
        elif param.kind is param.POSITIONAL_ONLY:
            if param.default is param.empty:
                raise ToolDefinitionError(
                    tool_name=name, reason=f"fn's parameter {param.name!r} is positional-only"
                )
        else:
            takes.add(param.name)
            if param.default is param.empty:
                needs.add(param.name)
    properties = schema.get("properties", {})
    required = set(schema.get("required", ()))
    if context is not None and context in properties:
        raise ToolDefinitionError(
            tool_name=name, reason=f"the input has a property {context!r}, fn's context parameter"
        )
    optional = sorted(needs - required)
    if optional:
        raise ToolDefinitionError(
            tool_name=name,
            reason=f"fn's parameter {optional[0]!r} has no default and the schema does not "
            "require it",
        )
    untaken = [] if any_key else sorted(required - takes)
    if untaken:
        raise ToolDefinitionError(
            tool_name=name,
            reason=f"the schema requires {untaken[0]!r} and fn takes no such parameter",
        )
    return context, None if any_key else frozenset(takes)
