"""The bounded validator's ``unevaluatedItems`` and ``unevaluatedProperties``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from toolpalette._schema.budget import out_of_steps, spend
from toolpalette._schema.keywords import is_valid, matcher, short
from toolpalette._schema.patterns import CHARS_PER_STEP
from toolpalette._schema.prepared import KEYS_PER_STEP, descent_cost

__all__ = ["unevaluated_items", "unevaluated_properties"]

_ALL: Final = frozenset({-1})
"""Every item evaluated (``items`` applies): no index needs to be listed."""


def unevaluated_items(validator: Any, leftover: Any, instance: Any, schema: Any) -> Iterable[Any]:
    from jsonschema import ValidationError

    if not validator.is_type(instance, "array"):
        return
    evaluated = _evaluated_indexes(validator, instance, schema)
    if evaluated is _ALL or out_of_steps():
        return
    unevaluated = [item for index, item in enumerate(instance) if index not in evaluated]
    if unevaluated:
        yield ValidationError(f"Unevaluated items are not allowed ({short(unevaluated)})")


def unevaluated_properties(
    validator: Any, leftover: Any, instance: Any, schema: Any
) -> Iterable[Any]:
    from jsonschema import ValidationError

    if not validator.is_type(instance, "object"):
        return
    evaluated = _evaluated_keys(validator, instance, schema)
    if out_of_steps():
        return
    unevaluated = [
        key
        for key in instance
        if key not in evaluated
        for _ in validator.descend(instance[key], leftover, path=key, schema_path=key)
    ]
    if not unevaluated:
        return
    if leftover is False:
        listed = short(sorted(unevaluated, key=str))
        yield ValidationError(f"Unevaluated properties are not allowed ({listed})")
    else:
        listed = short(unevaluated)
        yield ValidationError(f"Unevaluated properties are not valid under the schema ({listed})")


def _visit(schema: Any) -> bool:
    """Charge a visit of ``schema`` in the walk; whether the walk may go on."""
    return spend(1 + descent_cost(schema), at_once=True) is None and not out_of_steps()


def _referenced(validator: Any, schema: Any) -> Iterable[tuple[Any, Any]]:
    """The validators and schemas ``$ref`` and ``$dynamicRef`` of ``schema`` lead to.

    jsonschema offers no public way to resolve a reference from within a keyword; its
    own walk reads the validator's resolver as this does.
    """
    for keyword in ("$ref", "$dynamicRef"):
        reference = schema.get(keyword)
        if reference is not None:
            resolved = validator._resolver.lookup(reference)
            referenced = validator.evolve(schema=resolved.contents, _resolver=resolved.resolver)
            yield referenced, resolved.contents


def _evaluated_indexes(validator: Any, instance: list[Any], schema: Any) -> frozenset[int]:
    """The indexes of ``instance`` that ``schema`` evaluates in place (or `_ALL`)."""
    if not _visit(schema) or validator.is_type(schema, "boolean"):
        return frozenset()
    if "items" in schema:
        return _ALL
    found: set[int] = set()

    def add(more: frozenset[int]) -> bool:
        found.update(more)
        return more is _ALL

    for referenced, contents in _referenced(validator, schema):
        if add(_evaluated_indexes(referenced, instance, contents)):
            return _ALL
    prefix = schema.get("prefixItems")
    if prefix is not None:
        spend(len(prefix) // KEYS_PER_STEP)
        found.update(range(len(prefix)))
    if "if" in schema:
        if is_valid(validator, instance, schema["if"]):
            if add(_evaluated_indexes(validator, instance, schema["if"])):
                return _ALL
            if "then" in schema and add(_evaluated_indexes(validator, instance, schema["then"])):
                return _ALL
        elif "else" in schema and add(_evaluated_indexes(validator, instance, schema["else"])):
            return _ALL
    for keyword in ("contains", "unevaluatedItems"):
        if keyword in schema:
            spend(len(instance))
            wanted = schema[keyword]
            found.update(i for i, item in enumerate(instance) if is_valid(validator, item, wanted))
    for keyword in ("allOf", "oneOf", "anyOf"):
        for branch in schema.get(keyword, ()):
            valid = next(iter(validator.descend(instance, branch)), None) is None
            if valid and add(_evaluated_indexes(validator, instance, branch)):
                return _ALL
    return frozenset(found)


def _evaluated_keys(validator: Any, instance: dict[str, Any], schema: Any) -> set[str]:
    """The keys of ``instance`` that ``schema`` evaluates in place."""
    if not _visit(schema) or validator.is_type(schema, "boolean"):
        return set()
    found: set[str] = set()
    for referenced, contents in _referenced(validator, schema):
        found |= _evaluated_keys(referenced, instance, contents)
    declared = schema.get("properties")
    if validator.is_type(declared, "object"):
        spend(min(len(declared), len(instance)) // KEYS_PER_STEP)
        found |= declared.keys() & instance.keys()
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        extra = schema.get(keyword)
        if extra is not None:
            spend(len(instance))
            found.update(
                key
                for key, value in instance.items()
                if next(iter(validator.descend(value, extra)), None) is None
            )
    by_pattern = schema.get("patternProperties")
    if by_pattern:
        lengths = sum(map(len, instance)) // CHARS_PER_STEP
        spend(len(by_pattern) * (len(instance) + lengths))
        for wanted in by_pattern:
            found_by = matcher(schema, wanted)
            if found_by is not None:
                found.update(key for key in instance if found_by.isinstance_python(key))
    for name, dependency in (schema.get("dependentSchemas") or {}).items():
        if name in instance:
            found |= _evaluated_keys(validator, instance, dependency)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for branch in schema.get(keyword, ()):
            if next(iter(validator.descend(instance, branch)), None) is None:
                found |= _evaluated_keys(validator, instance, branch)
    if "if" in schema:
        if is_valid(validator, instance, schema["if"]):
            found |= _evaluated_keys(validator, instance, schema["if"])
            if "then" in schema:
                found |= _evaluated_keys(validator, instance, schema["then"])
        elif "else" in schema:
            found |= _evaluated_keys(validator, instance, schema["else"])
    return found
