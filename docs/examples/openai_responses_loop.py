"""An agent loop on the OpenAI Responses API, with a toolpalette thinker running the tools.

Run it with ``OPENAI_API_KEY`` set: ``python docs/examples/openai_responses_loop.py``.
The loop itself (``agent_loop``) takes any client with ``responses.create``; the tests
run it against recorded responses.
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
    strict = True

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        """Only the weather tool."""
        return ToolSelector().tool(weather)


async def agent_loop(client: Any, thinker: Thinker, question: str, model: str) -> str:
    """Ask ``question``; run the model's tool calls until it answers in text."""
    items: list[Any] = [{"role": "user", "content": question}]
    for _ in range(10):
        turn = thinker.begin_turn()
        response = await client.responses.create(
            model=model,
            instructions=turn.preamble or None,
            input=items,
            tools=turn.schemas("openai_responses"),
        )
        # The model's output items (reasoning, function calls) go back as they came.
        items.extend(item.model_dump(mode="json", exclude_none=True) for item in response.output)
        calls = turn.calls_from("openai_responses", response)
        if not calls:
            return str(response.output_text)
        results = await thinker.call_many(calls)
        items.extend(replies(calls, results))  # one function_call_output per call
    raise RuntimeError("no answer after 10 model turns")


def main() -> None:
    """Run the loop against the real API."""
    from openai import AsyncOpenAI

    thinker = ToolHub().bind(Assistant)
    answer = asyncio.run(agent_loop(AsyncOpenAI(), thinker, "Weather in Oslo?", "gpt-4.1-mini"))
    print(answer)


if __name__ == "__main__":
    main()
