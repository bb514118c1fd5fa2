"""Checking the JSON Schemas tools bring: refined, valid, self-contained, linear-time.

jsonschema is imported here lazily, never by ``import toolpalette``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

from toolpalette._schema.cost import schema_patterns, work_problems
from toolpalette._schema.headers import header_problems
from toolpalette._schema.metaschema import surely_valid
from toolpalette._schema.patterns import (
    MAX_PATTERN_WEIGHT,
    MAX_PATTERNS_WEIGHT,
    compile_pattern,
    pattern_weight,
)
from toolpalette.errors import InvalidToolSchemaError

__all__ = ["SchemaRefiner", "check_schema", "refine"]

SchemaRefiner = Callable[[dict[str, Any]], "dict[str, Any] | None"]
"""Narrows a generated input schema; returns the new schema, or None after editing in place."""


def refine(schema: dict[str, Any], refiner: SchemaRefiner, tool_name: str) -> dict[str, Any]:
    """Apply a refiner to a copy of ``schema``; a failing refiner refuses the tool."""
    candidate = copy.deepcopy(schema)
    try:
        returned = refiner(candidate)
    except Exception as exc:
        raise InvalidToolSchemaError(
            tool_name=tool_name, errors=[f"refine_schema failed: {type(exc).__name__}"]
        ) from exc
    refined = candidate if returned is None else returned
    if not isinstance(refined, dict):
        raise InvalidToolSchemaError(
            tool_name=tool_name, errors=["refine_schema must return a dict or None"]
        )
    return refined


def _local_refs_only(schema: Any, path: str = "#") -> Iterable[str]:
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key in ("$ref", "$dynamicRef") and isinstance(value, str):
                if not value.startswith("#"):
                    yield f"{path}/{key}: only local references ('#...') are allowed"
            elif key == "$id" and isinstance(value, str) and path != "#":
                yield f"{path}/$id: nested $id is not allowed"
            else:
                yield from _local_refs_only(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for i, item in enumerate(schema):
            yield from _local_refs_only(item, f"{path}/{i}")


def _backtracking_patterns(schema: dict[str, Any]) -> Iterable[str]:
    """The patterns a linear-time engine cannot compile (each compiled once).

    Patterns too costly to compile are reported by `work_problems()` and not
    compiled here (nor any, when all of them together are).
    """
    weights = {pattern: pattern_weight(pattern) for _, pattern in schema_patterns(schema)}
    if sum(weights.values()) > MAX_PATTERNS_WEIGHT:
        return
    linear = {
        pattern: compile_pattern(pattern) is not None
        for pattern, weight in weights.items()
        if weight <= MAX_PATTERN_WEIGHT
    }
    for path, pattern in schema_patterns(schema):
        if linear.get(pattern, True):
            continue
        if path.endswith("/pattern"):
            yield (
                f"{path}: needs look-around or back-references; input is only "
                "matched with a linear-time engine"
            )
        else:
            yield (
                f"{path}: a pattern needs look-around or back-references; input is only "
                "matched with a linear-time engine"
            )


def _metaschema_errors(schema: dict[str, Any], what: str) -> list[str]:
    """The errors jsonschema finds in ``schema`` against the 2020-12 metaschema."""
    from jsonschema import Draft202012Validator

    return [
        f"{what} schema {e.json_path}: {e.message}"
        for e in Draft202012Validator(Draft202012Validator.META_SCHEMA).iter_errors(schema)
    ]


def check_schema(schema: object, tool_name: str, *, what: str = "input") -> None:
    """Refuse a schema that is invalid, reaches outside itself, or is over the bounds.

    Invalid: not Draft 2020-12 (decided without jsonschema when every keyword is one
    `surely_valid()` checks and the schema is valid;
    any doubt, or an invalid schema, goes to jsonschema's metaschema check, whose
    messages name the problems). Outside itself: a ``$ref`` that is not local. Needs
    backtracking: a pattern that only a backtracking regular expression engine can match.
    Over the bounds: it costs more to validate than any input's budget allows, or time
    the budget cannot see (see `toolpalette._schema.cost`: subschemas per
    value, patterns' compile cost, references that do not resolve).

    Raises:
        InvalidToolSchemaError: naming every problem found.
    """
    if not isinstance(schema, dict):
        raise InvalidToolSchemaError(
            tool_name=tool_name, errors=[f"{what} schema is not an object"]
        )
    errors = [] if surely_valid(schema) else _metaschema_errors(schema, what)
    errors.extend(f"{what} schema {p}" for p in _local_refs_only(schema))
    errors.extend(f"{what} schema {p}" for p in _backtracking_patterns(schema))
    errors.extend(f"{what} schema {p}" for p in work_problems(schema))
    if what == "input" and schema.get("type") != "object":
        errors.append("input schema must have type 'object'")
    if what == "input":
        errors.extend(f"input schema {p}" for p in header_problems(schema))
    if errors:
        raise InvalidToolSchemaError(tool_name=tool_name, errors=errors)
