"""A ``tools/call`` as the client wrote it: a key it repeats is refused, not dropped."""

from __future__ import annotations

import collections
import json
import threading
from dataclasses import dataclass
from typing import Any, Final

from mcp.server.context import ServerRequestContext
from starlette.requests import Request

__all__ = ["Repeats", "SentLines", "find_repeats", "repeats_in"]

_KEPT: Final = 64
"""The most lines `SentLines` keeps unclaimed (oldest dropped first)."""


class _Repeated(list):  # type: ignore[type-arg]
    """A JSON object that repeats a key, kept as its (key, value) pairs in order."""


@dataclass(frozen=True)
class Repeats:
    """Where a message repeats a key: in ``arguments`` (their text) or elsewhere."""

    arguments: str | None
    """The ``arguments`` as JSON text keeping every pair, when they repeat a key."""
    elsewhere: bool
    """Whether an object outside ``arguments`` repeats a key."""


NO_REPEATS: Final = "toolpalette.no_repeated_keys"
"""Set in an HTTP request's ``state`` by a reader that found no repeated key in its body."""


def parse_keeping_pairs(text: str | bytes) -> tuple[Any, bool]:
    """``text`` parsed, an object that repeats a key kept as its pairs; whether one does.

    Raises:
        ValueError: ``text`` is not JSON.
        RecursionError: it nests deeper than the parser goes.
    """
    found = False

    def pairs(items: list[tuple[str, Any]]) -> Any:
        nonlocal found
        obj = dict(items)
        if len(obj) == len(items):
            return obj
        found = True
        return _Repeated(items)

    return json.loads(text, object_pairs_hook=pairs), found


def find_repeats(text: str | bytes) -> Repeats | None:
    """Where the JSON-RPC message ``text`` repeats a key; None if it repeats none.

    Text this parser cannot read is left to the SDK, which has already read it (None).
    """
    try:
        message, found = parse_keeping_pairs(text)
    except (ValueError, RecursionError):
        return None
    if not found:
        return None
    params = message.get("params") if isinstance(message, dict) else None
    if not isinstance(params, dict):
        return Repeats(None, elsewhere=True)
    arguments = params.get("arguments")
    rest = [v for k, v in params.items() if k != "arguments"]
    elsewhere = any(_repeats(v) for v in rest)
    return Repeats(_text(arguments) if _repeats(arguments) else None, elsewhere=elsewhere)


async def repeats_in(ctx: ServerRequestContext[Any], lines: SentLines) -> Repeats | None:
    """Where ``ctx``'s ``tools/call`` repeats a key, from its text where it can be had."""
    request = ctx.request
    if isinstance(request, Request):
        if request.scope.get("state", {}).get(NO_REPEATS):
            return None  # the fast path read the body once and found none
        return find_repeats(await request.body())  # the transport's read, kept: no I/O
    return lines.take(ctx.request_id)


class SentLines:
    """The stdio lines that repeat a key, by request id, until the server claims them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: collections.OrderedDict[tuple[type, Any], Repeats] = collections.OrderedDict()

    def read(self, line: str) -> None:
        """Look at one line before the SDK parses it; keep it if it repeats a key."""
        if '"' not in line:
            return
        repeats = find_repeats(line)
        if repeats is None:
            return
        try:
            key = json.loads(line).get("id")
        except (ValueError, RecursionError, AttributeError):
            return
        if isinstance(key, (str, int)) and not isinstance(key, bool):
            with self._lock:
                self._kept[(type(key), key)] = repeats
                while len(self._kept) > _KEPT:
                    self._kept.popitem(last=False)

    def take(self, request_id: Any) -> Repeats | None:
        """The repeats of request ``request_id``'s line, once (None if it had none)."""
        if not self._kept:
            return None
        with self._lock:
            return self._kept.pop((type(request_id), request_id), None)


def _repeats(value: Any) -> bool:
    """Whether ``value`` holds an object that repeats a key (walked without recursion)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Repeated):
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _text(value: Any) -> str:
    """``value`` as JSON text, an object that repeats a key with every pair kept.

    Written without recursion, so input nested deeper than Python's stack is written
    whole (the pipeline then refuses it with its own 400, as it refuses any deep input).
    """
    parts: list[str] = []
    stack: list[tuple[bool, Any]] = [(False, value)]  # (literal text?, item)
    while stack:
        literal, item = stack.pop()
        if literal:
            parts.append(item)
            continue
        if isinstance(item, (_Repeated, dict)):
            pairs = list(item) if isinstance(item, _Repeated) else list(item.items())
            stack.append((True, "}"))
            for index in range(len(pairs) - 1, -1, -1):
                key, member = pairs[index]
                stack.append((False, member))
                stack.append((True, ("," if index else "") + json.dumps(key) + ":"))
            stack.append((True, "{"))
        elif isinstance(item, list):
            stack.append((True, "]"))
            for index in range(len(item) - 1, -1, -1):
                stack.append((False, item[index]))
                if index:
                    stack.append((True, ","))
            stack.append((True, "["))
        else:
            parts.append(json.dumps(item))
    return "".join(parts)
