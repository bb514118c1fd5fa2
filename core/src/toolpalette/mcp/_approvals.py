"""Approvals over MCP: a call the policy asks about is asked of the client's user."""

from __future__ import annotations

import base64
import binascii
import collections
import hashlib
import json
import logging
import os
import threading
import time
import unicodedata
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from toolpalette import Approval, Thinker
    from toolpalette._run.abort import AbortSignal

__all__ = [
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

_STOPPED: Final = "A person must approve this call; the client was asked."
"""The reason a script's call stopped to ask a 2026-era client (never shown: the
answer is the ``InputRequiredResult``)."""
STATE: Final = "toolpalette.approval.v1"
"""The request state a 2026-07-28 approval carries (sealed by the SDK's boundary)."""
SCRIPT_STATE: Final = STATE + ":script:"
_OURS: Final = "toolpalette."
"""What every request state this server seals starts with."""
"""How the request state of a paused ``run_code`` script starts (its snapshot follows)."""
INPUT_KEY: Final = "approval"
"""The key of the approval form among an ``InputRequiredResult``'s input requests."""
STATE_KEYS_ENV: Final = "TOOLPALETTE_STATE_KEYS"
"""The environment variable ``toolpalette serve`` reads request-state keys from."""
ASKED: Final = "asked the client's user; the answer comes with the client's retry"
"""Why a call stopped to ask a 2026-era client: on the record (the client is answered
the ``InputRequiredResult``, never this text)."""
SHOWN_VALUE: Final = 240
"""The most characters of one argument (or name) the approval form shows: a longer one
shows its start and end, and how many characters it has and how many are not shown."""
FORM_LIMIT: Final = 8000
"""The most characters an approval form's text may have: past it the call is refused
(and recorded so) rather than shown in part."""
STATE_TTL: Final = 600.0
"""Seconds a sealed approval state is good for (the SDK's default), and so how long this
server remembers that one was answered."""
_ANSWERED_KEPT: Final = 65_536
"""The most answered approval states a server remembers (oldest forgotten first)."""
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


class Asker:
    """How one ``tools/call`` request asks its client's user to approve its call.

    Args:
        ctx: the request.
        abort: the call's abort signal (a 2026-era ask stops the call with it).
        answer: the user's answer, already given (a 2026-era retry), or None.
        pause: where a ``run_code`` script the request runs stops to ask (2026-07-28
            only), or None.
    """

    __slots__ = ("_abort", "_ctx", "_pause", "answer", "input_required")

    def __init__(
        self,
        ctx: ServerRequestContext[Any],
        abort: AbortSignal,
        answer: bool | None,
        pause: ScriptPause | None = None,
    ) -> None:
        self._ctx = ctx
        self._abort = abort
        self._pause = pause
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
        message = approval_text(approval)
        if message is None:
            _resolve(thinker, approval, False, unasked=_too_large(approval))
            return None
        ctx = self._ctx
        if not _can_elicit(ctx):
            _resolve(thinker, approval, False, unasked=_cannot_ask(ctx, approval))
            return None
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            # Stop the call before the tool runs; the request answers input_required.
            self.input_required = _elicit_request(message)
            pause = self._pause
            if pause is not None and pause.inner is not None:
                pause.wanted = True  # a script's call: the script stops, to resume later
                pause.inner.abort(_STOPPED)
            else:
                _resolve(thinker, approval, False, unasked=ASKED)
            return None
        return _elicit(ctx, thinker, approval, message)


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
        "nonce": uuid.uuid4().hex,  # one answer per state, as a plain approval's
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
        # The request's asker comes with the call: on the channel its approval names.
        channel = approval.channel if approval.kind == "call" else None
        asker = getattr(channel, "asker", None)  # an McpChannel's (mcp/_channel.py)
        if not isinstance(asker, Asker):
            # A grant to keep, or a call outside any request: nobody can answer in time.
            _resolve(bound, approval, False)
            return None
        return asker.ask(bound, approval)

    return approve


class Answered:
    """The sealed approval states this server has taken an answer from (one use each).

    A state is good until it expires (`STATE_TTL`); one seen again before then
    is a replay, refused without a record. Kept per process: a deployment with several
    workers can see a state answered once in each.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: collections.OrderedDict[str, float] = collections.OrderedDict()

    def first(self, nonce: str) -> bool:
        """Whether ``nonce``'s state is answered for the first time (and remember it)."""
        now = time.monotonic()
        with self._lock:
            while self._seen and (
                len(self._seen) >= _ANSWERED_KEPT or next(iter(self._seen.values())) < now
            ):
                self._seen.popitem(last=False)
            if nonce in self._seen:
                return False
            self._seen[nonce] = now + STATE_TTL
            return True


def state_nonce(params: Mapping[str, Any]) -> str | None:
    """What identifies the sealed state a 2026-era retry carries (verified), or None.

    Every state this server seals (an approval's, a paused script's, a tool's questions)
    holds a nonce of its own, so its digest names it: one answer per state.
    """
    state = params.get("requestState")
    if isinstance(state, str) and state.startswith(_OURS):
        return hashlib.sha256(state.encode("utf-8", "surrogatepass")).hexdigest()
    return None


def answer_of(ctx: ServerRequestContext[Any], params: Mapping[str, Any]) -> bool | None:
    """The user's answer a 2026-era retry carries, or None when it carries none.

    Only a retry whose request state this server sealed (the boundary has verified
    it and put back `STATE` and its nonce) answers; accept with
    ``approve: true`` is a yes, anything else a no.
    """
    if state_nonce(params) is None or ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
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

    ``state`` is a paused script's (`script_state()`); else the plain approval's.
    """
    return {
        "resultType": "input_required",
        "inputRequests": {INPUT_KEY: request},
        # a paused script's own state, or a plain approval's: one answer per state
        "requestState": state if state is not None else f"{STATE}:{uuid.uuid4().hex}",
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
    """The request-state keys in the file at ``path``, else in `STATE_KEYS_ENV`.

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


def approval_text(approval: Approval) -> str | None:
    """The text a person is shown to approve ``approval``; None when too large to show.

    Every argument is shown, by name in sorted order, one a line, its value as JSON;
    a name or value longer than `SHOWN_VALUE` shows its start and its end around
    a note of its length (never cut off whole). Characters that could hide or reorder
    text (controls, format characters such as bidirectional overrides) are escaped.
    None when the text would pass `FORM_LIMIT` characters.
    """
    text = f"Approve this call of the tool '{approval.name}'?"
    value = approval.input
    if value is None:
        return text
    lines = [f"  {_shown(str(k))}: {_shown(_json(value[k]))}" for k in sorted(value, key=str)]
    text += "\nInput:" + ("\n" + "\n".join(lines) if lines else " {}")
    return text if len(text) <= FORM_LIMIT else None


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)


def _shown(text: str) -> str:
    """``text`` escaped where it could hide text, and elided in its middle if long."""
    text = "".join(f"\\u{ord(c):04x}" if unicodedata.category(c) in _HIDING else c for c in text)
    if len(text) <= SHOWN_VALUE:
        return text
    keep = (SHOWN_VALUE - 60) // 2
    hidden = len(text) - 2 * keep
    return f"{text[:keep]} …[{len(text):,} characters, {hidden:,} not shown]… {text[-keep:]}"


_HIDING: Final = frozenset({"Cc", "Cf", "Co", "Cs", "Zl", "Zp", "Cn"})
"""The Unicode categories escaped in an approval form: controls, format characters
(bidirectional overrides, zero-width joiners), private, unassigned, line separators."""


def _too_large(approval: Approval) -> str:
    return (
        f"The call of '{approval.name}' needs a person's approval, and its input is too "
        f"large to show a person whole (the form shows at most {FORM_LIMIT:,} characters)."
    )


def _cannot_ask(ctx: ServerRequestContext[Any], approval: Approval) -> str:
    """Why no person could be asked about a call on ``ctx``'s connection."""
    why = f"The call of '{approval.name}' needs a person's approval, and none could be asked"
    declared = ctx.session.client_capabilities
    modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS  # any connection can ask
    if modern or (declared is not None and declared.elicitation is None):
        return f"{why}: the client declared no elicitation (form)."
    return (
        f"{why} on this connection: a 2025-era client can be asked only over a stateful "
        "session (serve without --stateless, one worker per session); the 2026-07-28 "
        "protocol asks on any connection."
    )


def _elicit_request(message: str) -> dict[str, Any]:
    """The ``elicitation/create`` request (wire form) asking ``message``."""
    params = {"mode": "form", "message": message, "requestedSchema": _FORM}
    return {"method": "elicitation/create", "params": params}


async def _elicit(
    ctx: ServerRequestContext[Any], thinker: Thinker, approval: Approval, message: str
) -> None:
    """Ask through ``elicitation/create`` within the request; resolve with the answer."""
    approved = False
    try:
        result = await ctx.session.elicit_form(message, _FORM, related_request_id=ctx.request_id)
    except Exception:  # the client failed or refused to ask: that is a "no"
        logger.info("the approval of %s could not be elicited", approval.name, exc_info=True)
    else:
        content = result.content or {}
        approved = result.action == "accept" and content.get("approve") is True
    _resolve(thinker, approval, approved)


def _resolve(
    thinker: Thinker, approval: Approval, approve: bool, *, unasked: str | None = None
) -> None:
    try:
        thinker.resolve_approval(approval.token, approve=approve, unasked=unasked)
    except KeyError:  # withdrawn meanwhile: the call ended (aborted, cancelled)
        logger.debug("the approval of %s was no longer pending", approval.name)
