"""The one door every tool call goes through (statuses and codes: docs/errors.md).

:meth:`Executor.execute` runs these steps in order; each refusal is a result the model
can read, and the first one ends the call:

1. look up the name: 404 ``unknown_tool``, 403 ``not_offered`` (with the same text);
2. the read-only binding: 403 ``read_only``;
3. validate the input: 400 ``invalid_input`` (input too large to validate on the event
   loop is validated in the worker pool, under the call's timeout and abort: 504, 499,
   503 as for a sync tool; see :meth:`Executor._validate_apart`);
4. authorize: the policy denies (403 ``denied``) or asks, and the call pauses for the
   host's approver (``consent.py``);
5. run under the deadline and render the output: 504 ``timeout``, 503 ``busy``, 499
   ``aborted`` (the caller's own abort), 500 or a ``ToolError``'s own status for a
   raising tool, 413 ``output_too_large``.

A step refuses by raising :class:`~toolpalette._run.call.Refusal`; ``execute`` catches
it in one place, reports the failure in the background (never the caller's own abort)
and returns its result. :meth:`Executor.execute_sync` and the batches of
:meth:`Executor.execute_many` (``many.py``) run the same steps.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from functools import partial
from typing import TYPE_CHECKING, Any, Final, final

from toolpalette._run import running as _running
from toolpalette._run import shaping as _shaping
from toolpalette._run.abort import AbortSignal
from toolpalette._run.call import Admitted, Refusal, Running, refuse
from toolpalette._run.consent import Approver, Decision, Policy, authorize
from toolpalette._run.many import run_many
from toolpalette._run.reports import Reporter, ReportQueue, ToolErrorReport
from toolpalette._run.watchdog import ensure_started as _start_watchdog
from toolpalette._run.workers import PoolBusy, WorkerPool, shared_pool
from toolpalette._tools import budget as _budget
from toolpalette._tools.registry import lookup
from toolpalette._tools.tool import ToolContext
from toolpalette.errors import InvalidInputError

if TYPE_CHECKING:
    from toolpalette._tools.provider import BoundTool, ToolProvider
    from toolpalette._tools.registry import ToolRegistry
    from toolpalette._tools.result import ToolResult

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_OUTPUT_CAP",
    "DEFAULT_TIMEOUT",
    "Approver",
    "Call",
    "Decision",
    "Executor",
    "Policy",
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


@final
class _Later:
    """An admitted call's input, to be validated apart (it needs more than the loop's share)."""

    __slots__ = ("raw",)

    def __init__(self, raw: Any) -> None:
        self.raw = raw


@final
class _Bound:
    """The tool an executor built for one provider and parent, kept while both stay.

    The provider's ``timeout`` and ``output_cap`` are read once here: they are properties.
    """

    __slots__ = ("name", "output_cap", "parent", "provider", "timeout", "tool")

    def __init__(self, provider: ToolProvider, name: str, parent: Any) -> None:
        self.provider = provider
        self.name = name
        self.parent = parent
        self.tool: BoundTool = provider.create(parent)
        self.timeout: float | None = provider.timeout
        self.output_cap: int | None = provider.output_cap


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
        worker_threads: threads of the worker pool sync tools run in (default
            ``min(32, CPUs + 4)``); executors asking for one size share one pool.
        pool: a worker pool of the caller's own (tests), instead of ``worker_threads``.
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
        worker_threads: int | None = None,
        pool: WorkerPool | None = None,
        reports: ReportQueue | None = None,
    ) -> None:
        if not timeout > 0 or output_cap <= 0 or concurrency <= 0:
            raise ValueError("timeout, output_cap and concurrency must be positive")
        self.registry = registry
        self.offered: AbstractSet[str] | None = frozenset(offered) if offered is not None else None
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
        self.pool: WorkerPool = pool or shared_pool(worker_threads)
        self.reports: ReportQueue = reports or _shared("reports", ReportQueue)
        self._bound: dict[str, _Bound] = {}
        self._guarded = read_only or require_read_only is not None
        _start_watchdog()

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
        try:
            call = self._admit(name, input)
            since: float | None = started
            if type(call.value) is _Later:  # the run's timeout starts after validation
                call, since = await self._validate_apart(call, abort), None
            if self.policy is None:
                run = self._start(call, ctx, abort, call_id, since)
            else:
                await self._authorize(call, ctx, abort)
                run = self._start(call, ctx, abort, call_id)  # the pause is not run time
            # Most async tools finish in their first step: then nothing is awaited.
            return await self._finish(run, abort) if isinstance(run, Running) else run
        except Refusal as refusal:
            return self._report(name, input, refusal, ctx, started, call_id)

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
        ctx = context if context is not None else self.context
        return await run_many(
            list(calls),
            ctx,
            abort,
            self.concurrency,
            admit=self._admit_and_authorize,
            run=self._run,
            report=self._report,
        )

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
        try:
            call = self._admit(name, input)
            if type(call.value) is _Later:
                call = self._validate_blocking(call, abort)
            if self.policy is not None:
                _running.run_apart(self._authorize(call, ctx, abort))
            return self._run_blocking(call, ctx, abort, call_id)
        except Refusal as refusal:
            return self._report(name, input, refusal, ctx, started, call_id)

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

    # -- steps 1 to 3: look up, read-only, validate -------------------------------------

    def _admit(self, name: object, raw: Any) -> Admitted:
        """Steps 1 to 3, in order; the call holds the provider it found from here on.

        One flat function (look-up, read-only binding, validation): it runs on every
        call, and each extra layer would cost a frame. Validation here does the loop's
        share of work only (``budget.validating_on_loop``): input that needs more is
        admitted as a :class:`_Later`, for :meth:`_validate_apart` to finish.
        """
        provider = lookup(self.registry, name)
        offered = self.offered
        if provider is None or (offered is not None and name not in offered):
            raise self._not_found(name, provider)
        if self._guarded:
            self._check_read_only(provider)
        mode = _budget.validating_on_loop()
        try:
            return Admitted(provider, provider.parse_input(raw))
        except _budget.ValidationDeferred:
            return Admitted(provider, _Later(raw))
        except InvalidInputError as exc:
            raise Refusal(_shaping.refused_input(exc), exc) from None
        except Exception as exc:  # a provider's own validation broke: not the model's fault
            raise Refusal(_shaping.shape_exception(provider.name, exc), exc) from None
        finally:
            _budget.end_mode(mode)

    async def _validate_apart(self, call: Admitted, abort: AbortSignal | None) -> Admitted:
        """Step 3, finished in the worker pool: input that needs more than the loop's share.

        The provider validates the input again, whole, in a worker thread (jsonschema
        is pure Python: the thread gives the GIL back every switch interval, so the loop
        keeps turning), with a budget proportional to the input's size. It runs as a
        sync tool does: under the call's timeout (504 past it), the caller's abort (499)
        and the pool's bounds (503); the validator reads the clock and its stop event
        every ``budget.CHECK_EVERY`` steps, so the thread ends soon after the call does.
        The tool's own timeout starts once validation ended.
        """
        if abort is not None and abort.aborted:
            raise _aborted(abort.reason or "")
        work, stop, timeout = self._apart(call)
        outcome = await _running.run_sync(work, self.pool, timeout, abort, stop)
        return self._validated(call, outcome, timeout)

    def _validate_blocking(self, call: Admitted, abort: AbortSignal | None) -> Admitted:
        """:meth:`_validate_apart` for a thread without a loop: it waits for the worker."""
        if abort is not None and abort.aborted:
            raise _aborted(abort.reason or "")
        work, stop, timeout = self._apart(call)
        outcome = _running.run_blocking(work, self.pool, timeout, abort, stop)
        return self._validated(call, outcome, timeout)

    def _apart(self, call: Admitted) -> tuple[Callable[[], Any], threading.Event, float]:
        """The worker's validation of a :class:`_Later` call, its stop event and timeout."""
        provider = call.provider
        raw = call.value.raw
        timeout = provider.timeout or self.timeout
        stop = threading.Event()
        deadline = time.monotonic() + timeout

        def validate() -> Any:
            mode = _budget.validating_apart(deadline, stop)
            try:
                return provider.parse_input(raw)
            finally:
                _budget.end_mode(mode)

        return validate, stop, timeout

    def _validated(self, call: Admitted, outcome: _running.Outcome, timeout: float) -> Admitted:
        """How validation apart ended: the call admitted, or its refusal raised."""
        provider = call.provider
        kind, value = outcome.kind, outcome.value
        if kind is _running.OK:
            return Admitted(provider, value)
        if kind is _running.RAISED:
            if isinstance(value, InvalidInputError):
                raise Refusal(_shaping.refused_input(value), value)
            if not isinstance(value, _budget.ValidationStopped):
                raise Refusal(_shaping.shape_exception(provider.name, value), value)
            kind = _running.TIMEOUT  # the validator saw the deadline first
        if kind is _running.TIMEOUT:
            label = _shaping.name_label(provider.name)
            text = (
                f"{label} did not run: its input could not be checked within "
                f"{timeout:g} seconds. Send less input."
            )
            raise refuse(504, "timeout", text, TimeoutError(text))
        raise self._refusal(provider, outcome, timeout)

    def _not_found(self, name: object, provider: ToolProvider | None) -> Refusal:
        """Step 1's refusal: 404 for an unknown name, 403 for one not offered (same text)."""
        code, status = ("unknown_tool", 404) if provider is None else ("not_offered", 403)
        return refuse(status, code, self._unavailable(name))

    def _unavailable(self, name: object) -> str:
        names = self.registry.tool_names()
        if self.offered is not None:
            names = [n for n in names if n in self.offered]
        return _shaping.unavailable_text(name, names)

    def _check_read_only(self, provider: ToolProvider) -> None:
        """Step 2: the read-only binding (403); a guard that raises refuses too."""
        error: BaseException | None = None
        allowed = provider.read_only if self.read_only else True
        if allowed and self.require_read_only is not None:
            try:
                allowed = self.require_read_only(provider) is not False
            except Exception as exc:
                allowed, error = False, exc
        if not allowed:
            text = (
                f"{_shaping.name_label(provider.name)} can change things, and this agent "
                "may only use read-only tools."
            )
            raise refuse(403, "read_only", text, error)

    # -- step 4: authorize --------------------------------------------------------------

    async def _authorize(
        self, call: Admitted, ctx: ToolContext | None, abort: AbortSignal | None
    ) -> None:
        """Step 4: the policy allows, denies (403) or asks the approver (the call pauses)."""
        assert self.policy is not None
        await authorize(self.policy, self.approve, call, ctx, abort)

    async def _admit_and_authorize(
        self, name: object, raw: Any, ctx: ToolContext | None, abort: AbortSignal | None
    ) -> Admitted:
        """Steps 1 to 4, for a batch: every call of a turn is admitted before any runs."""
        call = self._admit(name, raw)
        if type(call.value) is _Later:
            call = await self._validate_apart(call, abort)
        if self.policy is not None:
            await self._authorize(call, ctx, abort)
        return call

    # -- step 5: run and render ---------------------------------------------------------

    async def _run(
        self,
        call: Admitted,
        ctx: ToolContext | None,
        abort: AbortSignal | None,
        call_id: str | None,
    ) -> ToolResult:
        """Step 5 whole, for a batch: :meth:`_start`, then :meth:`_finish` if it must wait."""
        run = self._start(call, ctx, abort, call_id)
        return await self._finish(run, abort) if isinstance(run, Running) else run

    def _start(
        self,
        call: Admitted,
        ctx: ToolContext | None,
        abort: AbortSignal | None,
        call_id: str | None,
        since: float | None = None,
    ) -> ToolResult | Running:
        """Step 5, begun: the rendered result when the tool is done, else what to wait for.

        An async tool runs its first step at once, in the caller's task: most finish
        there and are settled here, with no task, no timer and no coroutine frame (this
        is a plain function). A tool that suspends, and a sync tool (it runs in the
        worker pool), come back as a :class:`Running` for :meth:`_finish`. ``since`` is
        when the call began, when nothing paused it since (it saves reading the clock).
        """
        if abort is not None and abort.aborted:
            raise _aborted(abort.reason or "")
        begun = since if since is not None else time.perf_counter()
        provider = call.provider
        timeout, cap = self.timeout, self.output_cap
        try:
            # _prepare, inlined for the common case: the tool is already built.
            bound = self._bound.get(provider.name)
            if (
                bound is None
                or bound.provider is not provider
                or bound.parent is not (ctx.parent if ctx is not None else None)
            ):
                bound = self._prepare(provider, ctx)
            timeout, cap = bound.timeout or timeout, bound.output_cap or cap
            tool = bound.tool
            tool_ctx = self._tool_context(provider, ctx, call_id) if tool.takes_context else None
            event = tool_ctx.abort if tool_ctx is not None else None
            if not tool.is_async:
                work = partial(tool.invoke, call.value, tool_ctx or _NO_CONTEXT)
                return Running(provider, work, event, timeout, cap, begun)
            outcome = _running.start_async(
                tool.invoke(call.value, tool_ctx or _NO_CONTEXT), bound.name
            )
            if outcome.kind is _running.PENDING:
                return Running(provider, outcome.value, event, timeout, cap, begun)
            ended = time.perf_counter()
        except Exception as exc:  # create() or invoke() itself failed
            outcome, ended = _running.Outcome(_running.RAISED, exc), begun
        return self._settle(provider, outcome, timeout, cap, ended - begun)

    async def _finish(self, run: Running, abort: AbortSignal | None) -> ToolResult:
        """Step 5, ended: wait for a started run under its deadline and the abort.

        A call that comes back after its deadline is a 504 whatever it returned: only a
        blocked event loop (an async tool running blocking code) keeps the deadline's
        timer from firing, and the watchdog names the tool that held it.
        """
        work = run.work
        if isinstance(work, _running.Suspended):
            outcome = await _running.finish_async(work, run.timeout, abort, run.abort_event)
        else:
            outcome = await _running.run_sync(work, self.pool, run.timeout, abort, run.abort_event)
        took = time.perf_counter() - run.begun
        return self._settle(run.provider, outcome, run.timeout, run.cap, took)

    def _settle(
        self,
        provider: ToolProvider,
        outcome: _running.Outcome,
        timeout: float,
        cap: int,
        took: float,
    ) -> ToolResult:
        """How a run ended, as the result: the rendered output, or a refusal raised."""
        if took > timeout and (outcome.kind is _running.OK or outcome.kind is _running.RAISED):
            raise _overran(provider, timeout, took, outcome)
        if outcome.kind is _running.OK:
            return _shaping.render_output(provider, outcome.value, cap)
        raise self._refusal(provider, outcome, timeout)

    def _run_blocking(
        self,
        call: Admitted,
        ctx: ToolContext | None,
        abort: AbortSignal | None,
        call_id: str | None,
    ) -> ToolResult:
        """Step 5 for a thread without a loop: the tool runs in a worker, this thread waits."""
        if abort is not None and abort.aborted:
            raise _aborted(abort.reason or "")
        provider = call.provider
        timeout, cap = self.timeout, self.output_cap
        try:
            bound = self._prepare(provider, ctx)
            timeout, cap = bound.timeout or timeout, bound.output_cap or cap
            takes = bound.tool.takes_context
            tool_ctx = self._tool_context(provider, ctx, call_id) if takes else _NO_CONTEXT
            event = tool_ctx.abort if takes else None
            work = partial(bound.tool.invoke, call.value, tool_ctx)
            fn = partial(_running.run_to_end, work) if bound.tool.is_async else work
            outcome = _running.run_blocking(fn, self.pool, timeout, abort, event)
        except Exception as exc:
            outcome = _running.Outcome(_running.RAISED, exc)
        if outcome.kind is _running.OK:
            return _shaping.render_output(provider, outcome.value, cap)
        raise self._refusal(provider, outcome, timeout)

    def _prepare(self, provider: ToolProvider, ctx: ToolContext | None) -> _Bound:
        """The tool for this provider and parent, built once and kept while both stay.

        A class tool keeps its instance, and its state, for as long. A tool that takes
        no context shares one empty context (no per-call Event to build).
        """
        parent = ctx.parent if ctx is not None else None
        name = provider.name
        bound = self._bound.get(name)
        if bound is None or bound.provider is not provider or bound.parent is not parent:
            bound = self._bound[name] = _Bound(provider, name, parent)
        return bound

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

    def _refusal(
        self, provider: ToolProvider, outcome: _running.Outcome, timeout: float
    ) -> Refusal:
        """The refusal for a run that did not return: raised, timed out, aborted or busy."""
        kind = outcome.kind
        if kind is _running.RAISED:
            return Refusal(_shaping.shape_exception(provider.name, outcome.value), outcome.value)
        if isinstance(kind, _running.Aborted):
            return _aborted(kind.reason)
        label = _shaping.name_label(provider.name)
        if kind is _running.TIMEOUT:
            text = f"{label} did not finish within {timeout:g} seconds and was stopped."
            return refuse(504, "timeout", text, TimeoutError(text))
        text = f"{label} cannot run now: too many calls are in progress. Try again later."
        return refuse(503, "busy", text, PoolBusy(text))

    # -- reporting -------------------------------------------------------------------

    def _report(
        self,
        name: object,
        raw: Any,
        refusal: Refusal,
        ctx: ToolContext | None,
        started: float,
        call_id: str | None = None,
    ) -> ToolResult:
        """Report a refused or failed call (in the background) and return its result.

        Not reported: a direct call outside a run (no context) and the caller's own abort.
        """
        result = refusal.result
        reported = self.hook is not None or self.on_tool_error
        if reported and ctx is not None and result.code != "aborted":
            if call_id is not None and call_id != ctx.call_id:
                ctx = dataclasses.replace(ctx, call_id=call_id)
            report = ToolErrorReport(
                tool=name if isinstance(name, str) else repr(name),
                input=raw,
                error=refusal.error,
                status=result.status,
                code=result.code,
                text=result.text,
                duration=time.perf_counter() - started,
                context=ctx,
            )
            self.reports.put(report, self.hook, self.on_tool_error)
        return result


def _overran(
    provider: ToolProvider, timeout: float, took: float, outcome: _running.Outcome
) -> Refusal:
    """A 504 for a call whose result came back after its deadline (its loop was blocked)."""
    label = _shaping.name_label(provider.name)
    text = f"{label} did not finish within {timeout:g} seconds and was stopped."
    error = TimeoutError(
        f"tool {provider.name!r} came back after {took:.2f} s, past its {timeout:g} s "
        "deadline, because its event loop was blocked (by blocking code in an async "
        "tool: see the watchdog's warning); its result was dropped"
    )
    if outcome.kind is _running.RAISED:
        error.__cause__ = outcome.value
    return refuse(504, "timeout", text, error)


def _aborted(reason: str) -> Refusal:
    return refuse(499, "aborted", reason or "The call was cancelled by the caller.")


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
