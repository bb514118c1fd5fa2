"""Regular expressions of JSON Schemas: matched in linear time, their compile cost bounded."""

from __future__ import annotations

import re
from typing import Any, Final

__all__ = [
    "CHARS_PER_STEP",
    "MAX_PATTERNS_WEIGHT",
    "MAX_PATTERN_WEIGHT",
    "compile_pattern",
    "pattern_weight",
]

CHARS_PER_STEP: Final = 64
"""Characters a pattern is matched against for one step of the validation budget."""

MAX_PATTERN_WEIGHT: Final = 20_000
"""The most one pattern may weigh (`pattern_weight()`): about 20 ms of compiling."""

MAX_PATTERNS_WEIGHT: Final = 200_000
"""The most a schema's patterns may weigh together."""

# Microseconds of compiling per copy of each class (measured with pydantic-core 2.x, and
# rounded up): Unicode classes compile to large UTF-8 automata, ASCII ones to small.
_LITERAL: Final = 2
_ANY_CHAR: Final = 25
_CLASS_ESCAPES: Final = {
    "d": 200,
    "D": 200,
    "s": 20,
    "S": 50,
    "w": 2000,
    "W": 2000,
    "b": 1000,
    "B": 1000,
    "p": 2000,
    "P": 2000,
}
_NEGATED: Final = 20
_POSIX: Final = 5
_CAP: Final = 10**12
_COUNTED: Final = re.compile(r"\{(\d+)(?:(,)(\d*))?\}\??")
_FLAGS: Final = re.compile(r"\(\?([a-zA-Z-]*)(:|\))")
_NAMED: Final = re.compile(r"\(\?P?<[^>=!]*>")
_LOOK_AROUND: Final = re.compile(r"\(\?<?[=!]")


def pattern_weight(pattern: str) -> int:
    r"""An upper estimate of compiling ``pattern``, in microseconds (capped at 10**12).

    Each atom weighs what its class compiles to (a literal 2, ``.`` 25, ``\d`` 200,
    ``\w`` or ``\p{...}`` 2,000; a bracket class the sum of its members); a counted
    repetition multiplies what it repeats by its largest count, groups and alternatives
    add up, and a case-insensitive flag doubles the whole. Constructs this reading does
    not know weigh as literals; the engine refuses what it cannot compile anyway.
    """
    weight, at = 0, 0
    while at < len(pattern):  # an unbalanced ')' ends a sequence early: read on
        part, at = _sequence(pattern, at)
        weight = min(weight + part, _CAP)
    if any("i" in flags.group(1).partition("-")[0] for flags in _FLAGS.finditer(pattern)):
        weight = min(2 * weight, _CAP)
    return weight


def _sequence(text: str, at: int) -> tuple[int, int]:
    """The weight of the alternatives from ``at`` to the end or the closing ``)``."""
    total = 0
    last = 0  # the weight of the last atom, for a quantifier that follows it
    while at < len(text):
        char = text[at]
        if char == ")":
            return min(total, _CAP), at + 1
        if char == "|":
            at += 1
            last = 0
            continue
        if char in "*+?":
            at += 1
            continue
        if char == "{":
            counted = _COUNTED.match(text, at)
            if counted is not None:
                low, comma, high = counted.group(1), counted.group(2), counted.group(3)
                most = _count(high) if high else _count(low) + (1 if comma else 0)
                repeated = last * min(max(most, 1), _CAP)
                total = min(total - last + repeated, _CAP)
                last = repeated
                at = counted.end()
                continue
        atom, at = _atom(text, at)
        total = min(total + atom, _CAP)
        last = atom
    return min(total, _CAP), at


def _count(digits: str) -> int:
    """A repetition count, read only as far as the cap needs (a long one is the cap)."""
    return int(digits) if len(digits) <= 12 else _CAP


def _atom(text: str, at: int) -> tuple[int, int]:
    """The weight of the atom at ``at`` and where the text after it starts."""
    char = text[at]
    if char == "(":
        flags = _FLAGS.match(text, at)
        if flags is not None and flags.group(2) == ")":
            return 0, flags.end()  # flags for the rest of the group
        opened = flags or _NAMED.match(text, at) or _LOOK_AROUND.match(text, at)
        return _sequence(text, opened.end() if opened is not None else at + 1)
    if char == "[":
        return _bracket(text, at + 1)
    if char == ".":
        return _ANY_CHAR, at + 1
    if char == "\\":
        return _escape(text, at + 1)
    if char in "^$":
        return 1, at + 1
    return _LITERAL if char.isascii() else 2 * _LITERAL, at + 1


def _escape(text: str, at: int) -> tuple[int, int]:
    """The weight of the escape whose letter is at ``at``."""
    if at >= len(text):
        return _LITERAL, at
    letter = text[at]
    if letter in "pP":  # \pL or \p{Name}
        end = text.find("}", at) + 1 if text.startswith("{", at + 1) else at + 2
        return _CLASS_ESCAPES[letter], max(end, at + 2)
    if letter in _CLASS_ESCAPES:
        return _CLASS_ESCAPES[letter], at + 1
    if letter in "xuU" and text.startswith("{", at + 1):
        return 2 * _LITERAL, max(text.find("}", at) + 1, at + 2)
    return _LITERAL, at + 1


def _bracket(text: str, at: int) -> tuple[int, int]:
    """The weight of the bracket class whose body starts at ``at`` (after its ``[``)."""
    total = 0
    if text.startswith("^", at):
        total += _NEGATED
        at += 1
    if text.startswith("]", at):  # a literal ']' first
        total += _LITERAL
        at += 1
    while at < len(text):
        char = text[at]
        if char == "]":
            return min(total, _CAP), at + 1
        if char == "[":
            if text.startswith("[:", at):
                close = text.find(":]", at)
                if close > 0:
                    total += _POSIX
                    at = close + 2
                    continue
            inner, at = _bracket(text, at + 1)
            total = min(total + inner, _CAP)
            continue
        if char == "\\":
            weight, at = _escape(text, at + 1)
            total += weight
            continue
        total += _LITERAL if char.isascii() else 2 * _LITERAL
        at += 1
    return min(total, _CAP), at


def compile_pattern(pattern: str) -> Any:
    """A matcher of ``pattern`` in a linear-time engine (search semantics), or None.

    None means the pattern needs what such an engine lacks (look-around,
    back-references) or is not a regular expression it reads: a schema that uses one is
    refused (see `toolpalette._schema.checks.check_schema()`). Compiled anew at every
    call: callers keep what they compiled (one schema's validator its own patterns).
    """
    from pydantic_core import SchemaError, SchemaValidator, core_schema

    try:
        return SchemaValidator(core_schema.str_schema(pattern=pattern, regex_engine="rust-regex"))
    except SchemaError:
        return None
