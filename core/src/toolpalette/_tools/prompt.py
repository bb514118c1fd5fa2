"""``@prompt``: a pack's prompt template, its arguments, completions and rendered messages."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar, overload

from toolpalette._tools.tool import TOOL_NAME, ToolContext
from toolpalette.errors import ToolDefinitionError

__all__ = [
    "MAX_COMPLETIONS",
    "Completer",
    "PackPrompt",
    "PromptArgument",
    "complete_values",
    "content_block",
    "get_prompt_spec",
    "prompt",
]

T = TypeVar("T")
Completer = Callable[[str], Iterable[str]] | Sequence[str]
"""Completions of one argument: the values themselves, or a function of the typed prefix."""
MAX_COMPLETIONS: Final = 100
"""The most completion values one answer holds (MCP's cap)."""
_SPEC_ATTR: Final = "__toolpalette_prompt__"
_ROLES: Final = frozenset({"user", "assistant"})
_ARG_LINE: Final = re.compile(r"^ {2,4}(\w+)(?: \([^)]*\))?:(.*)$")


@dataclass(frozen=True)
class PromptArgument:
    """One argument of a prompt: a parameter of its function."""

    name: str
    description: str | None = None
    required: bool = True


@dataclass(frozen=True)
class PackPrompt:
    """A prompt a pack ships: what ``prompts/list`` shows and how ``prompts/get`` renders.

    Built by `prompt()` from a function whose parameters are the arguments (a
    parameter with a default is optional); the function returns the messages.
    """

    name: str
    function: Callable[..., Any] = field(repr=False)
    description: str | None = None
    title: str | None = None
    arguments: tuple[PromptArgument, ...] = ()
    completions: Mapping[str, Completer] = field(default_factory=dict, repr=False)
    read_only: bool = True
    """Whether rendering it changes nothing (a read-only thinker lists only these)."""
    context_param: str | None = None
    """The parameter that receives a ``ToolContext`` (the prompt may ask the user)."""
    pack: str | None = None
    """The pack that shipped it (set when collected)."""
    distribution: str | None = None
    """The distribution of that pack, if installed."""

    def render(self, arguments: Mapping[str, Any] | None) -> list[dict[str, Any]]:
        """The prompt's messages (MCP's wire form) for ``arguments``.

        Raises:
            ValueError: a required argument is missing, an unknown one given, or a
                value is not a string; the function returned something not a message,
                or is async (use `arender()`).
        """
        value = self.function(**self._arguments(arguments, ToolContext()))
        if inspect.isawaitable(value):
            close = getattr(value, "close", None)
            if callable(close):
                close()
            raise ValueError("an async prompt is rendered with arender")
        return messages_of(value)

    async def arender(
        self, arguments: Mapping[str, Any] | None, context: ToolContext | None = None
    ) -> list[dict[str, Any]]:
        """`render()` for an async prompt too; ``context`` reaches its ``ToolContext``."""
        value = self.function(**self._arguments(arguments, context or ToolContext()))
        if inspect.isawaitable(value):
            value = await value
        return messages_of(value)

    def _arguments(
        self, arguments: Mapping[str, Any] | None, context: ToolContext
    ) -> dict[str, Any]:
        given = dict(arguments or {})
        known = {a.name for a in self.arguments}
        unknown = sorted(set(given) - known)
        if unknown:
            raise ValueError(f"unknown argument(s): {', '.join(unknown)}")
        missing = [a.name for a in self.arguments if a.required and a.name not in given]
        if missing:
            raise ValueError(f"missing required argument(s): {', '.join(missing)}")
        if any(not isinstance(v, str) for v in given.values()):
            raise ValueError("prompt arguments are strings")
        if self.context_param is not None:
            given[self.context_param] = context
        return given

    def complete(self, argument: str, prefix: str) -> list[str]:
        """Completions of ``argument`` for the typed ``prefix`` (none for an unknown one)."""
        return complete_values(self.completions.get(argument), prefix)


def messages_of(value: Any) -> list[dict[str, Any]]:
    """A prompt function's result as MCP prompt messages.

    A text, a content object (``Image``, ``File``, ``ResourceLink``, a content block
    dict) or a ``(role, content)`` pair is one message (the user's unless a role is
    given); a list is one message per item; a dict with ``role`` and ``content`` is a
    message as it is.

    Raises:
        ValueError: an item is none of these.
    """
    items = value if isinstance(value, list | tuple) and not _is_pair(value) else [value]
    messages = []
    for item in items:
        if isinstance(item, Mapping) and "role" in item and "content" in item:
            role, content = item["role"], item["content"]
        elif _is_pair(item):
            role, content = item
        else:
            role, content = "user", item
        if role not in _ROLES:
            raise ValueError("a prompt message's role is 'user' or 'assistant'")
        messages.append({"role": role, "content": content_block(content)})
    return messages


def _is_pair(value: Any) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and value[0] in _ROLES


def content_block(content: Any) -> dict[str, Any]:
    """One content block (wire form): a text, an object with ``block()``, or a block dict.

    Raises:
        ValueError: anything else.
    """
    if isinstance(content, str):
        return {"type": "text", "text": content}
    block = getattr(content, "block", None)
    if callable(block):
        made = block()
        if isinstance(made, dict):
            return made
    if isinstance(content, Mapping) and isinstance(content.get("type"), str):
        return dict(content)
    raise ValueError("a prompt message's content is a text, an Image, a File or a block")


def complete_values(completer: Completer | None, prefix: str) -> list[str]:
    """At most `MAX_COMPLETIONS` values of ``completer`` for ``prefix``."""
    if completer is None:
        return []
    if isinstance(completer, str):
        return []
    if callable(completer):
        values = [v for v in completer(prefix) if isinstance(v, str)]
    else:
        values = [v for v in completer if isinstance(v, str) and v.startswith(prefix)]
    return values[:MAX_COMPLETIONS]


@overload
def prompt(obj: T, /) -> T: ...
@overload
def prompt(
    *,
    name: str | None = None,
    description: str | None = None,
    title: str | None = None,
    completions: Mapping[str, Completer] | None = None,
    read_only: bool = True,
) -> Callable[[T], T]: ...
def prompt(obj: Any = None, /, **options: Any) -> Any:
    """Declare a function as a prompt a pack ships (``toolpalette_register_prompts``).

    Its parameters are the prompt's arguments (strings; one with a default is
    optional; ``Args:`` in the docstring describes them), its docstring the
    description; a parameter annotated ``ToolContext`` receives the request's context
    (an ``async def`` prompt may ``elicit``). It returns the messages: a text, an
    ``Image``, a ``File`` (an embedded resource), a content block, a ``(role,
    content)`` pair, or a list of them. ``completions`` maps an argument to its
    values or a function of the prefix. The function is returned unchanged.

    Raises:
        ToolDefinitionError: a malformed name, a ``*args`` parameter, or completions
            for an argument the function does not take.
    """
    if obj is not None and options:
        raise TypeError("prompt() takes either the function to decorate or keyword options")

    def decorate(target: Any) -> Any:
        setattr(target, _SPEC_ATTR, build_prompt(target, **options))
        return target

    return decorate(obj) if obj is not None else decorate


def build_prompt(
    function: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    title: str | None = None,
    completions: Mapping[str, Completer] | None = None,
    read_only: bool = True,
) -> PackPrompt:
    """The `PackPrompt` of ``function`` (see `prompt()`)."""
    label: str = name or str(getattr(function, "__name__", "<prompt>"))
    if not callable(function) or isinstance(function, type):
        raise ToolDefinitionError(tool_name=label, reason="@prompt decorates a function")
    if not TOOL_NAME.match(label):
        raise ToolDefinitionError(
            tool_name=label, reason="names are 1-64 characters of letters, digits, '_' and '-'"
        )
    doc = inspect.getdoc(function) or ""
    summary, described = _split_doc(doc)
    arguments = []
    context_param = None
    for parameter in inspect.signature(function).parameters.values():
        if parameter.annotation is ToolContext or parameter.annotation == "ToolContext":
            context_param = parameter.name
            continue
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise ToolDefinitionError(
                tool_name=label, reason="a prompt's arguments are named parameters"
            )
        arguments.append(
            PromptArgument(
                parameter.name,
                described.get(parameter.name),
                parameter.default is inspect.Parameter.empty,
            )
        )
    completions = dict(completions or {})
    stray = sorted(set(completions) - {a.name for a in arguments})
    if stray:
        raise ToolDefinitionError(
            tool_name=label, reason=f"completions for unknown argument(s): {', '.join(stray)}"
        )
    return PackPrompt(
        label,
        function,
        description=description or summary or None,
        title=title,
        arguments=tuple(arguments),
        completions=completions,
        read_only=bool(read_only),
        context_param=context_param,
    )


def _split_doc(doc: str) -> tuple[str, dict[str, str]]:
    """A docstring's text before ``Args:``, and each argument's description."""
    head, _, args = doc.partition("\nArgs:\n")
    described: dict[str, str] = {}
    current = None
    for line in args.splitlines():
        entry = _ARG_LINE.match(line)
        if entry is not None:
            current = entry.group(1)
            described[current] = entry.group(2).strip()
        elif current is not None and line.strip():
            described[current] = f"{described[current]} {line.strip()}".strip()
    return head.strip(), described


def get_prompt_spec(obj: object) -> PackPrompt | None:
    """The prompt ``@prompt`` made of ``obj``, or None."""
    if isinstance(obj, PackPrompt):
        return obj
    found = getattr(obj, _SPEC_ATTR, None)
    return found if isinstance(found, PackPrompt) else None
