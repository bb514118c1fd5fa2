"""A server tool's input schema, its common subset compiled into a check of a few microseconds.

It only ever says yes where the bounded validator would; "no" means the validator decides.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sized
from functools import lru_cache
from typing import Any, Final

__all__ = ["MAX_WORK", "compile_check"]

MAX_WORK: Final = 2_000
"""Work units a check may spend before it gives the instance to the validator."""
_MAX_NODES: Final = 256
"""Schemas (subschemas included) past which no check is compiled."""

_ANNOTATIONS: Final = frozenset(
    {
        "$schema",
        "$comment",
        "$defs",
        "definitions",
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",  # an annotation: the bounded validator has no format checker
        "contentMediaType",
        "contentEncoding",
        "contentSchema",
    }
)
_HANDLED: Final = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "minProperties",
        "maxProperties",
        "items",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "enum",
        "const",
        "anyOf",
        "allOf",
        "$ref",
    }
)

Check = Callable[[Any, list[int]], bool]
"""A compiled schema: ``(instance, work)`` to whether it is valid; ``work[0]`` counts up."""


class _Unsupported(Exception):
    """The schema uses a keyword this check does not decide: no check for it."""


def compile_check(schema: Any) -> Callable[[Any], bool] | None:
    """A quick check for ``schema``, or None when it uses a keyword outside the subset.

    The check answers True only for instances the bounded validator accepts (see the
    module docstring); False sends the instance to that validator.
    """
    compiler = _Compiler(schema)
    try:
        check = compiler.compile(schema)
    except (_Unsupported, RecursionError):
        return None

    def quick(instance: Any) -> bool:
        work = [0]
        return check(instance, work) and work[0] <= MAX_WORK

    return quick


class _Compiler:
    """Compiles one root schema; local ``$ref`` targets are compiled once each."""

    def __init__(self, root: Any) -> None:
        self._root = root
        self._nodes = 0
        self._refs: dict[str, list[Check]] = {}

    def compile(self, schema: Any) -> Check:
        self._nodes += 1
        if self._nodes > _MAX_NODES:
            raise _Unsupported
        if schema is True:
            return _always
        if schema is False:
            return _never
        if not isinstance(schema, Mapping):
            raise _Unsupported
        asserted = _asserted_keywords()
        asserting = [k for k in schema if k not in _ANNOTATIONS and k in asserted]
        if "$id" in schema or "$anchor" in schema or "$dynamicAnchor" in schema:
            raise _Unsupported  # they change what a reference means
        if any(k not in _HANDLED for k in asserting):
            raise _Unsupported
        weight = 1 + len(schema)
        parts: list[Check] = []
        if "type" in schema:
            parts.append(_type_check(schema["type"]))
        parts.extend(self._object_parts(schema))
        parts.extend(self._array_parts(schema))
        parts.extend(_scalar_parts(schema))
        for key in ("enum", "const"):
            if key in schema:
                allowed = schema[key] if key == "enum" else [schema[key]]
                if not isinstance(allowed, list):
                    raise _Unsupported
                weight += len(allowed)
                parts.append(_one_of_values(allowed))
        for key in ("anyOf", "allOf"):
            if key in schema:
                branches = schema[key]
                if not isinstance(branches, list) or not branches:
                    raise _Unsupported
                checks = [self.compile(branch) for branch in branches]
                parts.append(_any(checks) if key == "anyOf" else _all(checks))
        if "$ref" in schema:
            parts.append(self._reference(schema["$ref"]))
        weight += len(schema.get("properties") or ()) + len(schema.get("required") or ())
        return _weighed(weight, parts)

    def _object_parts(self, schema: Mapping[str, Any]) -> list[Check]:
        parts: list[Check] = []
        declared = schema.get("properties")
        if declared is not None:
            if not isinstance(declared, Mapping):
                raise _Unsupported
            checks = {name: self.compile(sub) for name, sub in declared.items()}
            parts.append(_properties(checks))
        required = schema.get("required")
        if required is not None:
            if not isinstance(required, list) or not all(isinstance(n, str) for n in required):
                raise _Unsupported
            parts.append(_required(frozenset(required)))
        if "additionalProperties" in schema:
            extra = self.compile(schema["additionalProperties"])
            parts.append(_additional(frozenset(declared or ()), extra))
        for key, longest in (("minProperties", False), ("maxProperties", True)):
            if key in schema:
                parts.append(_size(dict, _count(schema[key]), longest))
        return parts

    def _array_parts(self, schema: Mapping[str, Any]) -> list[Check]:
        parts: list[Check] = []
        if "items" in schema:
            parts.append(_items(self.compile(schema["items"])))
        for key, longest in (("minItems", False), ("maxItems", True)):
            if key in schema:
                parts.append(_size(list, _count(schema[key]), longest))
        return parts

    def _reference(self, ref: object) -> Check:
        """A ``#/$defs/NAME`` (or ``#/definitions/NAME``) reference, compiled once."""
        if not isinstance(ref, str) or not ref.startswith(("#/$defs/", "#/definitions/")):
            raise _Unsupported
        cell = self._refs.get(ref)
        if cell is None:
            cell = self._refs[ref] = []
            section, _, name = ref[2:].partition("/")
            if "/" in name or "~" in name or "%" in name:
                raise _Unsupported
            defs = self._root.get(section) if isinstance(self._root, Mapping) else None
            if not isinstance(defs, Mapping) or name not in defs:
                raise _Unsupported
            cell.append(self.compile(defs[name]))
        return lambda instance, work: cell[0](instance, work)  # the cell fills before use


@lru_cache(maxsize=1)
def _asserted_keywords() -> frozenset[str]:
    """The keywords the bounded validator asserts: Draft 2020-12's (jsonschema, imported now)."""
    from jsonschema import Draft202012Validator

    return frozenset(Draft202012Validator.VALIDATORS)


# -- the checks ---------------------------------------------------------------------------


def _always(_instance: Any, _work: list[int]) -> bool:
    return True


def _never(_instance: Any, _work: list[int]) -> bool:
    return False


def _weighed(weight: int, parts: list[Check]) -> Check:
    if not parts:

        def charged(_instance: Any, work: list[int]) -> bool:
            work[0] += weight
            return True

        return charged
    if len(parts) == 1:
        (only,) = parts

        def single(instance: Any, work: list[int]) -> bool:
            work[0] += weight
            return work[0] <= MAX_WORK and only(instance, work)

        return single

    def check(instance: Any, work: list[int]) -> bool:
        work[0] += weight
        if work[0] > MAX_WORK:
            return False
        for part in parts:  # noqa: SIM110 - a loop: all() would build a generator a call
            if not part(instance, work):
                return False
        return True

    return check


_PYTHON_TYPES: Final[dict[str, tuple[type, ...]]] = {
    "string": (str,),
    "integer": (int,),  # and an integral float, checked apart
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
    "array": (list,),
    "object": (dict,),
}


def _type_check(types: Any) -> Check:
    names = types if isinstance(types, list) else [types]
    if not names or not all(isinstance(n, str) and n in _PYTHON_TYPES for n in names):
        raise _Unsupported
    accepted = frozenset(t for n in names for t in _PYTHON_TYPES[n])
    if "integer" not in names or "number" in names:
        return lambda instance, _work: type(instance) in accepted

    def check(instance: Any, _work: list[int]) -> bool:
        kind = type(instance)
        return kind in accepted or (kind is float and instance.is_integer())

    return check


def _properties(checks: dict[str, Check]) -> Check:
    def check(instance: Any, work: list[int]) -> bool:
        if type(instance) is not dict:
            return True
        work[0] += len(instance)
        return all(checks[name](value, work) for name, value in instance.items() if name in checks)

    return check


def _required(names: frozenset[str]) -> Check:
    return lambda instance, _work: type(instance) is not dict or instance.keys() >= names


def _additional(declared: frozenset[str], extra: Check) -> Check:
    def check(instance: Any, work: list[int]) -> bool:
        if type(instance) is not dict:
            return True
        work[0] += len(instance)
        for name, value in instance.items():
            if name not in declared and not extra(value, work):
                return False
        return True

    return check


def _items(each: Check) -> Check:
    def check(instance: Any, work: list[int]) -> bool:
        if type(instance) is not list:
            return True
        work[0] += len(instance)
        for item in instance:  # noqa: SIM110 - as above
            if not each(item, work):
                return False
        return True

    return check


def _count(bound: Any) -> int:
    if type(bound) is int and bound >= 0:
        return bound
    if type(bound) is float and bound.is_integer() and bound >= 0:
        return int(bound)
    raise _Unsupported


def _size(kind: type[Sized], bound: int, longest: bool) -> Check:
    def check(instance: Any, _work: list[int]) -> bool:
        if type(instance) is not kind:
            return True
        size = len(instance)
        return size <= bound if longest else size >= bound

    return check


def _scalar_parts(schema: Mapping[str, Any]) -> list[Check]:
    parts: list[Check] = []
    for key, longest in (("minLength", False), ("maxLength", True)):
        if key in schema:
            parts.append(_size(str, _count(schema[key]), longest))
    for key, holds in _NUMBER_BOUNDS.items():
        if key in schema:
            bound = schema[key]
            if type(bound) not in (int, float):
                raise _Unsupported
            parts.append(_number_bound(bound, holds))
    return parts


_NUMBER_BOUNDS: Final[dict[str, Callable[[Any, Any], bool]]] = {
    "minimum": lambda value, bound: value >= bound,
    "maximum": lambda value, bound: value <= bound,
    "exclusiveMinimum": lambda value, bound: value > bound,
    "exclusiveMaximum": lambda value, bound: value < bound,
}


def _number_bound(bound: Any, holds: Callable[[Any, Any], bool]) -> Check:
    return lambda instance, _work: type(instance) not in (int, float) or holds(instance, bound)


def _one_of_values(allowed: list[Any]) -> Check:
    """``enum`` (or ``const``, one value) for scalar instances, as JSON values compare."""
    texts = frozenset(v for v in allowed if type(v) is str)
    numbers = [v for v in allowed if type(v) in (int, float)]
    flags = frozenset(v for v in allowed if type(v) is bool)
    has_null = any(v is None for v in allowed)

    def check(instance: Any, _work: list[int]) -> bool:
        kind = type(instance)
        if kind is str:
            return instance in texts
        if kind is int or kind is float:
            return any(instance == v for v in numbers)
        if kind is bool:
            return instance in flags
        if instance is None:
            return has_null
        return False  # an array or object: the validator decides

    return check


def _any(checks: list[Check]) -> Check:
    return lambda instance, work: any(check(instance, work) for check in checks)


def _all(checks: list[Check]) -> Check:
    return lambda instance, work: all(check(instance, work) for check in checks)
