"""MCP tasks as a client: a task-supporting tool's call followed to its result, on both wires.

The tasks extension (SEP-2663) and the 2025-11-25 experimental tasks (SEP-1686).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, Literal

from toolpalette.errors import ClientRequestError, ToolError

__all__ = [
    "CANCEL_TIMEOUT",
    "EXTENSION",
    "POLL_FIRST",
    "POLL_MAX",
    "Answerer",
    "Wire",
    "call",
    "wire_of",
]

logger = logging.getLogger("toolpalette.mcp")

EXTENSION: Final = "io.modelcontextprotocol/tasks"
"""The tasks extension's identifier (SEP-2663)."""
CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
"""The ``_meta`` key of one request's own client capabilities."""
POLL_FIRST: Final = 0.2
"""Seconds before the first ``tasks/get`` when the server gives no poll interval."""
POLL_MAX: Final = 5.0
"""The longest wait between two polls of a task that does not change (unless the server
asks for longer)."""
CANCEL_TIMEOUT: Final = 5.0
"""Seconds a ``tasks/cancel`` is given when the call is abandoned."""
TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})

Wire = Literal["extension", "legacy"]
"""How a server runs tasks: the extension, or 2025-11-25's experimental tasks."""
Answerer = Callable[[str, Mapping[str, Any]], Awaitable[dict[str, Any]]]
"""Answers one input request (its key, ``{"method", "params"}``) with the result to send."""
ProgressFn = Callable[[float, "float | None", "str | None"], Awaitable[None]]
"""The SDK's progress callback: a coroutine function of ``(done, total, message)``."""
Status = Callable[[float, "float | None", "str | None"], None]
"""Where a task's status messages go, as progress reports: ``(n, None, message)``."""


def wire_of(client: Any) -> Wire | None:
    """How the connected server runs tasks of ``tools/call``, or None (it does not)."""
    try:
        capabilities = client.server_capabilities
        version = client.protocol_version
    except Exception:
        return None
    for declared in (getattr(capabilities, "extensions", None), capabilities.experimental):
        if isinstance(declared, Mapping) and EXTENSION in declared:
            return "extension"
    tasks = getattr(capabilities, "tasks", None)
    if tasks is None or version != "2025-11-25":
        return None
    requests = _dump(tasks).get("requests")
    tools = requests.get("tools") if isinstance(requests, Mapping) else None
    return "legacy" if isinstance(tools, Mapping) and "call" in tools else None


def _dump(model: Any) -> dict[str, Any]:
    if isinstance(model, Mapping):
        return dict(model)
    dumped: dict[str, Any] = model.model_dump(by_alias=True, exclude_none=True)
    return dumped


async def send(client: Any, method: str, params: dict[str, Any], timeout: float | None) -> Any:
    """One ``tasks/*`` request; its result as the JSON object the server sent.

    Raises:
        mcp.MCPError: the server answered with a JSON-RPC error.
    """
    import mcp_types as types
    from pydantic import TypeAdapter

    request = types.Request[Any, str](method=method, params=params)
    return await client.session.send_request(request, TypeAdapter(dict[str, Any]), timeout)


async def send_call(
    client: Any,
    params: dict[str, Any],
    timeout: float | None,
    token: str | None,
    progress: ProgressFn | None,
) -> Any:
    """The ``tools/call`` of a task; its answer as the JSON object the server sent.

    Sent through the session's dispatcher, the one place toolpalette reaches it (``mcp``
    2.3 has no client side of tasks): before 2026-07-28 the session's `send_request`
    checks a ``tools/call`` answer as a ``CallToolResult``, which a task handle is not,
    and only the dispatcher takes a request id of the caller's, which the server's
    progress reports then carry as their token after the call is answered.

    Raises:
        mcp.MCPError: the server answered with a JSON-RPC error.
    """
    session = client.session
    data: dict[str, Any] = {"method": "tools/call", "params": params}
    opts: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
    if token is not None:
        opts["request_id"] = token
    if progress is not None:
        opts["on_progress"] = progress
    session._stamp(data, opts)
    return await session._dispatcher.send_raw_request("tools/call", data["params"], opts)


async def call(
    client: Any,
    wire: Wire,
    name: str,
    arguments: dict[str, Any],
    *,
    server: str,
    progress_token: str | None,
    answer: Answerer | None,
    deadline: float | None,
    status: Status | None = None,
    progress: ProgressFn | None = None,
) -> Any:
    """Call tool ``name`` as a task; the SDK ``CallToolResult`` it ends with.

    The request goes under the id ``progress_token``, which the server's progress
    reports carry: ``progress`` gets those sent while it waits (the connection routes
    later ones by the token). The server may answer at once (a direct result) or with a
    task, which is polled
    until it ends: the server's poll interval first, then longer while nothing changes,
    never past ``deadline`` (a ``time.monotonic()`` value). Its input requests go to
    ``answer``, each new ``statusMessage`` to ``status``. Cancelling the call sends
    ``tasks/cancel`` (within `CANCEL_TIMEOUT`).

    Raises:
        ToolError: the task was cancelled on the server, or asked what nobody answers.
        mcp.MCPError: the server answered with a JSON-RPC error, or the task failed.
    """
    import mcp_types as types

    params: dict[str, Any] = {"name": name, "arguments": arguments}
    meta: dict[str, Any] = {}
    if wire == "extension":
        meta[CLIENT_CAPABILITIES] = {"extensions": {EXTENSION: {}}}
    else:
        params["task"] = {}
    params["_meta"] = meta
    first = await send_call(client, params, _left(deadline), progress_token, progress)
    task = _handle(first, wire)
    if task is None:
        return types.CallToolResult.model_validate(first, by_name=False)
    follow = _Follow(client, wire, name, server, task, answer, deadline, status)
    return await follow.run()


def _handle(answer: Mapping[str, Any], wire: Wire) -> dict[str, Any] | None:
    """The task an answer to ``tools/call`` is, or None (a direct result)."""
    if wire == "extension":
        return dict(answer) if answer.get("resultType") == "task" else None
    task = answer.get("task")
    return dict(task) if isinstance(task, Mapping) and "content" not in answer else None


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - time.monotonic())


class _Follow:
    """One task followed to its end: polled, its questions answered, cancelled if abandoned."""

    def __init__(
        self,
        client: Any,
        wire: Wire,
        tool: str,
        server: str,
        task: dict[str, Any],
        answer: Answerer | None,
        deadline: float | None,
        status: Status | None,
    ) -> None:
        self.client, self.wire, self.tool, self.server = client, wire, tool, server
        self.task = task
        self.task_id = str(task.get("taskId"))
        self.answer = answer
        self.deadline = deadline
        self.status = status
        self.said: list[str] = []
        self.answered: set[str] = set()

    async def run(self) -> Any:
        try:
            return await self._follow()
        except BaseException:
            if self.task.get("status") not in TERMINAL:
                await self._cancel()
            raise

    async def _follow(self) -> Any:
        wait = self._hint()
        while True:
            self._say()
            status = self.task.get("status")
            if status in TERMINAL:
                return await self._ended(status)
            if status == "input_required":
                if self.wire == "legacy":  # its questions come while tasks/result waits
                    return await self._legacy_result()
                await self._answer_inputs()
                wait = self._hint()
            await asyncio.sleep(self._bounded(wait))
            before = (status, self.task.get("statusMessage"))
            self.task = await send(self.client, "tasks/get", {"taskId": self.task_id}, None)
            changed = before != (self.task.get("status"), self.task.get("statusMessage"))
            wait = self._hint() if changed else min(max(POLL_MAX, self._hint()), wait * 2)

    def _say(self) -> None:
        """Pass a new ``statusMessage`` on as a progress report."""
        message = self.task.get("statusMessage")
        if self.status is None or not isinstance(message, str):
            return
        if self.said and self.said[-1] == message:
            return
        self.said.append(message)
        self.status(float(len(self.said)), None, message)

    def _hint(self) -> float:
        """The server's poll interval, in seconds (else `POLL_FIRST`)."""
        key = "pollIntervalMs" if self.wire == "extension" else "pollInterval"
        hint = self.task.get(key)
        if isinstance(hint, (int, float)) and not isinstance(hint, bool) and hint > 0:
            return min(float(hint) / 1000, 60.0)
        return POLL_FIRST

    def _bounded(self, wait: float) -> float:
        left = _left(self.deadline)
        return wait if left is None else min(wait, left)

    async def _ended(self, status: str) -> Any:
        import mcp_types as types
        from mcp import MCPError

        if self.wire == "legacy" and status != "cancelled":
            return await self._legacy_result()
        if status == "completed" and isinstance(self.task.get("result"), Mapping):
            return types.CallToolResult.model_validate(self.task["result"], by_name=False)
        if status == "failed":
            error = self.task.get("error")
            raise MCPError.from_error_data(
                types.ErrorData.model_validate(error)
                if isinstance(error, Mapping) and "code" in error
                else types.ErrorData(code=types.INTERNAL_ERROR, message="The task failed.")
            )
        if status == "cancelled":
            raise ToolError(
                f"Tool '{self.tool}': its MCP server '{self.server}' cancelled the task "
                "running the call.",
                code="task_cancelled",
                status=502,
            )
        raise MCPError.from_error_data(
            types.ErrorData(code=types.INTERNAL_ERROR, message="A completed task had no result.")
        )

    async def _legacy_result(self) -> Any:
        import mcp_types as types

        result = await send(self.client, "tasks/result", {"taskId": self.task_id}, None)
        self.task["status"] = "completed"
        return types.CallToolResult.model_validate(result, by_name=False)

    async def _answer_inputs(self) -> None:
        requests = self.task.get("inputRequests")
        pending = {
            key: request
            for key, request in (requests.items() if isinstance(requests, Mapping) else ())
            if key not in self.answered and isinstance(request, Mapping)
        }
        if not pending:
            return
        if self.answer is None:
            raise self._unanswered("nobody to answer it (no client channel)")
        keys = list(pending)
        try:
            answers = await asyncio.gather(*(self.answer(key, pending[key]) for key in keys))
        except ClientRequestError as exc:
            raise self._unanswered(f"no answer to its {exc.feature} request") from exc
        self.answered.update(keys)
        params = {"taskId": self.task_id, "inputResponses": dict(zip(keys, answers, strict=True))}
        await send(self.client, "tasks/update", params, None)

    def _unanswered(self, why: str) -> ToolError:
        return ToolError(
            f"Tool '{self.tool}': its MCP server '{self.server}' asked a question during the "
            f"task, and this call has {why}; the task was cancelled.",
            code="input_unanswered",
            status=502,
        )

    async def _cancel(self) -> None:
        """``tasks/cancel``, shielded from the cancellation that ends the call, bounded."""
        sent = asyncio.ensure_future(
            send(self.client, "tasks/cancel", {"taskId": self.task_id}, CANCEL_TIMEOUT)
        )
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(asyncio.shield(sent), CANCEL_TIMEOUT)
        if not sent.done():
            sent.cancel()
        elif not sent.cancelled() and sent.exception() is not None:
            logger.debug("MCP server %r: tasks/cancel failed: %r", self.server, sent.exception())
