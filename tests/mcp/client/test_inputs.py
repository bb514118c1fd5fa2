"""A task's input requests put to a host's channel, and its answers in wire form."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from toolpalette import ClientRequestError, Elicited, LoggingChannel, Root, Sampled
from toolpalette._mcp_client.inputs import put


class Host(LoggingChannel):
    """A host that answers every question, and remembers what it was asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, Any]] = []

    async def elicit(
        self, message: str, schema: Mapping[str, Any], *, key: str | None = None
    ) -> Elicited:
        self.asked.append((key or "", (message, dict(schema))))
        return Elicited("accept", {"colour": "teal"})

    async def sample(
        self,
        messages: Sequence[Mapping[str, Any]],
        options: Mapping[str, Any],
        *,
        key: str | None = None,
    ) -> Sampled:
        self.asked.append((key or "", dict(options)))
        return Sampled({"type": "text", "text": "hi"}, model="m", stop_reason="endTurn")

    async def roots(self, *, key: str | None = None) -> list[Root]:
        return [Root("file:///w", name="w")]


def test_each_kind_of_question_is_answered_in_wire_form():
    host = Host()
    schema = {"type": "object", "properties": {"colour": {"type": "string"}}}
    elicit = {
        "method": "elicitation/create",
        "params": {"message": "Colour?", "requestedSchema": schema},
    }
    assert asyncio.run(put(host, "elicitation-1", elicit)) == {
        "action": "accept",
        "content": {"colour": "teal"},
    }
    assert host.asked[0] == ("elicitation-1", ("Colour?", schema))
    sample = {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}}
    assert asyncio.run(put(host, "s", sample)) == {
        "role": "assistant",
        "content": {"type": "text", "text": "hi"},
        "model": "m",
        "stopReason": "endTurn",
    }
    assert host.asked[1] == ("s", {"max_tokens": 5})
    roots = asyncio.run(put(host, "r", {"method": "roots/list"}))
    assert roots == {"roots": [{"uri": "file:///w", "name": "w"}]}


def test_a_question_nobody_answers_is_a_client_request_error():
    with pytest.raises(ClientRequestError) as refused:
        asyncio.run(
            put(
                LoggingChannel(),
                "e",
                {"method": "elicitation/create", "params": {"message": "?", "requestedSchema": {}}},
            )
        )
    assert refused.value.reason == "unsupported"
    with pytest.raises(ClientRequestError):
        asyncio.run(put(Host(), "x", {"method": "tools/call"}))
