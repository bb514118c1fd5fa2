"""``toolpalette call NAME --input JSON``: one tool call through the execution pipeline.

The tool comes from the catalog of installed packs and runs exactly as a model's call
would: the JSON input policy, validation, the timeout, the output cap and error
shaping all apply. ``--read-only`` refuses mutating tools as a read-only agent would.
Failures go to the packs' ``toolpalette_tool_error`` hooks. Prints the result's text
(a failure's text on stderr), or with ``--json`` the whole result
(``is_error``, ``status``, ``code``, ``text``, ``content``, ``structured``).
Exit status: 0 success, 1 the call failed, 2 bad usage.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import threading
import uuid
from collections.abc import Coroutine, Mapping
from typing import Any, TextIO

from toolpalette._cli.list import add_config_option, hub_from_args
from toolpalette._hub import ToolHub
from toolpalette._run.executor import Executor
from toolpalette._tools.provider import ToolProvider
from toolpalette._tools.result import ToolResult
from toolpalette._tools.tool import ToolContext

__all__ = ["register", "run"]

_REPORT_WAIT = 5.0
"""Seconds the command waits for failure reports to reach the hooks before exiting."""


def register(subparsers: Any) -> None:
    """Add ``call`` to the command line."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "call",
        help="run one tool call through the pipeline",
        description="Run one tool call as a model would, and print its result.",
    )
    parser.add_argument("name", metavar="NAME", help="the tool's name (exact)")
    parser.add_argument(
        "--input",
        metavar="JSON",
        default="{}",
        help="the input as a JSON object (default: {}); '-' reads it from stdin",
    )
    parser.add_argument(
        "--read-only", action="store_true", help="refuse tools that are not read-only"
    )
    parser.add_argument("--json", action="store_true", help="print the whole result as JSON")
    parser.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=_positive,
        help="the deadline for tools that set none (default: 30)",
    )
    add_config_option(parser)
    parser.set_defaults(func=run)


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("expected a number of seconds") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError("expected a positive, finite number of seconds")
    return value


def run(args: argparse.Namespace) -> int:
    """Run the call and print its result; returns 0 on success and 1 on a failed call."""
    raw = sys.stdin.read() if args.input == "-" else args.input
    hub = hub_from_args(args)
    executor = _executor(hub, args)
    bar = _ProgressBar(sys.stderr) if sys.stderr.isatty() else None
    context = ToolContext(
        run_id=f"cli-{uuid.uuid4().hex[:12]}", on_progress=bar.show if bar else None
    )
    try:
        result = _run_once(executor.execute(args.name, raw, context=context))
    finally:
        if bar is not None:
            bar.clear()
    executor.reports.join(_REPORT_WAIT)
    _print(result, as_json=args.json)
    return 1 if result.is_error else 0


def _executor(hub: ToolHub, args: argparse.Namespace) -> Executor:
    def config_for(provider: ToolProvider) -> Mapping[str, Any]:
        pack = provider.origin.pack if provider.origin is not None else None
        return hub.pack_config(pack) if pack else {}

    options: dict[str, Any] = {"timeout": args.timeout} if args.timeout else {}
    return Executor(
        hub.catalog(),
        read_only=args.read_only,
        config_for=config_for,
        hook=hub.pm.hook.toolpalette_tool_error,
        **options,
    )


def _run_once(call: Coroutine[Any, Any, ToolResult]) -> ToolResult:
    """Run ``call`` on a fresh loop; never wait long for a tool that ignored its deadline.

    ``asyncio.run`` would wait for every leftover task at shutdown, and an abandoned
    tool that swallows cancellation would then hang the command.
    """
    loop = asyncio.new_event_loop()
    try:
        result = loop.run_until_complete(call)
        leftovers = asyncio.all_tasks(loop)
        for task in leftovers:
            task.cancel()
        if leftovers:
            loop.run_until_complete(asyncio.wait(leftovers, timeout=1.0))
        return result
    finally:
        loop.close()


class _ProgressBar:
    """The tool's progress reports, drawn on one terminal line that is cleared at the end.

    Reports may come from a worker thread (a sync tool), hence the lock.
    """

    _WIDTH = 24

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self._drawn = False

    def show(self, done: float, total: float | None, message: str | None) -> None:
        if total is not None and total > 0:
            filled = round(self._WIDTH * max(0.0, min(done / total, 1.0)))
            line = f"[{'#' * filled}{'.' * (self._WIDTH - filled)}] {done:g}/{total:g}"
        else:
            line = f"[{'?' * self._WIDTH}] {done:g}"
        if message:
            line += f" {' '.join(message.split())}"
        with self._lock:
            self._stream.write(f"\r\x1b[K{line[:200]}")
            self._stream.flush()
            self._drawn = True

    def clear(self) -> None:
        with self._lock:
            if self._drawn:
                self._stream.write("\r\x1b[K")
                self._stream.flush()
                self._drawn = False


def _print(result: ToolResult, *, as_json: bool) -> None:
    if as_json:
        print(result.to_json())
    elif result.is_error:
        print(f"error {result.status} {result.code}: {result.text}", file=sys.stderr)
    else:
        print(result.text)
