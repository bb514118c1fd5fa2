"""What a schema costs to validate whatever the input: worked out when the tool is defined.

Subschemas per value, patterns' compile cost and dangling references are refused up front.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final
from urllib.parse import unquote

from toolpalette._schema.budget import LOOP_STEPS
from toolpalette._schema.patterns import MAX_PATTERN_WEIGHT, MAX_PATTERNS_WEIGHT, pattern_weight

__all__ = ["MAX_SUBSCHEMAS_PER_VALUE", "schema_patterns", "schema_problem", "work_problems"]

MAX_SUBSCHEMAS_PER_VALUE: Final = LOOP_STEPS
"""The most subschemas one value may be checked against in place (the least budget)."""

_IN_PLACE_ONE: Final = ("not", "if", "then", "else")
_IN_PLACE_MANY: Final = ("allOf", "anyOf", "oneOf")
_REFERENCES: Final = ("$ref", "$dynamicRef")
_ONE: Final = (
    "additionalProperties",
    "items",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    *_IN_PLACE_ONE,
)
_MANY: Final = ("prefixItems", *_IN_PLACE_MANY)
_BY_NAME: Final = ("properties", "patternProperties", "dependentSchemas", "$defs", "definitions")
_ENDLESS: Final = -1


def schema_problem(schema: Any) -> str | None:
    """The first bound ``schema`` goes over (see the module doc), or None."""
    problems = work_problems(schema)
    return problems[0] if problems else None


def work_problems(schema: Any) -> list[str]:
    """Every bound ``schema`` goes over, each naming the place and the bound."""
    if not isinstance(schema, dict):
        return []
    problems = _pattern_problems(schema)
    places = dict(_subschemas(schema))
    anchors = {
        name: node
        for node in places.values()
        for key in ("$anchor", "$dynamicAnchor")
        if isinstance(name := node.get(key), str)
    }
    counted: dict[int, int] = {}
    for path, node in places.items():
        for key in _REFERENCES:
            reference = node.get(key)
            local = isinstance(reference, str) and reference.startswith("#")
            if local and _target(schema, anchors, str(reference)) is None:
                problems.append(f"{path}/{key}: does not resolve inside the schema")
    for path, node in places.items():
        count = _per_value(node, schema, anchors, counted, set())
        if count == _ENDLESS:
            problems.append(
                f"{path}: a $ref cycle checks one value against the same subschemas forever"
            )
            break
        if count > MAX_SUBSCHEMAS_PER_VALUE:
            problems.append(
                f"{path}: checking one value may go through more than "
                f"{MAX_SUBSCHEMAS_PER_VALUE} subschemas (allOf, anyOf, oneOf, not, if, "
                f"dependentSchemas and $ref, each counted as often as it applies); "
                f"at most {MAX_SUBSCHEMAS_PER_VALUE}, the least validation budget"
            )
            break
    return problems


def _subschemas(schema: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every subschema object of ``schema`` with its JSON path, each object once."""
    seen: set[int] = set()
    pending: list[tuple[str, Any]] = [("#", schema)]
    while pending:
        path, node = pending.pop()
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))
        yield path, node
        for key in _ONE:
            if key in node:
                pending.append((f"{path}/{key}", node[key]))
        for key in _MANY:
            value = node.get(key)
            if isinstance(value, list):
                pending.extend((f"{path}/{key}/{i}", each) for i, each in enumerate(value))
        for key in _BY_NAME:
            value = node.get(key)
            if isinstance(value, dict):
                pending.extend((f"{path}/{key}/{name}", each) for name, each in value.items())


def _target(root: dict[str, Any], anchors: dict[str, Any], reference: str) -> Any:
    """What a local reference points at, as jsonschema's resolver reads it, or None."""
    fragment = unquote(reference[1:])
    if not fragment:
        return root
    if not fragment.startswith("/"):
        return anchors.get(fragment)
    node: Any = root
    for raw in fragment[1:].split("/"):
        segment = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and segment in node:
            node = node[segment]
        elif isinstance(node, list) and segment.isdigit() and int(segment) < len(node):
            node = node[int(segment)]
        else:
            return None
    return node


def _per_value(
    node: Any,
    root: dict[str, Any],
    anchors: dict[str, Any],
    counted: dict[int, int],
    open_: set[int],
) -> int:
    """The subschemas one value goes through at ``node`` (capped), or `_ENDLESS`."""
    if not isinstance(node, dict):
        return 1
    known = counted.get(id(node))
    if known is not None:
        return known
    if id(node) in open_:
        return _ENDLESS
    open_.add(id(node))
    total = 1
    for child in _in_place(node, root, anchors):
        count = _per_value(child, root, anchors, counted, open_)
        if count == _ENDLESS:
            total = _ENDLESS
            break
        total = min(total + count, 2 * MAX_SUBSCHEMAS_PER_VALUE)
    open_.discard(id(node))
    counted[id(node)] = total
    return total


def _in_place(node: dict[str, Any], root: dict[str, Any], anchors: dict[str, Any]) -> Iterator[Any]:
    """The subschemas that apply to the same value as ``node``."""
    for key in _IN_PLACE_ONE:
        if key in node:
            yield node[key]
    for key in _IN_PLACE_MANY:
        value = node.get(key)
        if isinstance(value, list):
            yield from value
    dependent = node.get("dependentSchemas")
    if isinstance(dependent, dict):
        yield from dependent.values()
    for key in _REFERENCES:
        reference = node.get(key)
        if isinstance(reference, str) and reference.startswith("#"):
            target = _target(root, anchors, reference)
            if target is not None:
                yield target


def _pattern_problems(schema: dict[str, Any]) -> list[str]:
    """The patterns too costly to compile, one by one and together."""
    problems: list[str] = []
    weights: dict[str, int] = {}
    for path, pattern in schema_patterns(schema):
        weight = weights.get(pattern)
        if weight is None:
            weight = weights[pattern] = pattern_weight(pattern)
            if weight > MAX_PATTERN_WEIGHT:
                problems.append(
                    f"{path}: a pattern too costly to compile (an estimated {weight} "
                    f"microseconds; at most {MAX_PATTERN_WEIGHT}: counted repetitions of "
                    "large classes such as \\w multiply it)"
                )
    total = sum(weights.values())
    if total > MAX_PATTERNS_WEIGHT and not problems:
        problems.append(
            f"#: patterns too costly to compile together (an estimated {total} "
            f"microseconds; at most {MAX_PATTERNS_WEIGHT})"
        )
    return problems


def schema_patterns(schema: Any, path: str = "#") -> Iterator[tuple[str, str]]:
    """Every pattern in ``schema`` with the path of the keyword holding it, in order.

    ``pattern`` and ``patternProperties`` wherever they are (under any key), as the
    linear-time check reads them.
    """
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "pattern" and isinstance(value, str):
                yield f"{path}/pattern", value
            elif key == "patternProperties" and isinstance(value, dict):
                for pattern, sub in value.items():
                    if isinstance(pattern, str):
                        yield f"{path}/patternProperties", pattern
                    yield from schema_patterns(sub, f"{path}/patternProperties")
            else:
                yield from schema_patterns(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for i, item in enumerate(schema):
            yield from schema_patterns(item, f"{path}/{i}")
