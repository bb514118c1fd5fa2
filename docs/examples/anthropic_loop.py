"""An agent loop on Anthropic Messages, with a toolpalette thinker running the tools.

Run it with ``ANTHROPIC_API_KEY`` set: ``python docs/examples/anthropic_loop.py``. The
loop itself (``agent_loop``) takes any client with ``messages.create``; the tests run it
against recorded responses.
"""

from __future__ import annotations

import asyncio
from typing import Any

from toolpalette import Thinker, ToolHub, ToolSelector, replies, tool


@tool(read_only=True)
def weather(city: str) -> str:
    """Today's weather in a city.

    Args:
        city: The city, e.g. "Oslo".
    """
    return f"Sunny and 21 degrees in {city}."


class Assistant(Thinker):
    """The agent kind: what it may use, and strict schemas for the provider."""

    read_only = True
    strict = True  # strict: true on every tool whose schema allows it

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        """Only the weather tool."""
        return ToolSelector().tool(weather)


async def agent_loop(client: Any, thinker: Thinker, question: str, model: str) -> str:
    """Ask ``question``; run the model's tool calls until it answers in text."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    for _ in range(10):
        turn = thinker.begin_turn()
        extra = {"system": turn.preamble} if turn.preamble else {}
        response = await client.messages.create(
            model=model,
            max_tokens=1024,
            messages=messages,
            tools=turn.schemas("anthropic"),
            **extra,
        )
        content = [block.model_dump(mode="json", exclude_none=True) for block in response.content]
        messages.append({"role": "assistant", "content": content})
        calls = turn.calls_from("anthropic", response)
        if not calls:
            return "".join(block.text for block in response.content if block.type == "text")
        results = await thinker.call_many(calls)
        messages.extend(replies(calls, results))  # every tool_result in one user message
    raise RuntimeError("no answer after 10 model turns")


def main() -> None:
    """Run the loop against the real API."""
    from anthropic import AsyncAnthropic

    thinker = ToolHub().bind(Assistant)
    question = "Weather in Oslo?"
    print(asyncio.run(agent_loop(AsyncAnthropic(), thinker, question, "claude-sonnet-4-5")))


if __name__ == "__main__":
    main()
