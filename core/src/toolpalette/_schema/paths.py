"""Places in a schema: walking it along an error's location, and the refusal texts."""

from __future__ import annotations

import enum
import heapq
from collections.abc import Iterable, Sequence
from typing import Any, Final, NamedTuple

from toolpalette._schema.budget import LOOP_STEPS, OVER_BUDGET, STEPS_PER_BYTE
from toolpalette.errors import InputProblem

MAX_PROBLEMS: Final = 64
"""The most problems one refusal collects (the first found, in input order)."""

MAX_NAMES: Final = 64
"""The most declared names a refusal of undeclared keys lists."""

__all__ = [
    "MAX_NAMES",
    "MAX_PROBLEMS",
    "Location",
    "Place",
    "declared_type",
    "format_path",
    "missing_field",
    "no_other_fields",
    "problems_from_jsonschema",
    "resolve",
    "safe_parts",
    "walk",
]


class Location(enum.Enum):
    """What the parts of a location name, and so how `walk()` follows them."""

    INSTANCE = "instance"
    """jsonschema's path: the keys and indexes of the input. A key the schema does not
    declare is written ``*`` and leads to ``additionalProperties``."""
    PYDANTIC = "pydantic"
    """pydantic's ``loc``: keys, indexes (a tuple's through ``prefixItems``), and past a
    union the name of a member, or ``[key]`` for a dictionary's key. The walk stops
    there (``X | None`` excepted: pydantic names no member), since what follows names
    no input."""
    SAFE = "safe"
    """Parts a walk wrote: declared keys, ``*`` for ``additionalProperties``, indexes.
    Any other key leads nowhere."""


class Place(NamedTuple):
    """Where a walk ended."""

    parts: list[object]
    """The location's parts, each key the schema does not declare written ``*``."""
    node: Any
    """The subschema there (its ``$ref`` not followed), or None where the schema says
    nothing."""
    in_union: bool
    """Whether the walk stopped at a union: the rest of a pydantic ``loc`` names a
    member, not input."""


def walk(
    schema: dict[str, Any], location: Sequence[object], kind: Location = Location.INSTANCE
) -> Place:
    """Follow ``location`` (parts of the ``kind`` given) through ``schema``."""
    parts: list[object] = []
    node: Any = schema
    for part in location:
        node = resolve(schema, node)
        if kind is Location.PYDANTIC and isinstance(node, dict):
            options = node.get("anyOf") or node.get("oneOf")
            if isinstance(options, list) and options:
                members = [resolve(schema, o) for o in options]
                concrete = [m for m in members if m != {"type": "null"}]
                if len(concrete) != 1:
                    return Place(parts, node, True)
                node = concrete[0]  # ``X | None``: pydantic names no member
        if isinstance(part, int):
            parts.append(part)
            if not isinstance(node, dict):
                node = None
                continue
            prefix = node.get("prefixItems") if kind is Location.PYDANTIC else None
            if isinstance(prefix, list) and part < len(prefix):
                node = prefix[part]
            else:
                node = node.get("items")
            continue
        if kind is Location.PYDANTIC and (not isinstance(part, str) or part == "[key]"):
            return Place(parts, node, False)
        props = (node.get("properties") or {}) if isinstance(node, dict) else {}
        if part in props:
            parts.append(part)
            node = props[part]
            continue
        parts.append("*")
        if kind is Location.SAFE and part != "*":
            node = None
        else:
            extra = node.get("additionalProperties") if isinstance(node, dict) else None
            node = extra if isinstance(extra, dict) else None
    return Place(parts, node, False)


def format_path(parts: Sequence[object]) -> str:
    """``("items", 2, "name")`` as ``items[2].name``; the empty path as ``(input)``."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(input)"


def safe_parts(schema: dict[str, Any], parts: Sequence[object]) -> list[object]:
    """``parts`` with every key the schema does not declare replaced by ``*``.

    Keys of free-form objects come from the model; a path must not echo them.
    """
    return walk(schema, parts).parts


def resolve(root: dict[str, Any], node: Any) -> Any:
    """``node`` with its local ``$ref`` chain followed (at most 16 steps)."""
    for _ in range(16):
        ref = node.get("$ref") if isinstance(node, dict) else None
        if not (isinstance(ref, str) and ref.startswith("#/")):
            return node
        target: Any = root
        for key in ref[2:].split("/"):
            target = target.get(key) if isinstance(target, dict) else None
        node = target
    return node


def _subschema(schema: dict[str, Any], parts: Sequence[object]) -> dict[str, Any] | None:
    resolved = resolve(schema, walk(schema, parts, Location.SAFE).node)
    return resolved if isinstance(resolved, dict) else None


def declared_type(schema: dict[str, Any], parts: Sequence[object]) -> str:
    """What the schema declares at ``parts``, for messages: its type, const or enum."""
    node = _subschema(schema, parts)
    if node is None:
        return "a value matching the schema"
    # An enum or a const says more than its type: a string off the list is a string.
    if "enum" in node or "const" in node:
        return "one of the allowed values"
    if "type" in node:
        kind = node["type"]
        return " or ".join(kind) if isinstance(kind, list) else str(kind)
    for key in ("anyOf", "oneOf"):
        options = node.get(key)
        if isinstance(options, list) and options and all(_is_choice(o) for o in options):
            return "one of the allowed values"
        if isinstance(options, list):
            kinds = sorted({_option_kind(resolve(schema, o)) for o in options})
            return " or ".join(kinds)
    return "a value matching the schema"


def missing_field(schema: dict[str, Any], parts: Sequence[object]) -> str:
    """What a refusal says of a required field left out at ``parts``."""
    declared = declared_type(schema, parts)
    if declared == _ALLOWED:
        return f"required field, {_ALLOWED}"
    return f"required field of type {declared}"


_ALLOWED = "one of the allowed values"


def _is_choice(option: Any) -> bool:
    """Whether a union member allows listed values only (a ``const`` or an ``enum``)."""
    return isinstance(option, dict) and ("const" in option or "enum" in option)


def _option_kind(option: Any) -> str:
    if not isinstance(option, dict):
        return "a value matching the schema"
    if _is_choice(option):
        return "one of the allowed values"
    if "type" in option:
        kind = option["type"]
        return " or ".join(map(str, kind)) if isinstance(kind, list) else str(kind)
    return "object"


_CONSTRAINTS = {
    "minimum": "number >= {v}",
    "exclusiveMinimum": "number > {v}",
    "maximum": "number <= {v}",
    "exclusiveMaximum": "number < {v}",
    "minLength": "text of at least {v} characters",
    "maxLength": "text of at most {v} characters",
    "minItems": "at least {v} items",
    "maxItems": "at most {v} items",
    "multipleOf": "a multiple of {v}",
    "pattern": "text matching the pattern {v}",
}


def problems_from_jsonschema(errors: Iterable[Any], schema: dict[str, Any]) -> list[InputProblem]:
    """Turn jsonschema errors into problems that name paths and declared types only.

    At most `MAX_PROBLEMS`, the first found: an object missing many required
    fields is one error per field, each listing them all.
    """
    problems: list[InputProblem] = []
    seen: set[InputProblem] = set()
    allowed: dict[int, str] = {}  # by properties object: the errors of one call share few
    for error in errors:
        if len(problems) >= MAX_PROBLEMS:
            break
        parts = safe_parts(schema, list(error.absolute_path))
        keyword = error.validator
        if keyword == "required":
            present = error.instance if isinstance(error.instance, dict) else {}
            for name in error.validator_value:
                if isinstance(name, str) and name not in present:
                    expected = missing_field(schema, [*parts, name])
                    problem = InputProblem(format_path([*parts, name]), expected)
                    # jsonschema reports each missing name separately: report it once.
                    if problem not in seen:
                        seen.add(problem)
                        problems.append(problem)
                        if len(problems) >= MAX_PROBLEMS:
                            break
            continue
        if keyword in ("additionalProperties", "unevaluatedProperties"):
            declared = error.schema.get("properties") or {}
            expected = allowed.get(id(declared)) or allowed.setdefault(
                id(declared), no_other_fields(declared)
            )
        elif keyword in _CONSTRAINTS:
            expected = _CONSTRAINTS[keyword].format(v=error.validator_value)
        elif keyword in ("enum", "const"):
            expected = "one of the allowed values"
        elif keyword == "uniqueItems":
            expected = "items without duplicates"
        elif keyword == OVER_BUDGET:
            expected = (
                f"input the schema can check in {error.validator_value} steps "
                f"(the bound on a hand-written schema's work, {STEPS_PER_BYTE} per byte of "
                f"input and at least {LOOP_STEPS}; send fewer items)"
            )
        elif keyword == "items" and error.validator_value is False:
            expected = "no more items than the schema lists"
        else:
            expected = declared_type(schema, parts)
        problems.append(InputProblem(format_path(parts), expected))
    return problems or [InputProblem("(input)", "a value matching the schema")]


def no_other_fields(declared: Iterable[str]) -> str:
    """What an object with undeclared keys should be: the declared names, sorted.

    At most `MAX_NAMES` are listed (and how many more there are): a refusal's
    length does not grow with the schema.
    """
    names = list(declared)
    if not names:
        return "no other fields"
    if len(names) <= MAX_NAMES:
        return f"no other fields (allowed: {', '.join(sorted(names))})"
    first = heapq.nsmallest(MAX_NAMES, names)
    return f"no other fields (allowed: {', '.join(first)}, and {len(names) - MAX_NAMES} more)"
