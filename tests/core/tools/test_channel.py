"""``ToolContext.log``, ``elicit``, ``sample`` and ``roots`` in a host.

A host's :class:`ClientChannel` (the thinker's ``client``, or one per call) answers
them; without one, log lines go to the ``logging`` module and the questions raise
``ClientRequestError``, which the tool may catch. Each question has a deadline.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from toolpalette import (
    ClientChannel,
    ClientRequestError,
    Elicited,
    LoggingChannel,
    Root,
    Sampled,
    Thinker,
    ToolContext,
    ToolHub,
    ToolSelector,
    tool,
)
from toolpalette.testing import arun_tool


@tool(read_only=True)
async def onboard(ctx: ToolContext) -> str:
    """Log, ask the user, sample, read the roots."""
    ctx.log("notice", "starting", {"phase": 1})
    try:
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {}})
    except ClientRequestError as exc:
        return f"{exc.feature}: {exc.reason}"
    sampled = await ctx.sample("hi", max_tokens=5, temperature=0.5)
    roots = await ctx.roots()
    return f"{answer.action} {answer.content} / {sampled.text} / {roots[0].uri}"


@tool(read_only=True)
async def patient(ctx: ToolContext) -> str:
    """Wait for an answer a tenth of a second at most."""
    try:
        await ctx.elicit("Still there?", {"type": "object"}, timeout=0.1)
    except ClientRequestError as exc:
        return exc.reason
    return "answered"


class Onboarding(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(onboard).tool(patient)


class HostChannel(LoggingChannel):
    """A host that answers everything, and records what it was given."""

    def __init__(self) -> None:
        self.seen: list[Any] = []
        self.never = asyncio.Event()

    def log(self, level: str, message: str, data: Any) -> None:
        self.seen.append(("log", level, message, data))

    async def elicit(
        self, message: str, schema: Mapping[str, Any], *, key: str | None = None
    ) -> Elicited:
        if message == "Still there?":
            await self.never.wait()  # a user who never answers
        self.seen.append(("elicit", message))
        return Elicited("accept", {"name": "Grace"})

    async def sample(
        self,
        messages: Sequence[Mapping[str, Any]],
        options: Mapping[str, Any],
        *,
        key: str | None = None,
    ) -> Sampled:
        self.seen.append(("sample", messages[0]["content"]["text"], dict(options)))
        return Sampled({"type": "text", "text": "HI"}, model="m")

    async def roots(self, *, key: str | None = None) -> list[Root]:
        return [Root("file:///srv")]


def test_a_logging_channel_is_a_client_channel():
    assert isinstance(LoggingChannel(), ClientChannel)
    assert isinstance(HostChannel(), ClientChannel)


async def test_the_thinkers_client_answers_its_tools():
    channel = HostChannel()
    thinker = ToolHub(autoload=False).bind(Onboarding, client=channel)
    result = await thinker.call("onboard", {})
    assert result.text == "accept {'name': 'Grace'} / HI / file:///srv"
    assert channel.seen == [
        ("log", "notice", "starting", {"phase": 1}),
        ("elicit", "Name?"),
        ("sample", "hi", {"max_tokens": 5, "temperature": 0.5}),
    ]


async def test_a_calls_own_channel_wins_over_the_thinkers():
    mine, theirs = HostChannel(), HostChannel()
    thinker = ToolHub(autoload=False).bind(Onboarding, client=theirs)
    result = await thinker.call("onboard", {}, channel=mine)
    assert not result.is_error
    assert theirs.seen == []
    assert mine.seen[0] == ("log", "notice", "starting", {"phase": 1})


async def test_without_a_channel_logs_go_to_logging_and_questions_raise(
    caplog: pytest.LogCaptureFixture,
):
    caplog.set_level(logging.DEBUG, logger="toolpalette.tool")
    thinker = ToolHub(autoload=False).bind(Onboarding)
    result = await thinker.call("onboard", {})
    assert result.text == "elicitation: unsupported"
    [record] = [r for r in caplog.records if r.name == "toolpalette.tool"]
    assert record.getMessage() == "starting"
    assert record.levelno == logging.INFO + 5  # notice: between INFO and WARNING
    assert record.toolpalette_data == {"phase": 1}  # type: ignore[attr-defined]


async def test_a_question_past_its_deadline_raises_timed_out():
    thinker = ToolHub(autoload=False).bind(Onboarding, client=HostChannel())
    result = await thinker.call("patient", {})
    assert result.text == "timed_out"


async def test_run_tool_with_no_channel_refuses_each_question():
    context = ToolContext()
    for ask in (
        context.elicit("q", {"type": "object"}),
        context.sample("q"),
        context.roots(),
    ):
        with pytest.raises(ClientRequestError) as caught:
            await ask
        assert caught.value.reason == "unsupported"
    assert (
        str(caught.value)
        == "The tool's roots request got no answer: the caller does not support it."
    )
    assert (await arun_tool(patient, {})) == "unsupported"


def test_a_bad_level_is_refused_and_a_raising_channel_is_contained(
    caplog: pytest.LogCaptureFixture,
):
    class Broken(LoggingChannel):
        def log(self, level: str, message: str, data: Any) -> None:
            raise RuntimeError("the host's log sink is down")

    context = ToolContext(channel=Broken())
    with pytest.raises(ValueError, match="level must be one of"):
        context.log("verbose", "x")
    context.log("info", "x")  # does not raise
    assert "the log channel raised" in caplog.text


def test_client_request_error_pickles_with_its_fields():
    import pickle

    error = pickle.loads(pickle.dumps(ClientRequestError(feature="sampling", reason="failed")))
    assert (error.feature, error.reason) == ("sampling", "failed")
