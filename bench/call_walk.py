"""One tool call walked module by module: every crossing, and any module entered twice.

``python -m bench.call_walk`` runs ``thinker.call`` of a sync ``@tool`` once to warm
it, then once under ``sys.setprofile`` (in every thread), and prints each time a
function of one toolpalette module is entered from a function of another. A module is
*entered twice* when a call into it happens while it is already on the stack below
another module (``A -> B -> A``): the shape a call core must not have, since what a
line may touch is then no longer readable from the layers.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
import threading
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import toolpalette
from toolpalette import Thinker, ToolHub, ToolSelector, hookimpl


@toolpalette.tool(read_only=True)
def read_note(path: str) -> str:
    """Read a note."""
    return f"note {path}"


class _Pack:
    @hookimpl
    def toolpalette_register_tools(self) -> list[Any]:
        return [read_note]


class Reader(Thinker):
    """A thinker offered the one tool."""

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool("read_note")


def _module(frame: FrameType | None) -> str | None:
    if frame is None:
        return None
    name = frame.f_globals.get("__name__", "")
    return name if name == "toolpalette" or name.startswith("toolpalette.") else None


_COROUTINE = inspect.CO_COROUTINE | inspect.CO_ITERABLE_COROUTINE | inspect.CO_GENERATOR


def _stack(frame: FrameType | None) -> list[str]:
    """The toolpalette modules on the stack below ``frame``, nearest first, runs merged.

    The stack of a task ends at its outermost coroutine: what resumed it (a loop
    callback, a future's wake-up) is not its caller.
    """
    found: list[str] = []
    while frame is not None:
        module = _module(frame)
        if module is not None and (not found or found[-1] != module):
            found.append(module)
        below = frame.f_back
        if frame.f_code.co_flags & _COROUTINE and (
            below is None or not below.f_code.co_flags & _COROUTINE
        ):
            break
        frame = below
    return found


@dataclass
class Walk:
    """What one traced call crossed."""

    crossings: list[tuple[str, str]] = field(default_factory=list)
    """``(from "module function", into "module function")``, in order."""
    entered_twice: list[str] = field(default_factory=list)
    """Each module entered while it was already on the stack under another, with the path."""
    _seen: dict[int, FrameType] = field(default_factory=dict)

    def _profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or id(frame) in self._seen:  # a coroutine resumed: not entered
            return
        self._seen[id(frame)] = frame  # kept alive, so no other frame takes its id
        into = _module(frame)
        caller = frame.f_back
        came_from = _module(caller)
        if into is None or came_from is None or into == came_from:
            return
        assert caller is not None
        self.crossings.append(
            (f"{came_from} {caller.f_code.co_name}", f"{into} {frame.f_code.co_name}")
        )
        below = _stack(caller)
        if into in below:
            path = " -> ".join(reversed([into, *below[: below.index(into) + 1]]))
            self.entered_twice.append(path)


def walk_one_call(*, traced: bool = False) -> Walk:
    """Walk one warm ``thinker.call`` of a sync tool; ``traced``: in an OpenTelemetry span.

    ``traced`` needs OpenTelemetry's SDK; the spans go to a provider of this call's own.
    """
    if traced:
        from opentelemetry.sdk.trace import TracerProvider

        toolpalette.configure_telemetry(tracer_provider=TracerProvider())
    try:
        return _walk()
    finally:
        if traced:
            toolpalette.configure_telemetry()


def _walk() -> Walk:
    hub = ToolHub(autoload=False, config={})
    hub.add_plugin(_Pack(), name="notes")
    thinker = hub.bind(Reader)

    async def call() -> toolpalette.ToolResult:
        return await thinker.call("read_note", {"path": "a.txt"})

    async def twice() -> Walk:
        thinker.begin_turn()
        assert (await call()).text == "note a.txt"  # warm: the tool built, the turn begun
        walked = Walk()
        every = getattr(threading, "setprofile_all_threads", None)  # 3.12+: the workers too
        if every is not None:
            every(walked._profile)
        sys.setprofile(walked._profile)
        try:
            result = await call()
        finally:
            sys.setprofile(None)
            if every is not None:
                every(None)
        assert result.text == "note a.txt"
        return walked

    return asyncio.run(twice())


def main() -> int:
    traced = walk_one_call(traced="--traced" in sys.argv)
    print("| # | from | into |\n|---|---|---|")
    for number, (came_from, into) in enumerate(traced.crossings, 1):
        print(f"| {number} | {came_from} | {into} |")
    twice = len(traced.entered_twice)
    print(f"\n{len(traced.crossings)} crossings; modules entered twice: {twice}")
    for path in traced.entered_twice:
        print(f"  {path}")
    return 1 if traced.entered_twice else 0


if __name__ == "__main__":
    sys.exit(main())
