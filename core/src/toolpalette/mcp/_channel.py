"""A tool's log lines, questions and progress, sent to the MCP client of the call's request.

2025 era: ``notifications/message`` and the client's own requests; 2026-07-28: the
request's log level, and questions as ``input_required`` with sealed state (re-run).
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
import warnings
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolpalette import AbortSignal, ClientRequestError, Elicited, Root, Sampled
from toolpalette._tools.channel import LOG_LEVELS, ClientChannel
from toolpalette.mcp._sessions import connection_state

if TYPE_CHECKING:
    from toolpalette.mcp._approvals import Asker

__all__ = [
    "INPUT_STATE",
    "LEVEL_KEY",
    "McpChannel",
    "Progress",
    "parse_answer",
    "question_params",
    "resumed_from",
    "set_level",
]

logger = logging.getLogger("toolpalette.mcp")

INPUT_STATE: Final = "toolpalette.input.v1:"
"""The prefix of the request state a 2026-07-28 tool's question carries (then JSON)."""
LEVEL_KEY: Final = "toolpalette.log_level"
"""Where a 2025-era session keeps the level its ``logging/setLevel`` asked for."""
_STOPPED: Final = "The tool asked the client; the call is re-run with the answer."
_CAPABILITY: Final = {"elicitation": "elicitation", "sampling": "sampling", "roots": "roots"}
_METHOD: Final = {
    "elicitation": "elicitation/create",
    "sampling": "sampling/createMessage",
    "roots": "roots/list",
}
_SAMPLING_OPTIONS: Final = {
    "max_tokens": "maxTokens",
    "system_prompt": "systemPrompt",
    "temperature": "temperature",
    "stop_sequences": "stopSequences",
    "model_preferences": "modelPreferences",
    "include_context": "includeContext",
    "metadata": "metadata",
}

Line = tuple[str, str, Any]
T = TypeVar("T")


class McpChannel:
    """The `ClientChannel` of one ``tools/call`` request.

    Args:
        ctx: the request.
        abort: the call's abort signal (a 2026-era question stops the call with it).
        answers: the answers a 2026-era retry carries, by question key.
        tool: the tool's name (the log lines' ``logger``).
        asker: how the request asks its user to approve a call that waits for a person
            (``mcp/_approvals.py``), or None.
    """

    __slots__ = (
        "_abort",
        "_asked",
        "_ctx",
        "_least",
        "_loop",
        "_modern",
        "_queue",
        "_sender",
        "_tool",
        "abort_signal",
        "answers",
        "asker",
        "divert",
        "input_required",
        "missing",
    )

    def __init__(
        self,
        ctx: ServerRequestContext[Any],
        abort: AbortSignal,
        answers: Mapping[str, Any],
        tool: str,
        asker: Asker | None = None,
    ) -> None:
        self._ctx = ctx
        self._abort = abort
        self.asker = asker
        """The request's asker: an `Approval` naming this channel reaches it."""
        self.abort_signal = abort
        """The signal a 2026-era question fires to stop what asked it."""
        self.answers: dict[str, Any] = dict(answers) if answers else {}
        """Every answer given so far, by key (kept in the state of the next question)."""
        self._tool = tool
        self._modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        self._loop = asyncio.get_running_loop()
        self._asked: dict[str, int] = {}
        self._queue: asyncio.Queue[Line | None] | None = None
        self._sender: asyncio.Future[None] | None = None
        self._least = _least_level(ctx) if not self._modern else 0
        self.input_required: dict[str, Any] | None = None
        """Set when the call stopped to ask (2026-07-28): the questions, by key."""
        self.missing: str | None = None
        """The capability a 2026-era client did not declare that the tool asked for."""
        self.divert: ClientChannel | None = None
        """Where the tool's questions go instead of the request (the call became a task)."""

    # -- log ------------------------------------------------------------------------

    def log(self, level: str, message: str, data: Any) -> None:
        if self.divert is not None:
            self.divert.log(level, message, data)
            return
        if LOG_LEVELS.index(level) < self._least:
            return
        self._loop.call_soon_threadsafe(self._put, (level, message, data))

    def _put(self, line: Line) -> None:
        if self._queue is None:
            self._queue = asyncio.Queue()
            self._sender = asyncio.ensure_future(self._send(self._queue))
        self._queue.put_nowait(line)

    async def _send(self, queue: asyncio.Queue[Line | None]) -> None:
        session = self._ctx.session
        while True:
            line = await queue.get()
            if line is None:
                return
            level, message, data = line
            payload = message if data is None else {"message": message, "data": data}
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", MCPDeprecationWarning)
                    sending = session.send_log_message(
                        cast("types.LoggingLevel", level),
                        payload,
                        logger=self._tool,
                        related_request_id=self._ctx.request_id,
                    )
                await sending
            except Exception:  # a closed stream: the result will not arrive either
                logger.debug("a log notification could not be sent", exc_info=True)

    @property
    def sending(self) -> bool:
        """Whether log lines were queued (then `close()` must be awaited)."""
        return self._queue is not None

    async def close(self) -> None:
        """Send the log lines still queued, before the call's result goes out."""
        if self._queue is not None and self._sender is not None:
            with anyio.CancelScope(shield=True):
                self._queue.put_nowait(None)
                await self._sender

    # -- questions -------------------------------------------------------------------

    async def elicit(
        self, message: str, schema: Mapping[str, Any], *, key: str | None = None
    ) -> Elicited:
        if self.divert is not None:
            return await self.divert.elicit(message, schema, key=key)
        params = {"mode": "form", "message": message, "requestedSchema": dict(schema)}
        return await self._ask("elicitation", params, key, _elicited)

    async def sample(
        self,
        messages: Sequence[Mapping[str, Any]],
        options: Mapping[str, Any],
        *,
        key: str | None = None,
    ) -> Sampled:
        if self.divert is not None:
            return await self.divert.sample(messages, options, key=key)
        params: dict[str, Any] = {"messages": [dict(m) for m in messages]}
        for name, value in options.items():
            params[_SAMPLING_OPTIONS.get(name, name)] = value
        return await self._ask("sampling", params, key, _sampled)

    async def roots(self, *, key: str | None = None) -> list[Root]:
        if self.divert is not None:
            return await self.divert.roots(key=key)
        return await self._ask("roots", {}, key, _roots)

    async def _ask(
        self,
        feature: str,
        params: dict[str, Any],
        key: str | None,
        parse: Callable[[Mapping[str, Any]], T],
    ) -> T:
        """The client's answer to one question of ``feature``, parsed.

        Raises:
            ClientRequestError: the client did not declare the capability, cannot be
                asked during this request, or failed to answer (or answered nonsense).
        """
        if not self._can_ask(feature):
            if self._modern:
                self.missing = feature
            raise ClientRequestError(feature=feature, reason="unsupported")
        if self._modern:
            return await self._ask_by_retry(feature, params, key, parse)
        method = _METHOD[feature]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                answer = await self._request(method, params)
        except (ClientRequestError, asyncio.CancelledError):
            raise
        except Exception:  # the client refused or failed; nothing it said is logged
            logger.info("the client did not answer a tool's %s request", feature)
            raise ClientRequestError(feature=feature, reason="failed") from None
        return parse(answer)

    async def _request(self, method: str, params: dict[str, Any]) -> Mapping[str, Any]:
        """Send one request to the client within the call's request; its wire result."""
        session = self._ctx.session
        related = self._ctx.request_id
        if method == "elicitation/create":
            result: Any = await session.elicit_form(
                params["message"], params["requestedSchema"], related_request_id=related
            )
        elif method == "roots/list":
            result = await session.send_request(
                types.ListRootsRequest(),
                types.ListRootsResult,
                metadata=_related(related),
            )
        else:
            request = types.CreateMessageRequest(
                params=types.CreateMessageRequestParams.model_validate(params)
            )
            result = await session.send_request(
                request, types.CreateMessageResult, metadata=_related(related)
            )
        dumped: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        return dumped

    async def _ask_by_retry(
        self,
        feature: str,
        params: dict[str, Any],
        key: str | None,
        parse: Callable[[Mapping[str, Any]], T],
    ) -> T:
        """2026-07-28: the retry's answer, or stop the call and ask for it.

        An answer that does not parse is asked again. Questions asked in the same step
        (``asyncio.gather``) are all asked: the call stops one loop turn later.
        """
        if key is None:
            count = self._asked[feature] = self._asked.get(feature, 0) + 1
            key = f"{feature}-{count}"
        answer = self.answers.get(key)
        if isinstance(answer, Mapping):
            try:
                return parse(answer)
            except ClientRequestError:
                del self.answers[key]  # nonsense: ask again
        if self.input_required is None:
            self.input_required = {}
            loop = asyncio.get_running_loop()
            loop.call_soon(loop.call_soon, self._abort.abort, _STOPPED)
        self.input_required[key] = {"method": _METHOD[feature], "params": params}
        await asyncio.get_running_loop().create_future()  # the abort cancels the tool
        raise AssertionError("unreachable")  # pragma: no cover

    def _can_ask(self, feature: str) -> bool:
        declared = self._ctx.session.client_capabilities
        capability = getattr(declared, _CAPABILITY[feature], None) if declared else None
        if capability is None:
            return False
        if feature == "elicitation" and capability.form is None and capability.url is not None:
            return False  # URL elicitation only (an empty declaration means form)
        return self._modern or bool(self._ctx.session.can_send_request)

    def missing_capability(self) -> MCPError:
        """-32021: the tool needed a capability the 2026-era client did not declare."""
        feature = self.missing or "elicitation"
        return MCPError(
            code=types.MISSING_REQUIRED_CLIENT_CAPABILITY,
            message=f"Missing required client capability: {feature}",
            data={"requiredCapabilities": {feature: {}}},
        )

    def state(self, approved: bool | None) -> str:
        """The request state of the question asked: the answers so far, sealed later."""
        asked = list(self.input_required or ())
        saved = {
            "nonce": uuid.uuid4().hex,  # one answer per state
            "answers": self.answers,
            "asked": asked,
            "approved": approved,
        }
        return INPUT_STATE + json.dumps(saved, separators=(",", ":"))


def _elicited(answer: Mapping[str, Any]) -> Elicited:
    action = answer.get("action")
    content = answer.get("content")
    if action not in ("accept", "decline", "cancel") or (
        action == "accept" and not isinstance(content, Mapping)
    ):
        raise ClientRequestError(feature="elicitation", reason="failed")
    return Elicited(action, dict(content) if isinstance(content, Mapping) else None)


def _sampled(answer: Mapping[str, Any]) -> Sampled:
    content = answer.get("content")
    if isinstance(content, list) and len(content) == 1:
        content = content[0]
    if not isinstance(content, Mapping) or not isinstance(content.get("type"), str):
        raise ClientRequestError(feature="sampling", reason="failed")
    model, stop = answer.get("model"), answer.get("stopReason")
    return Sampled(
        dict(content),
        role=str(answer.get("role", "assistant")),
        model=model if isinstance(model, str) else None,
        stop_reason=stop if isinstance(stop, str) else None,
    )


def _roots(answer: Mapping[str, Any]) -> list[Root]:
    listed = answer.get("roots")
    if not isinstance(listed, list):
        raise ClientRequestError(feature="roots", reason="failed")
    roots = []
    for item in listed:
        if not isinstance(item, Mapping) or not isinstance(item.get("uri"), str):
            raise ClientRequestError(feature="roots", reason="failed")
        name, meta = item.get("name"), item.get("_meta")
        roots.append(
            Root(
                item["uri"],
                name if isinstance(name, str) else None,
                dict(meta) if isinstance(meta, Mapping) else {},
            )
        )
    return roots


def resumed_from(
    ctx: ServerRequestContext[Any], params: Mapping[str, Any]
) -> tuple[bool | None, dict[str, Any]]:
    """What a 2026-era retry of a tool's question carries: the approval, the answers.

    Only state this server sealed counts (the boundary verified it); the answers are
    the state's and the responses to the questions it asked.
    """
    state = params.get("requestState")
    if (
        state is None
        or not isinstance(state, str)
        or not state.startswith(INPUT_STATE)
        or ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS
    ):
        return None, {}
    try:
        saved = json.loads(state[len(INPUT_STATE) :])
    except ValueError:
        return None, {}
    answers = dict(saved.get("answers") or {})
    responses = params.get("inputResponses")
    if isinstance(responses, Mapping):
        for key in saved.get("asked") or ():
            if key in responses:
                answers[key] = responses[key]
    approved = saved.get("approved")
    return (approved if isinstance(approved, bool) else None), answers


async def set_level(
    ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams
) -> types.EmptyResult:
    """A 2025-era ``logging/setLevel``: the session's tools log at that level and above."""
    state = connection_state(ctx)
    if state is not None:
        state[LEVEL_KEY] = LOG_LEVELS.index(params.level)
    return types.EmptyResult()


def _least_level(ctx: ServerRequestContext[Any]) -> int:
    state = connection_state(ctx)
    found = state.get(LEVEL_KEY, 0) if state is not None else 0
    return found if isinstance(found, int) else 0


def _related(request_id: Any) -> Any:
    from mcp.shared.message import ServerMessageMetadata

    return ServerMessageMetadata(related_request_id=request_id)


def question_params(feature: str, *args: Any) -> tuple[str, dict[str, Any]]:
    """The method and params of one question of ``feature``, as the client is asked it."""
    if feature == "elicitation":
        message, schema = args
        return _METHOD[feature], {
            "mode": "form",
            "message": message,
            "requestedSchema": dict(schema),
        }
    if feature == "sampling":
        messages, options = args
        params: dict[str, Any] = {"messages": [dict(m) for m in messages]}
        for name, value in options.items():
            params[_SAMPLING_OPTIONS.get(name, name)] = value
        return _METHOD[feature], params
    return _METHOD[feature], {}


def parse_answer(feature: str, answer: Mapping[str, Any]) -> Any:
    """The client's answer to a question of ``feature``, parsed.

    Raises:
        ClientRequestError: the answer is not of that question's shape.
    """
    parse = {"elicitation": _elicited, "sampling": _sampled, "roots": _roots}[feature]
    return parse(answer)


# -- progress ----------------------------------------------------------------------------


class Progress:
    """Forwards a call's progress reports, in order, as MCP progress notifications.

    Reports may come from a worker thread (a sync tool): they are queued onto the
    event loop and sent by one task, started at the first report; `close()` sends
    what is left before the call's result goes out. The SDK drops them when the
    client asked for no progress. Once the call became a task its request is answered,
    so its reports go to `divert` instead (the task's status message), latest only.
    """

    __slots__ = ("_loop", "_queue", "_sender", "_session", "divert")

    def __init__(self, ctx: ServerRequestContext[Any]) -> None:
        self._session = ctx.session
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[tuple[float, float | None, str | None] | None] | None = None
        self._sender: asyncio.Future[None] | None = None
        self.divert: Callable[[float, float | None, str | None], Awaitable[None]] | None = None
        """Where reports go once the call became a task (its answer is sent: no stream)."""

    def report(self, done: float, total: float | None, message: str | None) -> None:
        self._loop.call_soon_threadsafe(self._put, (done, total, message))

    def _put(self, item: tuple[float, float | None, str | None]) -> None:
        if self._queue is None:
            self._queue = asyncio.Queue()
            self._sender = asyncio.ensure_future(self._send(self._queue))
        self._queue.put_nowait(item)

    async def _send(
        self, queue: asyncio.Queue[tuple[float, float | None, str | None] | None]
    ) -> None:
        while True:
            item = await queue.get()
            if item is None:
                return
            divert = self.divert
            if divert is not None:
                ended = False
                while not queue.empty():  # only the latest report matters to a task's status
                    later = queue.get_nowait()
                    if later is None:
                        ended = True
                        break
                    item = later
                try:
                    await divert(*item)
                except Exception:
                    logger.debug("a task's progress could not be kept", exc_info=True)
                if ended:
                    return
                continue
            try:
                await self._session.report_progress(*item)
            except Exception:  # a closed stream: the result will not arrive either
                logger.debug("a progress notification could not be sent", exc_info=True)

    async def close(self) -> None:
        """Send the reports still queued, before the call's result goes out."""
        # Reports sent before the tool returned were queued on the loop before its result
        # resumed this call, so the queue holds every one of them by now.
        if self._queue is not None and self._sender is not None:
            with anyio.CancelScope(shield=True):
                self._queue.put_nowait(None)
                await self._sender
