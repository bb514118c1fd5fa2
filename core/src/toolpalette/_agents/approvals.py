"""What waits for a person: one thinker's pending approvals, asked and resolved here.

The rules are guarded by ``tests/faults/test_approvals.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future as ThreadFuture
from functools import partial
from typing import Any, final

from toolpalette._agents.turn import Approval

__all__ = ["ApproverFailed", "Approvals", "Notify"]

logger = logging.getLogger("toolpalette.thinker")

Notify = Callable[[Approval], "Awaitable[Any] | None"]
"""The host's approver: told of each new approval; may return an awaitable (awaited)."""


@final
class _Entry:
    """One pending approval, what waits on it, and its delivery to the host if in flight."""

    __slots__ = ("answer", "approval", "delivery")

    def __init__(self, approval: Approval, answer: asyncio.Future[bool] | None) -> None:
        self.approval = approval
        self.answer = answer
        """A paused call's future (None for a grant)."""
        self.delivery: asyncio.Future[Any] | ThreadFuture[Any] | None = None
        """The approver's awaitable, running, when it returned one."""


@final
class Approvals:
    """A thinker's pending approvals: ask for a call or a grant, list, resolve.

    Args:
        notify: the host's approver, told of each new approval (None: the host polls
            `pending()`).
        withdrawn: called with a grant's approval when its delivery to the host failed
            after `ask_grant()` returned (the thinker records the refusal).
    """

    def __init__(
        self, notify: Notify | None, withdrawn: Callable[[Approval], None] | None = None
    ) -> None:
        self._notify = notify
        self._withdrawn = withdrawn
        self._lock = threading.Lock()
        self._pending: dict[str, _Entry] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        """The loop of the thinker's latest call: a grant's awaitable delivery runs there."""

    def pending(self) -> list[Approval]:
        """The approvals waiting for a person, oldest first."""
        with self._lock:
            return [entry.approval for entry in self._pending.values()]

    async def ask_call(self, approval: Approval) -> bool:
        """Pause the calling task until a person answers ``approval``; returns the answer.

        Raises:
            Exception: whatever the approver (or its awaitable) raised; the approval is
                withdrawn first.
        """
        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        entry = _Entry(approval, answer)
        try:
            self._add(entry)
            delivered = self._notify(approval) if self._notify is not None else None
            if inspect.isawaitable(delivered):
                delivery = entry.delivery = asyncio.ensure_future(_await(delivered))
                delivery.add_done_callback(_retrieve)
                await asyncio.wait((answer, delivery), return_when=asyncio.FIRST_COMPLETED)
                if not answer.done():
                    delivery.result()  # raises what the delivery raised; else wait on
            return await answer
        finally:
            self._remove(entry)

    def ask_grant(self, approval: Approval) -> bool:
        """Register a grant's ``approval`` and tell the host; False if that failed.

        Runs on whichever thread decides the grant (a worker, for a meta-tool). An
        awaitable the approver returns runs on `loop` (or, with no loop known,
        to its end here); if it raises later the approval is withdrawn and ``withdrawn``
        is told.
        """
        entry = _Entry(approval, None)
        self._add(entry)
        try:
            delivered = self._notify(approval) if self._notify is not None else None
            if inspect.isawaitable(delivered):
                self._deliver_later(entry, delivered)
        except BaseException as exc:
            self._remove(entry)
            if isinstance(exc, KeyboardInterrupt):
                raise
            logger.error(
                "the approver raised for %s %r; withdrawn",
                approval.kind,
                approval.name,
                exc_info=exc,
            )
            return False
        return True

    def resolve(self, token: str) -> Approval:
        """Take ``token`` off the pending list, for the thinker to apply its answer.

        For a paused call, use `answer_call()` instead, which also wakes the call.

        Raises:
            KeyError: ``token`` is not pending (unknown, resolved or withdrawn).
        """
        with self._lock:
            entry = self._pending.pop(token)
        _cancel(entry.delivery)
        return entry.approval

    def answer_call(self, token: str, approve: bool | BaseException) -> Approval:
        """Wake the paused call ``token`` with ``approve`` (an exception: raise it there).

        Raises:
            KeyError: ``token`` is not a pending call, or its event loop has closed (no
                call waits any more).
        """
        with self._lock:
            entry = self._pending.get(token)
            if entry is None or entry.answer is None:
                raise KeyError(token)
            del self._pending[token]
        try:
            entry.answer.get_loop().call_soon_threadsafe(_settle, entry.answer, approve)
        except RuntimeError:  # the loop closed under the paused call
            raise KeyError(token) from None
        return entry.approval

    def is_call(self, token: str) -> bool:
        """Whether ``token`` is a pending call (rather than a grant)."""
        with self._lock:
            entry = self._pending.get(token)
        return entry is not None and entry.answer is not None

    # -- inside ----------------------------------------------------------------------

    def _add(self, entry: _Entry) -> None:
        with self._lock:
            self._pending[entry.approval.token] = entry

    def _remove(self, entry: _Entry) -> bool:
        """Withdraw ``entry`` if still pending; returns whether it was."""
        with self._lock:
            removed = self._pending.get(entry.approval.token) is entry
            if removed:
                del self._pending[entry.approval.token]
        delivery = entry.delivery
        if delivery is not None and not delivery.done():
            _cancel(delivery)
        return removed

    def _deliver_later(self, entry: _Entry, delivered: Awaitable[Any]) -> None:
        """Run a grant's awaitable delivery; withdraw the approval if it raises."""
        loop = self.loop
        running = _running_loop()
        if running is not None:
            entry.delivery = asyncio.ensure_future(_await(delivered))
        elif loop is not None and not loop.is_closed():
            entry.delivery = asyncio.run_coroutine_threadsafe(_await(delivered), loop)
            # A delivery that has already ended runs its callback at once, on this thread,
            # inside the grant's decision and before the grant's own "pending" record: hand
            # the outcome to the loop, which waits for the decision to be recorded first.
            entry.delivery.add_done_callback(
                lambda done: _call_on(loop, partial(self._delivered, entry, done))
            )
            return
        else:  # no loop at all: deliver now, on this thread
            asyncio.run(_await(delivered))
            return
        entry.delivery.add_done_callback(lambda done: self._delivered(entry, done))

    def _delivered(self, entry: _Entry, done: Any) -> None:
        if done.cancelled():
            return
        error = done.exception()
        if error is None:
            return
        approval = entry.approval
        logger.error(
            "the approver failed for %s %r; withdrawn",
            approval.kind,
            approval.name,
            exc_info=(type(error), error, error.__traceback__),
        )
        if self._remove(entry) and self._withdrawn is not None:
            self._withdrawn(approval)


def _call_on(loop: asyncio.AbstractEventLoop, callback: Callable[[], object]) -> None:
    """Run ``callback`` on ``loop``'s thread; here, if the loop has closed meanwhile."""
    try:
        loop.call_soon_threadsafe(callback)
    except RuntimeError:  # the loop closed: nobody else will run it
        callback()


def _retrieve(delivery: asyncio.Future[Any]) -> None:
    """Mark a delivery's outcome seen: its failure is raised or logged by the asker."""
    if not delivery.cancelled():
        delivery.exception()


class ApproverFailed(Exception):
    """What an approver's awaitable raised that is not an ``Exception`` (its cause).

    ``SystemExit`` or another ``BaseException`` raised in a task would be re-raised by
    asyncio into the event loop, ending every call on it; carried in this, it is the
    approver's failure like any other.
    """


async def _await(awaitable: Awaitable[Any]) -> Any:
    """Await an approver's awaitable; what it raises comes out as an ``Exception``."""
    try:
        return await awaitable
    except (Exception, KeyboardInterrupt, asyncio.CancelledError):
        raise
    except BaseException as exc:
        raise ApproverFailed(f"the approver raised {type(exc).__name__}") from exc


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _settle(future: asyncio.Future[bool], value: bool | BaseException) -> None:
    if future.done():
        return
    if isinstance(value, BaseException):
        future.set_exception(value)
    else:
        future.set_result(value)


def _cancel(delivery: asyncio.Future[Any] | ThreadFuture[Any] | None) -> None:
    """Cancel an approver's delivery still in flight, from any thread."""
    if delivery is None or delivery.done():
        return
    if isinstance(delivery, asyncio.Future):
        with contextlib.suppress(RuntimeError):  # its loop closed: nothing left to stop
            delivery.get_loop().call_soon_threadsafe(delivery.cancel)
    else:
        delivery.cancel()
