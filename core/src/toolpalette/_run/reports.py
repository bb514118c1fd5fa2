"""Failure reports: the whole picture of a failed call, delivered without the call waiting."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
import queue
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from toolpalette._hookcall import call_each, in_call_order
from toolpalette._run.call import Refusal
from toolpalette._run.workers import PoolThread
from toolpalette._tools.tool import TOOL_NAME, ToolContext

if TYPE_CHECKING:
    from pluggy._hooks import HookImpl

__all__ = [
    "ReportQueue",
    "Reporter",
    "ToolErrorReport",
    "failure_report",
    "failures_logged",
    "hooked",
    "shared_queue",
]

logger = logging.getLogger("toolpalette.executor")
failures = logging.getLogger("toolpalette.failures")
"""Where every failure report is logged by default (see the module docstring)."""

Reporter = Callable[["ToolErrorReport"], Any]
"""A failure sink: called with each report, on the delivery thread."""

QUEUE_SIZE: Final = 1000
"""Reports waiting for delivery beyond this are dropped (and counted)."""
STALL_AFTER: Final = 5.0
"""Seconds one reporter may take before the delivery thread is considered stalled."""
MAX_STALLED: Final = 4
"""Stalled delivery threads tolerated; beyond this, reports are dropped until one returns."""


@dataclass(frozen=True)
class ToolErrorReport:
    """Everything about one failed call; hosts log it, the model never sees it."""

    tool: str
    """The tool name asked for (``repr`` of it when it was not a string)."""
    input: Any
    """The call's input. Once the call got past validation (a refusal by the policy, a
    timeout, a raising tool, ...), the validated input, as JSON data (a model's
    fields dumped as the approval's ``input`` shows them); for a call refused before it
    (unknown name, not offered, read-only, invalid input), the input exactly as the
    caller passed it (text, bytes or mapping)."""
    error: BaseException | None
    """The exception behind the failure (with its cause and traceback), when there is one."""
    status: int
    """The result's status."""
    code: str
    """The result's code."""
    text: str
    """The text the model was given."""
    duration: float
    """Seconds from the start of the call to its result."""
    context: ToolContext | None
    """The call's context (run, thread, user, call id)."""


def _hook_sinks(hook: Any) -> list[tuple[str, Reporter]]:
    """One sink per implementation of a pluggy hook caller, so one failing impl skips alone."""
    if getattr(hook, "get_hookimpls", None) is None:
        return [(repr(hook), lambda report: hook(report=report))]
    return [
        (f"{impl.plugin_name}.{getattr(impl.function, '__name__', 'hook')}", _impl_sink(impl))
        for impl in in_call_order(hook)
    ]


def hooked(hook: Any) -> bool:
    """Whether a report for ``hook`` has a sink to go to.

    A plain callable is one; a hook caller is one when it has an implementation (a
    hub's hook with none would be asked nothing, so nothing need be queued for it).
    """
    if hook is None:
        return False
    impls = getattr(hook, "get_hookimpls", None)
    return impls is None or bool(impls())


def _impl_sink(impl: HookImpl) -> Reporter:
    def sink(report: ToolErrorReport) -> Any:
        for called in call_each((impl,), "toolpalette_tool_error", {"report": report}):
            if called.error is not None:
                raise called.error
            return called.result
        return None

    return sink


def _deliver_one(label: str, sink: Reporter, report: ToolErrorReport) -> None:
    started = time.monotonic()
    try:
        outcome = sink(report)
        if inspect.isawaitable(outcome):
            asyncio.run(_await(outcome))
    except BaseException:
        logger.exception("failure reporter %s raised; ignored", label)
    took = time.monotonic() - started
    if took > STALL_AFTER:
        logger.warning("failure reporter %s took %.1f s", label, took)


async def _await(awaitable: Any) -> None:
    await awaitable


def failure_report(
    name: object,
    sent: Any,
    validated: bool,
    refusal: Refusal,
    context: ToolContext,
    started: float,
    call_id: str | None,
) -> ToolErrorReport:
    """The report of a call that ``refusal`` ended.

    ``sent`` is the validated input when ``validated`` (carried as JSON data: a model's
    fields dumped, as an approval shows them), else the input as the caller passed it.
    """
    if call_id is not None and call_id != context.call_id:
        context = dataclasses.replace(context, call_id=call_id)
    result = refusal.result
    return ToolErrorReport(
        tool=name if isinstance(name, str) else repr(name),
        input=_as_data(sent) if validated else sent,
        error=refusal.error,
        status=result.status,
        code=result.code,
        text=result.text,
        duration=time.perf_counter() - started,
        context=context,
    )


def _as_data(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if dump is None:
        return value
    try:
        return dump(mode="json")
    except Exception:  # a model that cannot dump itself: the object, as the tool got it
        return value


MISTAKES: Final = frozenset({"invalid_input", "unknown_tool"})
"""Codes of the model's own mistakes (input the tool's schema refuses, a name no tool
has): logged at INFO, since the model is told and tries again; every other failure is
the tool's, the policy's or the host's, and is logged at WARNING."""


def _level(code: str) -> int:
    return logging.INFO if code in MISTAKES else logging.WARNING


def failures_logged(code: str) -> bool:
    """Whether a failure with ``code`` is logged at all (the logger lets its level through)."""
    return failures.isEnabledFor(_level(code))


def log_failure(report: ToolErrorReport) -> None:
    """Log ``report`` on ``toolpalette.failures``: one line, the traceback at DEBUG.

    The line is INFO for the model's own mistakes (`MISTAKES`), else WARNING. It names
    the tool (when its name is well formed: a name a model made up is not repeated),
    the status and code, the call id and the exception's type; never the input, the
    text or the exception's message.
    """
    tool = report.tool if TOOL_NAME.match(report.tool) else "(not a tool name)"
    context = report.context
    call_id = context.call_id if context is not None else None
    error = report.error
    kind = f"{type(error).__module__}.{type(error).__qualname__}" if error is not None else "-"
    failures.log(
        _level(report.code),
        "tool %s failed: %d %s (call %s, run %s): %s",
        tool,
        report.status,
        report.code,
        _identifier(call_id),
        _identifier(context.run_id if context is not None else None),
        kind,
    )
    if error is not None and failures.isEnabledFor(logging.DEBUG):
        failures.debug(
            "tool %s failed (call %s)",
            tool,
            _identifier(call_id),
            exc_info=(type(error), error, error.__traceback__),
        )


def _identifier(value: object) -> str:
    """An id for a log line: as it is when it is a short token, else a placeholder."""
    if isinstance(value, str) and _ID.match(value):
        return value
    return "-" if value is None else "(not shown)"


_ID: Final = re.compile(r"^[A-Za-z0-9_.:-]{1,128}\Z")


_Item = tuple["ToolErrorReport | None", Any, Sequence[Reporter], bool]
"""A report, its hook, its callbacks and whether to log it; or ``(None, event, (), False)``,
which `ReportQueue.join` puts to learn when every report before it was taken."""


class ReportQueue:
    """Delivers reports on a background thread; ``put`` never blocks.

    Each report names its sinks: ``hook``, a pluggy hook caller
    (``hub.pm.hook.toolpalette_tool_error``, one sink per implementation, resolved at
    delivery time) or any callable taking ``report=``, and ``callbacks``, each called with
    the report. One queue serves many executors.

    ``put`` takes no lock in the common case (the delivery thread alive and not stalled):
    a `queue.SimpleQueue` put is atomic, so a refused call never waits on the delivery
    thread's bookkeeping. The lock guards that bookkeeping and replacing a thread.
    """

    def __init__(self, *, maxsize: int = QUEUE_SIZE) -> None:
        self._queue: queue.SimpleQueue[_Item] = queue.SimpleQueue()
        self._maxsize = maxsize
        self._lock = threading.Lock()
        self._thread: PoolThread | None = None
        self._busy_since: float | None = None
        self._busy_label = ""
        self._stalled = 0
        self._delivering = 0
        self.dropped = 0
        """Reports that could not be delivered (queue full, or too many stalled reporters)."""
        self.delivered = 0
        """Reports handed to every sink."""

    def put(
        self,
        report: ToolErrorReport,
        hook: Any,
        callbacks: Sequence[Reporter],
        *,
        log: bool = False,
    ) -> None:
        """Queue ``report`` for the hook, the callbacks and (``log``) the failure log.

        Drops and counts it when it cannot be queued.
        """
        if not self._ready():
            with self._lock:
                self._ensure_thread()
                if self._thread is None:
                    self.dropped += 1
                    return
        if self._queue.qsize() >= self._maxsize:
            with self._lock:
                self.dropped += 1
            logger.warning("failure report for %s dropped: the report queue is full", report.tool)
            return
        self._queue.put((report, hook, callbacks, log))

    def _ready(self) -> bool:
        """Whether a delivery thread is running and not stalled (read without the lock)."""
        thread, since = self._thread, self._busy_since
        if thread is None or not thread.is_alive():
            return False
        return since is None or time.monotonic() - since < STALL_AFTER

    def _ensure_thread(self) -> None:
        """Start a delivery thread, or replace one stalled in a reporter (under the lock)."""
        thread = self._thread
        if thread is not None and thread.is_alive():
            since = self._busy_since
            if since is None or time.monotonic() - since < STALL_AFTER:
                return
            logger.warning(
                "failure reporter %s is blocking; delivering on a new thread", self._busy_label
            )
            self._stalled += 1
        if self._stalled > MAX_STALLED:
            self._thread = None
            return
        self._busy_since = None
        self._thread = PoolThread(self._run, "toolpalette-reports")
        self._thread.start()

    def _run(self, me: PoolThread) -> None:
        while True:
            me.idle = True
            report, hook, callbacks, log = self._queue.get()
            me.idle = False
            if report is None:  # join's marker: every report before it was taken
                hook.set()
                continue
            with self._lock:
                self._delivering += 1
            try:
                if log:
                    _log_or_say(report)
                for label, sink in _sinks_or_none(hook, callbacks):
                    if self._thread is me:  # a replaced thread no longer says it is busy
                        self._busy_since, self._busy_label = time.monotonic(), label
                    _deliver_one(label, sink, report)
                    if self._thread is me:
                        self._busy_since = None
            finally:
                with self._lock:
                    self._delivering -= 1
                    self.delivered += 1
                    retired = self._thread is not me
                    if retired:
                        self._stalled -= 1  # replaced while stalled: this thread retires
            if retired:
                return

    def join(self, timeout: float = 5.0) -> bool:
        """Wait until every queued report has been delivered; for tests and shutdown."""
        deadline = time.monotonic() + timeout
        taken = threading.Event()
        with self._lock:
            thread = self._thread
            if thread is not None and thread.is_alive():
                self._queue.put((None, taken, (), False))
            else:  # no thread: nothing was queued, or it could not be
                taken.set()
        if not taken.wait(max(deadline - time.monotonic(), 0.0)):
            return False
        while self._delivering:  # a stalled thread may still hold one
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.002)
        return True


def sinks_for(hook: Any, callbacks: Sequence[Reporter]) -> list[tuple[str, Reporter]]:
    """The delivery list for one executor: every hook implementation, then the callbacks."""
    sinks = _hook_sinks(hook) if hook is not None else []
    for callback in callbacks:
        sinks.append((getattr(callback, "__qualname__", repr(callback)), callback))
    return sinks


def _log_or_say(report: ToolErrorReport) -> None:
    try:
        log_failure(report)
    except Exception:  # the delivery thread outlives any report it cannot format
        logger.exception("a failure report could not be logged")


def _sinks_or_none(hook: Any, callbacks: Sequence[Reporter]) -> list[tuple[str, Reporter]]:
    try:
        return sinks_for(hook, callbacks)
    except Exception:
        logger.exception("failure reporters could not be listed; report dropped")
        return []


_SHARED: list[ReportQueue] = []
_SHARED_LOCK = threading.Lock()


def shared_queue() -> ReportQueue:
    """The process-wide report queue, for executors not given one of their own."""
    with _SHARED_LOCK:
        if not _SHARED:
            _SHARED.append(ReportQueue())
        return _SHARED[0]
