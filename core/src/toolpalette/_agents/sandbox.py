"""The code-mode sandbox: one script run in a Monty worker, suspended at each tool call.

``pydantic_monty`` (the ``code`` extra) is imported here only when a script runs.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import json
import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from toolpalette.errors import ToolError

__all__ = [
    "CodeLimits",
    "Finished",
    "Paused",
    "Sandbox",
    "Suspend",
    "available",
    "run_script",
]

SCRIPT_NAME: Final = "run_code.py"
"""What tracebacks call the model's script."""
_TRACEBACK_CHARS: Final = 2000
"""The most characters of a failed script's traceback the model reads."""
_GRACE: Final = 1.0
"""Seconds the worker's own deadline waits past the wall time before it is killed."""
_HOST_GRACE: Final = 0.25
"""Seconds the host waits past the wall time, so that a script busy in the sandbox ends
by the sandbox's own time limit (cleanly) rather than by the host's."""


@dataclass(frozen=True)
class CodeLimits:
    """The bounds of one ``run_code`` script; past one it ends with a 4xx result.

    Args:
        wall_time: seconds the whole script may take, its tool calls included (408).
        memory: bytes the sandbox's heap may hold (413 ``memory_limit``).
        tool_calls: tool calls one script may make (429 ``too_many_calls``).
        output_bytes: bytes of what the script prints and returns together, as UTF-8
            and JSON (413 ``output_too_large``).
        recursion: the deepest the script's own calls may nest (400, a RecursionError).
    """

    wall_time: float = 30.0
    memory: int = 64 * 1024 * 1024
    tool_calls: int = 50
    output_bytes: int = 64 * 1024
    recursion: int = 200

    def __post_init__(self) -> None:
        numbers = (self.wall_time, self.memory, self.tool_calls, self.output_bytes, self.recursion)
        if not all(isinstance(n, (int, float)) and math.isfinite(n) and n > 0 for n in numbers):
            raise ValueError("every code-mode limit must be a positive, finite number")


class Suspend(Exception):
    """Raised by a call handler to stop the script at this call, to be resumed later."""


@dataclass(frozen=True)
class Paused:
    """A script stopped at a tool call: what resumes it, in any process."""

    dump: bytes
    """The suspended worker (Monty's snapshot, announcing the call again when loaded)."""
    printed: str
    """What it printed so far."""
    calls: int
    """The tool calls it made before this one."""


@dataclass(frozen=True)
class Finished:
    """A script that ran to its end."""

    value: Any
    """Its last expression's value, made JSON (None when it ends on a statement)."""
    printed: str
    """What it printed."""
    calls: int
    """The tool calls it made."""


Answer = Mapping[str, Any]
"""A call handler's answer: ``{"return_value": v}`` or ``{"exception": exc}``."""
CallHandler = Callable[[str, tuple[Any, ...], dict[str, Any]], Awaitable[Answer]]
"""Runs one tool call the script makes: its function name, positional and keyword args."""


def available() -> bool:
    """Whether the sandbox is installed (the ``code`` extra), without importing it."""
    return importlib.util.find_spec("pydantic_monty") is not None


def _monty() -> Any:
    try:
        return importlib.import_module("pydantic_monty")
    except ImportError:
        raise ToolError(
            "Code mode is not available here: the sandbox is not installed.",
            code="sandbox_unavailable",
            status=501,
        ) from None


class _Printed:
    """What a script prints, kept up to a cap; past it the rest is dropped and noted."""

    __slots__ = ("cap", "over", "parts", "size")

    def __init__(self, cap: int, already: str = "") -> None:
        self.cap = cap
        self.parts = [already] if already else []
        self.size = len(already.encode("utf-8"))
        self.over = False

    def __call__(self, _stream: str, text: str) -> None:
        if self.over:
            return
        size = len(text.encode("utf-8"))
        if self.size + size > self.cap:
            self.over = True
            return
        self.parts.append(text)
        self.size += size

    @property
    def text(self) -> str:
        return "".join(self.parts)


def _too_much(limits: CodeLimits) -> ToolError:
    return ToolError(
        f"The script printed or returned more than {limits.output_bytes} bytes; "
        "print less, or return only what you need.",
        code="output_too_large",
        status=413,
    )


def jsonable(value: Any) -> Any:
    """A script's value as JSON data: tuples and sets as lists, other objects as text."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        items = [jsonable(v) for v in value]
        try:
            return sorted(items)
        except TypeError:
            return items
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return repr(value)


def _failure(error: Any, limits: CodeLimits, printed: _Printed) -> ToolError:
    """The 4xx result of a script that raised (or ran into a bound)."""
    if printed.over:
        return _too_much(limits)
    try:
        inner = error.exception()
    except Exception:
        inner = None
    if isinstance(inner, TimeoutError):
        return ToolError(
            f"The script ran past its time limit ({limits.wall_time:g} s) and was stopped.",
            code="script_timeout",
            status=408,
        )
    if isinstance(inner, MemoryError):
        return ToolError(
            f"The script used more than its memory limit ({limits.memory} bytes) and was stopped.",
            code="memory_limit",
            status=413,
        )
    try:
        shown = error.display("traceback")
    except Exception:
        shown = str(error)
    if len(shown) > _TRACEBACK_CHARS:
        shown = "..." + shown[-_TRACEBACK_CHARS:]
    output = printed.text
    before = f"It printed, before failing:\n{output[-_TRACEBACK_CHARS:]}\n" if output else ""
    return ToolError(f"The script failed.\n{before}{shown}", code="script_error", status=400)


class Sandbox:
    """Monty's worker pool: one per script by default, or kept warm by a host.

    ``async with Sandbox() as sandbox`` starts one worker and keeps it; pass it to
    `run_script()` to run scripts without starting a worker each time. The worker
    ends when the block does.
    """

    def __init__(self, *, workers: int = 1, wall_time: float | None = None) -> None:
        monty = _monty()
        timeout = None if wall_time is None else wall_time + _GRACE
        self._pool = monty.AsyncMonty(
            min_processes=0, max_processes=workers, request_timeout=timeout
        )

    async def __aenter__(self) -> Sandbox:
        await self._pool.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._pool.__aexit__(*exc)

    def checkout(self, limits: CodeLimits) -> Any:
        """A fresh session of one of the pool's workers, under ``limits``."""
        return self._pool.checkout(
            script_name=SCRIPT_NAME,
            limits={
                "max_memory": int(limits.memory),
                "max_feed_duration_secs": float(limits.wall_time),
                "max_recursion_depth": int(limits.recursion),
                # The tool calls are bounded by the driver; the rest (imports, names) too.
                "max_suspensions": int(limits.tool_calls) * 4 + 64,
                "max_total_sleep_secs": float(limits.wall_time),
            },
            print_flush_interval=0.001,
        )


async def run_script(
    code: str,
    limits: CodeLimits,
    on_call: CallHandler,
    *,
    resume: Paused | None = None,
    sandbox: Sandbox | None = None,
) -> Finished | Paused:
    """Run ``code`` (or resume a paused script) to its end, each tool call via ``on_call``.

    ``on_call`` answers each call the script makes of a name it has not defined itself;
    raising `Suspend` stops the script there (a `Paused` is returned, and
    the call is announced again when it resumes). Operating-system calls (files,
    imports beyond Monty's own modules) are refused inside the script.

    Raises:
        ToolError: the script failed (400), or ran past a bound (408, 413, 429); the
            sandbox is missing (501) or its worker died (503).
    """
    try:
        return await asyncio.wait_for(
            _run(code, limits, on_call, resume, sandbox), timeout=limits.wall_time + _HOST_GRACE
        )
    except asyncio.TimeoutError:
        raise ToolError(
            f"The script ran past its time limit ({limits.wall_time:g} s) and was stopped.",
            code="script_timeout",
            status=408,
        ) from None


async def _run(
    code: str,
    limits: CodeLimits,
    on_call: CallHandler,
    resume: Paused | None,
    sandbox: Sandbox | None,
) -> Finished | Paused:
    if sandbox is None:
        async with Sandbox(wall_time=limits.wall_time) as own:
            return await _drive(own, code, limits, on_call, resume)
    return await _drive(sandbox, code, limits, on_call, resume)


async def _drive(
    sandbox: Sandbox,
    code: str,
    limits: CodeLimits,
    on_call: CallHandler,
    resume: Paused | None,
) -> Finished | Paused:
    monty = _monty()
    printed = _Printed(limits.output_bytes, resume.printed if resume is not None else "")
    calls = resume.calls if resume is not None else 0
    try:
        async with sandbox.checkout(limits) as session:
            if resume is not None:
                snapshot = await session.load_snapshot(resume.dump, print_callback=printed)
            else:
                snapshot = await session.feed_start(code, print_callback=printed)
            while not isinstance(snapshot, monty.MontyComplete):
                if printed.over:
                    raise _too_much(limits)
                if isinstance(snapshot, monty.AsyncFunctionSnapshot):
                    if snapshot.is_os_function:  # files, the clock, imports: Monty's refusal
                        snapshot = await snapshot.resume_not_handled()
                        continue
                    if calls >= limits.tool_calls:
                        raise ToolError(
                            f"The script made more than {limits.tool_calls} tool calls; "
                            "it was stopped there.",
                            code="too_many_calls",
                            status=429,
                        )
                    try:
                        answer = await on_call(
                            str(snapshot.function_name), snapshot.args, dict(snapshot.kwargs)
                        )
                    except Suspend:
                        return Paused(snapshot.dump(), printed.text, calls)
                    calls += 1
                    snapshot = await snapshot.resume(dict(answer))
                elif isinstance(snapshot, monty.AsyncNameLookupSnapshot):
                    snapshot = await snapshot.resume()  # not defined: a NameError
                else:  # a future snapshot: the script awaited something that is not ours
                    raise ToolError(
                        "The script awaited something that never finishes; call tools "
                        "without await.",
                        code="script_error",
                        status=400,
                    )
            value = jsonable(snapshot.output)
    except monty.MontyCrashedError:
        if printed.over:
            raise _too_much(limits) from None
        raise ToolError(
            "The sandbox stopped while running the script; try again.",
            code="sandbox_crashed",
            status=503,
        ) from None
    except monty.MontyError as error:
        raise _failure(error, limits, printed) from None
    if printed.over:
        raise _too_much(limits)
    shown = printed.size + len(json.dumps(value, ensure_ascii=False).encode("utf-8"))
    if shown > limits.output_bytes:
        raise _too_much(limits)
    return Finished(value, printed.text, calls)
