"""The palette the MCP server tests serve: one tool per thing a call can do.

Imported by the tests in-process, and by ``toolpalette serve --thinker
palette_fixture:Palette`` in a subprocess (with this folder on ``PYTHONPATH``).
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pydantic
import toolpalette
from toolpalette import SkillSelector, Thinker, ToolContext, ToolPolicy, ToolSelector
from toolpalette.errors import ToolError

print("palette_fixture: a stray print, as packs sometimes do")  # must never reach the wire

CANARY = "CANARY-7f3a9c-secret-in-a-stack-trace"
"""Put in a tool's exception; must never reach a client."""
ABORTED = threading.Event()
"""Set by ``wait_for_abort`` when the pipeline tells it to stop."""
STARTED = threading.Event()
"""Set by ``wait_for_abort`` once it runs."""


class Sum(pydantic.BaseModel):
    total: int


@toolpalette.tool(read_only=True, open_world=False)
async def echo(text: str) -> str:
    """Say the text back."""
    return text


@toolpalette.tool(read_only=True, display_name="Add numbers")
def add(a: int, b: int) -> Sum:
    """Add two numbers."""
    return Sum(total=a + b)


@toolpalette.tool
def delete_row(row: int) -> str:
    """Delete a row (mutating, destructive by default)."""
    return f"deleted {row}"


@toolpalette.tool(destructive=False, idempotent=True, open_world=False)
def append_note(text: str) -> str:
    """Append a note (mutating, additive, idempotent)."""
    return "noted"


@toolpalette.tool(read_only=True)
def explode() -> str:
    """Fail with an unexpected error."""
    raise RuntimeError(f"database password is {CANARY}")


@toolpalette.tool(read_only=True)
def refuse() -> str:
    """Fail with a message meant for the model."""
    raise ToolError("The quota for today is used up; try again tomorrow.")


@toolpalette.tool(read_only=True, timeout=0.2)
async def dawdle() -> str:
    """Take longer than allowed."""
    await asyncio.sleep(30)
    return "late"


@toolpalette.tool(read_only=True, output_cap=16)
def chatter() -> str:
    """Say too much."""
    return "blah " * 100


@toolpalette.tool(read_only=True)
def count(steps: int, ctx: ToolContext) -> str:
    """Count up, reporting progress at each step."""
    for done in range(1, steps + 1):
        ctx.report_progress(done, steps, f"step {done}")
    return f"counted {steps}"


@toolpalette.tool(read_only=True, timeout=30)
def wait_for_abort(ctx: ToolContext) -> str:
    """Run until told to stop."""
    STARTED.set()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if ctx.abort.wait(0.01):
            ABORTED.set()
            return "stopped"
    return "never stopped"


@toolpalette.tool(read_only=True)
def guarded() -> str:
    """Offered, but the policy denies every call."""
    return "should not run"


@toolpalette.tool(read_only=True)
def secret_lookup(key: str) -> str:
    """Deferred: offered only after request_tools grants it."""
    return f"value of {key}"


@toolpalette.tool(read_only=True)
def vault_lookup(key: str) -> str:
    """Deferred: in the catalog, but the policy refuses every grant of it."""
    return f"vault value of {key}"


@toolpalette.tool(destructive=True)
def wipe_table(table: str) -> str:
    """Deferred and mutating: a person approves each grant of it."""
    WIPED.append(table)
    return f"wiped {table}"


WIPED: list[str] = []
"""The tables ``wipe_table`` really wiped."""


PIXEL = b"\x89PNG\r\n\x1a\n-not-really-a-png"


@toolpalette.tool(read_only=True)
def snapshot() -> toolpalette.Image:
    """Return an image."""
    return toolpalette.Image(data=PIXEL, mime_type="image/png")


class FixturePolicy(ToolPolicy):
    """Denies ``guarded`` calls while still offering it; refuses ``vault_lookup``'s grant
    and asks a person about ``wipe_table``'s."""

    def decide_call(self, thinker: Any, provider: Any, value: Any) -> toolpalette.Decision:
        if provider.name == "guarded":
            return toolpalette.Decision.DENY
        return super().decide_call(thinker, provider, value)

    def decide_grant(self, thinker: Any, kind: str, name: str, item: Any) -> toolpalette.Decision:
        if name == "vault_lookup":
            return toolpalette.Decision.DENY
        if name == "wipe_table":
            return toolpalette.Decision.ASK
        return super().decide_grant(thinker, kind, name, item)


class Palette(Thinker):
    """A thinker with a tool per outcome, a deferred tool, and the SQL skills."""

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        selector = ToolSelector()
        for tool in (
            echo,
            add,
            delete_row,
            append_note,
            explode,
            refuse,
            dawdle,
            chatter,
            count,
            wait_for_abort,
            guarded,
            snapshot,
        ):
            selector.tool(tool)
        for deferred in (secret_lookup, vault_lookup, wipe_table):
            selector.tool(deferred, deferred=True)
        return selector

    @classmethod
    def declare_skills(cls) -> SkillSelector:
        return SkillSelector().prefix("io.toolpalette.sql")

    def __init__(self, hub: Any, conversation: Any = None, **options: Any) -> None:
        options.setdefault("policy", FixturePolicy())
        super().__init__(hub, conversation, **options)


class Reader(Palette):
    """The same palette, bound read-only."""

    read_only = True


class Searching(Palette):
    """The same palette, its deferred tools reached through ``search_tools``."""

    tool_search = "search"


def many_tools(n: int) -> list[Any]:
    """``n`` trivial read-only tools named ``t0000``..., for paging through long lists."""
    made = []
    for i in range(n):

        async def tool_fn(x: int = 0) -> int:
            return x

        tool_fn.__doc__ = f"Tool number {i}."
        made.append(toolpalette.tool(name=f"t{i:04d}", read_only=True)(tool_fn))
    return made


MANY = many_tools(250)


class Many(Thinker):
    """250 tools, for paging."""

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        selector = ToolSelector()
        for tool in MANY:
            selector.tool(tool)
        return selector


@toolpalette.tool(destructive=False, idempotent=True)
def sweep(room: str) -> str:
    """Deferred and mutating: granted at call time by the default policy."""
    return f"swept {room}"


class Clerk(Thinker):
    """One principal's palette over HTTP: reading tools, and a deferred lookup."""

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(echo).tool(add).tool(secret_lookup, deferred=True)


class Janitor(Thinker):
    """Another principal's palette: mutating tools, and a deferred sweep."""

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(delete_row).tool(append_note).tool(sweep, deferred=True)
