"""Running code under test in the test's own process: one tool, or the command line."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolpalette._tools.provider import BoundTool, as_provider
from toolpalette._tools.tool import ToolContext

if TYPE_CHECKING:
    from toolpalette._hub import ToolHub

__all__ = ["arun_tool", "run_cli", "run_tool"]


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
