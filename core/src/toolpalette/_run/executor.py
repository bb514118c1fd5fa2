"""The one door every tool call goes through (statuses and codes: docs/errors.md).

The steps and why they are one executor's: docs/architecture.md ("The life of one call").
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Generator, Iterable, Mapping
from collections.abc import Set as AbstractSet
from functools import partial
from typing import TYPE_CHECKING, Any, Final, NamedTuple, final

from toolpalette._run import consent as _consent
from toolpalette._run import handoff as _handoff
from toolpalette._run import running as _running
from toolpalette._run import shaping as _shaping
from toolpalette._run import spans as _spans
from toolpalette._run import telemetry as _telemetry
from toolpalette._run.abort import AbortSignal
from toolpalette._run.apart import Later, validate_apart, validate_blocking
from toolpalette._run.call import UNCHECKED, CallScope, Prepared, Refusal, Running, refuse
from toolpalette._run.consent import ALLOW, Approver, Decision, Policy
from toolpalette._run.many import run_many
from toolpalette._run.reports import (
    Reporter,
    ReportQueue,
    failure_report,
    failures_logged,
    hooked,
    shared_queue,
)
from toolpalette._run.rules import Rules, check_read_only
from toolpalette._run.watchdog import ensure_started as _start_watchdog
from toolpalette._run.workers import WorkerPool, shared_pool
from toolpalette._schema import budget as _budget
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
    "with_rules",
]

DEFAULT_TIMEOUT: Final = 30.0
"""Seconds a call may run when its tool sets no ``timeout``."""
DEFAULT_OUTPUT_CAP: Final = 65_536
"""Bytes of output JSON text allowed when the tool sets no ``output_cap``."""
DEFAULT_CONCURRENCY: Final = 16
"""Calls of one ``execute_many`` that may run at once."""

Call = tuple[object, Any] | tuple[object, Any, "str | None"]
"""One call for ``execute_many``: ``(name, input)`` or ``(name, input, call_id)``."""

_NO_CONTEXT: Final = ToolContext()
_UNASKED: Final = object()
"""The policy's answer before the policy was asked (input still to validate apart)."""


class _Wait(NamedTuple):
    """What a call's preparation waits for: input validated apart, or an answer to read.

    ``value`` is a `Later` for validation; else ``answer`` is the policy's, settled by
    ``consent.authorize`` (asking ``approver`` when it says ``ask``).
    """

    provider: ToolProvider
    value: Any
    answer: Any
    approver: Approver | None
    ctx: ToolContext | None


@final
class _Bound:
    """The tool an executor built for one provider and parent, kept while both stay.

    What the call needs of the provider besides the tool (``timeout``, ``output_cap``,
    whether it has an output schema, and its configuration when the rules say it is
    fixed per provider) is read once here: they are properties, and the configuration
    may be asked of the hub.
    """

    __slots__ = (
        "config",
        "name",
        "output_cap",
        "parent",
        "provider",
        "structured",
        "timeout",
        "tool",
    )

    def __init__(self, provider: ToolProvider, parent: Any, rules: Rules) -> None:
        self.provider = provider
        self.name = provider.name
        self.parent = parent
        self.tool: BoundTool = provider.create(parent)
        self.timeout: float | None = provider.timeout
        self.output_cap: int | None = provider.output_cap
        self.structured = provider.output_schema is not None
        config_for = rules.config_for
        self.config: Mapping[str, Any] | None = (
            config_for(provider) if config_for is not None and rules.config_per_tool else None
        )


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
        log_failures: also log each failure report at WARNING on the
            ``toolpalette.failures`` logger (the default); a host that delivers reports
            itself may turn it off.
        rules: the `Rules` to ask instead of those the keywords above make (a thinker's
            binding); then ``read_only``, ``require_read_only``, ``policy``,
            ``approve`` and ``config_for`` must be left out.

    Made once and never changed: what varies per turn or call is a `CallScope` given
    to ``execute``.
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
        log_failures: bool = True,
        rules: Rules | None = None,
    ) -> None:
        if not timeout > 0 or output_cap <= 0 or concurrency <= 0:
            raise ValueError("timeout, output_cap and concurrency must be positive")
        self.registry = registry
        self.scope = CallScope(
            offered=frozenset(offered) if offered is not None else None,
            context=context,
            reporters=(on_tool_error,) if callable(on_tool_error) else tuple(on_tool_error or ()),
        )
        """What a call carries when ``execute`` is given no scope: the keywords'."""
        self.hook = hook
        self.timeout = timeout
        self.output_cap = output_cap
        self.concurrency = concurrency
        self.log_failures = log_failures
        self.pool: WorkerPool = pool or shared_pool(worker_threads)
        self.reports: ReportQueue = reports or shared_queue()
        keyworded = read_only or any(
            given is not None for given in (require_read_only, policy, approve, config_for)
        )
        if rules is not None and keyworded:
            raise TypeError("give rules=, or the keywords that make rules, not both")
        if rules is None:
            rules = Rules.of(
                read_only=read_only,
                require_read_only=require_read_only,
                policy=policy,
                approve=approve,
                config_for=config_for,
            )
        self.rules = rules
        """What every call asks about read-only, policy, approval and configuration."""
        self._policy = rules.policy
        self._guarded = rules.read_only or rules.guard is not None
        self._bound: dict[object, _Bound] = {}
        self._made = True
        _start_watchdog()

    def __setattr__(self, name: str, value: Any) -> None:
        if "_made" in self.__dict__:
            raise AttributeError(
                f"an Executor is not changed once made (setting {name!r}): pass a CallScope "
                "to execute() for what changes per turn or call, or make another executor"
            )
        object.__setattr__(self, name, value)

    @property
    def offered(self) -> AbstractSet[str] | None:
        """The names the default scope offers; None offers every registered name."""
        return self.scope.offered

    @property
    def context(self) -> ToolContext | None:
        """The default scope's caller context."""
        return self.scope.context

    @property
    def on_tool_error(self) -> tuple[Reporter, ...]:
        """The default scope's failure reporters."""
        return self.scope.reporters

    # -- public ----------------------------------------------------------------------

    async def execute(
        self,
        name: object,
        input: Any,
        *,
        context: ToolContext | None = None,
        abort: AbortSignal | None = None,
        call_id: str | None = None,
        scope: CallScope | None = None,
    ) -> ToolResult:
        """Run one call and return its result; never raises for anything the call does.

        ``input`` is JSON text, UTF-8 bytes or a mapping. ``scope`` is what the call
        carries (offered names, context, reporters), the executor's own by default;
        ``context`` overrides its context. Without a context the call is a direct call
        outside a run and is not reported. The caller's own cancellation propagates
        (the tool is abandoned, not reported).
        """
        scope = scope if scope is not None else self.scope
        ctx = context if context is not None else scope.context
        if _telemetry.on and _spans.wanted():
            with _spans.traced(self.registry, name, input, ctx, call_id) as traced:
                return traced.end(await self._execute(name, input, ctx, abort, call_id, scope))
        return await self._execute(name, input, ctx, abort, call_id, scope)

    async def _execute(
        self,
        name: object,
        raw: Any,
        ctx: ToolContext | None,
        abort: AbortSignal | None,
        call_id: str | None,
        scope: CallScope,
    ) -> ToolResult:
        started = time.perf_counter()
        value: Any = UNCHECKED
        try:
            provider, value = self._prepare(name, raw, scope.offered)
            # Step 4 asked here when validation is done: a plain allow (the common case)
            # goes on without the steps' generator, which only the waits need.
            answer: Any = _UNASKED
            if type(value) is not Later:
                answer = ALLOW if self._policy is None else self._decide(provider, value, ctx)
            if answer is ALLOW:
                run = self._start(name, provider, value, ctx, abort, call_id, started)
            else:
                steps = self._authorized(provider, value, ctx, scope, answer)
                provider, value = await self._waited(steps, abort)
                run = self._start(name, provider, value, ctx, abort, call_id)
            # An async tool that ended in its eager start is settled: nothing is awaited.
            return await self._finish(run, abort) if isinstance(run, Running) else run
        except Refusal as refusal:
            return self._report(name, raw, value, refusal, ctx, started, call_id, scope)

    async def execute_many(
        self,
        calls: Iterable[Call],
        *,
        context: ToolContext | None = None,
        abort: AbortSignal | None = None,
        scope: CallScope | None = None,
    ) -> list[ToolResult]:
        """Run the calls of one turn; results come back in the order of ``calls``.

        Consecutive concurrency-safe calls run together (at most ``concurrency`` at a
        time), except that calls sharing a resource key run one after another; an
        unsafe call runs alone, after the calls before it and before those after it.
        """
        scope = scope if scope is not None else self.scope
        ctx = context if context is not None else scope.context
        many = partial(_spans.execute_many, self.registry) if _telemetry.on else run_many
        return await many(
            list(calls),
            ctx,
            abort,
            self.concurrency,
            prepare=partial(self._prepare_and_authorize, scope=scope),
            run=self._run,
            report=partial(self._report, scope=scope),
        )

    def execute_sync(
        self,
        name: object,
        input: Any,
        *,
        context: ToolContext | None = None,
        abort: AbortSignal | None = None,
        call_id: str | None = None,
        scope: CallScope | None = None,
    ) -> ToolResult:
        """`execute()` for a thread with no event loop (scripts, the command line).

        The tool runs in the worker pool (an async tool on an event loop of its own
        there) and this thread blocks until it ends, times out or is aborted.
        """
        scope = scope if scope is not None else self.scope
        ctx = context if context is not None else scope.context
        if _telemetry.on and _spans.wanted():
            with _spans.traced(self.registry, name, input, ctx, call_id) as traced:
                return traced.end(self._execute_sync(name, input, ctx, abort, call_id, scope))
        return self._execute_sync(name, input, ctx, abort, call_id, scope)

    def _execute_sync(
        self,
        name: object,
        raw: Any,
        ctx: ToolContext | None,
        abort: AbortSignal | None,
        call_id: str | None,
        scope: CallScope,
    ) -> ToolResult:
        started = time.perf_counter()
        steps = self._steps(name, raw, ctx, scope)
        value: Any = UNCHECKED
        try:
            try:
                wait = next(steps)
                while True:  # each wait done here, blocking this thread
                    wait = steps.send(self._wait_blocking(wait, abort))
            except StopIteration as done:
                provider, value = done.value
            return self._run_blocking(name, provider, value, ctx, abort, call_id)
        except Refusal as refusal:
            return self._report(name, raw, value, refusal, ctx, started, call_id, scope)

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

    def _prepare(self, name: object, raw: Any, offered: AbstractSet[str] | None) -> Prepared:
        """Steps 1 to 3, in order; the call holds the provider it found from here on.

        One flat function (look-up, read-only binding, validation): it runs on every
        call, and each extra layer would cost a frame. Validation here does the loop's
        share of work only (``budget.validating_on_loop``): input that needs more is
        prepared as a ``apart.Later``, for ``apart.validate_apart`` to finish.
        """
        provider = lookup(self.registry, name)
        if provider is None or (offered is not None and name not in offered):
            raise self._not_found(name, provider, offered)
        if self._guarded:
            check_read_only(self.rules, provider)
        mode = _budget.validating_on_loop()
        try:
            return provider, provider.parse_input(raw)
        except _budget.ValidationDeferred:
            return provider, Later(raw)
        except InvalidInputError as exc:
            raise Refusal(_shaping.refused_input(exc), exc) from None
        except Exception as exc:  # a provider's own validation broke: not the model's fault
            raise Refusal(_shaping.shape_exception(provider.name, exc), exc) from None
        finally:
            _budget.end_mode(mode)

    def _not_found(
        self, name: object, provider: ToolProvider | None, offered: AbstractSet[str] | None
    ) -> Refusal:
        """Step 1's refusal: 404 for an unknown name, 403 for one not offered (same text)."""
        code, status = ("unknown_tool", 404) if provider is None else ("not_offered", 403)
        names = self.registry.tool_names()
        if offered is not None:
            names = [n for n in names if n in offered]
        return refuse(status, code, _shaping.unavailable_text(name, names))

    # -- step 4: authorize --------------------------------------------------------------

    def _decide(self, provider: ToolProvider, value: Any, ctx: ToolContext | None) -> Any:
        """Step 4, the policy's answer: `ALLOW` to go ahead at once.

        Any other answer (an awaitable, deny, ask, a reason) is settled by
        ``consent.authorize``. A policy that raises, whatever it raises but
        ``KeyboardInterrupt``, denies (403).
        """
        policy = self._policy
        assert policy is not None
        try:
            answer = policy.decide_call(ctx.parent if ctx is not None else None, provider, value)
        except BaseException as exc:
            if not _consent.contained(exc):
                raise
            label = _shaping.name_label(provider.name)
            raise refuse(403, "denied", f"{label} is not permitted here.", exc) from None
        return ALLOW if answer is True or answer is None else answer

    def _steps(
        self, name: object, raw: Any, ctx: ToolContext | None, scope: CallScope
    ) -> Generator[_Wait, Any, Prepared]:
        """Steps 1 to 4, the one preparation of every way in; it returns the prepared call.

        What must be waited for (input validated apart, a policy's answer or a person's)
        is yielded, and the way in does it, on the loop or blocking: `_waited()`,
        `_wait_blocking()`. Validation sends back the validated input.
        """
        prepared = self._prepare(name, raw, scope.offered)
        return (yield from self._authorized(*prepared, ctx, scope))

    def _authorized(
        self,
        provider: ToolProvider,
        value: Any,
        ctx: ToolContext | None,
        scope: CallScope,
        answer: Any = _UNASKED,
    ) -> Generator[_Wait, Any, Prepared]:
        """`_steps()` past `_prepare()`: validation finished apart, then step 4.

        ``answer`` is the policy's, when the way in already asked it (``execute`` asks
        once validation is done, and enters here only for what must be waited for).
        """
        if type(value) is Later:
            value = yield _Wait(provider, value, None, None, ctx)
        if self._policy is not None:
            try:
                if answer is _UNASKED:
                    answer = self._decide(provider, value, ctx)
                if answer is not ALLOW:
                    approver = scope.approver or self.rules.approver
                    yield _Wait(provider, value, answer, approver, ctx)
            except Refusal as refusal:  # past validation: the report carries the input
                refusal.value = value
                raise
        return provider, value

    async def _waited(
        self, steps: Generator[_Wait, Any, Prepared], abort: AbortSignal | None
    ) -> Prepared:
        """`_steps()` run to their end, each wait awaited."""
        try:
            wait = next(steps)
            while True:
                wait = steps.send(await self._wait(wait, abort))
        except StopIteration as done:
            prepared: Prepared = done.value
            return prepared

    async def _wait(self, wait: _Wait, abort: AbortSignal | None) -> Any:
        provider, value, answer, approver, ctx = wait
        if type(value) is Later:  # the run's timeout starts after validation
            return await validate_apart(provider, value, self.pool, self.timeout, abort)
        try:
            await _consent.authorize(answer, provider, value, approver, ctx, abort)
        except Refusal as refusal:  # past validation: the report carries the input
            refusal.value = value
            raise
        return None

    def _wait_blocking(self, wait: _Wait, abort: AbortSignal | None) -> Any:
        provider, value, answer, approver, ctx = wait
        if type(value) is Later:
            return validate_blocking(provider, value, self.pool, self.timeout, abort)
        try:
            _running.run_apart(_consent.authorize(answer, provider, value, approver, ctx, abort))
        except Refusal as refusal:
            refusal.value = value
            raise
        return None

    async def _prepare_and_authorize(
        self,
        name: object,
        raw: Any,
        ctx: ToolContext | None,
        abort: AbortSignal | None,
        *,
        scope: CallScope,
    ) -> Prepared:
        """Steps 1 to 4, for a batch: every call of a turn is prepared before any runs."""
        prepared = self._prepare(name, raw, scope.offered)
        if type(prepared[1]) is Later or self._policy is not None:
            return await self._waited(self._authorized(*prepared, ctx, scope), abort)
        return prepared

    # -- step 5: run and render ---------------------------------------------------------

    def _tool_for(self, name: object, provider: ToolProvider, parent: Any) -> _Bound:
        """The tool for this provider and parent, built once and kept (state too) while both are."""
        bound = self._bound.get(name)
        if bound is None or bound.provider is not provider or bound.parent is not parent:
            bound = self._bound[name] = _Bound(provider, parent, self.rules)
        return bound

    def _tool_context(
        self, bound: _Bound, ctx: ToolContext | None, call_id: str | None
    ) -> ToolContext:
        """The context of one call of a tool that takes one (each call has its abort event)."""
        base = ctx if ctx is not None else _NO_CONTEXT
        config = bound.config
        if config is None:
            config_for = self.rules.config_for
            config = config_for(bound.provider) if config_for is not None else base.config
        return ToolContext(
            parent=base.parent,
            config=config,
            abort=threading.Event(),
            call_id=call_id if call_id is not None else base.call_id,
            run_id=base.run_id,
            thread_id=base.thread_id,
            user=base.user,
            principal=base.principal,
            on_progress=base.on_progress,
            channel=base.channel,
        )

    async def _run(
        self,
        name: object,
        call: Prepared,
        ctx: ToolContext | None,
        abort: AbortSignal | None,
        call_id: str | None,
    ) -> ToolResult:
        """Step 5 whole, for a batch: `_start()`, then `_finish()` if it must wait."""
        run = self._start(name, call[0], call[1], ctx, abort, call_id)
        return await self._finish(run, abort) if isinstance(run, Running) else run

    def _start(
        self,
        name: object,
        provider: ToolProvider,
        value: Any,
        ctx: ToolContext | None,
        abort: AbortSignal | None,
        call_id: str | None,
        since: float | None = None,
    ) -> ToolResult | Running:
        """Step 5, begun: the rendered result when the tool is done, else what to wait for.

        An async tool starts in a task of its own, eagerly where Python allows (3.12+):
        one that never suspends is settled here, with no timer and no loop round trip.
        A tool still running, and a sync tool (it runs in the worker pool), come back as
        a `Running` for `_finish()`. ``since`` is
        when the call began, when nothing paused it since (it saves reading the clock).
        """
        if abort is not None and abort.aborted:
            raise _shaping.aborted(abort.reason or "")
        begun = since if since is not None else time.perf_counter()
        timeout, cap = self.timeout, self.output_cap
        try:
            # _tool_for, inlined for the common case: the tool is already built.
            parent = ctx.parent if ctx is not None else None
            bound = self._bound.get(name)
            if bound is None or bound.provider is not provider or bound.parent is not parent:
                bound = self._tool_for(name, provider, parent)
            timeout, cap = bound.timeout or timeout, bound.output_cap or cap
            structured = bound.structured
            tool = bound.tool
            tool_ctx = self._tool_context(bound, ctx, call_id) if tool.takes_context else None
            event = tool_ctx.abort if tool_ctx is not None else None
            if not tool.is_async:
                work = partial(tool.invoke, value, tool_ctx or _NO_CONTEXT)
                work = _spans.carried(work) if _telemetry.on else work
                return Running(provider, work, event, timeout, cap, structured, begun)
            outcome = _running.start_async(tool.invoke(value, tool_ctx or _NO_CONTEXT), bound.name)
            if outcome.kind is _running.PENDING:
                return Running(provider, outcome.value, event, timeout, cap, structured, begun)
            ended = time.perf_counter()
        except Exception as exc:  # create() or invoke() itself failed
            outcome, ended, structured = _running.Outcome(_running.RAISED, exc), begun, False
        return _settle(provider, outcome, timeout, cap, structured, ended - begun)

    async def _finish(self, run: Running, abort: AbortSignal | None) -> ToolResult:
        """Step 5, ended: wait for a started run under its deadline and the abort.

        A call that comes back after its deadline is a 504 whatever it returned: only a
        blocked event loop (an async tool running blocking code) keeps the deadline's
        timer from firing, and the watchdog names the tool that held it.
        """
        work = run.work
        if isinstance(work, asyncio.Task):
            outcome = await _running.finish_async(work, run.timeout, abort, run.abort_event)
        else:
            outcome = await _handoff.run_sync(work, self.pool, run.timeout, abort, run.abort_event)
        took = time.perf_counter() - run.begun
        return _settle(run.provider, outcome, run.timeout, run.cap, run.structured, took)

    def _run_blocking(
        self,
        name: object,
        provider: ToolProvider,
        value: Any,
        ctx: ToolContext | None,
        abort: AbortSignal | None,
        call_id: str | None,
    ) -> ToolResult:
        """Step 5 for a thread without a loop: the tool runs in a worker, this thread waits."""
        if abort is not None and abort.aborted:
            raise _shaping.aborted(abort.reason or "")
        timeout, cap, structured = self.timeout, self.output_cap, False
        try:
            bound = self._tool_for(name, provider, ctx.parent if ctx is not None else None)
            tool_ctx = self._tool_context(bound, ctx, call_id) if bound.tool.takes_context else None
            timeout, cap = bound.timeout or timeout, bound.output_cap or cap
            structured = bound.structured
            work = partial(bound.tool.invoke, value, tool_ctx or _NO_CONTEXT)
            fn = partial(_running.run_to_end, work) if bound.tool.is_async else work
            fn = _spans.carried(fn) if _telemetry.on else fn
            event = tool_ctx.abort if tool_ctx is not None else None
            outcome = _handoff.run_blocking(fn, self.pool, timeout, abort, event)
        except Exception as exc:
            outcome = _running.Outcome(_running.RAISED, exc)
        return _settle(provider, outcome, timeout, cap, structured, 0.0)

    # -- reporting -------------------------------------------------------------------

    def _report(
        self,
        name: object,
        raw: Any,
        value: Any,
        refusal: Refusal,
        ctx: ToolContext | None,
        started: float,
        call_id: str | None = None,
        scope: CallScope | None = None,
    ) -> ToolResult:
        """Report a refused or failed call (in the background) and return its result.

        ``value`` is the validated input once the call got past validation (the
        report then carries it), else ``UNCHECKED``. Not reported: a direct call
        outside a run (no context) and the caller's own abort.
        """
        result = refusal.result
        if ctx is None or result.code == "aborted":
            return result
        reporters = (scope if scope is not None else self.scope).reporters
        logged = self.log_failures and failures_logged(result.code)
        if reporters or logged or hooked(self.hook):
            if value is UNCHECKED:
                value = refusal.value
            validated = value is not UNCHECKED and type(value) is not Later
            sent = value if validated else raw
            report = failure_report(name, sent, validated, refusal, ctx, started, call_id)
            self.reports.put(report, self.hook, reporters, log=logged)
        return result


def with_rules(registry: ToolRegistry, rules: Rules, **options: Any) -> Executor:
    """An executor that asks ``rules`` (a thinker's binding) about every call.

    ``options`` are the executor's other keywords (``hook``, ``worker_threads``, ...);
    the keywords that make rules (``read_only``, ``policy``, ``approve``, ...) are
    ``rules``' to answer instead.
    """
    return Executor(registry, rules=rules, **options)


def _settle(
    provider: ToolProvider,
    outcome: _running.Outcome,
    timeout: float,
    cap: int,
    structured: bool,
    took: float,
) -> ToolResult:
    """How a run ended, as the result: the rendered output, or a refusal raised."""
    kind = outcome.kind
    if took > timeout and (kind is _running.OK or kind is _running.RAISED):
        raise _shaping.overran(provider, timeout, took, outcome)
    if kind is _running.OK:
        return _shaping.render_output(provider, outcome.value, cap, structured)
    raise _shaping.run_refusal(provider, outcome, timeout)


async def execute(
    registry: ToolRegistry,
    name: object,
    input: Any,
    *,
    context: ToolContext | None = None,
    abort: AbortSignal | None = None,
    **options: Any,
) -> ToolResult:
    """Run one call through a throwaway `Executor` (options as its keywords)."""
    return await Executor(registry, **options).execute(name, input, context=context, abort=abort)


async def execute_many(
    registry: ToolRegistry,
    calls: Iterable[Call],
    *,
    context: ToolContext | None = None,
    abort: AbortSignal | None = None,
    **options: Any,
) -> list[ToolResult]:
    """Run one turn's calls through a throwaway `Executor` (options as its keywords)."""
    return await Executor(registry, **options).execute_many(calls, context=context, abort=abort)
