"""The one way toolpalette calls hooks: each implementation alone, whatever it raises contained.

Why and how: docs/architecture.md ("Where each hook fires").
"""

from __future__ import annotations

import logging
import reprlib
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from pluggy import HookCaller
    from pluggy._hooks import HookImpl

__all__ = ["Called", "call_each", "first_result", "in_call_order"]

logger = logging.getLogger("toolpalette.hooks")
trace_logger = logging.getLogger("toolpalette.trace")
"""Where each call is logged when ``TOOLPALETTE_TRACE_PLUGINS`` is on (the manager turns it on)."""


class Called(NamedTuple):
    """What one implementation did: its result, or the exception it raised."""

    impl: HookImpl
    """The implementation called (``impl.plugin_name`` names its plugin)."""
    result: Any
    """What it returned (None when it raised)."""
    error: BaseException | None
    """What it raised, or None."""

    @property
    def label(self) -> str:
        """``plugin.function``, for a log line or a problem."""
        function = getattr(self.impl.function, "__name__", "hook")
        return f"{self.impl.plugin_name}.{function}"


def in_call_order(caller: HookCaller) -> list[HookImpl]:
    """The implementations of a hook caller in the order pluggy would call them."""
    return list(reversed(caller.get_hookimpls()))


def call_each(
    impls: Iterable[HookImpl], hook_name: str, kwargs: Mapping[str, Any]
) -> Iterator[Called]:
    """Call each implementation on its own; yield what each returned or raised.

    ``kwargs`` holds every argument the hook offers; an implementation receives the ones
    it names. Nothing raised by an implementation escapes but ``KeyboardInterrupt``.
    """
    tracing = trace_logger.isEnabledFor(logging.DEBUG)
    for impl in impls:
        if impl.hookwrapper or impl.wrapper:
            error = TypeError(f"{hook_name} does not support wrapper implementations")
            yield Called(impl, None, error)
            continue
        if tracing:
            trace_logger.debug("call %s on %s", hook_name, impl.plugin_name)
        try:
            result = impl.function(*[kwargs[name] for name in impl.argnames])
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            logger.debug("%s of %s raised", hook_name, impl.plugin_name, exc_info=True)
            if tracing:
                trace_logger.debug("%s raised %s", hook_name, type(exc).__name__)
            yield Called(impl, None, exc)
            continue
        if tracing:
            trace_logger.debug("%s returned %s", hook_name, reprlib.repr(result))
        yield Called(impl, result, None)


def first_result(
    impls: Iterable[HookImpl], hook_name: str, kwargs: Mapping[str, Any]
) -> Called | None:
    """A ``firstresult`` hook: the first implementation that returns non-None or raises.

    Returns None when every implementation returned None. A raising implementation
    stops the search as pluggy's would, but comes back as a `Called` with its
    error instead of escaping.
    """
    for called in call_each(impls, hook_name, kwargs):
        if called.error is not None or called.result is not None:
            return called
    return None
