"""``@tool``, the ``Tool`` base class, and the context a running tool receives."""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from collections.abc import Awaitable, Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar, overload

from toolpalette._schema.checks import SchemaRefiner
from toolpalette._tools.channel import (
    DEFAULT_ROUND_TRIP,
    ClientChannel,
    Elicited,
    LoggingChannel,
    Root,
    Sampled,
    check_level,
)
from toolpalette._tools.info import TASK_SUPPORT, TaskSupport, ToolInfo
from toolpalette.errors import ClientRequestError, ToolDefinitionError

__all__ = [
    "CONTROL_CHARACTERS",
    "MAX_GUIDANCE",
    "MAX_TIMEOUT",
    "SKILLS_KEY",
    "TOOL_NAME",
    "BoundTool",
    "ProgressSink",
    "Tool",
    "ToolContext",
    "ToolSpec",
    "check_spec",
    "get_spec",
    "tool",
    "with_skills",
]

TOOL_NAME: Final = re.compile(r"^[A-Za-z0-9_-]{1,64}\Z")
"""Valid tool names: accepted by OpenAI, Anthropic and MCP alike."""

MAX_TIMEOUT: Final = 86_400.0
"""The longest timeout a tool may declare, in seconds (a day); no call should run longer,
and a deadline much further out cannot be waited on (``inf`` or ``1e10`` overflow)."""

MAX_GUIDANCE: Final = 1024
"""The longest ``guidance`` a tool may declare, in characters: it is added to the
conversation's preamble while the tool is offered, so it stays a few sentences."""

CONTROL_CHARACTERS: Final = frozenset(chr(c) for c in (*range(32), *range(0x7F, 0xA0))) - {
    "\n",
    "\t",
    "\r",
}
"""What a text a model or a terminal reads may not hold: the C0 controls but line breaks
and tabs, DEL, and the C1 controls (U+0080 to U+009F, which terminals obey too)."""
"""Characters a text for the model may not hold (line breaks and tabs it may)."""

SKILLS_KEY: Final = "toolpalette.skills"
"""The ``metadata`` key of a tool that names the skills going with it: full skill ids,
separated by spaces (``@tool(skills=[...])`` writes it)."""

_SPEC_ATTR: Final = "__toolpalette_spec__"
_NOBODY: Final = LoggingChannel()
"""The channel of a call whose runner supplied none."""

T = TypeVar("T")
ProgressSink = Callable[[float, "float | None", "str | None"], None]
"""Receives a running tool's progress: ``(done, total, message)``; see ``ToolContext``."""


@dataclass(frozen=True)
class ToolSpec:
    """Everything ``@tool`` declares about a tool, before a provider is built from it."""

    name: str | None = None
    """The tool's name; defaults to the function's or class's snake_case name."""
    description: str | None = None
    """What the model reads; defaults to the docstring."""
    display_name: str | None = None
    """A human-friendly name for host UIs."""
    action_verb: str | None = None
    """What a host UI says while the tool runs (``Reading``, ``Querying``)."""
    weight: float = 1.0
    """Relative cost or priority, for hosts that budget a palette."""
    read_only: bool = False
    """Whether the tool leaves the world unchanged; a tool is mutating unless declared."""
    destructive: bool = True
    """Whether a mutating tool may destroy or overwrite (False: it only adds); MCP's default.

    Like ``idempotent``, it describes a mutating tool; a read-only tool changes nothing.
    """
    idempotent: bool = False
    """Whether repeating a mutating call with the same input changes nothing more."""
    open_world: bool = True
    """Whether the tool reaches beyond a closed domain (the web, other services)."""
    concurrency_safe: bool | Callable[[Any], bool] | None = None
    """Whether calls may overlap; a callable decides per input. Default: ``read_only``."""
    resource_key: Callable[[Any], Hashable | None] | None = None
    """Calls whose inputs map to the same key are serialized."""
    timeout: float | None = None
    """Seconds a call may run before it is abandoned (504); None takes the default."""
    output_cap: int | None = None
    """Largest output, in bytes of JSON text (413 beyond); None takes the default."""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    """An open mapping for hosts and packs; the core reads only `SKILLS_KEY`."""
    refine_schema: SchemaRefiner | None = None
    """Narrows the generated input schema; if it fails, the tool is refused."""
    model_dependent: bool = False
    """Whether the tool's behaviour depends on the model grade it runs for."""
    grade: str | None = None
    """The grade of a model-dependent tool; None takes its parent's."""
    guidance: str | None = None
    """A short text for the conversation's preamble while the tool is offered: when to
    use the tool, what to do first. At most `MAX_GUIDANCE` characters."""
    task_support: TaskSupport = "forbidden"
    """Whether the MCP server may run the tool as a task: ``forbidden`` (never),
    ``optional`` (for a client that supports the tasks extension) or ``required``
    (only as a task; a client without the extension is refused)."""

    # What the declarations make and decide: one place for every provider built from a
    # spec (``@tool`` functions and classes, ``function_tool``).

    def record(
        self,
        name: str,
        description: str,
        input_schema: dict[str, Any],
        output_schema: dict[str, Any] | None,
    ) -> ToolInfo:
        """The tool's record: these declarations, with what only the provider knows."""
        return ToolInfo(
            name=name,
            description=description,
            input_schema=input_schema,
            output_schema=output_schema,
            read_only=self.read_only,
            destructive=self.destructive,
            idempotent=self.idempotent,
            open_world=self.open_world,
            display_name=self.display_name or "",
            action_verb=self.action_verb or "Running",
            weight=self.weight,
            metadata=self.metadata,
            concurrency_safe=self.default_concurrency_safe,
            timeout=self.timeout,
            output_cap=self.output_cap,
            guidance=self.guidance,
            task_support=self.task_support,
        )

    @property
    def default_concurrency_safe(self) -> bool:
        """Whether calls may overlap when the input does not decide: the flag, else read_only."""
        flag = self.concurrency_safe
        return self.read_only if flag is None or callable(flag) else flag

    def is_concurrency_safe(self, value: Any) -> bool:
        """Whether a call with this validated input may overlap others."""
        flag = self.concurrency_safe
        return bool(flag(value)) if callable(flag) else self.default_concurrency_safe

    def key_for(self, value: Any) -> Hashable | None:
        """The resource key of a call with this validated input; None: no key."""
        return self.resource_key(value) if self.resource_key is not None else None

    def grade_for(self, parent: Any) -> str | None:
        """The model grade the tool runs for under ``parent``; None: it depends on none."""
        if not self.model_dependent:
            return None
        return self.grade or getattr(parent, "grade", None)


@dataclass(frozen=True)
class ToolContext:
    """What a running tool may know about its call; ask for it by annotating a parameter.

    A function tool receives it through a parameter annotated ``ToolContext`` (kept out
    of the input schema); a class tool's ``run`` receives it as a second argument.
    """

    parent: Any = None
    """The object the tool was created for (usually the bound thinker)."""
    config: Mapping[str, Any] = field(default_factory=dict)
    """The host's configuration for the tool's pack (e.g. a workspace root)."""
    abort: threading.Event = field(default_factory=threading.Event)
    """Set when the call is abandoned (timeout or caller abort); long tools should poll it."""
    call_id: str | None = None
    """Identifies the call within its run."""
    run_id: str | None = None
    """The run (agent turn sequence) the call belongs to."""
    thread_id: str | None = None
    """The conversation thread the call belongs to."""
    user: Mapping[str, Any] = field(default_factory=dict)
    """Whatever the host passes about its user."""
    principal: str | None = None
    """Who the call is made for: the verified principal of the MCP request it came in
    (``user:SUBJECT`` or ``client:CLIENT_ID``), or None for a host's own call; the grant
    record names it."""
    on_progress: ProgressSink | None = field(default=None, repr=False)
    """Where `report_progress()` goes: the host's callback for this call, if any."""
    channel: ClientChannel | None = field(default=None, repr=False)
    """Who answers `log()`, `elicit()`, `sample()` and `roots()`: the
    host's channel or the MCP client's; None logs to `logging` and refuses the rest."""

    def log(self, level: str, message: str, data: Any = None) -> None:
        """Send one log line to the caller (an MCP client's ``notifications/message``).

        ``level`` is one of ``debug``, ``info``, ``notice``, ``warning``, ``error``,
        ``critical``, ``alert``, ``emergency``; ``data`` is any JSON value to send
        beside the message. Call it from a sync tool's thread or an async tool's
        coroutine; it never blocks. Without a caller's channel the line goes to the
        ``toolpalette.tool`` logger; a channel that raises is logged, never passed on.
        An MCP client gets only the levels it asked for (``logging/setLevel``, or the
        request's ``_meta`` on 2026-07-28).

        Raises:
            ValueError: ``level`` is not one of the levels, or ``message`` not a string.
        """
        check_level(level)
        if not isinstance(message, str):
            raise ValueError("message must be a string")
        try:
            (self.channel or _NOBODY).log(level, message, data)
        except Exception:
            logging.getLogger("toolpalette.tool").exception(
                "the log channel raised; the line was dropped"
            )

    async def elicit(
        self,
        message: str,
        schema: Mapping[str, Any],
        *,
        timeout: float | None = None,
        key: str | None = None,
    ) -> Elicited:
        """Ask the user a question; their answer is an object of ``schema``.

        ``schema`` is a flat JSON Schema object (properties of type string, number,
        integer, boolean, or a string enum), as MCP's form elicitation takes. Returns
        an `Elicited`: ``accepted`` with ``content``, or a decline or cancel.
        Await it from an async tool. The answer is never logged. ``key`` names the
        question where the caller sees names (an MCP 2026-07-28 input request; by
        default ``elicitation-1``, ``elicitation-2``, ...): questions asked together
        (``asyncio.gather``) need different keys, and go to such a client together.

        Raises:
            ClientRequestError: the caller cannot ask (no callback, no client
                capability), failed, or gave no answer within ``timeout`` seconds
                (default `DEFAULT_ROUND_TRIP`).
        """
        if not isinstance(message, str) or not isinstance(schema, Mapping):
            raise ValueError("elicit takes a message string and a schema mapping")
        channel = self.channel or _NOBODY
        asked = channel.elicit(message, schema, key=_key(key))
        return await _round_trip("elicitation", asked, timeout)

    async def sample(
        self,
        messages: str | Sequence[Mapping[str, Any]],
        *,
        max_tokens: int = 1000,
        system_prompt: str | None = None,
        temperature: float | None = None,
        timeout: float | None = None,
        key: str | None = None,
        **options: Any,
    ) -> Sampled:
        """Ask the caller's model for a completion (MCP's ``sampling/createMessage``).

        ``messages`` is a text (one user message) or MCP sampling messages
        (``{"role": "user", "content": {"type": "text", "text": ...}}``). Other
        options (``stop_sequences``, ``model_preferences``, ...) go to the caller as
        given. Sampling is deprecated in MCP 2026-07-28 (SEP-2577): prefer asking the
        user with `elicit()`, or returning what the model should do next.

        Raises:
            ClientRequestError: the caller cannot sample, failed, or took longer than
                ``timeout`` seconds (default `DEFAULT_ROUND_TRIP`).
        """
        if isinstance(messages, str):
            messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
        wanted: dict[str, Any] = {"max_tokens": max_tokens, **options}
        if system_prompt is not None:
            wanted["system_prompt"] = system_prompt
        if temperature is not None:
            wanted["temperature"] = temperature
        channel = self.channel or _NOBODY
        asked = channel.sample(list(messages), wanted, key=_key(key))
        return await _round_trip("sampling", asked, timeout)

    async def roots(self, *, timeout: float | None = None, key: str | None = None) -> list[Root]:
        """The caller's roots: the folders or locations it lets the tool work in.

        Roots are deprecated in MCP 2026-07-28 (SEP-2577); a host's configuration
        (``config``) is the durable way to give a tool its workspace.

        Raises:
            ClientRequestError: the caller has no roots to give, failed, or took longer
                than ``timeout`` seconds (default `DEFAULT_ROUND_TRIP`).
        """
        channel = self.channel or _NOBODY
        return await _round_trip("roots", channel.roots(key=_key(key)), timeout)

    def report_progress(
        self, done: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Tell the host how far the call has come: ``done`` of ``total`` (if known).

        Call it from a sync tool's thread or an async tool's coroutine, as often as is
        useful; ``done`` should grow from one report to the next. Without a host
        callback it does nothing, and a callback that raises is logged, never passed
        on to the tool: progress is a courtesy, not part of the call.
        """
        sink = self.on_progress
        if sink is None:
            return
        try:
            sink(float(done), None if total is None else float(total), message)
        except Exception:
            logging.getLogger("toolpalette.progress").exception(
                "the progress callback raised; the report was dropped"
            )


def _key(key: object) -> str | None:
    if key is not None and (not isinstance(key, str) or not 0 < len(key) <= 64):
        raise ValueError("key must be a string of 1 to 64 characters")
    return key


async def _round_trip(feature: str, asked: Awaitable[T], timeout: float | None) -> T:
    """``asked``'s answer within ``timeout`` seconds, else `ClientRequestError`."""
    deadline = DEFAULT_ROUND_TRIP if timeout is None else timeout
    try:
        return await asyncio.wait_for(asked, deadline)
    except (TimeoutError, asyncio.TimeoutError):
        raise ClientRequestError(feature=feature, reason="timed_out") from None


class BoundTool:
    """A tool made for one parent, ready to run validated input.

    ``invoke`` returns the result, or an awaitable when ``is_async`` is true.
    """

    __slots__ = ("_call", "is_async", "takes_context")

    def __init__(self, call: Callable[..., Any], *, is_async: bool, takes_context: bool) -> None:
        self._call = call
        self.is_async = is_async
        """Whether ``invoke`` returns an awaitable."""
        self.takes_context = takes_context
        """Whether the tool asked for a ToolContext."""

    def invoke(self, value: Any, context: ToolContext | None = None) -> Any:
        """Run the tool on input returned by ``parse_input``."""
        return self._call(value, context if context is not None else ToolContext())


class Tool:
    """Base class of class-based tools.

    Decorate a subclass with ``@toolpalette.tool(...)`` and define ``run(self, input)``
    (sync or ``async``), where ``input`` is annotated with a pydantic model: that model is
    the tool's input schema. ``run`` may take a second parameter, which receives the
    [`ToolContext`][toolpalette.ToolContext]. One instance is built per parent with ``Cls(parent)``.
    """

    def __init__(self, parent: Any = None) -> None:
        self.parent = parent
        """The object this tool was created for."""

    def run(self, input: Any) -> Any:
        """Run the tool on validated input; override in a subclass."""
        raise NotImplementedError


@overload
def tool(obj: T, /) -> T: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    display_name: str | None = None,
    action_verb: str | None = None,
    weight: float = 1.0,
    read_only: bool = False,
    destructive: bool = True,
    idempotent: bool = False,
    open_world: bool = True,
    concurrency_safe: bool | Callable[[Any], bool] | None = None,
    resource_key: Callable[[Any], Hashable | None] | None = None,
    timeout: float | None = None,
    output_cap: int | None = None,
    metadata: Mapping[str, Any] | None = None,
    refine_schema: SchemaRefiner | None = None,
    model_dependent: bool = False,
    grade: str | None = None,
    guidance: str | None = None,
    skills: Iterable[str] | None = None,
    task_support: TaskSupport = "forbidden",
) -> Callable[[T], T]: ...
def tool(obj: Any = None, /, **options: Any) -> Any:
    """Declare a function or a ``Tool`` subclass as a tool.

    Use bare (``@tool``) or with options (``@tool(read_only=True, timeout=5)``); the
    options are the fields of [`ToolSpec`][toolpalette.ToolSpec]. The decorated object is returned
    unchanged, so it stays callable and testable as plain Python; a pack returns it from
    ``toolpalette_register_tools`` and the core builds the provider.

    Raises:
        ToolDefinitionError: an option is invalid (a malformed name, a negative timeout).
    """
    if obj is not None and options:
        raise TypeError("tool() takes either the object to decorate or keyword options")
    skills = options.pop("skills", None)
    if skills is not None:
        options["metadata"] = with_skills(options.get("metadata"), skills)
    if options.get("metadata") is None:
        options.pop("metadata", None)
    spec = ToolSpec(**options)
    check_spec(spec, obj if obj is not None else None)

    def decorate(target: Any) -> Any:
        if not callable(target):
            raise ToolDefinitionError(
                tool_name=repr(target), reason="@tool decorates a function or a Tool subclass"
            )
        if isinstance(target, type) and not issubclass(target, Tool):
            raise ToolDefinitionError(
                tool_name=target.__qualname__,
                reason="a class tool must subclass toolpalette.Tool",
            )
        setattr(target, _SPEC_ATTR, spec)
        return target

    return decorate(obj) if obj is not None else decorate


def with_skills(metadata: Mapping[str, Any] | None, skills: Iterable[str]) -> dict[str, Any]:
    """``metadata`` with `SKILLS_KEY` naming ``skills`` (full skill ids).

    Raises:
        ToolDefinitionError: ``skills`` is a string, or holds anything but skill ids
            (``bundle.id/name``).
    """
    if isinstance(skills, str):
        raise ToolDefinitionError(tool_name="<tool>", reason="skills is a list of skill ids")
    ids = list(skills)
    for skill_id in ids:
        if not (isinstance(skill_id, str) and _SKILL_ID.match(skill_id)):
            raise ToolDefinitionError(
                tool_name="<tool>",
                reason="each of skills is a full skill id, as io.example.db/write-sql",
            )
    return {**(metadata or {}), SKILLS_KEY: " ".join(dict.fromkeys(ids))}


_SKILL_ID: Final = re.compile(r"^[a-z0-9][a-z0-9.-]{0,252}/[^\s/]{1,64}\Z")


def check_spec(spec: ToolSpec, target: object = None) -> None:
    """Refuse options no tool may declare (``target``, if given, names it in the error).

    Raises:
        ToolDefinitionError: a malformed name, a timeout or output cap out of range, or
            a guidance that is not a short text.
    """
    label = spec.name or str(getattr(target, "__qualname__", "<tool>"))
    if spec.name is not None and not TOOL_NAME.match(spec.name):
        raise ToolDefinitionError(
            tool_name=label,
            reason="names are 1-64 characters of letters, digits, '_' and '-'",
        )
    timeout = spec.timeout
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not 0 < timeout <= MAX_TIMEOUT
    ):
        raise ToolDefinitionError(
            tool_name=label,
            reason=f"timeout must be a number of seconds above 0 and at most {MAX_TIMEOUT:g}",
        )
    if spec.output_cap is not None and spec.output_cap <= 0:
        raise ToolDefinitionError(tool_name=label, reason="output_cap must be positive")
    if spec.task_support not in TASK_SUPPORT:
        raise ToolDefinitionError(
            tool_name=label, reason=f"task_support must be one of {', '.join(TASK_SUPPORT)}"
        )
    if spec.guidance is not None:
        problem = _text_problem(spec.guidance, MAX_GUIDANCE)
        if problem is not None:
            raise ToolDefinitionError(tool_name=label, reason=f"guidance {problem}")


def _text_problem(text: object, limit: int) -> str | None:
    """Why ``text`` cannot be given to a model as a tool's text, or None."""
    if not isinstance(text, str) or not text.strip():
        return "must be a non-empty string"
    if len(text) > limit:
        return f"must be at most {limit} characters"
    if any(c in CONTROL_CHARACTERS for c in text):
        return "must not hold control characters (line breaks and tabs are fine)"
    return None


def get_spec(obj: object) -> ToolSpec | None:
    """The spec ``@tool`` attached to ``obj`` itself (not inherited), or None."""
    owner = obj.__dict__ if isinstance(obj, type) else None
    spec = owner.get(_SPEC_ATTR) if owner is not None else getattr(obj, _SPEC_ATTR, None)
    return spec if isinstance(spec, ToolSpec) else None
