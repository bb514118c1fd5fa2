"""An MCP result's structured content, checked against its tool's output schema, bounded.

One check per output schema (`check_for`): a compiled quick check, the validator behind it.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from toolpalette._schema import budget as _budget
from toolpalette._schema import quick_check as _quick_check
from toolpalette.errors import ToolError

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = ["KEPT_CHECKS", "OutputCheck", "OutputMismatch", "check_for"]

KEPT_CHECKS: Final = 256
"""Output schemas whose checks are kept for the listings that follow (least recent out)."""
_UNCOMPILED: Final = object()
_KEPT: dict[str, OutputCheck] = {}
_KEPT_LOCK: Final = threading.Lock()


class OutputMismatch(Exception):
    """Why a result was refused (where and which keyword; never a value): a report's cause."""


def check_for(schema: dict[str, Any]) -> OutputCheck:
    """The check of ``schema``, shared by every tool (and listing) that lists it unchanged.

    A server's tools are built again at each listing: keyed on the schema's JSON text,
    a check is compiled once per version of the schema, not once per listing.
    """
    try:
        text = json.dumps(schema, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return OutputCheck(schema)
    with _KEPT_LOCK:
        check = _KEPT.pop(text, None)
        if check is None:
            check = OutputCheck(schema)
            if len(_KEPT) >= KEPT_CHECKS:
                del _KEPT[next(iter(_KEPT))]
        _KEPT[text] = check  # the most recent last
    return check


class OutputCheck:
    """The check of one output schema: its quick check first, then the bounded validator.

    Each is compiled on first use and kept. The quick check (`quick_check`) only ever
    says yes where the validator would, in a few microseconds for a server's common
    schemas; anything else, refusals included, is the validator's to answer.
    Thread-safe: either may be built on the caller's loop or in a worker.
    """

    def __init__(self, schema: dict[str, Any]) -> None:
        self._schema = schema
        self._quick: Any = _UNCOMPILED
        self._validator: Validator | None = None

    def _quick_check(self) -> Callable[[Any], bool] | None:
        quick = self._quick
        if quick is _UNCOMPILED:
            quick = self._quick = _quick_check.compile_check(self._schema)
        return quick  # type: ignore[no-any-return]

    async def verify(self, structured: Any, tool: str, server: str, timeout: float) -> None:
        """Accept ``structured`` or raise; the loop is held for its share only.

        Raises:
            ToolError: 502 ``server_error``; its ``__cause__`` (an `OutputMismatch`)
                says why.
        """
        if not isinstance(structured, dict):
            raise _refused(tool, server, "the result has no structured content (an object)")
        token = _budget.validating_on_loop()
        try:
            why = self._check(structured, 0)
        except _budget.ValidationDeferred:
            why = None
        finally:
            _budget.end_mode(token)
        if why is None:
            why = await self._apart(structured, timeout)
        if why:
            raise _refused(tool, server, why)

    async def _apart(self, structured: dict[str, Any], timeout: float) -> str:
        """The check with the whole budget, in a worker; cancelling stops the worker."""
        stop = threading.Event()
        deadline = time.monotonic() + timeout
        loop = asyncio.get_running_loop()
        work = loop.run_in_executor(None, self._checked_apart, structured, deadline, stop)
        try:
            return await asyncio.shield(work)
        except asyncio.CancelledError:
            stop.set()
            raise

    def _checked_apart(
        self, structured: dict[str, Any], deadline: float, stop: threading.Event
    ) -> str:
        token = _budget.validating_apart(deadline, stop)
        try:
            size = len(json.dumps(structured, ensure_ascii=False))
            return self._check(structured, size)
        except _budget.ValidationStopped as stopped:
            return f"the check stopped: {stopped}"
        except RecursionError:
            return "the result is nested too deeply to check"
        finally:
            _budget.end_mode(token)

    def _check(self, structured: dict[str, Any], size: int) -> str:
        """Why ``structured`` is refused, ``""`` when it conforms.

        Raises:
            ValidationDeferred: on the loop, past its share.
            ValidationStopped: apart, past the deadline or once stopped.
        """
        from toolpalette._schema.bounded import compile_validator

        problem = _budget.container_problem(structured)
        if problem is not None:
            return f"the result is over a bound: {problem.expected}"
        quick = self._quick_check()
        if quick is not None and quick(structured):
            return ""
        validator = self._validator
        if validator is None:
            validator = self._validator = compile_validator(self._schema)
        errors = _budget.schema_errors(validator, structured, 1, size)
        if not errors:
            return ""
        error = errors[0]
        if error.validator == _budget.OVER_BUDGET:
            return f"checking it needs more than {error.validator_value} validation steps"
        return f"at {error.json_path}: it fails '{error.validator}'"


def _refused(tool: str, server: str, why: str) -> ToolError:
    error = ToolError(
        f"Tool '{tool}' answered with a result that does not match its output schema on "
        f"its MCP server '{server}'. The details were reported to the host.",
        code="server_error",
        status=502,
    )
    error.__cause__ = OutputMismatch(why)
    return error
