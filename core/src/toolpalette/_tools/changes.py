"""`resource_updated`: a pack says one of its resources changed; servers in the process hear it."""

from __future__ import annotations

import itertools
import logging
import threading
import weakref
from collections.abc import Callable
from typing import Final

__all__ = ["hear_resource_updates", "resource_updated"]

logger = logging.getLogger("toolpalette.changes")

_listeners: Final[dict[int, weakref.WeakMethod[Callable[[str], None]]]] = {}
_lock: Final = threading.Lock()
_keys: Final = itertools.count()


def resource_updated(uri: str) -> None:
    """Say that the resource at ``uri`` changed, so the clients subscribed to it are told.

    Call it from anywhere in the process that serves the pack: a tool that wrote what
    the resource reads, a resource function, a thread watching a file. ``uri`` is the
    resource's URI, or a URI one of its templates matches (``users://ada/profile``).
    Every MCP server of this process tells the clients that subscribed to exactly that
    URI (`resources/subscribe` on the 2025 era, a `subscriptions/listen` stream on
    2026-07-28); a server with no such client does nothing. It never blocks and never
    raises: a listener that fails is logged.

    Raises:
        TypeError: ``uri`` is not a string.
    """
    if not isinstance(uri, str):
        raise TypeError("resource_updated takes the resource's URI, a string")
    with _lock:
        listeners = list(_listeners.items())
    for key, ref in listeners:
        listener = ref()
        if listener is None:
            with _lock:
                _listeners.pop(key, None)
            continue
        try:
            listener(uri)
        except Exception:
            logger.exception("a resource-update listener raised")


def hear_resource_updates(listener: Callable[[str], None]) -> Callable[[], None]:
    """Have the bound method ``listener`` hear every `resource_updated` URI.

    The listener is held weakly (its object's life is its own) and must not block: it
    may be called on any thread. Returns a function that stops it hearing.
    """
    key = next(_keys)
    ref: weakref.WeakMethod[Callable[[str], None]] = weakref.WeakMethod(listener)
    with _lock:
        _listeners[key] = ref

    def stop() -> None:
        with _lock:
            if _listeners.get(key) is ref:
                del _listeners[key]

    return stop
