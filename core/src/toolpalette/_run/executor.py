"""The one door every tool call goes through.

In order, each refusal a result the model can read: the name (404 unknown, 403 not
offered, with the same text), the read-only binding (403), the input (400), the policy
(403 on deny; ``ask`` pauses for the host's approver), the run under a deadline (504,
503 when the worker pool is full), the output cap (413), and error shaping (a
``ToolError`` keeps its fields; anything else is a generic 500). Failures are reported
in the background; the caller's own abort (499) is not.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, Final, Literal

from toolpalette._run import running as _running
from toolpalette._run import shaping as _shaping
from toolpalette._run.abort import AbortSignal
from toolpalette._run.reports import Reporter, ReportQueue, ToolErrorReport
from toolpalette._run.workers import PoolBusy, WorkerPool
from toolpalette._tools.result import ToolResult
from toolpalette._tools.tool import ToolContext
from toolpalette.errors import InvalidInputError

if TYPE_CHECKING:
    from toolpalette._tools.provider import BoundTool, ToolProvider
    from toolpalette._tools.registry import ToolRegistry

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_OUTPUT_CAP",
    "DEFAULT_TIMEOUT",
    "Executor",
    "execute",
    "execute_many",
]

logger = logging.getLogger("toolpalette.executor")

DEFAULT_TIMEOUT: Final = 30.0
"""Seconds a call may run when its tool sets no ``timeout``."""
DEFAULT_OUTPUT_CAP: Final = 65_536
"""Bytes of output JSON text allowed when the tool sets no ``output_cap``."""
DEFAULT_CONCURRENCY: Final = 16
"""Calls of one ``execute_many`` that may run at once."""

Decision = Literal["allow", "deny", "ask"]
Policy = Callable[["ToolProvider", Any], Any]
"""Called with the provider and the validated input; returns ``"allow"``, ``"deny"`` or
``"ask"`` (or a bool, or an object with ``action`` and an optional model-readable
``reason``). Anything else, and a policy that raises, denies."""
Approver = Callable[["ToolProvider", Any, "ToolContext | None"], "bool | Awaitable[bool]"]
"""Asked when the policy says ``ask``; the call pauses until it answers True or False."""
Call = tuple[object, Any] | tuple[object, Any, "str | None"]
"""One call for ``execute_many``: ``(name, input)`` or ``(name, input, call_id)``."""

_NO_CONTEXT: Final = ToolContext()
_SHARED: dict[str, Any] = {}
_SHARED_LOCK = threading.Lock()


def _shared(key: str, factory: Callable[[], Any]) -> Any:
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = factory()
        return _SHARED[key]


class _Ready:
    """A call that passed admission: the provider it holds and its validated input."""

    __slots__ = ("provider", "value")

    def __init__(self, provider: ToolProvider, value: Any) -> None:
        self.provider = provider
        self.value = value


Admission = tuple[_Ready | ToolResult, BaseException | None]


class _Pending:
    """A started call that must be awaited: a sync tool's work, or a suspended async tool."""

    __slots__ = ("abort", "entry", "event", "provider", "work")

    def __init__(
        self,
        provider: ToolProvider,
        entry: _Entry,
        work: Any,
        abort: AbortSignal | None,
        event: threading.Event | None,
    ) -> None:
        self.provider, self.entry, self.work = provider, entry, work
        self.abort, self.event = abort, event


_Entry = tuple["ToolProvider", Any, "BoundTool", "float | None", "int | None"]
"""What an executor keeps per provider: provider, parent, the built tool, and the
provider's own timeout and output cap (read once: they are properties)."""


class Executor:
    """Runs tool calls for one palette (or one run) through the pipeline.

    Args:
        registry: where names are looked up, at call time (a tool unregistered
            mid-call finishes against the provider the call already holds).
        offered: the names offered to this run; None offers every registered name.
        read_only: refuse every tool not declared ``read_only`` (403).
        require_read_only: the per-call read-only guarantee (e.g.
            ``ReadOnlyPalette.require_read_only``); raising or returning False is a 403.
        policy: decides allow, deny or ask per call, after input validation (so a
            person is never asked about an invalid call).
        approve: answers ``ask``; without one, ``ask`` is a 403 ``approval_required``.
        config_for: the host's configuration for a provider's pack (``ToolContext.config``).
        context: the default caller context (run id, thread id, user, parent).
        hook: a pluggy hook caller for failure reports
            (``hub.pm.hook.toolpalette_tool_error``), one sink per implementation.
        on_tool_error: callbacks given every failure report.
        timeout: seconds per call unless the tool sets its own.
        output_cap: bytes of output JSON text unless the tool sets its own.
        concurrency: calls of one ``execute_many`` running at once.
        pool: the worker pool for sync tools (default: one shared by the process).
        reports: the report queue (default: one shared by the process).
    """

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        offered: Iterable[str] | None = None,
        read_only: bool = False,
        require_read_only: Callable[[ToolProvider], object] | None = None,
        policy: Policy | None = None,
        approve: Approver | None = None,
        config_for: Callable[[ToolProvider], Mapping[str, Any]] | None = None,
        context: ToolContext | None = None,
        hook: Any = None,
        on_tool_error: Reporter | Iterable[Reporter] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        output_cap: int = DEFAULT_OUTPUT_CAP,
        concurrency: int = DEFAULT_CONCURRENCY,
        pool: WorkerPool | None = None,
        reports: ReportQueue | None = None,
    ) -> None:
        if not timeout > 0 or output_cap <= 0 or concurrency <= 0:
            raise ValueError("timeout, output_cap and concurrency must be positive")
        self.registry = registry
        self.offered = frozenset(offered) if offered is not None else None
        self.read_only = read_only
        self.require_read_only = require_read_only
        self.policy = policy
        self.approve = approve
        self.config_for = config_for
        self.context = context
        self.hook = hook
        self.on_tool_error: tuple[Reporter, ...] = (
            (on_tool_error,) if callable(on_tool_error) else tuple(on_tool_error or ())
        )
        self.timeout = timeout
        self.output_cap = output_cap
        self.concurrency = concurrency
        self.pool: WorkerPool = pool or _shared("pool", WorkerPool)
        self.reports: ReportQueue = reports or _shared("reports", ReportQueue)
        self._bound: dict[int, _Entry] = {}
        self._guarded = read_only or require_read_only is not None

    # -- public ----------------------------------------------------------------------

    async def execute(
        self,
        name: object,
        input: Any,
        *,
        context: ToolContext | None = None,
        abort: AbortSignal | None = None,
        call_id: str | None = None,
    ) -> ToolResult:
        """Run one call and return its result; never raises for anything the call does.

        ``input`` is JSON text, UTF-8 bytes or a mapping. Without a context (here or
        on the executor) the call is a direct call outside a run and is not reported.
        The caller's own cancellation propagates (the tool is abandoned, not reported).
        """
        started = time.perf_counter()
        ctx = context if context is not None else self.context
        admitted, error = self._admit(name, input)
        if type(admitted) is _Ready:
            if self.policy is not None:
                admitted, error = await self._authorize(admitted, ctx, abort)
            if type(admitted) is _Ready:
                step = self._begin(admitted, ctx, abort, call_id)
                admitted, error = await self._complete(step) if isinstance(step, _Pending) else step
        if admitted.is_error:  # type: ignore[union-attr]
            return self._finish(name, input, admitted, error, ctx, started, call_id)  # type: ignore[arg-type]
        return admitted  # type: ignore[return-value]

    async def execute_many(
        self,
        calls: Iterable[Call],
        *,
        context: ToolContext | None = None,
        abort: AbortSignal | None = None,
    ) -> list[ToolResult]:
        """Run the calls of one turn; results come back in the order of ``calls``.

        Consecutive concurrency-safe calls run together (at most ``concurrency`` at a
        time), except that calls sharing a resource key run one after another; an
        unsafe call runs alone, after the calls before it and before those after it.
        """
        from toolpalette._run.many import run_many

        return await run_many(self, list(calls), context, abort)

    def execute_sync(
        self,
        name: object,
        input: Any,
        *,
        context: ToolContext | None = None,
        abort: AbortSignal | None = None,
        call_id: str | None = None,
    ) -> ToolResult:
        """:meth:`execute` for a thread with no event loop (scripts, the command line).

        The tool runs in the worker pool (an async tool on an event loop of its own
        there) and this thread blocks until it ends, times out or is aborted.
        """
        started = time.perf_counter()
        ctx = context if context is not None else self.context
        admitted, error = self._admit(name, input)
        if type(admitted) is _Ready and self.policy is not None:
            admitted, error = _running.run_apart(self._authorize(admitted, ctx, abort))
        if type(admitted) is _Ready:
            admitted, error = self._perform_blocking(admitted, ctx, abort, call_id)
        return self._finish(name, input, admitted, error, ctx, started, call_id)  # type: ignore[arg-type]

    def stats(self) -> dict[str, int]:
        """Counters for health checks: abandoned work and undelivered reports."""
        return {
            "abandoned_threads": self.pool.abandoned,
            "abandoned_threads_total": self.pool.abandoned_total,
            "abandoned_tasks": _running.leftover_tasks(),
            "abandoned_tasks_total": _running.abandoned_tasks_total(),
            "busy_workers": self.pool.busy,
            "dropped_reports": self.reports.dropped,
        }

    # -- admission -------------------------------------------------------------------

    def _admit(self, name: object, raw: Any) -> Admission:
        """Steps 1 to 3: the name, the read-only binding and the input."""
        provider = self.registry.get(name)
        offered = self.offered
        if provider is None or (offered is not None and name not in offered):
            code, status = ("unknown_tool", 404) if provider is None else ("not_offered", 403)
            return _shaping.failure(status, code, self._unavailable(name)), None
        if self._guarded:
            refusal = self._check_read_only(provider)
            if refusal is not None:
                return refusal
        try:
            return _Ready(provider, provider.parse_input(raw)), None
        except InvalidInputError as exc:
            return _shaping.failure(400, "invalid_input", str(exc)), exc
        except Exception as exc:  # a provider's own validation broke: not the model's fault
            return _shaping.shape_exception(provider.name, exc), exc

    def _unavailable(self, name: object) -> str:
        names = self.registry.tool_names()
        if self.offered is not None:
            names = [n for n in names if n in self.offered]
        return _shaping.unavailable_text(name, names)

    def _check_read_only(self, provider: ToolProvider) -> Admission | None:
        error: BaseException | None = None
        allowed = provider.read_only if self.read_only else True
        if allowed and self.require_read_only is not None:
            try:
                allowed = self.require_read_only(provider) is not False
            except Exception as exc:
                allowed, error = False, exc
        if allowed:
            return None
        text = (
            f"{_shaping.name_label(provider.name)} can change things, and this agent may only "
            "use read-only tools."
        )
        return _shaping.failure(403, "read_only", text), error

    async def _authorize(
        self, ready: _Ready, ctx: ToolContext | None, abort: AbortSignal | None
    ) -> Admission:
        """The policy step: allow, deny (403) or ask the approver (the call pauses)."""
        from toolpalette._run.consent import authorize

        return await authorize(self, ready, ctx, abort)

    # -- running ---------------------------------------------------------------------

    def _tool_context(
        self, provider: ToolProvider, ctx: ToolContext | None, call_id: str | None
    ) -> ToolContext:
        base = ctx if ctx is not None else _NO_CONTEXT
        config = self.config_for(provider) if self.config_for is not None else base.config
        return ToolContext(
            parent=base.parent,
            config=config,
            abort=threading.Event(),
            call_id=call_id if call_id is not None else base.call_id,
            run_id=base.run_id,
            thread_id=base.thread_id,
            user=base.user,
            on_progress=base.on_progress,
        )

    def _prepare(
        self, provider: ToolProvider, ctx: ToolContext | None, call_id: str | None
    ) -> tuple[_Entry, ToolContext]:
        """The tool for this provider and parent, and the context it runs with.

        The tool is built once and kept while provider and parent stay the same; a tool
        that takes no context shares one empty context (no per-call Event to build).
        """
        parent = ctx.parent if ctx is not None else None
        entry = self._bound.get(id(provider))
        if entry is None or entry[0] is not provider or entry[1] is not parent:
            bound = provider.create(parent)
            entry = (provider, parent, bound, provider.timeout, provider.output_cap)
            self._bound[id(provider)] = entry
        if entry[2].takes_context:
            return entry, self._tool_context(provider, ctx, call_id)
        return entry, _NO_CONTEXT

    async def _perform(
        self,
        ready: _Ready,
        ctx: ToolContext | None,
        abort: AbortSignal | None,
        call_id: str | None,
    ) -> Admission:
        """Steps 4 to 6: run under the deadline, cap the output, shape what went wrong."""
        step = self._begin(ready, ctx, abort, call_id)
        return await self._complete(step) if isinstance(step, _Pending) else step

    def _begin(
        self,
        ready: _Ready,
        ctx: ToolContext | None,
        abort: AbortSignal | None,
        call_id: str | None,
    ) -> Admission | _Pending:
        """Start the call; an async tool runs its first step now, where most finish.

        A plain function: a call that needs no waiting costs no coroutine frame.
        """
        if abort is not None and abort.aborted:
            return _aborted(abort.reason or ""), None
        provider = ready.provider
        try:
            entry, tool_ctx = self._prepare(provider, ctx, call_id)
            bound = entry[2]
            event = tool_ctx.abort if tool_ctx is not _NO_CONTEXT else None
            if not bound.is_async:
                call = partial(bound.invoke, ready.value, tool_ctx)
                return _Pending(provider, entry, call, abort, event)
            outcome = _running.start_async(bound.invoke(ready.value, tool_ctx))
            if outcome[0] is _running.PENDING:
                return _Pending(provider, entry, outcome[1], abort, event)
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # create() or invoke() itself failed
            return self._settle(provider, (_running.RAISED, exc), self.timeout)
        if outcome[0] is _running.OK:
            return _shaping.render_output(provider, outcome[1], entry[4] or self.output_cap)
        return self._settle(provider, outcome, entry[3] or self.timeout)

    async def _complete(self, step: _Pending) -> Admission:
        """Wait for a started call: a suspended async tool, or a sync tool in a worker."""
        timeout = step.entry[3] or self.timeout
        if callable(step.work):
            outcome = await _running.run_sync(step.work, self.pool, timeout, step.abort, step.event)
        else:
            outcome = await _running.finish_async(step.work, timeout, step.abort, step.event)
        if outcome[0] is _running.OK:
            cap = step.entry[4] or self.output_cap
            return _shaping.render_output(step.provider, outcome[1], cap)
        return self._settle(step.provider, outcome, timeout)

    def _perform_blocking(
        self,
        ready: _Ready,
        ctx: ToolContext | None,
        abort: AbortSignal | None,
        call_id: str | None,
    ) -> Admission:
        if abort is not None and abort.aborted:
            return _aborted(abort.reason or ""), None
        provider = ready.provider
        timeout = self.timeout
        try:
            entry, tool_ctx = self._prepare(provider, ctx, call_id)
            bound, timeout = entry[2], entry[3] or timeout
            event = tool_ctx.abort if tool_ctx is not _NO_CONTEXT else None
            call = partial(bound.invoke, ready.value, tool_ctx)
            fn = partial(_running.run_to_end, call) if bound.is_async else call
            outcome = _running.run_blocking(fn, self.pool, timeout, abort, event)
        except Exception as exc:
            outcome = (_running.RAISED, exc)
        return self._settle(provider, outcome, timeout)

    def _settle(self, provider: ToolProvider, outcome: Any, timeout: float) -> Admission:
        kind, payload = outcome
        if kind is _running.OK:
            return _shaping.render_output(provider, payload, provider.output_cap or self.output_cap)
        if kind is _running.RAISED:
            return _shaping.shape_exception(provider.name, payload), payload
        if isinstance(kind, _running.Aborted):
            return _aborted(kind.reason), None
        label = _shaping.name_label(provider.name)
        if kind is _running.TIMEOUT:
            text = f"{label} did not finish within {timeout:g} seconds and was stopped."
            return _shaping.failure(504, "timeout", text), TimeoutError(text)
        text = f"{label} cannot run now: too many calls are in progress. Try again later."
        return _shaping.failure(503, "busy", text), PoolBusy(text)

    # -- reporting -------------------------------------------------------------------

    def _finish(
        self,
        name: object,
        raw: Any,
        result: ToolResult,
        error: BaseException | None,
        ctx: ToolContext | None,
        started: float,
        call_id: str | None = None,
    ) -> ToolResult:
        """Report a failed call (in the background) and return its result."""
        reported = self.hook is not None or self.on_tool_error
        if reported and result.is_error and ctx is not None and result.code != "aborted":
            if call_id is not None and call_id != ctx.call_id:
                ctx = dataclasses.replace(ctx, call_id=call_id)
            report = ToolErrorReport(
                tool=name if isinstance(name, str) else repr(name),
                input=raw,
                error=error,
                status=result.status,
                code=result.code,
                text=result.text,
                duration=time.perf_counter() - started,
                context=ctx,
            )
            self.reports.put(report, self.hook, self.on_tool_error)
        return result


def _aborted(reason: str) -> ToolResult:
    return _shaping.failure(499, "aborted", reason or "The call was cancelled by the caller.")


async def execute(
    registry: ToolRegistry,
    name: object,
    input: Any,
    *,
    context: ToolContext | None = None,
    abort: AbortSignal | None = None,
    **options: Any,
) -> ToolResult:
    """Run one call through a throwaway :class:`Executor` (options as its keywords)."""
    return await Executor(registry, **options).execute(name, input, context=context, abort=abort)


async def execute_many(
    registry: ToolRegistry,
    calls: Iterable[Call],
    *,
    context: ToolContext | None = None,
    abort: AbortSignal | None = None,
    **options: Any,
) -> list[ToolResult]:
    """Run one turn's calls through a throwaway :class:`Executor` (options as its keywords)."""
    return await Executor(registry, **options).execute_many(calls, context=context, abort=abort)
