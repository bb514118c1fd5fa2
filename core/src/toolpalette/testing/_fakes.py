"""Fakes: scripted tool providers, registries and plugins built from real objects."""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from toolpalette._tools.info import ToolInfo
from toolpalette._tools.provider import BoundTool, ToolProvider
from toolpalette._tools.registry import ToolRegistry
from toolpalette._tools.tool import TOOL_NAME, ToolContext
from toolpalette.errors import ToolDefinitionError

__all__ = ["OPEN_OBJECT", "FakeCall", "FakeTool", "fake_tool", "make_registry", "plugin_of"]

OPEN_OBJECT: Mapping[str, Any] = MappingProxyType({"type": "object"})
"""The default input schema of a fake tool: any JSON object."""


@dataclass(frozen=True)
class FakeCall:
    """One call a [`FakeTool`][toolpalette.testing.FakeTool] received."""

    input: Any
    """The validated input (what ``parse_input`` returned)."""
    parent: Any
    """The parent the tool was created for."""
    context: ToolContext
    """The context the call ran with."""


class FakeTool(ToolProvider):
    """A real [`ToolProvider`][toolpalette.ToolProvider] whose behaviour a test scripts.

    Its input is validated against ``input_schema`` (any object by default) through the
    same code path as every provider with a hand-written schema. Each call is recorded
    in [`calls`][toolpalette.testing.FakeTool.calls]. Two FakeTools are equal only if
    they are the same object, so two fakes with one name collide in a registry, as two
    real tools would.

    Args:
        name: The tool's name (``^[A-Za-z0-9_-]{1,64}$``).
        description: What the model reads; defaults to ``"Fake tool <name>."``.
        input_schema: The input JSON Schema; an object schema.
        output_schema: The output JSON Schema, or None for text output.
        result: What a call returns: a value, or a callable taking the input (and the
            [`ToolContext`][toolpalette.ToolContext] if it accepts two arguments).
        raises: An exception each call raises instead of returning.
        read_only: Whether the tool declares itself read-only.
        concurrency_safe: Whether calls may overlap; defaults to ``read_only``.
        is_async: Whether ``invoke`` returns an awaitable.
        timeout: The tool's own timeout in seconds, or None.
        output_cap: The tool's own output cap in bytes, or None.
        metadata: An open mapping, as ``@tool(metadata=...)``.
    """

    def __init__(
        self,
        name: str,
        *,
        description: str | None = None,
        input_schema: Mapping[str, Any] = OPEN_OBJECT,
        output_schema: Mapping[str, Any] | None = None,
        result: Any = None,
        raises: BaseException | None = None,
        read_only: bool = False,
        concurrency_safe: bool | None = None,
        is_async: bool = False,
        timeout: float | None = None,
        output_cap: int | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        if not TOOL_NAME.match(name):
            raise ToolDefinitionError(
                tool_name=name, reason="names are 1-64 characters of letters, digits, '_' and '-'"
            )
        self._record = ToolInfo(
            name=name,
            description=description or f"Fake tool {name}.",
            input_schema=dict(input_schema),
            output_schema=dict(output_schema) if output_schema is not None else None,
            read_only=read_only,
            concurrency_safe=read_only if concurrency_safe is None else concurrency_safe,
            timeout=timeout,
            output_cap=output_cap,
            metadata=MappingProxyType(dict(metadata or {})),
        )
        self._result = result
        self._raises = raises
        self._is_async = is_async
        self._lock = threading.Lock()
        self.calls: list[FakeCall] = []
        """Every call received, in order."""
        self.parents: list[Any] = []
        """Every parent ``create`` was called for, in order."""

    @property
    def info(self) -> ToolInfo:
        """The fake's record, as given."""
        return self._record

    @property
    def call_count(self) -> int:
        """How many calls ran."""
        with self._lock:
            return len(self.calls)

    def create(self, parent: Any = None) -> BoundTool:
        """Build the runnable tool; records ``parent``."""
        with self._lock:
            self.parents.append(parent)

        def call(value: Any, context: ToolContext) -> Any:
            return self._answer(FakeCall(value, parent, context))

        async def acall(value: Any, context: ToolContext) -> Any:
            answer = self._answer(FakeCall(value, parent, context))
            return await answer if inspect.isawaitable(answer) else answer

        return BoundTool(
            acall if self._is_async else call, is_async=self._is_async, takes_context=True
        )

    def _answer(self, call: FakeCall) -> Any:
        with self._lock:
            self.calls.append(call)
        if self._raises is not None:
            raise self._raises
        if callable(self._result):
            if _arity(self._result) >= 2:
                return self._result(call.input, call.context)
            return self._result(call.input)
        return self._result


def _arity(fn: Callable[..., Any]) -> int:
    try:
        return len(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return 1


def fake_tool(name: str, *, read_only: bool = False, **options: Any) -> FakeTool:
    """Build a [`FakeTool`][toolpalette.testing.FakeTool]; the keyword options are FakeTool's."""
    return FakeTool(name, read_only=read_only, **options)


def make_registry(*tools: object) -> ToolRegistry:
    """A fresh [`ToolRegistry`][toolpalette.ToolRegistry] holding ``tools`` in order.

    Each item is anything ``ToolRegistry.register`` takes (an ``@tool`` function or class,
    a provider), or a string, which becomes ``fake_tool(string)``.
    """
    registry = ToolRegistry()
    for item in tools:
        registry.register(fake_tool(item) if isinstance(item, str) else item)
    return registry


def plugin_of(*tools: object) -> object:
    """A plugin object whose ``toolpalette_register_tools`` returns ``tools``.

    For tests that need a pack without installing one: ``hub.add_plugin(plugin_of(fn))``.
    """
    from toolpalette.hookspecs import hookimpl

    class Plugin:
        @hookimpl
        def toolpalette_register_tools(self) -> list[object]:
            return list(tools)

    return Plugin()
