"""``toolpalette call NAME --input JSON``: one tool call through the execution pipeline."""

from __future__ import annotations

import argparse
import asyncio
import base64
import math
import mimetypes
import re
import sys
import threading
import traceback
import urllib.parse
import uuid
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any, Final, TextIO

from toolpalette._cli.list import (
    add_config_option,
    host_problems,
    hub_from_args,
    problems_note,
    unknown_tool_notes,
)
from toolpalette._hub import ToolHub
from toolpalette._run.executor import Executor
from toolpalette._run.reports import ToolErrorReport
from toolpalette._tools.provider import ToolProvider
from toolpalette._tools.result import ToolResult
from toolpalette._tools.tool import ToolContext

__all__ = ["register", "run"]

_REPORT_WAIT = 5.0
"""Seconds the command waits for failure reports to reach the hooks before exiting."""
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f-\x9f]")
"""What a progress message may not put on the terminal: C0 controls, DEL, C1 controls."""


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
        "-v",
        "--verbose",
        action="store_true",
        help="on failure, also print the report the model never sees (exception, traceback)",
    )
    parser.add_argument(
        "--save",
        metavar="DIR",
        type=Path,
        help="write the result's images, audio and files into DIR (default: summarize them)",
    )
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
    reports: list[ToolErrorReport] = []
    executor = _executor(hub, args, reports.append if args.verbose else None)
    bar = _ProgressBar(sys.stderr) if sys.stderr.isatty() else None
    context = ToolContext(
        run_id=f"cli-{uuid.uuid4().hex[:12]}", on_progress=bar.show if bar else None
    )
    try:
        if args.name == "run_code":
            result = _run_once(_run_code(hub, args, raw))
        else:
            result = _run_once(executor.execute(args.name, raw, context=context))
    finally:
        if bar is not None:
            bar.clear()
    executor.reports.join(_REPORT_WAIT)
    _print(result, as_json=args.json)
    for report in reports:
        print(_report_text(report), file=sys.stderr)
    if not args.json:
        _binary_blocks(result, args.name, args.save)
    problems = host_problems(hub)
    if result.code == "unknown_tool":
        known = executor.registry.tool_names()
        for note in unknown_tool_notes(args.name, known, problems):
            print(note, file=sys.stderr)
    problems_note(problems)
    return 1 if result.is_error else 0


def _executor(
    hub: ToolHub, args: argparse.Namespace, report: Callable[[ToolErrorReport], None] | None
) -> Executor:
    def config_for(provider: ToolProvider) -> Mapping[str, Any]:
        pack = provider.origin.pack if provider.origin is not None else None
        return hub.pack_config(pack) if pack else {}

    options: dict[str, Any] = {"timeout": args.timeout} if args.timeout else {}
    with hub.mcp().at_hand():  # the packs, and the servers' listings kept from earlier runs
        registry = hub.catalog()
    if not registry.has_tool(args.name) and hub.mcp_server_names():
        registry = hub.catalog()  # now the servers not listed yet are started
    # The command prints the failure itself (and, with --verbose, its report).
    return Executor(
        registry,
        read_only=args.read_only,
        config_for=config_for,
        hook=hub.pm.hook.toolpalette_tool_error,
        on_tool_error=report,
        log_failures=False,
        **options,
    )


async def _run_code(hub: ToolHub, args: argparse.Namespace, raw: str) -> ToolResult:
    """``run_code``: a script over the catalog's tools, as a thinker in code mode runs it."""
    from toolpalette._agents.sandbox import available
    from toolpalette._agents.selector import ToolSelector
    from toolpalette._agents.thinker import Thinker

    if not available():
        return ToolResult.failure(
            501,
            "sandbox_unavailable",
            "run_code needs the sandbox: pip install 'toolpalette[code]'",
        )
    with hub.mcp().at_hand():
        providers = list(hub.catalog().providers())

    class CommandLine(Thinker):
        """Every tool of the catalog, in code mode."""

        code_mode = True

        @classmethod
        def declare_compatible_tools(cls) -> ToolSelector:
            chosen = ToolSelector()
            for provider in providers:
                chosen.provider(provider)
            return chosen

    CommandLine.read_only = bool(args.read_only)
    thinker = hub.bind(CommandLine)
    return await thinker.call("run_code", raw)


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

    Reports may come from a worker thread (a sync tool), hence the lock. A report's
    message may come from an MCP server: control characters (escape sequences the
    terminal would obey) are taken out, and a report whose numbers are not finite is
    not drawn.
    """

    _WIDTH = 24

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self._drawn = False

    def show(self, done: float, total: float | None, message: str | None) -> None:
        if not math.isfinite(done) or (total is not None and not math.isfinite(total)):
            return
        if total is not None and total > 0:
            filled = round(self._WIDTH * max(0.0, min(done / total, 1.0)))
            line = f"[{'#' * filled}{'.' * (self._WIDTH - filled)}] {done:g}/{total:g}"
        else:
            line = f"[{'?' * self._WIDTH}] {done:g}"
        if message:
            line += f" {' '.join(_CONTROL.sub(' ', message).split())}"
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


def _report_text(report: ToolErrorReport) -> str:
    """A failure report as the host sees it: what the model was told, and why."""
    lines = [
        f"report: tool {report.tool!r} failed with {report.status} {report.code} "
        f"after {report.duration:.3f}s",
        f"  input: {report.input!r}"[:2000],
    ]
    if report.error is None:
        lines.append("  (no exception: the pipeline refused the call)")
    else:
        trace = traceback.format_exception(
            type(report.error), report.error, report.error.__traceback__
        )
        lines.extend("  " + line for chunk in trace for line in chunk.rstrip().splitlines())
    return "\n".join(lines)


_BINARY: Final = ("image", "audio", "resource")


def _binary_blocks(result: ToolResult, tool_name: str, folder: Path | None) -> None:
    """Save the result's binary blocks into ``folder``, or say how to (to stderr)."""
    blocks = [(i, b) for i, b in enumerate(result.content, 1) if b.get("type") in _BINARY]
    if not blocks:
        return
    if folder is None:
        print(
            f"({len(blocks)} image, audio or file block(s) summarized above; "
            "pass --save DIR to write them to files)",
            file=sys.stderr,
        )
        return
    folder.mkdir(parents=True, exist_ok=True)
    for position, block in blocks:  # a block without a name is named by its position
        name, data = _block_file(block, f"{tool_name}-{position}")
        target = _free_path(folder, name)
        target.write_bytes(data)
        print(f"saved {block['type']} to {target}", file=sys.stderr)


def _block_file(block: Mapping[str, Any], stem: str) -> tuple[str, bytes]:
    """A safe file name for one block, and its bytes."""
    if block["type"] == "resource":
        resource = block.get("resource") or {}
        uri = str(resource.get("uri", ""))
        name = urllib.parse.unquote(uri.rsplit("/", 1)[-1]) if uri else ""
        if "text" in resource:
            data = str(resource["text"]).encode("utf-8")
        else:
            data = base64.b64decode(str(resource.get("blob", "")))
        mime = str(resource.get("mimeType", ""))
    else:
        name, mime = "", str(block.get("mimeType", ""))
        data = base64.b64decode(str(block.get("data", "")))
    name = _SAFE_NAME.sub("_", name).strip("._")
    if not name:
        name = stem + (mimetypes.guess_extension(mime) or ".bin")
    return name, data


_SAFE_NAME: Final = re.compile(r"[^A-Za-z0-9._-]")


def _free_path(folder: Path, name: str) -> Path:
    """``folder/name``, or ``folder/stem-2.ext`` (and so on) when that exists already."""
    target = folder / name
    stem, suffix = target.stem, target.suffix
    count = 1
    while target.exists():
        count += 1
        target = folder / f"{stem}-{count}{suffix}"
    return target
