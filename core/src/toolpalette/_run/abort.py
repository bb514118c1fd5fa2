"""The caller's abort signal: ends a call at once, with the caller's reason."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from functools import partial

__all__ = ["AbortSignal"]


class AbortSignal:
    """Set by a host to end the calls it started, from any thread, with a reason.

    Pass one to ``Executor.execute`` (or ``execute_many``): when it fires, every call
    watching it returns at once with status 499, code ``aborted`` and the reason as its
    text. Such results are the caller's own doing: they are never reported as failures.
    A signal fires once; later ``abort`` calls keep the first reason.
    """

    __slots__ = ("_callbacks", "_keys", "_lock", "_reason")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reason: str | None = None
        # Keyed, so that each of a large batch's calls unsubscribes in constant time.
        self._callbacks: dict[int, Callable[[str], None]] = {}
        self._keys = itertools.count()

    @property
    def aborted(self) -> bool:
        """Whether the signal has fired."""
        return self._reason is not None

    @property
    def reason(self) -> str | None:
        """The reason given to `abort()`, or None before it fires."""
        return self._reason

    def abort(self, reason: str = "The call was cancelled by the caller.") -> None:
        """Fire the signal: every call watching it ends now with ``reason``.

        ``reason`` is shown to the model as the result's text, so write it for the model.
        """
        with self._lock:
            if self._reason is not None:
                return
            self._reason = reason
            callbacks, self._callbacks = self._callbacks, {}
        for callback in callbacks.values():
            callback(reason)

    def subscribe(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call ``callback(reason)`` when the signal fires (now, if it already has).

        The callback may run on whichever thread calls
        [`abort()`][toolpalette.AbortSignal.abort]. Returns a function that
        unsubscribes; the executor unsubscribes when its call ends.
        """
        with self._lock:
            reason = self._reason
            if reason is None:
                key = next(self._keys)
                self._callbacks[key] = callback
        if reason is not None:
            callback(reason)
            return _noop
        return partial(self._unsubscribe, key)

    def _unsubscribe(self, key: int) -> None:
        with self._lock:
            self._callbacks.pop(key, None)

    def __repr__(self) -> str:
        state = f"aborted: {self._reason!r}" if self._reason is not None else "armed"
        return f"<AbortSignal {state}>"


def _noop() -> None:
    return None
