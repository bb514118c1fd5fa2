"""Approvals over MCP: a call the policy asks about is asked of the client's user.

A thinker served over MCP is bound with :func:`approver_for`'s approver. When a call
pauses for a person (the policy's ``ask``, or a deferred tool whose grant needs one,
decided at call time), the approver asks the :class:`Asker` of the ``tools/call``
request that made the call (a context variable, set around the call by ``_tools.py``):

- **2025-era protocols**, client declared ``elicitation`` and the request can carry a
  server request: an ``elicitation/create`` form with one yes/no field, sent within the
  ``tools/call`` request. ``accept`` with ``approve: true`` approves; decline, cancel,
  ``false`` or a failed elicitation is a "no".
- **2026-07-28**, client declared ``elicitation``: the call is stopped before the tool
  runs and the request answers an ``InputRequiredResult`` holding the same form and a
  request state (:data:`STATE`), which the SDK's :class:`RequestStateBoundary` seals
  to the request's method, tool name and arguments (and expiry, audience, principal).
  The client's retry carries the answer and the state; the boundary verifies the seal
  (another worker that shares the keys does too) and the call runs again with the
  answer given at once (:func:`answer_of`). An answer without a state this server
  sealed is not an answer.
- **A client with neither** is refused, as when nobody can be asked.

A call a ``run_code`` script makes pauses the script, not the request: on 2025-era
protocols the elicitation is sent while the sandbox waits at that call; on 2026-07-28
the script stops there (:class:`ScriptPause`), and the request state carries Monty's
snapshot of it, its output so far and its call count (:func:`script_state`), sealed as
any state is. The retry resumes the script from that snapshot, on whichever worker
verifies the seal, and the answer covers that one call: the script's next ask asks
again.

Whatever the way, the answer goes to ``thinker.resolve_approval``: a "yes" runs the
call, a "no" is the pipeline's 403 (``denied``); both are on the grant ledger with a
host's texts ("a person's decision"). A grant a person must approve before it is kept
(``request_tools`` in a session) is refused: the call that asked for it has returned
before anyone could answer; a tool reached at call time (``call_tool``, a search's
match) is asked about at each call instead.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Final

from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolpalette._agents.code_mode import PAUSE

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from toolpalette import Approval, Thinker
    from toolpalette._run.abort import AbortSignal

__all__ = [
    "ASKER",
    "INPUT_KEY",
    "STATE",
    "STATE_KEYS_ENV",
    "Asker",
    "ScriptPause",
    "resume_of",
    "script_state",
    "answer_of",
    "approver_for",
    "input_required",
    "read_state_keys",
    "state_boundary",
]

logger = logging.getLogger("toolpalette.mcp")

STATE: Final = "toolpalette.approval.v1"
"""The request state a 2026-07-28 approval carries (sealed by the SDK's boundary)."""
SCRIPT_STATE: Final = STATE + ":script:"
"""How the request state of a paused ``run_code`` script starts (its snapshot follows)."""
INPUT_KEY: Final = "approval"
"""The key of the approval form among an ``InputRequiredResult``'s input requests."""
STATE_KEYS_ENV: Final = "TOOLPALETTE_STATE_KEYS"
"""The environment variable ``toolpalette serve`` reads request-state keys from."""
_STOPPED: Final = "A person must approve this call; the client was asked."
"""The reason a call stopped to ask a 2026-era client (never shown: the answer is the
``InputRequiredResult``)."""
_SHOWN_INPUT: Final = 1000
"""The most characters of a call's input the approval form shows."""
_FORM: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "approve": {
            "type": "boolean",
            "title": "Approve",
            "description": "Run this tool call.",
            "default": False,
        }
    },
    "required": ["approve"],
}

ASKER: ContextVar[Asker | None] = ContextVar("toolpalette_mcp_asker", default=None)
"""The asker of the ``tools/call`` request whose call is running (None: nobody)."""


class Asker:
    """How one ``tools/call`` request asks its client's user to approve its call.

    Args:
        ctx: the request.
        abort: the call's abort signal (a 2026-era ask stops the call with it).
        answer: the user's answer, already given (a 2026-era retry), or None.
    """

    __slots__ = ("_abort", "_ctx", "answer", "input_required")

    def __init__(
        self, ctx: ServerRequestContext[Any], abort: AbortSignal, answer: bool | None
    ) -> None:
        self._ctx = ctx
        self._abort = abort
        self.answer = answer
        self.input_required: dict[str, Any] | None = None
        """Set when the call stopped to ask: the ``input_required`` result's request."""

    def ask(self, thinker: Thinker, approval: Approval) -> Awaitable[None] | None:
        """Ask about ``approval``: answer it now, or return the awaitable that will.

        An answer the request carried answers one ask: the next one asks again.
        """
        answer, self.answer = self.answer, None
        if answer is not None:
            _resolve(thinker, approval, answer)
            return None
        ctx = self._ctx
        if not _can_elicit(ctx):
            _resolve(thinker, approval, False)
            return None
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            # Stop the call before the tool runs; the request answers input_required.
            self.input_required = _elicit_request(approval)
            pause = PAUSE.get()
            if isinstance(pause, ScriptPause) and pause.inner is not None:
                pause.wanted = True  # a script's call: the script stops, to resume later
                pause.inner.abort(_STOPPED)
            else:
                self._abort.abort(_STOPPED)
            return None
        return _elicit(ctx, thinker, approval)


class ScriptPause:
    """Where a ``run_code`` script served on 2026-07-28 stops to ask (``code_mode.PAUSE``).

    ``inner`` is the abort signal of the script's call in flight; ``wanted`` is set when
    that call must stop to ask, and ``paused`` is then set by the script: its call id
    and what resumes it.
    """

    __slots__ = ("inner", "paused", "wanted")

    def __init__(self) -> None:
        self.inner: AbortSignal | None = None
        self.wanted = False
        self.paused: tuple[str, Any] | None = None


def script_state(pause: ScriptPause) -> str | None:
    """The request state of a paused script: its snapshot, output and count, as text."""
    if pause.paused is None:
        return None
    call_id, paused = pause.paused
    payload = {
        "call_id": call_id,
        "calls": paused.calls,
        "printed": paused.printed,
        "dump": base64.b64encode(paused.dump).decode("ascii"),
    }
    return SCRIPT_STATE + json.dumps(payload, separators=(",", ":"))


def resume_of(ctx: ServerRequestContext[Any], params: Mapping[str, Any]) -> Any:
    """The paused script a verified 2026-era retry resumes (a ``code_mode.Resume``), or None."""
    state = params.get("requestState")
    if not isinstance(state, str) or not state.startswith(SCRIPT_STATE):
        return None
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return None
    from toolpalette._agents.code_mode import Resume
    from toolpalette._agents.sandbox import Paused

    try:
        data = json.loads(state[len(SCRIPT_STATE) :])
        paused = Paused(
            base64.b64decode(data["dump"], validate=True), str(data["printed"]), int(data["calls"])
        )
        return Resume(paused, str(data["call_id"]))
    except (ValueError, KeyError, TypeError, binascii.Error):
        return (
            None  # sealed by this server, so it cannot happen; an unreadable state resumes nothing
        )


def approver_for(thinker: Callable[[], Thinker | None]) -> Callable[[Approval], Any]:
    """The approver a served thinker is bound with (``thinker`` returns it once bound)."""

    def approve(approval: Approval) -> Awaitable[None] | None:
        bound = thinker()
        if bound is None:  # cannot happen after bind; nothing to resolve
            return None
        asker = ASKER.get() if approval.kind == "call" else None
        if asker is None:
            # A grant to keep, or a call outside any request: nobody can answer in time.
            _resolve(bound, approval, False)
            return None
        return asker.ask(bound, approval)

    return approve


def answer_of(ctx: ServerRequestContext[Any], params: Mapping[str, Any]) -> bool | None:
    """The user's answer a 2026-era retry carries, or None when it carries none.

    Only a retry whose request state this server sealed (the boundary has verified
    it and put back :data:`STATE`) answers; accept with ``approve: true`` is a yes,
    anything else a no.
    """
    state = params.get("requestState")
    ours = state == STATE or (isinstance(state, str) and state.startswith(SCRIPT_STATE))
    if not ours or ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return None
    responses = params.get("inputResponses")
    response = responses.get(INPUT_KEY) if isinstance(responses, Mapping) else None
    if not isinstance(response, Mapping):
        return False
    content = response.get("content")
    return (
        response.get("action") == "accept"
        and isinstance(content, Mapping)
        and content.get("approve") is True
    )


def input_required(request: dict[str, Any], state: str | None = None) -> dict[str, Any]:
    """The ``InputRequiredResult`` (wire form) asking ``request`` of the client.

    ``state`` is a paused script's (:func:`script_state`); else the plain approval's.
    """
    return {
        "resultType": "input_required",
        "inputRequests": {INPUT_KEY: request},
        "requestState": state if state is not None else STATE,
    }


def state_boundary(keys: Sequence[bytes | str] | None, audience: str) -> RequestStateBoundary:
    """The SDK's middleware sealing and verifying request state, under ``keys``.

    ``keys[0]`` seals and every key verifies (rotation); without keys a key is made
    for this process alone, which suits one worker.

    Raises:
        ValueError: a key is shorter than 32 bytes, or two keys are the same.
    """
    if keys is None:
        security = RequestStateSecurity.ephemeral()
    else:
        if not keys:
            raise ValueError("state_keys must hold at least one key")
        security = RequestStateSecurity(keys=list(keys))
    return RequestStateBoundary(security, default_audience=audience)


def read_state_keys(path: str | None) -> list[str] | None:
    """The request-state keys in the file at ``path``, else in :data:`STATE_KEYS_ENV`.

    One key a line (blank lines and ``#`` comments skipped), or keys separated by
    commas or blanks in the variable; None when neither is given.

    Raises:
        OSError: the file cannot be read.
        ValueError: it (or the variable) holds no key.
    """
    if path is not None:
        with open(path, encoding="utf-8") as stream:
            lines = [line.strip() for line in stream]
        keys = [line for line in lines if line and not line.startswith("#")]
        where = f"the state key file {path}"
    else:
        text = os.environ.get(STATE_KEYS_ENV)
        if text is None:
            return None
        keys = text.replace(",", " ").split()
        where = STATE_KEYS_ENV
    if not keys:
        raise ValueError(f"{where} holds no key")
    return keys


# -- inside ---------------------------------------------------------------------------


def _can_elicit(ctx: ServerRequestContext[Any]) -> bool:
    """Whether the client declared form elicitation, and this request can ask it."""
    declared = ctx.session.client_capabilities
    elicitation = declared.elicitation if declared is not None else None
    if elicitation is None or (elicitation.form is None and elicitation.url is not None):
        return False  # none, or only URL elicitation (an empty declaration means form)
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS or ctx.session.can_send_request


def _message(approval: Approval) -> str:
    text = f"Approve this call of the tool '{approval.name}'?"
    if approval.input is None:
        return text
    shown = json.dumps(approval.input, ensure_ascii=False, default=str)
    if len(shown) > _SHOWN_INPUT:
        shown = shown[: _SHOWN_INPUT - 3] + "..."
    return f"{text}\nInput: {shown}"


def _elicit_request(approval: Approval) -> dict[str, Any]:
    """The ``elicitation/create`` request (wire form) asking about ``approval``."""
    params = {"mode": "form", "message": _message(approval), "requestedSchema": _FORM}
    return {"method": "elicitation/create", "params": params}


async def _elicit(ctx: ServerRequestContext[Any], thinker: Thinker, approval: Approval) -> None:
    """Ask through ``elicitation/create`` within the request; resolve with the answer."""
    approved = False
    try:
        result = await ctx.session.elicit_form(
            _message(approval), _FORM, related_request_id=ctx.request_id
        )
    except Exception:  # the client failed or refused to ask: that is a "no"
        logger.info("the approval of %s could not be elicited", approval.name, exc_info=True)
    else:
        content = result.content or {}
        approved = result.action == "accept" and content.get("approve") is True
    _resolve(thinker, approval, approved)


def _resolve(thinker: Thinker, approval: Approval, approve: bool) -> None:
    try:
        thinker.resolve_approval(approval.token, approve=approve)
    except KeyError:  # withdrawn meanwhile: the call ended (aborted, cancelled)
        logger.debug("the approval of %s was no longer pending", approval.name)
