"""JSON values compared as JSON Schema compares them: equality, keys and uniqueness.

``1`` and ``1.0`` are one value, ``1`` and ``true`` are two, and the order of an
object's keys does not matter. Used by the bounded validator (``enum``, ``const``,
``uniqueItems``) and by the pydantic path's ``uniqueItems`` check; each function's time
is bounded by the size of what it compares, with no pairwise comparison.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

__all__ = ["SCALAR_TYPES", "all_unique", "json_equal", "json_key"]

SCALAR_TYPES: Final[frozenset[type]] = frozenset({str, int, float, bool, type(None)})
"""The Python types of JSON's plain values."""

_JSON_STRING: Final = re.compile(r'"(?:[^"\\]|\\.)*"')
_FLOAT: Final = re.compile(r"[0-9][.eE]")


def all_unique(items: list[Any]) -> bool:
    """Whether no two items are equal as JSON values (hashing: linear in the items).

    Lists of strings alone, or of integers alone, are compared as they are (C speed);
    anything else through :func:`json_key`.
    """
    if not items:
        return True
    kind = type(items[0])
    if kind in (str, int) and all(type(item) is kind for item in items):
        return len(set(items)) == len(items)
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
    """A hashable key equal for JSON-equal values (``1`` and ``1.0``; not ``1`` and ``true``)."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, (int, float)):
        return ("n", value)
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, list):
        return ("a", tuple(json_key(item) for item in value))
    if isinstance(value, dict):
        return ("o", frozenset((key, json_key(item)) for key, item in value.items()))
    return ("z", None)


def json_equal(one: Any, two: Any) -> bool:
    """Equal as JSON values (``1 == 1.0``, ``1 != true``), in time bounded by the smaller."""
    if one is two:
        return True
    if isinstance(one, list) or isinstance(two, list):
        return (
            isinstance(one, list)
            and isinstance(two, list)
            and len(one) == len(two)
            and all(map(json_equal, one, two))
        )
    if isinstance(one, dict) or isinstance(two, dict):
        return (
            isinstance(one, dict)
            and isinstance(two, dict)
            and one.keys() == two.keys()
            and all(json_equal(value, two[key]) for key, value in one.items())
        )
    if isinstance(one, bool) or isinstance(two, bool):
        return type(one) is type(two) and one == two
    if isinstance(one, str) or isinstance(two, str):
        return type(one) is type(two) and one == two
    return bool(one == two)
