"""A bound thinker as a pydantic-ai toolset, and a pydantic-ai function toolset as providers.

Needs ``pydantic-ai`` (``pip install "toolpalette[pydantic-ai]"``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Literal

from pydantic_ai import ModelRetry, RunContext
from pydantic_ai.exceptions import ApprovalRequired
from pydantic_ai.tools import Tool, ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, FunctionToolset, ToolsetTool

from toolpalette._agents.thinker import Thinker
from toolpalette._tools.provider import ToolProvider
from toolpalette._tools.result import ToolResult, is_wrapped
from toolpalette.adapters._common import failure_text, foreign_tool
from toolpalette.errors import (
    InvalidInputError,
    ToolDefinitionError,
    ToolError,
    ToolNotFoundError,
)

__all__ = ["ThinkerToolset", "providers_from_pydantic_ai"]


class _Unparsed(dict[str, Any]):
    """Arguments as the model sent them (JSON text), for the pipeline to parse and check.

    Empty as a mapping: pydantic-ai's hooks and events see no arguments rather than a
    half-parsed guess. A hook that replaces it with a dict of its own passes that dict
    to the pipeline instead, which validates it like any input.
    """

    def __init__(self, raw: str | bytes | bytearray) -> None:
        super().__init__()
        self.raw = bytes(raw) if isinstance(raw, bytearray) else raw


class _PipelineValidates:
    """pydantic-ai's argument validator for a thinker's tools: it accepts anything.

    pydantic-ai parses a call's JSON arguments with its validator and, when that fails,
    answers the model with the validator's errors, which quote the input. Here the
    text goes on unparsed (`_Unparsed`), and arguments already parsed go on as
    they are: the pipeline parses them under its JSON policy, validates them against
    the tool's schema, and refuses with its own texts (400 ``invalid_input``).
    """

    def validate_json(
        self,
        input: str | bytes | bytearray,
        *,
        allow_partial: bool | Literal["off", "on", "trailing-strings"] = False,
        **kwargs: Any,
    ) -> dict[str, Any]:
        return _Unparsed(input)

    def validate_python(
        self,
        input: Any,
        *,
        allow_partial: bool | Literal["off", "on", "trailing-strings"] = False,
        **kwargs: Any,
    ) -> dict[str, Any]:
        return input if isinstance(input, dict) else _Unparsed(json.dumps(input, default=str))


_VALIDATOR = _PipelineValidates()


class ThinkerToolset(AbstractToolset[Any]):
    """The tools a bound thinker offers each turn, as a pydantic-ai toolset."""

    def __init__(self, thinker: Thinker, *, id: str | None = None, max_retries: int = 1) -> None:
        self.thinker = thinker
        """The bound thinker whose turns and pipeline the toolset uses."""
        self._id = id
        self._max_retries = max_retries

    @property
    def id(self) -> str | None:
        """The toolset's id, if given (pydantic-ai uses it in durable runs)."""
        return self._id

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        """Begin a thinker turn and list what it offers (strict schemas where strict)."""
        turn = self.thinker.begin_turn()
        strict = {
            entry["name"]: (entry["parameters"], entry["strict"])
            for entry in turn.schemas("openai_responses")
        }
        tools: dict[str, ToolsetTool[Any]] = {}
        for info in (provider.info for provider in turn.tools):
            schema, is_strict = strict[info.name]
            definition = ToolDefinition(
                name=info.name,
                description=info.description,
                parameters_json_schema=schema,
                strict=is_strict or None,
            )
            tools[info.name] = ToolsetTool(
                toolset=self,
                tool_def=definition,
                max_retries=self._max_retries,
                args_validator=_VALIDATOR,
            )
        return tools

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        """Run one call through the thinker's pipeline, or defer it for approval."""
        arguments: Any = tool_args.raw if isinstance(tool_args, _Unparsed) else tool_args
        approved = bool(ctx.tool_call_approved)
        if not approved and self._asks(name, arguments):
            raise ApprovalRequired(metadata={"tool": name})
        result: ToolResult = await self.thinker.call(
            name, arguments, call_id=ctx.tool_call_id, approved=approved
        )
        if result.is_error:
            return failure_text(result)
        if result.structured is None or is_wrapped(self._output_schema(name)):
            return result.text  # a wrapped value reads as in a host: the bare value
        return result.structured

    def _output_schema(self, name: str) -> dict[str, Any] | None:
        """The output schema of the thinker's tool ``name``, or None."""
        try:
            return self.thinker.palette.get_provider(name).output_schema
        except ToolNotFoundError:
            return None

    def _asks(self, name: str, tool_args: Any) -> bool:
        """Whether the thinker's policy wants a person's approval for this call."""
        try:
            provider = self.thinker.palette.get_provider(name)
        except ToolNotFoundError:
            return False  # the pipeline answers an unknown name
        try:
            value = provider.parse_input(tool_args)
        except (InvalidInputError, ValueError):
            return False  # the pipeline answers invalid input, before any approval
        try:
            decision = self.thinker.policy.decide_call(self.thinker, provider, value)
        except Exception:
            return False  # the pipeline runs the policy again and refuses (fail closed)
        return str(getattr(decision, "value", decision)) == "ask"


def providers_from_pydantic_ai(
    toolset: FunctionToolset[Any], *, read_only: Iterable[str] = ()
) -> list[ToolProvider]:
    """The tools of a pydantic-ai ``FunctionToolset`` as toolpalette providers.

    ``read_only`` names the tools that change nothing; every other one is mutating.

    Raises:
        ToolDefinitionError: a tool takes a ``RunContext`` (there is no pydantic-ai run
            to give it), or its name cannot be a toolpalette tool.
        InvalidToolSchemaError: a tool's schema is not valid JSON Schema of type ``object``.
    """
    safe = frozenset(read_only)
    providers: list[ToolProvider] = []
    for tool in toolset.tools.values():
        if tool.takes_ctx:
            raise ToolDefinitionError(
                tool_name=tool.name,
                reason="it takes a pydantic-ai RunContext; only plain tools can be wrapped",
            )
        providers.append(
            foreign_tool(
                tool.name,
                tool.description or "",
                tool.function_schema.json_schema,
                _runner(tool),
                read_only=tool.name in safe,
            )
        )
    return providers


def _runner(tool: Tool[Any]) -> Any:
    schema = tool.function_schema

    async def run(value: dict[str, Any]) -> Any:
        arguments = schema.validator.validate_python(value)
        try:
            return await schema.call(arguments, None)  # type: ignore[arg-type]
        except ModelRetry as exc:  # meant for the model: it keeps its message
            raise ToolError(str(exc) or f"{tool.name} failed.") from exc

    return run
