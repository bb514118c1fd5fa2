"""The MCP tasks extension (``io.modelcontextprotocol/tasks``, SEP-2663), served."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import secrets
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Final

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from toolpalette import AbortSignal, ClientRequestError, Elicited, Root, Sampled, ToolResult
from toolpalette._tools.channel import log_to_logging
from toolpalette.mcp._channel import parse_answer, question_params
from toolpalette.mcp._principal import request_principal
from toolpalette.mcp._task_store import MemoryTaskStore, TaskStore, task_store

if TYPE_CHECKING:
    from toolpalette import ToolProvider
    from toolpalette.mcp._sessions import Served
    from toolpalette.mcp._tools import ToolsEndpoint

__all__ = [
    "EXTENSION",
    "TaskParams",
    "TaskSettings",
    "TasksExtension",
    "UpdateTaskParams",
    "settings_from_env",
]

logger = logging.getLogger("toolpalette.mcp")

EXTENSION: Final = "io.modelcontextprotocol/tasks"
"""The extension's identifier."""
CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
"""The ``_meta`` key of a request's own client capabilities."""
TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})
_UNKNOWN: Final = "Unknown task: no task of yours has that id (it may have expired)."
_CANCELLED: Final = "The client cancelled the task."
_LOST: Final = "The worker running this task stopped before it finished; call the tool again."
_STOPPED: Final = "The server stopped before this task finished; call the tool again."
_STOPPING: Final = "The server is stopping."
_HEADER_MISMATCH: Final = -32020


@dataclass(frozen=True)
class TaskSettings:
    """Where and how long a server keeps its MCP tasks: ``server(..., tasks=...)``.

    A call of a task-supporting tool (``@tool(task_support=...)``) from a client that
    declares the tasks extension becomes a task when it outlasts `immediate`; the task
    is kept in `store` for `ttl_ms`. The default keeps tasks in this process's memory,
    which is right for one worker or stdio; give every worker of a deployment one
    shared store ([`SqliteTaskStore`][toolpalette.mcp.SqliteTaskStore] on one machine,
    [`RedisTaskStore`][toolpalette.mcp.RedisTaskStore] on several) so that any worker
    answers for any task. The host guide's "Long-running tools" says more.

    Raises:
        ValueError: a setting is out of range.
    """

    store: TaskStore = field(default_factory=MemoryTaskStore)
    """Where tasks are kept: give every worker of a deployment the same."""
    ttl_ms: int = 3_600_000
    """How long a task and its result are kept after it is created (``ttlMs``)."""
    poll_ms: int = 500
    """How often a client is told to poll (``pollIntervalMs``)."""
    lease: float = 15.0
    """Seconds a task stays ``working`` without its worker renewing it; then ``failed``."""
    immediate: float = 0.25
    """Seconds a call runs as a direct call before it becomes a task (0: a task at once)."""
    notify_interval: float = 0.25
    """Seconds between a listen stream's reads of its tasks (another worker's changes)."""

    def __post_init__(self) -> None:
        if (
            self.ttl_ms < 1000
            or self.poll_ms < 1
            or self.lease <= 0.3
            or self.immediate < 0
            or not 0.01 <= self.notify_interval <= 60
        ):
            raise ValueError(
                "task settings out of range: ttl_ms at least 1000, poll_ms at least 1, "
                "lease above 0.3 seconds, immediate not negative, notify_interval "
                "from 0.01 to 60 seconds"
            )


def settings_from_env(store: str | None = None) -> TaskSettings:
    """The settings ``TOOLPALETTE_TASK_*`` give (``store`` if given, else ``..._STORE``).

    Raises:
        ValueError: a setting does not parse, or is out of range.
    """
    spec = store if store is not None else os.environ.get("TOOLPALETTE_TASK_STORE")
    try:
        ttl = int(float(os.environ.get("TOOLPALETTE_TASK_TTL", "3600")) * 1000)
        lease = float(os.environ.get("TOOLPALETTE_TASK_LEASE", "15"))
        immediate = float(os.environ.get("TOOLPALETTE_TASK_IMMEDIATE", "0.25"))
    except ValueError:
        raise ValueError(
            "TOOLPALETTE_TASK_TTL, _LEASE and _IMMEDIATE are numbers of seconds"
        ) from None
    return TaskSettings(task_store(spec), ttl_ms=ttl, lease=lease, immediate=immediate)


class TaskParams(types.RequestParams):
    """``tasks/get`` and ``tasks/cancel``: the task's id."""

    taskId: str


class UpdateTaskParams(TaskParams):
    """``tasks/update``: the answers to a task's input requests, by key."""

    inputResponses: dict[str, Any]


def declared(ctx: ServerRequestContext[Any], params: Mapping[str, Any] | None) -> bool:
    """Whether the request's client declared the extension (in the request, or its session)."""
    meta = (params or {}).get("_meta")
    if isinstance(meta, Mapping):
        own = meta.get(CLIENT_CAPABILITIES)
        if isinstance(own, Mapping):
            extensions = own.get("extensions")
            if isinstance(extensions, Mapping) and EXTENSION in extensions:
                return True
    try:
        capabilities = ctx.session.client_capabilities
    except Exception:  # no session state to read
        return False
    if capabilities is None:
        return False
    extensions = getattr(capabilities, "extensions", None)
    if extensions is None:
        extensions = (getattr(capabilities, "model_extra", None) or {}).get("extensions")
    return isinstance(extensions, Mapping) and EXTENSION in extensions


def missing_extension() -> MCPError:
    """-32021: the request needs the tasks extension, which the client did not declare."""
    return MCPError(
        code=types.MISSING_REQUIRED_CLIENT_CAPABILITY,
        message=f"Missing required client capability: the {EXTENSION} extension",
        data={"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
    )


def _iso(moment: float) -> str:
    return (
        datetime.fromtimestamp(moment, timezone.utc).isoformat(timespec="milliseconds")[:-6] + "Z"
    )


def _owner(ctx: ServerRequestContext[Any]) -> str:
    principal = request_principal(ctx)
    identity = "" if principal is None else repr(principal.identity)
    return hashlib.sha256(identity.encode()).hexdigest()


Change = Callable[[dict[str, Any]], dict[str, Any] | None]


class TaskBook:
    """Every change of a task record, made by compare and set on the store."""

    def __init__(self, settings: TaskSettings) -> None:
        self.settings = settings
        self.store = settings.store
        self._wakers: set[asyncio.Event] = set()

    def waker(self) -> asyncio.Event:
        """An event set at each change this worker makes (`forget` it after)."""
        event = asyncio.Event()
        self._wakers.add(event)
        return event

    def forget(self, event: asyncio.Event) -> None:
        self._wakers.discard(event)

    def _changed(self) -> None:
        for event in list(self._wakers):
            event.set()

    def _expires(self, record: dict[str, Any]) -> float:
        return float(record["created"]) + self.settings.ttl_ms / 1000

    async def create(self, owner: str, started: float) -> dict[str, Any]:
        now = time.time()
        record: dict[str, Any] = {
            "taskId": secrets.token_urlsafe(24),
            "owner": owner,
            "status": "working",
            "created": started,
            "updated": now,
            "lease": now + self.settings.lease,
            "worker": os.getpid(),
            "inputRequests": {},
            "inputResponses": {},
        }
        await self.store.create(record["taskId"], record, self._expires(record))
        return record

    async def change(self, task_id: str, change: Change) -> dict[str, Any] | None:
        """The record after ``change`` (None: no record; ``change`` None: left as it is)."""
        for _ in range(100):
            found = await self.store.load(task_id)
            if found is None:
                return None
            record, version = found
            changed = change(dict(record))
            if changed is None:
                return record
            changed["updated"] = time.time()
            if await self.store.replace(task_id, changed, version, self._expires(changed)):
                self._changed()
                return changed
        raise MCPError(code=types.INTERNAL_ERROR, message="The task is changing too fast.")

    async def read(self, task_id: str, owner: str) -> dict[str, Any]:
        """The record of a task ``owner`` created, a lost worker's task failed first.

        Raises:
            MCPError: -32602 for an unknown, expired or another principal's task.
        """
        found = await self.store.load(task_id) if isinstance(task_id, str) else None
        if found is None or found[0].get("owner") != owner:
            raise MCPError(code=types.INVALID_PARAMS, message=_UNKNOWN)
        record = found[0]
        if record["status"] not in TERMINAL and record["lease"] < time.time():
            record = await self.change(task_id, _lost) or record
        return record

    async def finish(self, task_id: str, status: str, key: str, value: Any) -> None:
        def settle(record: dict[str, Any]) -> dict[str, Any] | None:
            if record["status"] in TERMINAL:
                return None  # cancelled (or failed) first: that stays
            record.update(status=status, inputRequests={}, inputResponses={})
            record[key] = value
            return record

        await self.change(task_id, settle)


def _stopped(record: dict[str, Any]) -> dict[str, Any] | None:
    if record["status"] in TERMINAL:
        return None
    record.update(
        status="failed",
        statusMessage=_STOPPED,
        error={"code": types.INTERNAL_ERROR, "message": _STOPPED},
        inputRequests={},
    )
    return record


def _lost(record: dict[str, Any]) -> dict[str, Any] | None:
    if record["status"] in TERMINAL or record["lease"] >= time.time():
        return None
    record.update(
        status="failed",
        statusMessage=_LOST,
        error={"code": types.INTERNAL_ERROR, "message": _LOST},
        inputRequests={},
    )
    return record


def _progress_message(done: float, total: float | None, message: str | None) -> str:
    """A progress report as a task's status message: ``message (3/10)``."""
    count = f"{done:g}" if total is None else f"{done:g}/{total:g}"
    return f"{message} ({count})" if message else count


def _seen(task: Mapping[str, Any]) -> tuple[Any, ...]:
    """What a status notification tells (lease renewals change only ``lastUpdatedAt``)."""
    return (task["status"], task.get("statusMessage"), sorted(task.get("inputRequests", {})))


def wire_task(record: dict[str, Any], settings: TaskSettings) -> dict[str, Any]:
    """The task as ``tasks/get`` answers it (its result or error inlined when terminal)."""
    task: dict[str, Any] = {
        "taskId": record["taskId"],
        "status": record["status"],
        "createdAt": _iso(record["created"]),
        "lastUpdatedAt": _iso(record["updated"]),
        "ttlMs": settings.ttl_ms,
        "pollIntervalMs": settings.poll_ms,
    }
    if record.get("statusMessage"):
        task["statusMessage"] = record["statusMessage"]
    if record["status"] == "input_required":
        task["inputRequests"] = record["inputRequests"]
    if record["status"] == "completed" and "result" in record:
        task["result"] = record["result"]
    if record["status"] == "failed" and "error" in record:
        task["error"] = record["error"]
    return task


class TaskChannel:
    """Where a task's tool talks after its call became a task: questions are input requests.

    A question is kept in the task (``input_required``) until ``tasks/update`` (on any
    worker) answers it; log lines go to `logging`.
    """

    def __init__(
        self, book: TaskBook, task_id: str, capabilities: Any, tool: str, poll: float
    ) -> None:
        self._book = book
        self._task = task_id
        self._capabilities = capabilities
        self._tool = tool
        self._poll = poll
        self._asked = 0

    def log(self, level: str, message: str, data: Any) -> None:
        log_to_logging(level, message, data, logger=f"toolpalette.tool.{self._tool}")

    async def elicit(
        self, message: str, schema: Mapping[str, Any], *, key: str | None = None
    ) -> Elicited:
        answer: Elicited = await self._ask("elicitation", key, message, schema)
        return answer

    async def sample(
        self,
        messages: Sequence[Mapping[str, Any]],
        options: Mapping[str, Any],
        *,
        key: str | None = None,
    ) -> Sampled:
        answer: Sampled = await self._ask("sampling", key, messages, options)
        return answer

    async def roots(self, *, key: str | None = None) -> list[Root]:
        answer: list[Root] = await self._ask("roots", key)
        return answer

    async def _ask(self, feature: str, key: str | None, *args: Any) -> Any:
        if getattr(self._capabilities, feature, None) is None:
            raise ClientRequestError(feature=feature, reason="unsupported")
        self._asked += 1
        key = f"{key or feature}-{self._asked}-{secrets.token_hex(4)}"
        method, params = question_params(feature, *args)

        def ask(record: dict[str, Any]) -> dict[str, Any] | None:
            if record["status"] in TERMINAL:
                return None
            record["inputRequests"][key] = {"method": method, "params": params}
            record["status"] = "input_required"
            return record

        await self._book.change(self._task, ask)
        while True:
            taken: list[Any] = []

            def take(record: dict[str, Any], taken: list[Any] = taken) -> dict[str, Any] | None:
                if key not in record["inputResponses"]:
                    return None
                taken.append(record["inputResponses"].pop(key))
                return record

            record = await self._book.change(self._task, take)
            if taken:
                try:
                    return parse_answer(feature, taken[0])
                except ClientRequestError:
                    raise
                except Exception:
                    raise ClientRequestError(feature=feature, reason="failed") from None
            if record is None or record["status"] in TERMINAL:
                raise ClientRequestError(feature=feature, reason="failed")
            await asyncio.sleep(self._poll)


class TasksExtension:
    """The extension's handlers and the tasks this worker runs.

    The server holds it open while it serves (`serving()`, from the server's lifespan);
    when the last serving ends, `aclose()` fails the tasks still running here, stops
    their calls and closes the store.

    Args:
        settings: the store and its settings.
        grace: seconds `aclose()` gives the aborted calls to end before cancelling them.
    """

    def __init__(self, settings: TaskSettings, *, grace: float = 5.0) -> None:
        self.settings = settings
        self.book = TaskBook(settings)
        self.grace = grace
        self._running: dict[str, tuple[AbortSignal, asyncio.Future[ToolResult]]] = {}
        self._drivers: set[asyncio.Task[None]] = set()
        self._serving = 0
        self._closing = False

    @contextlib.asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        """While the server serves; the last serving to end closes the extension.

        The SDK enters the server's lifespan once per HTTP application, stdio run or
        in-process client: several may serve at once from one server.
        """
        self._serving += 1
        self._closing = False
        try:
            yield
        finally:
            self._serving -= 1
            if self._serving == 0:
                await self.aclose()

    # -- tools/call ------------------------------------------------------------------

    async def call(
        self,
        tools: ToolsEndpoint,
        ctx: ServerRequestContext[Any],
        served: Served,
        params: Mapping[str, Any],
        name: str,
        arguments: Any,
        provider: ToolProvider,
    ) -> dict[str, Any]:
        """A task-supporting tool's call: answered directly, or as a task.

        A client without the extension gets the direct call of an ``optional`` tool, and
        -32021 for a ``required`` one. With it, the call runs as a direct call for
        `TaskSettings.immediate` seconds; one that has not answered by then becomes a
        task, answered with its ``CreateTaskResult``.

        Raises:
            MCPError: -32021 (see above), or the direct call's own errors.
        """
        if not declared(ctx, params):
            if provider.task_support == "required":
                raise missing_extension()
            prepared = tools.prepare(ctx, params)
            ran = await tools._run(served, name, arguments, ctx, *prepared)
            return await tools.finish(ctx, served, name, *ran, prepared[0])
        started = time.time()
        answer, answers, resume = tools.prepare(ctx, params)
        call, abort, progress, asker, pause, channel = tools.start(
            served, name, arguments, ctx, answer, answers, resume
        )
        try:
            with contextlib.suppress(asyncio.TimeoutError):  # not TimeoutError on 3.10
                await asyncio.wait_for(asyncio.shield(call), self.settings.immediate)
        except asyncio.CancelledError:
            abort.abort("The client cancelled the call.")
            with anyio.CancelScope(shield=True):
                await call
                await progress.close()
            raise
        if call.done():
            await progress.close()
            if channel.sending:
                await channel.close()
            return await tools.finish(
                ctx, served, name, call.result(), asker, pause, channel, answer
            )
        owner = _owner(ctx)
        try:
            record = await self.book.create(owner, started)
        except Exception:
            abort.abort("The task could not be kept.")
            logger.exception("a task could not be created in the task store")
            raise MCPError(
                code=types.INTERNAL_ERROR, message="The task store cannot keep the task."
            ) from None
        task_id = record["taskId"]
        capabilities = ctx.session.client_capabilities
        channel.divert = TaskChannel(
            self.book, task_id, capabilities, name, min(0.2, self.settings.poll_ms / 1000)
        )
        self._running[task_id] = (abort, call)

        async def progressed(done: float, total: float | None, message: str | None) -> None:
            status = _progress_message(done, total, message)

            def note(record: dict[str, Any]) -> dict[str, Any] | None:
                if record["status"] in TERMINAL or record.get("statusMessage") == status:
                    return None
                record["statusMessage"] = status
                return record

            await self.book.change(task_id, note)

        progress.divert = progressed

        async def finish(result: ToolResult) -> dict[str, Any]:
            return await tools.finish(ctx, served, name, result, asker, pause, channel, answer)

        driver = asyncio.ensure_future(self._drive(task_id, call, abort, progress.close, finish))
        self._drivers.add(driver)
        driver.add_done_callback(self._drivers.discard)
        created = wire_task(record, self.settings)
        created["resultType"] = "task"
        return created

    async def _drive(
        self,
        task_id: str,
        call: asyncio.Future[ToolResult],
        abort: AbortSignal,
        close_progress: Callable[[], Awaitable[None]],
        finish: Callable[[ToolResult], Awaitable[dict[str, Any]]],
    ) -> None:
        """Renew the task's lease while its call runs, abort it when cancelled, keep its end."""
        every = min(self.settings.lease / 3, 1.0)
        lease = self.settings.lease
        try:
            while not call.done():
                await asyncio.wait({call}, timeout=every)
                if call.done():
                    break

                def renew(record: dict[str, Any]) -> dict[str, Any] | None:
                    if record["status"] in TERMINAL:
                        return None
                    record["lease"] = time.time() + lease
                    return record

                try:
                    record = await self.book.change(task_id, renew)
                except Exception:
                    logger.warning("a task's lease could not be renewed", exc_info=True)
                    continue
                if record is None or record["status"] in TERMINAL:
                    abort.abort(_CANCELLED)
            result = await call
            await close_progress()
            if self._closing:
                return  # aclose() has failed the task: the server stopped
            if result.is_error and result.code == "internal_error":
                error = {"code": types.INTERNAL_ERROR, "message": result.text}
                await self.book.finish(task_id, "failed", "error", error)
                return
            try:
                wire = await finish(result)
            except MCPError as exc:
                error = exc.error.model_dump(mode="json", by_alias=True, exclude_none=True)
                await self.book.finish(task_id, "failed", "error", error)
                return
            wire.pop("_meta", None)
            wire.pop("resultType", None)
            await self.book.finish(task_id, "completed", "result", wire)
        except asyncio.CancelledError:
            abort.abort(_STOPPING)
            raise
        except Exception:
            logger.exception("a task's call could not be kept")
            error = {"code": types.INTERNAL_ERROR, "message": "The task failed on the server."}
            with contextlib.suppress(Exception):
                await self.book.finish(task_id, "failed", "error", error)
        finally:
            self._running.pop(task_id, None)

    async def aclose(self) -> None:
        """Fail the tasks this worker runs, stop their calls, close the store.

        Each running task ends ``failed`` (-32603, "The server stopped before this task
        finished; call the tool again.") at once, rather than ``working`` until its lease
        runs out: its call runs in this process and can go on nowhere else. Its tool is
        aborted, and given `grace` seconds to end before its call is cancelled. A store
        that cannot be written within `grace` leaves the task to its lease, which fails it
        the same way. Safe to call twice; a server that serves again reopens the store.
        """
        self._closing = True
        with anyio.CancelScope(shield=True):
            running = list(self._running.items())
            if running:
                marks = [self.book.change(task_id, _stopped) for task_id, _ in running]
                try:
                    await asyncio.wait_for(
                        asyncio.gather(*marks, return_exceptions=True), self.grace
                    )
                except asyncio.TimeoutError:
                    logger.warning("the tasks still running were left to their lease")
                for abort, _call in self._running.values():
                    abort.abort(_STOPPING)
            drivers = set(self._drivers)
            if drivers:
                _, late = await asyncio.wait(drivers, timeout=self.grace)
                for driver in late:
                    driver.cancel()
                calls = [call for _task, (_abort, call) in running]
                for call in calls:
                    call.cancel()
                await asyncio.gather(*late, *calls, return_exceptions=True)
            await self.settings.store.close()

    # -- notifications/tasks ---------------------------------------------------------

    async def honor(self, ctx: ServerRequestContext[Any], task_ids: Sequence[Any]) -> list[str]:
        """The ids of a ``subscriptions/listen`` request that name the caller's tasks.

        Raises:
            MCPError: -32021: the client did not declare the extension.
        """
        if not declared(ctx, ctx.params):
            raise missing_extension()
        owner = _owner(ctx)
        honored: list[str] = []
        for task_id in dict.fromkeys(t for t in task_ids if isinstance(t, str)):
            with contextlib.suppress(MCPError):
                await self.book.read(task_id, owner)
                honored.append(task_id)
        return honored

    async def watch(
        self, ctx: ServerRequestContext[Any], task_ids: Sequence[str]
    ) -> AsyncGenerator[dict[str, Any], None]:
        """Each task's state as ``tasks/get`` has it, now and at each status change.

        The store is read every `TaskSettings.notify_interval` seconds (at once after a
        change this worker made): another worker's change is seen within that interval.
        A task is no longer watched once it ended, or expired.
        """
        owner = _owner(ctx)
        told: dict[str, tuple[Any, ...]] = {}
        left = list(task_ids)
        waker = self.book.waker()
        try:
            while left:
                waker.clear()
                for task_id in list(left):
                    try:
                        record = await self.book.read(task_id, owner)
                    except MCPError:
                        left.remove(task_id)  # expired meanwhile
                        continue
                    task = wire_task(record, self.settings)
                    if told.get(task_id) != _seen(task):
                        told[task_id] = _seen(task)
                        yield task
                    if task["status"] in TERMINAL:
                        left.remove(task_id)
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(waker.wait(), self.settings.notify_interval)
        finally:
            self.book.forget(waker)

    # -- tasks/* ---------------------------------------------------------------------

    def _check(self, ctx: ServerRequestContext[Any], params: TaskParams) -> None:
        if not declared(ctx, ctx.params):
            raise missing_extension()
        request = ctx.request
        headers = getattr(request, "headers", None)
        if headers is not None:
            named = headers.get("mcp-name")
            if named is not None and named.strip() != params.taskId:
                raise MCPError(
                    code=_HEADER_MISMATCH,
                    message="Header mismatch: Mcp-Name is not the request's taskId.",
                )

    async def get(self, ctx: ServerRequestContext[Any], params: TaskParams) -> dict[str, Any]:
        """``tasks/get``: the task, its result or error inlined once it ended.

        Raises:
            MCPError: -32021 without the extension; -32602 for a task not the caller's.
        """
        self._check(ctx, params)
        record = await self.book.read(params.taskId, _owner(ctx))
        task = wire_task(record, self.settings)
        task["resultType"] = "complete"
        return task

    async def update(
        self, ctx: ServerRequestContext[Any], params: UpdateTaskParams
    ) -> dict[str, Any]:
        """``tasks/update``: answers to the task's pending input requests (others ignored).

        Raises:
            MCPError: -32021 without the extension; -32602 for a task not the caller's.
        """
        self._check(ctx, params)
        await self.book.read(params.taskId, _owner(ctx))
        answers = {k: v for k, v in params.inputResponses.items() if isinstance(v, Mapping)}

        def answer(record: dict[str, Any]) -> dict[str, Any] | None:
            pending = record["inputRequests"]
            given = {k: dict(v) for k, v in answers.items() if k in pending}
            if not given or record["status"] in TERMINAL:
                return None
            for key, value in given.items():
                del pending[key]
                record["inputResponses"][key] = value
            if not pending:
                record["status"] = "working"
            return record

        await self.book.change(params.taskId, answer)
        return {"resultType": "complete"}

    async def cancel(self, ctx: ServerRequestContext[Any], params: TaskParams) -> dict[str, Any]:
        """``tasks/cancel``: a running task ends ``cancelled``; an ended one stays as it is.

        Raises:
            MCPError: -32021 without the extension; -32602 for a task not the caller's.
        """
        self._check(ctx, params)
        await self.book.read(params.taskId, _owner(ctx))

        def cancelled(record: dict[str, Any]) -> dict[str, Any] | None:
            if record["status"] in TERMINAL:
                return None
            record.update(status="cancelled", statusMessage=_CANCELLED, inputRequests={})
            return record

        await self.book.change(params.taskId, cancelled)
        running = self._running.get(params.taskId)
        if running is not None:
            running[0].abort(_CANCELLED)
        return {"resultType": "complete"}
