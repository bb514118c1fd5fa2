"""What the model reads: failure texts, exception shaping, and output rendering under a cap."""

from __future__ import annotations

import builtins
import importlib
import json
import re
import types
from typing import TYPE_CHECKING, Any, Final

from toolpalette._run import running as _running
from toolpalette._run.call import Refusal, refuse
from toolpalette._run.workers import PoolBusy
from toolpalette._tools.result import (
    CONTENT_TYPES,
    RichContent,
    ToolResult,
    is_wrapped,
    rich_content,
)
from toolpalette._tools.tool import TOOL_NAME
from toolpalette.errors import InvalidInputError, ToolError, ToolNotFoundError

if TYPE_CHECKING:
    from toolpalette._tools.provider import ToolProvider

__all__ = [
    "MAX_MESSAGE",
    "aborted",
    "failure",
    "name_label",
    "overran",
    "refused_input",
    "render_output",
    "run_refusal",
    "shape_exception",
    "unavailable_text",
]

MAX_MESSAGE: Final = 2000
"""A ToolError's user message is cut to this many characters (it is a message, not data)."""
_CODE: Final = re.compile(r"^[A-Za-z0-9_.-]{1,64}\Z")
_PLAIN: Final = frozenset({str, int, float, bool, type(None), dict})
_MAYBE_RICH: Final = (*CONTENT_TYPES, list, tuple)
_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _not_json(value: object) -> object:
    raise TypeError(f"{type(value).__name__} is not JSON")


def _c_encoder() -> Any:
    """The C encoder behind ``_ENCODER``, built once (``encode`` builds one per call).

    Kept because it is measurably cheaper on the hot path: a small dict output encodes
    in about half the time of ``JSONEncoder.encode`` (0.9 against 1.8 microseconds on
    the 2-core reference machine), a seventh of the whole pipeline's overhead. Without
    a markers dict a cycle ends in RecursionError rather than ValueError; both are
    refusals.
    """
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - CPython always has it
        return None
    return make(
        None, _not_json, json.encoder.encode_basestring, None, ":", ",", False, False, False
    )


_C_ENCODE: Final = _c_encoder()


def _to_json(value: Any) -> str:
    if type(value) is int:
        return int.__repr__(value)
    if _C_ENCODE is not None:
        return "".join(_C_ENCODE(value, 0))
    return _ENCODER.encode(value)  # pragma: no cover


def _group_type() -> type[BaseException] | None:
    group: type[BaseException] | None = getattr(builtins, "BaseExceptionGroup", None)
    if group is None:  # pragma: no cover - Python 3.10: the backport, a core dependency there
        try:
            group = importlib.import_module("exceptiongroup").BaseExceptionGroup
        except ImportError:
            return None
    return group


_GROUP: Final = _group_type()


def failure(status: int, code: str, text: str) -> ToolResult:
    """A failed call's result."""
    return ToolResult(text, is_error=True, status=status, code=code)


def refused_input(error: InvalidInputError) -> ToolResult:
    """The 400 ``invalid_input`` result for refused input: the error's own message.

    Results are immutable, so one is kept per text and shared: a model that repeats a
    mistake gets the same result object (the text names paths and types, never values).
    """
    text = str(error)
    result = _REFUSED.get(text)
    if result is None:
        if len(_REFUSED) >= _REFUSED_KEPT:
            _REFUSED.clear()
        result = _REFUSED[text] = ToolResult(text, is_error=True, status=400, code="invalid_input")
    return result


_REFUSED: dict[str, ToolResult] = {}
_REFUSED_KEPT: Final = 512
"""The most refusal results kept (a bounded cache: it is emptied when full)."""


def name_label(name: object) -> str:
    """The name quoted for a message, or a neutral phrase when it is not a well-formed name."""
    if isinstance(name, str) and TOOL_NAME.match(name):
        return f"Tool '{name}'"
    return "The requested tool"


def unavailable_text(name: object, available: list[str]) -> str:
    """The text for an unknown or not-offered name: the same text for both.

    The same text as `ToolNotFoundError`'s message.
    """
    return str(ToolNotFoundError(tool_name=name, available=available))


def _tool_error_in(exc: BaseException) -> ToolError | None:
    """The ToolError to show: ``exc`` itself, or the only leaf of an exception group."""
    while _GROUP is not None and isinstance(exc, _GROUP):
        inner: tuple[BaseException, ...] = getattr(exc, "exceptions", ())
        if len(inner) != 1:
            return None
        exc = inner[0]
    return exc if isinstance(exc, ToolError) else None


def shape_exception(tool_name: str, exc: BaseException) -> ToolResult:
    """The result for an exception a tool raised.

    A `ToolError` (alone, or the single leaf of an exception group) keeps its
    status, code and user message (cut to `MAX_MESSAGE`). Anything else, chained
    or grouped, becomes one generic text naming the tool: its message may hold secrets.
    """
    error = _tool_error_in(exc)
    if error is None:
        return failure(
            500,
            "internal_error",
            f"{name_label(tool_name)} failed with an internal error. "
            "The details were reported to the host.",
        )
    status = error.status
    if isinstance(status, bool) or not isinstance(status, int) or not 400 <= status <= 599:
        status = 422
    code = error.code if isinstance(error.code, str) and _CODE.match(error.code) else "tool_error"
    message = error.user_message if isinstance(error.user_message, str) else ""
    if len(message) > MAX_MESSAGE:
        message = message[: MAX_MESSAGE - 1] + "…"
    return failure(status, code, message or f"{name_label(tool_name)} reported an error.")


def render_output(
    provider: ToolProvider, value: Any, cap: int, structured: bool | None = None
) -> ToolResult:
    """The result for a tool's return value.

    Text output ships as it is; rich content (images, audio, files, alone or in a list
    with text) as typed content blocks; anything else as compact JSON text, through the
    tool's return type. The cap counts UTF-8 bytes of that text (and the raw bytes of
    rich content): over it is a 413, never a truncated payload. Output that is not JSON
    (sets, objects, NaN, cycles, lone surrogates) is a 500 ``invalid_output``; no
    ``repr`` of it reaches the model.

    ``structured`` says whether the tool publishes an output schema (the result then
    carries the output object: the value itself when its JSON is an object, and
    ``{"result": VALUE}`` when the schema is a wrapping one, marked
    ``x-toolpalette-wrapped``); None reads it from the provider. The text is the bare
    value either way.

    Raises:
        Refusal: 413 over the cap, 500 for output that is not JSON (with its exception).
    """
    try:
        # Only content objects and sequences can be rich content: no scan for the rest.
        plain = type(value) in _PLAIN or not isinstance(value, _MAYBE_RICH)
        rich = None if plain else rich_content(value)
        if rich is None:
            dumped = provider.dump_output(value)
            text = dumped if isinstance(dumped, str) else _to_json(dumped)
            size = len(text)
            if size <= cap:
                size = len(text.encode("utf-8"))  # also refuses lone surrogates
    except (Exception, RecursionError) as exc:
        if isinstance(value, types.CoroutineType):  # a sync tool returned a coroutine
            value.close()
        raise Refusal(_invalid_output(provider.name), exc) from None
    if rich is not None:
        return _rich_result(provider.name, rich, cap)
    if size > cap:
        raise Refusal(_too_large(provider.name, cap))
    if structured is None:
        structured = provider.output_schema is not None
    if not structured:
        return ToolResult(text)
    if is_wrapped(provider.output_schema):
        return ToolResult(text, structured={"result": dumped})
    return ToolResult(text, structured=dumped if isinstance(dumped, dict) else None)


def _rich_result(tool_name: str, rich: RichContent, cap: int) -> ToolResult:
    if rich.size > cap:
        raise Refusal(_too_large(tool_name, cap))
    return ToolResult(rich.text, content=rich.blocks)


def _too_large(tool_name: str, cap: int) -> ToolResult:
    return failure(
        413,
        "output_too_large",
        f"{name_label(tool_name)} returned more than {cap} bytes of output, "
        "which is over the limit. Ask for less (a narrower query or a smaller range).",
    )


def _invalid_output(tool_name: str) -> ToolResult:
    return failure(
        500,
        "invalid_output",
        f"{name_label(tool_name)} returned output that cannot be shown (it is not JSON). "
        "The details were reported to the host.",
    )


def run_refusal(provider: ToolProvider, outcome: _running.Outcome, timeout: float) -> Refusal:
    """The refusal for a run that did not return: raised, timed out, aborted or busy."""
    kind = outcome.kind
    if kind is _running.RAISED:
        return Refusal(shape_exception(provider.name, outcome.value), outcome.value)
    if isinstance(kind, _running.Aborted):
        return aborted(kind.reason)
    label = name_label(provider.name)
    if kind is _running.TIMEOUT:
        text = f"{label} did not finish within {timeout:g} seconds and was stopped."
        return refuse(504, "timeout", text, TimeoutError(text))
    text = f"{label} cannot run now: too many calls are in progress. Try again later."
    return refuse(503, "busy", text, PoolBusy(text))


def overran(
    provider: ToolProvider, timeout: float, took: float, outcome: _running.Outcome
) -> Refusal:
    """A 504 for a call whose result came back after its deadline (its loop was blocked)."""
    label = name_label(provider.name)
    text = f"{label} did not finish within {timeout:g} seconds and was stopped."
    error = TimeoutError(
        f"tool {provider.name!r} came back after {took:.2f} s, past its {timeout:g} s "
        "deadline, because its event loop was blocked (by blocking code in an async "
        "tool: see the watchdog's warning); its result was dropped"
    )
    if outcome.kind is _running.RAISED:
        error.__cause__ = outcome.value
    return refuse(504, "timeout", text, error)


def aborted(reason: str) -> Refusal:
    """The caller's own abort: 499, the caller's reason as the text."""
    return refuse(499, "aborted", reason or "The call was cancelled by the caller.")
