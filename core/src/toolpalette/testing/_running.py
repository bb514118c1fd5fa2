"""Code under test run in the test's own process (a tool, the command line), and waited for."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolpalette._tools.provider import BoundTool, as_provider
from toolpalette._tools.tool import ToolContext

if TYPE_CHECKING:
    from toolpalette._hub import ToolHub

__all__ = [
    "arun_tool",
    "await_until",
    "run_cli",
    "run_tool",
    "wait_until",
]


def _prepare(
    obj: object, raw: str | bytes | Mapping[str, Any], parent: Any, context: ToolContext | None
) -> tuple[BoundTool, Any, ToolContext]:
    provider = as_provider(obj)
    value = provider.parse_input(raw)
    return provider.create(parent), value, context or ToolContext(parent=parent)


def run_tool(
    obj: object,
    raw: str | bytes | Mapping[str, Any],
    *,
    parent: Any = None,
    context: ToolContext | None = None,
) -> Any:
    """Validate ``raw`` as a model would send it, run the tool, and return its result.

    ``obj`` is an ``@tool`` function or class, or a provider. An async tool is run to
    completion with `asyncio.run()`; inside a running event loop use
    [`arun_tool()`][toolpalette.testing.arun_tool]. Refused input raises
    [`InvalidInputError`][toolpalette.InvalidInputError]. This is the tool on its own:
    no timeout, output cap or policy applies.
    """
    bound, value, ctx = _prepare(obj, raw, parent, context)
    if bound.is_async and _loop_running():
        raise RuntimeError(
            "run_tool cannot run an async tool inside a running event loop (an async "
            "test, a notebook): use `await toolpalette.testing.arun_tool(...)` there"
        )
    result = bound.invoke(value, ctx)
    if bound.is_async:
        return asyncio.run(_await(result))
    return result


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


async def arun_tool(
    obj: object,
    raw: str | bytes | Mapping[str, Any],
    *,
    parent: Any = None,
    context: ToolContext | None = None,
) -> Any:
    """Like `run_tool()`, from async code; a sync tool runs in the calling thread."""
    bound, value, ctx = _prepare(obj, raw, parent, context)
    result = bound.invoke(value, ctx)
    return await result if bound.is_async else result


async def _await(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def run_cli(argv: Sequence[str], *, hub: ToolHub | None = None) -> int:
    """Run the ``toolpalette`` command line in this process; return its exit status.

    With ``hub``, the commands that work on a hub (``list``, ``show``, ``plugins``,
    ``check``, ``skills``, ``call``) use that one, built in the test (for example with
    [`plugin_of()`][toolpalette.testing.plugin_of]), instead of the installed packs and
    ``--config``. Output goes to ``sys.stdout`` and ``sys.stderr`` as usual (pytest's
    ``capsys`` reads it).
    """
    from toolpalette._cli import main
    from toolpalette._cli.list import using_hub

    if hub is None:
        return main(list(argv))
    with using_hub(hub):
        return main(list(argv))


# -- waiting under a deadline ------------------------------------------------------------


_POLL_INTERVAL = 0.005  # seconds between two looks of wait_until and await_until


def _timed_out(predicate: Callable[[], Any], timeout: float, message: str | None) -> AssertionError:
    what = message or getattr(predicate, "__qualname__", repr(predicate))
    return AssertionError(f"not true within {timeout:g} s: {what}")


def wait_until(
    predicate: Callable[[], Any], *, timeout: float = 5.0, message: str | None = None
) -> Any:
    """Call ``predicate`` until it returns something true, and return that.

    For a condition another thread makes true (a worker that ends, a report that
    arrives); the calling thread sleeps between looks, so inside a coroutine use
    [`await_until()`][toolpalette.testing.await_until], which lets the event loop run.
    The deadline is a ceiling, not a delay: the wait ends as soon as the condition
    holds.

    Raises:
        AssertionError: the condition still did not hold after ``timeout`` seconds; the
            message is ``message`` or the predicate's name.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise _timed_out(predicate, timeout, message)
        time.sleep(_POLL_INTERVAL)


async def await_until(
    predicate: Callable[[], Any], *, timeout: float = 5.0, message: str | None = None
) -> Any:
    """Like `wait_until()`, from a coroutine: the event loop runs between looks.

    For a condition a task or a callback on the same loop makes true, such as a call
    pausing for its approval (``await await_until(thinker.pending_approvals)``).
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise _timed_out(predicate, timeout, message)
        await asyncio.sleep(_POLL_INTERVAL)
