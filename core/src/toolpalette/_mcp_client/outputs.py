"""An MCP result's structured content, checked against its tool's output schema, bounded."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import TYPE_CHECKING, Any

from toolpalette._schema import budget as _budget
from toolpalette.errors import ToolError

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = ["OutputCheck", "OutputMismatch"]


class OutputMismatch(Exception):
    """Why a result was refused (where and which keyword; never a value): a report's cause."""


class OutputCheck:
    """The check of one tool's results against its output schema (compiled on first use).

    Thread-safe: the validator may be built on the caller's loop or in a worker.
    """

    def __init__(self, schema: dict[str, Any]) -> None:
        self._schema = schema
        self._validator: Validator | None = None

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
