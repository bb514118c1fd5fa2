"""A schema as the bounded validator reads it: a copy whose objects keep what is worked out once."""

from __future__ import annotations

from typing import Any, Final, final

from toolpalette._schema.budget import ValidationDeferred, on_loop
from toolpalette._schema.json_values import json_key, value_count
from toolpalette._schema.patterns import compile_pattern, pattern_weight

__all__ = [
    "ANY_TYPE",
    "KEYS_PER_STEP",
    "LOOP_BUILD",
    "Node",
    "descent_cost",
    "prepare",
    "simple_items",
]

LOOP_BUILD: Final = 2_000
"""The most a schema may cost to build on an event loop (a few ms); more, in a worker."""

KEYS_PER_STEP: Final = 32
"""Keys (or names) a keyword goes through in Python for one step of the budget."""


@final
class Node(dict):  # type: ignore[type-arg]
    """One object of a prepared schema: its keys and values, and what is known of them.

    An attribute is None where the object has no such keyword, or a malformed one
    (which the keyword then treats as jsonschema does).
    """

    __slots__ = ("choices", "constant", "descent", "matchers", "needed", "order", "simple")

    choices: tuple[frozenset[Any], int] | None
    """``enum``: the keys of its values (``json_key``) and the most values one holds
    (itself and those inside)."""
    constant: tuple[Any, int] | None
    """``const``: its key and the values it holds."""
    descent: int
    """Steps a descent into this object costs beyond its keywords' (`descent_cost()`)."""
    matchers: dict[str, Any] | None
    """``pattern`` and ``patternProperties``: each pattern's compiled matcher (None for
    one the engine cannot compile)."""
    needed: frozenset[str] | None
    """``required``: its names, when they are all strings."""
    order: dict[str, int] | None
    """``properties``: each declared name's position, to report in the schema's order."""
    simple: tuple[frozenset[type], frozenset[str]] | None
    """What this object, as an ``items`` schema, accepts without a descent
    (`simple_items()`)."""


def prepare(schema: Any) -> Any:
    """A copy of ``schema`` whose every object is a `Node`, with its facts filled.

    Objects shared in ``schema`` stay shared in the copy (a schema built in code may
    reuse one object many times), and a cycle stays a cycle.

    Raises:
        ValidationDeferred: on an event loop, when building costs more than
            `LOOP_BUILD`.
    """
    limit = LOOP_BUILD if on_loop() else None
    copies: dict[int, Any] = {}
    nodes: list[Node] = []
    root = _empty_copy(schema, copies, nodes)
    pending: list[tuple[Any, Any]] = [(schema, root)] if isinstance(schema, (dict, list)) else []
    copied_values = 0
    while pending:
        source, target = pending.pop()
        copied_values += len(source)
        if limit is not None and copied_values > limit:
            raise ValidationDeferred
        pairs = source.items() if isinstance(source, dict) else enumerate(source)
        for key, value in pairs:
            if isinstance(value, (dict, list)):
                seen = id(value) in copies
                copy = _empty_copy(value, copies, nodes)
                if not seen:
                    pending.append((value, copy))
                value = copy
            if isinstance(target, dict):
                dict.__setitem__(target, key, value)
            else:
                target.append(value)
    own = {id(node): found for node in nodes if (found := _patterns_of(node))}
    patterns = {pattern for found in own.values() for pattern in found}
    if limit is not None and copied_values + sum(map(pattern_weight, patterns)) > limit:
        raise ValidationDeferred
    compiled = {pattern: compile_pattern(pattern) for pattern in patterns}
    for node in nodes:
        _fill(node, own.get(id(node)), compiled)
    known: dict[int, Any] = {}
    for node in nodes:
        items = node.get("items")
        if type(items) is Node:
            items.simple = _simple_items(items, known)
    for node in nodes:  # once every enum's keys are taken (a value may be an object)
        if node is not root:
            dict.pop(node, "$schema", None)
    return root if isinstance(schema, (dict, list)) else schema


def _empty_copy(value: Any, copies: dict[int, Any], nodes: list[Node]) -> Any:
    """The copy of the object or array ``value`` (filled later), made once."""
    copy = copies.get(id(value))
    if copy is None:
        if isinstance(value, dict):
            copy = Node()
            nodes.append(copy)
        else:
            copy = []
        copies[id(value)] = copy
    return copy


def _patterns_of(node: Node) -> list[str]:
    if "pattern" not in node and "patternProperties" not in node:
        return []
    found: list[str] = []
    pattern = node.get("pattern")
    if isinstance(pattern, str):
        found.append(pattern)
    by_pattern = node.get("patternProperties")
    if isinstance(by_pattern, dict):
        found.extend(p for p in by_pattern if isinstance(p, str))
    return found


_FACTS: Final = frozenset(
    {"pattern", "patternProperties", "enum", "const", "required", "properties"}
)
"""The keywords whose facts `_fill()` works out."""


def _fill(node: Node, own: list[str] | None, compiled: dict[str, Any]) -> None:
    """Work out ``node``'s facts (its values are copied already) but ``simple``."""
    node.descent = len(node) // KEYS_PER_STEP + (0 if _KEYWORDS.intersection(node) else 1)
    node.matchers = node.choices = node.constant = node.needed = node.order = None
    node.simple = None
    if _FACTS.isdisjoint(node):
        return
    if own:
        node.matchers = {pattern: compiled[pattern] for pattern in own}
    enum = node.get("enum")
    if isinstance(enum, list):
        node.choices = (frozenset(map(json_key, enum)), max(map(value_count, enum), default=0))
    if "const" in node:
        node.constant = (json_key(node["const"]), value_count(node["const"]))
    required = node.get("required")
    if isinstance(required, list) and all(isinstance(name, str) for name in required):
        node.needed = frozenset(required)
    declared = node.get("properties")
    if isinstance(declared, dict):
        node.order = {name: i for i, name in enumerate(declared)}


_KEYWORDS: Final = frozenset(
    {
        "$dynamicRef",
        "$ref",
        "additionalProperties",
        "allOf",
        "anyOf",
        "const",
        "contains",
        "dependentRequired",
        "dependentSchemas",
        "enum",
        "exclusiveMaximum",
        "exclusiveMinimum",
        "if",
        "items",
        "maxItems",
        "maxLength",
        "maxProperties",
        "maximum",
        "minItems",
        "minLength",
        "minProperties",
        "minimum",
        "multipleOf",
        "not",
        "oneOf",
        "pattern",
        "patternProperties",
        "prefixItems",
        "properties",
        "propertyNames",
        "required",
        "type",
        "unevaluatedItems",
        "unevaluatedProperties",
        "uniqueItems",
    }
)
"""The keywords that charge steps of their own (``format`` is an annotation here)."""


def descent_cost(schema: Any) -> int:
    """Steps a descent into ``schema`` costs beyond what its keywords charge.

    A descent reads every key of the object (twice: to build the validator, to run it),
    a step per `KEYS_PER_STEP`; and one into a schema with no keyword that charges
    (``true``, ``false``, ``{}``, annotations only) costs a step of its own, so that
    descending into many of them (``allOf`` of ten thousand ``{}``) is counted too.
    """
    if type(schema) is Node:
        return schema.descent
    if not isinstance(schema, dict):
        return 1
    return len(schema) // KEYS_PER_STEP + (0 if _KEYWORDS.intersection(schema) else 1)


# -- what an items schema accepts without a descent ----------------------------------------

_JSON_TYPES: Final[dict[str, tuple[type, ...]]] = {
    "string": (str,),
    "integer": (int,),  # an integral float too, but that is checked item by item
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
    "array": (list,),
    "object": (dict,),
}
_ANNOTATIONS: Final = frozenset(
    {
        "title",
        "description",
        "examples",
        "default",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",  # annotation only: the validator has no format checker
    }
)
ANY_TYPE: Final[frozenset[type]] = frozenset({str, int, float, bool, type(None), list, dict})
"""Every Python type a JSON value has: an items schema that accepts any item."""


def simple_items(items: Any) -> tuple[frozenset[type], frozenset[str]] | None:
    """What an item schema accepts without a descent, or None to descend always.

    ``(types, texts)``: an item whose Python type is in ``types`` is accepted whatever
    its value, and a string in ``texts`` is accepted too. For an item schema of a type
    alone (`_types_alone()`); of ``enum`` or ``const`` of strings, with or without
    a ``type``; or of ``anyOf`` over such schemas (annotations allowed everywhere).
    Worked out when a schema is prepared (`Node.simple`).
    """
    if type(items) is Node:
        return items.simple
    return _simple_items(items, {})


def _simple_items(
    items: Any, known: dict[int, Any]
) -> tuple[frozenset[type], frozenset[str]] | None:
    """`simple_items()`, each object worked out once (``known``, by identity)."""
    if id(items) in known:
        return known[id(items)]  # type: ignore[no-any-return]
    known[id(items)] = None  # a cycle through anyOf: descend
    found = _simple_of(items, known)
    known[id(items)] = found
    return found


def _simple_of(items: Any, known: dict[int, Any]) -> tuple[frozenset[type], frozenset[str]] | None:
    if not isinstance(items, dict):
        types = _types_alone(items)
        return None if types is None else (types, frozenset())
    keys = items.keys() - _ANNOTATIONS
    if keys <= {"type"}:
        types = _types_alone(items)
        return None if types is None else (types, frozenset())
    if keys == {"anyOf"}:
        branches = items["anyOf"]
        if not isinstance(branches, list) or not branches:
            return None
        accepted: set[type] = set()
        texts: set[str] = set()
        for branch in branches:
            part = _simple_items(branch, known)
            if part is None:
                return None
            accepted.update(part[0])
            texts.update(part[1])
        return frozenset(accepted), frozenset(texts)
    if keys - {"type"} not in ({"enum"}, {"const"}):
        return None
    values = items["enum"] if "enum" in items else [items["const"]]
    if not isinstance(values, list) or not all(type(value) is str for value in values):
        return None
    if "type" in items:
        types = _types_alone({"type": items["type"]})
        if types is None:
            return None
        if str not in types:  # no string is of the type: nothing is accepted
            return frozenset(), frozenset()
    return frozenset(), frozenset(values)


def _types_alone(items: Any) -> frozenset[type] | None:
    """The Python types an item schema accepts by type alone, or None to descend always.

    ``True`` and an item schema of annotations only accept everything.
    """
    if items is True:
        return ANY_TYPE
    if not isinstance(items, dict) or not _ANNOTATIONS.issuperset(
        key for key in items if key != "type"
    ):
        return None
    kind = items.get("type")
    if kind is None:
        return ANY_TYPE
    names = [kind] if isinstance(kind, str) else kind
    if not isinstance(names, list) or not all(name in _JSON_TYPES for name in names):
        return None
    return frozenset(python for name in names for python in _JSON_TYPES[name])
