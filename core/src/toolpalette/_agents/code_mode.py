"""Code mode: ``run_code``, a meta-tool whose Python script calls the palette's tools.

Each call the script makes runs through the thinker's pipeline, as its own call.
"""

from __future__ import annotations

import builtins
import keyword
import re
import uuid
from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final

from toolpalette._agents.grants import SCRIPT_CALL
from toolpalette._agents.sandbox import (
    Answer,
    CodeLimits,
    Finished,
    Paused,
    Sandbox,
    Suspend,
    jsonable,
    run_script,
)
from toolpalette._run.abort import AbortSignal
from toolpalette._tools.info import ToolInfo
from toolpalette._tools.provider import BoundTool, ToolProvider
from toolpalette._tools.registry import lookup
from toolpalette._tools.result import is_wrapped
from toolpalette._tools.tool import TOOL_NAME, ToolContext
from toolpalette.errors import ToolError

__all__ = [
    "RESUME",
    "RUN_CODE",
    "CodeLimits",
    "Resume",
    "RunCodeProvider",
    "python_api",
    "python_name",
]

RUN_CODE: Final = "run_code"
"""The meta-tool's name."""
MAX_CODE_CHARS: Final = 20_000
"""The longest script ``run_code`` takes."""
_DOC_CHARS: Final = 600
"""The most characters of a tool's description its function's docstring carries."""
_FIELD_CHARS: Final = 160
"""The most characters of a field's description."""
_ENUM_SHOWN: Final = 12
"""The most values of an enum an annotation spells out."""
_RESERVED: Final = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | {"ToolError"}
"""Names a tool's function may not take: Python's own (a suffix ``_`` is added)."""

_OUTPUT_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "result": {"description": "The value of the script's last expression."},
        "printed": {"type": "string", "description": "What the script printed."},
        "calls": {"type": "integer", "description": "The tool calls the script made."},
    },
    "required": ["result", "printed", "calls"],
}


@dataclass(frozen=True)
class Resume:
    """A paused script to resume in place of running the code (an MCP retry sets it)."""

    paused: Paused
    """What the script had come to."""
    call_id: str
    """The script's call id, which its inner calls' ids extend."""


RESUME: ContextVar[Resume | None] = ContextVar("toolpalette_code_resume", default=None)
"""Set around a ``run_code`` call that resumes a paused script instead of starting one."""

PAUSE: ContextVar[Any] = ContextVar("toolpalette_code_pause", default=None)
"""Set by whoever can pause a script (the MCP server, ``mcp/_approvals.py``): an object
with ``inner`` (set here: the abort signal of the script's call in flight), ``wanted``
(set by the approver when that call must stop to ask) and ``paused`` (set here: the
script's call id and what resumes it)."""


def python_name(tool_name: str) -> str:
    """The function name a tool has in scripts: its name, made a Python identifier."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", tool_name)
    if name[:1].isdigit():
        name = "t_" + name
    return name + "_" if name in _RESERVED else name


def _annotation(schema: Any, depth: int = 0) -> str:
    """A Python annotation for a JSON Schema, as a model reads one (not checked)."""
    if not isinstance(schema, Mapping) or depth > 3:
        return "Any"
    if "const" in schema:
        return f"Literal[{schema['const']!r}]"
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        values = ", ".join(repr(v) for v in enum[:_ENUM_SHOWN])
        return f"Literal[{values}]" if len(enum) <= _ENUM_SHOWN else _annotation_of_type(schema)
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return " | ".join(dict.fromkeys(_annotation(o, depth + 1) for o in options))
    return _annotation_of_type(schema, depth)


def _annotation_of_type(schema: Mapping[str, Any], depth: int = 0) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(dict.fromkeys(_annotation({**schema, "type": k}, depth) for k in kind))
    if kind == "array":
        return f"list[{_annotation(schema.get('items'), depth + 1)}]"
    simple = {
        "string": "str",
        "integer": "int",
        "number": "float",
        "boolean": "bool",
        "null": "None",
        "object": "dict",
    }
    return simple.get(kind, "Any") if isinstance(kind, str) else "Any"


def _short(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _signature(provider: ToolProvider) -> str:
    """One tool's function: its signature, from its schemas, and its docstring."""
    schema = provider.input_schema
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    properties = properties if isinstance(properties, Mapping) else {}
    required = set(schema.get("required") or ()) if isinstance(schema, Mapping) else set()
    params: list[str] = []
    fields: list[str] = []
    for key in sorted(properties, key=lambda k: k not in required):
        field = properties[key]
        if not isinstance(key, str) or not key.isidentifier() or keyword.iskeyword(key):
            continue
        text = f"{key}: {_annotation(field)}"
        if key not in required:
            default = field.get("default") if isinstance(field, Mapping) else None
            text += f" = {default!r}" if isinstance(default, (str, int, float, bool)) else " = None"
        params.append(text)
        about = field.get("description") if isinstance(field, Mapping) else None
        if about:
            fields.append(f"        {key}: {_short(about, _FIELD_CHARS)}")
    output = provider.output_schema
    if output is None:
        returns = "str"
    elif is_wrapped(output):
        returns = _annotation((output.get("properties") or {}).get("result"))
    else:
        returns = "dict"
    head = f"def {python_name(provider.name)}({'*, ' if params else ''}{', '.join(params)})"
    doc = [f'    """{_short(provider.description, _DOC_CHARS)}']
    if fields:
        doc += ["", "    Args:", *fields]
    doc.append('    """')
    return "\n".join([f"{head} -> {returns}:", *doc])


def python_api(providers: Iterable[ToolProvider]) -> str:
    """The functions a script may call: one per tool, in the order given, each once."""
    seen: set[str] = set()
    parts: list[str] = []
    for provider in providers:
        function = python_name(provider.name)
        if provider.name == RUN_CODE or function in seen:
            continue
        seen.add(function)
        parts.append(_signature(provider))
    return "\n\n".join(parts)


def _description(api: str, limits: CodeLimits, searched: bool) -> str:
    found = (
        " Tools that `search_tools` finds are functions too: the tool's name, its "
        "input's fields as keyword arguments."
        if searched
        else ""
    )
    listed = f"\n\nThe functions:\n```python\n{api}\n```" if api else ""
    return (
        "Run a short Python script that calls your tools as functions, and read only what "
        "it returns (its last expression) and prints. Use it to chain several calls in one "
        "step: intermediate results stay in the script. Call each tool with keyword "
        "arguments; it returns a dict for a structured result, else text. A failed call "
        "raises an exception with the reason (PermissionError for a refusal, ValueError "
        "for bad input, TimeoutError, LookupError, RuntimeError): catch Exception to go "
        "on. The sandbox has no files, network or imports beyond modules such as json, "
        f"re, math and datetime. Limits: {limits.tool_calls} tool calls, "
        f"{limits.wall_time:g} s, {limits.output_bytes} bytes of output.{found}{listed}"
    )


_EXCEPTIONS: Final[dict[int, type[Exception]]] = {
    400: ValueError,
    403: PermissionError,
    404: LookupError,
    408: TimeoutError,
    422: ValueError,
    504: TimeoutError,
}


class RunCodeProvider(ToolProvider):
    """``run_code``: ``{"code": ...}``, a Python script over the thinker's tools.

    Args:
        tools: the tools whose functions the description lists (the thinker's palette,
            and its deferred catalog when it is listed, not searched).
        limits: the script's bounds.
        read_only: whether it is offered to a read-only thinker (its scripts then
            reach only read-only tools, as the pipeline refuses the others).
        searched: whether the deferred tools are found through ``search_tools``.
    """

    def __init__(
        self,
        tools: Iterable[ToolProvider],
        limits: CodeLimits,
        *,
        read_only: bool = False,
        searched: bool = False,
        sandbox: Sandbox | None = None,
    ) -> None:
        listed = [t for t in tools if t.name != RUN_CODE]
        self.limits = limits
        """The scripts' bounds."""
        self.functions: dict[str, str] = {python_name(t.name): t.name for t in listed}
        """Each listed tool's name, by its function's name."""
        self._wrapped = {t.name for t in listed if is_wrapped(t.output_schema)}
        self._api = python_api(listed)
        self._sandbox = sandbox
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {
                "code": {
                    "type": "string",
                    "description": "The Python script. Its last expression is the result.",
                    "minLength": 1,
                    "maxLength": MAX_CODE_CHARS,
                }
            },
            "required": ["code"],
            "additionalProperties": False,
        }
        self._record = ToolInfo(
            name=RUN_CODE,
            description=_description(self._api, limits, searched),
            input_schema=schema,
            output_schema=_OUTPUT_SCHEMA,
            read_only=read_only,
            # The script's own bound ends it first, with its 408; this is the backstop.
            timeout=limits.wall_time + 5.0,
        )

    @property
    def info(self) -> ToolInfo:
        return self._record

    @property
    def api(self) -> str:
        """The functions' definitions, as the description lists them."""
        return self._api

    def create(self, parent: Any = None) -> BoundTool:
        if parent is None or not hasattr(parent, "call"):
            raise TypeError("run_code runs only for a bound thinker")
        script = _Script(self, parent)
        return BoundTool(script.run, is_async=True, takes_context=True)

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self)
            and isinstance(other, RunCodeProvider)
            and other.description == self.description
            and other.read_only == self.read_only
        )

    def __hash__(self) -> int:
        return hash((type(self), self.description))


class _Script:
    """``run_code`` made for one thinker: each script's calls go through its pipeline."""

    def __init__(self, provider: RunCodeProvider, thinker: Any) -> None:
        self._provider = provider
        self._thinker = thinker

    async def run(self, value: Mapping[str, Any], ctx: ToolContext | None) -> dict[str, Any]:
        provider = self._provider
        resume = RESUME.get()
        outer = resume.call_id if resume is not None else None
        if outer is None:
            outer = (
                ctx.call_id
                if ctx is not None and ctx.call_id
                else f"run_code-{uuid.uuid4().hex[:12]}"
            )
        calls = _Calls(self._thinker, provider, outer, ctx)
        if resume is not None:
            calls.count = resume.paused.calls
        ended = await run_script(
            str(value["code"]),
            provider.limits,
            calls.answer,
            resume=resume.paused if resume is not None else None,
            sandbox=provider._sandbox,
        )
        if isinstance(ended, Paused):
            pause = PAUSE.get()
            if pause is not None:
                pause.paused = (outer, ended)
            raise ToolError(
                "The script is paused until a person approves its next call.",
                code="paused",
                status=409,
            )
        assert isinstance(ended, Finished)
        return {"result": ended.value, "printed": ended.printed, "calls": ended.calls}


class _Calls:
    """The tool calls of one script: named, run through the pipeline, put on the record."""

    def __init__(
        self, thinker: Any, provider: RunCodeProvider, outer: str, ctx: ToolContext | None
    ) -> None:
        self._thinker = thinker
        self._provider = provider
        self._outer = outer
        self._ctx = ctx
        self._others: dict[str, str] | None = None
        self.count = 0

    def _tool_name(self, function: str) -> str | None:
        listed = self._provider.functions.get(function)
        if listed is None and (function in _RESERVED or function.startswith("_")):
            return None  # Python's own names (eval, __import__) are never tools
        name = listed or self._unlisted(function)
        if name == RUN_CODE or not TOOL_NAME.match(name):
            return None
        return name

    def _unlisted(self, function: str) -> str:
        """The tool a function not in the description names (one ``search_tools`` found).

        Its own name, or the name of the palette's or the catalog's tool whose function
        name it is (``a-b`` is ``a_b``); looked up once per script.
        """
        if self._others is None:
            thinker = self._thinker
            tools = [*thinker.palette.tool_names(), *(p.name for p in thinker.deferred_tools())]
            self._others = {python_name(n): n for n in reversed(tools)}
        return self._others.get(function, function)

    async def answer(self, function: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Answer:
        name = self._tool_name(function)
        if name is None:
            return _raise(NameError(f"name '{function}' is not defined"))
        if args:
            return _raise(
                TypeError(f"call {function} with keyword arguments, as its definition shows")
            )
        pause = PAUSE.get()
        abort = AbortSignal() if pause is not None else None
        if pause is not None:
            pause.inner = abort  # what the approver aborts to stop the script here
        self.count += 1
        call_id = f"{self._outer}.{self.count}"
        thinker = self._thinker
        ctx = self._ctx
        principal = ctx.principal if ctx is not None else None
        token = SCRIPT_CALL.set((call_id, self._outer))
        try:  # not approved=...: approving the script approves none of its calls
            # Made for the script's caller: its principal, and its channel, which the
            # approval of a call that asks a person names.
            result = await thinker._call_in_script(
                name, jsonable(kwargs), call_id, self._outer, abort, ctx
            )
        finally:
            SCRIPT_CALL.reset(token)
            if pause is not None:
                pause.inner = None
        if pause is not None and pause.wanted:
            self.count -= 1  # not made: announced again when the script resumes
            raise Suspend
        decision = "granted" if not result.is_error or result.status >= 500 else "refused"
        reason = "ok" if not result.is_error else f"{result.status} {result.code}"
        thinker._record_call(name, decision, f"run_code: {reason}", call_id, self._outer, principal)
        if ctx is not None:
            ctx.report_progress(self.count, None, f"called {name}")
        if result.is_error:
            if result.code in ("unknown_tool", "not_offered"):
                return _raise(NameError(f"name '{function}' is not defined: no such tool"))
            kind = _EXCEPTIONS.get(result.status, RuntimeError)
            return _raise(kind(f"{result.status} {result.code}: {result.text}"))
        structured = result.structured
        if structured is None:
            return {"return_value": result.text}
        if name in self._provider._wrapped or self._wrapped(name):
            return {"return_value": structured.get("result")}
        return {"return_value": structured}

    def _wrapped(self, name: str) -> bool:
        provider = lookup(self._thinker.palette, name)
        return provider is not None and is_wrapped(provider.output_schema)


def _raise(error: BaseException) -> Answer:
    return {"exception": error}
