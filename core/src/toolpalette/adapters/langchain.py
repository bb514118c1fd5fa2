"""LangChain tools from a bound thinker, and LangChain tools as toolpalette providers.

Needs ``langchain-core`` (``pip install "toolpalette[langchain]"``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any, Literal

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, ToolException
from langchain_core.utils.function_calling import convert_to_openai_tool

from toolpalette._agents.thinker import Thinker
from toolpalette._agents.turn import Turn
from toolpalette._tools.provider import ToolProvider
from toolpalette._tools.result import ToolResult
from toolpalette.adapters._common import failure_text, foreign_tool
from toolpalette.errors import ToolError

__all__ = ["ThinkerTool", "langchain_tools", "providers_from_langchain"]


class ThinkerTool(BaseTool):
    """One tool of a bound thinker, as a LangChain tool; calls go through its pipeline."""

    thinker: Any
    """The bound thinker whose pipeline runs the calls."""
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    handle_tool_error: bool = True

    def _to_args_and_kwargs(
        self, tool_input: str | dict[str, Any], tool_call_id: str | None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        # The arguments go to the pipeline untouched (it validates them), with the call id.
        arguments = tool_input if isinstance(tool_input, dict) else {"input": tool_input}
        return (), {_INPUT: dict(arguments), _CALL_ID: tool_call_id}

    async def _arun(self, *args: Any, **kwargs: Any) -> tuple[Any, dict[str, Any] | None]:
        call_id = kwargs.get(_CALL_ID)
        result: ToolResult = await self.thinker.call(
            self.name, kwargs.get(_INPUT, {}), call_id=call_id
        )
        if not result.is_error:
            return result.text, result.as_dict()
        if call_id is None:  # no message to carry an artifact: LangChain's error text
            raise ToolException(failure_text(result))
        # LangChain builds a failure's message itself without an artifact: build it here,
        # with the result, and LangChain passes a message it is given on as it is.
        message = ToolMessage(
            failure_text(result),
            artifact=result.as_dict(),
            tool_call_id=call_id,
            name=self.name,
            status="error",
        )
        return message, None

    def _run(self, *args: Any, **kwargs: Any) -> tuple[Any, dict[str, Any] | None]:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self._arun(*args, **kwargs))
        raise RuntimeError(
            f"{self.name}: an event loop is running in this thread; use `await tool.ainvoke(...)`"
        )


_INPUT = "toolpalette_input"
_CALL_ID = "toolpalette_call_id"


def langchain_tools(thinker: Thinker, turn: Turn | None = None) -> list[BaseTool]:
    """The tools offered in ``turn`` (default: a new ``thinker.begin_turn()``), for LangChain.

    Build them again each turn: a palette can change between turns.
    """
    offered = turn if turn is not None else thinker.begin_turn()
    return [
        ThinkerTool(
            name=info.name,
            description=info.description,
            args_schema=info.input_schema,
            thinker=thinker,
        )
        for info in (provider.info for provider in offered.tools)
    ]


def providers_from_langchain(
    tools: Iterable[BaseTool], *, read_only: Iterable[str] = ()
) -> list[ToolProvider]:
    """Toolpalette providers running LangChain tools, e.g. for a pack's tool hook.

    ``read_only`` names the tools that change nothing; every other one is mutating.

    Raises:
        ToolDefinitionError: a tool's name cannot be a toolpalette tool's.
        InvalidToolSchemaError: a tool's schema is not valid JSON Schema of type ``object``.
    """
    safe = frozenset(read_only)
    providers: list[ToolProvider] = []
    for tool in tools:
        schema = convert_to_openai_tool(tool)["function"].get("parameters") or {
            "type": "object",
            "properties": {},
        }
        providers.append(
            foreign_tool(
                tool.name,
                tool.description,
                schema,
                _runner(tool),
                read_only=tool.name in safe,
            )
        )
    return providers


def _runner(tool: BaseTool) -> Any:
    async def run(value: dict[str, Any]) -> Any:
        try:
            return await tool.ainvoke(value)
        except ToolException as exc:  # meant for the model: it keeps its message
            raise ToolError(str(exc) or f"{tool.name} failed.") from exc

    return run
