"""JSON values compared as JSON Schema compares them: equality, keys and uniqueness.

Keys are hashed so that nobody who writes the values can choose colliding hashes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Final

__all__ = ["SCALAR_TYPES", "all_unique", "json_key", "sized_key", "value_count"]

SCALAR_TYPES: Final[frozenset[type]] = frozenset({str, int, float, bool, type(None)})
"""The Python types of JSON's plain values."""

_MODULUS: Final = (1 << 61) - 1
"""Python's modulus for hashing numbers: integers within it hash to distinct values."""

_JSON_STRING: Final = re.compile(r'"(?:[^"\\]|\\.)*"')
_FLOAT: Final = re.compile(r"[0-9][.eE]")


def all_unique(items: list[Any]) -> bool:
    """Whether no two items are equal as JSON values (hashing: linear in the items).

    Lists of strings alone, or of integers alone within Python's hash modulus, are
    compared as they are (C speed); anything else through `json_key()`.
    """
    if not items:
        return True
    kind = type(items[0])
    if kind in (str, int) and all(type(item) is kind for item in items):
        if kind is str or (min(items) > -_MODULUS and max(items) < _MODULUS):
            return len(set(items)) == len(items)
        return len(set(map(json_key, items))) == len(items)
    # repr() keys, built in C: equal reprs are equal JSON values, so a repeat is a
    # duplicate; and without objects (key order) or floats (1 == 1.0) among the items,
    # different reprs are different values, so no repeat proves uniqueness.
    if len(set(map(repr, items))) < len(items):
        return False
    text = _JSON_STRING.sub("", json.dumps(items))
    if "{" not in text and not _FLOAT.search(text):
        return True
    seen: set[Any] = set()
    for item in items:
        key = json_key(item)
        if key in seen:
            return False
        seen.add(key)
    return True


def json_key(value: Any) -> Any:
    """A hashable key equal for JSON-equal values (``1`` and ``1.0``; not ``1`` and ``true``).

    Its hash is the process's to choose, not the value's writer's (see the module doc).
    """
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, (int, float)):
        return _number_key(value)
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, list):
        return ("a", tuple(json_key(item) for item in value))
    if isinstance(value, dict):
        return ("o", frozenset((key, json_key(item)) for key, item in value.items()))
    return ("z", None)


def _number_key(value: float) -> Any:
    if isinstance(value, float) and not value.is_integer():
        return ("n", value)  # a fraction: few values share a hash, none by choice
    whole = int(value) if isinstance(value, float) else value
    if -_MODULUS < whole < _MODULUS:
        return ("n", whole)
    return ("N", format(whole, "x"))


def sized_key(value: Any, most: int, check: Callable[[int], bool] | None = None) -> tuple[Any, int]:
    """`json_key()` of ``value`` and the values it counted (itself and those inside).

    Stops once past ``most`` values, returning None for the key: a value holding more
    values than ``most`` equals none of at most that size. ``check`` is called with the
    count every `CHECK_EVERY` values and at the end; once it answers False the
    walk stops too, the key None.
    """
    if not isinstance(value, (list, dict)):
        return json_key(value), 1
    counted = [0]

    def key(item: Any) -> Any:
        counted[0] += 1
        if counted[0] > most or (
            check is not None and not counted[0] % CHECK_EVERY and not check(counted[0])
        ):
            raise _Stopped
        if isinstance(item, list):
            return ("a", tuple(map(key, item)))
        if isinstance(item, dict):
            return ("o", frozenset((name, key(each)) for name, each in item.items()))
        return json_key(item)

    try:
        found = key(value)
    except _Stopped:
        return None, counted[0]
    if check is not None and not check(counted[0]):
        return None, counted[0]
    return found, counted[0]


CHECK_EVERY: Final = 256
"""Values `sized_key()` hashes between two calls of its ``check``."""


class _Stopped(Exception):
    """Raised inside `sized_key()` to end its walk."""


def value_count(value: Any) -> int:
    """The values in ``value``: itself and every one inside it."""
    if isinstance(value, list):
        return 1 + sum(map(value_count, value))
    if isinstance(value, dict):
        return 1 + sum(map(value_count, value.values()))
    return 1
