"""The bounded validator's keywords: what each checks, and the steps it charges for it."""

from __future__ import annotations

import itertools
import operator
import reprlib
from collections.abc import Callable, Iterable, Iterator
from fractions import Fraction
from typing import Any, Final

from toolpalette._schema.budget import spend
from toolpalette._schema.json_values import (
    SCALAR_TYPES,
    all_unique,
    json_key,
    sized_key,
    value_count,
)
from toolpalette._schema.patterns import CHARS_PER_STEP, compile_pattern
from toolpalette._schema.prepared import KEYS_PER_STEP, Node, descent_cost

__all__ = [
    "VALUES_PER_STEP",
    "additional_properties",
    "any_of",
    "const",
    "contains",
    "dependent_required",
    "dependent_schemas",
    "enum",
    "if_",
    "is_valid",
    "matcher",
    "not_",
    "number_bound",
    "multiple_of",
    "one_of",
    "pattern",
    "pattern_properties",
    "properties",
    "reference",
    "required",
    "short",
    "size",
    "type_",
    "unique_items",
]

VALUES_PER_STEP: Final = 8
"""Values an ``enum`` or ``const`` check reads for one step (to hash them)."""


def _error(message: str, **fields: Any) -> Any:
    from jsonschema import ValidationError

    return ValidationError(message, **fields)


# -- messages -------------------------------------------------------------------------------


class _Short(reprlib.Repr):
    """``reprlib`` without its two costs that grow with the value.

    ``reprlib`` prints a long integer whole (quadratic in its digits) before cutting it,
    and sorts a dictionary's keys before showing the first few.
    """

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 200:
            return f"<an integer of about {int(x.bit_length() * 0.30103)} digits>"
        return super().repr_int(x, level)

    def repr_dict(self, x: dict[Any, Any], level: int) -> str:
        if not x:
            return "{}"
        if level <= 0:
            return "{...}"
        shown = [
            f"{self.repr1(key, level - 1)}: {self.repr1(x[key], level - 1)}"
            for key in itertools.islice(x, self.maxdict)
        ]
        return "{" + ", ".join(shown) + (", ..." if len(x) > self.maxdict else "") + "}"


_SHORT: Final = _Short()
_SHORT.maxstring = _SHORT.maxother = 60
_SHORT.maxlist = _SHORT.maxdict = 6
_SHORT.maxlevel = 3


def short(instance: Any) -> str:
    """The start of ``repr(instance)``, in time bounded whatever its size."""
    return _SHORT.repr(instance)


# -- checks that read the instance's JSON type or size -----------------------------------------


def type_(validator: Any, types: Any, instance: Any, schema: Any) -> Iterable[Any]:
    names = types if isinstance(types, list) else [types]
    if not any(validator.is_type(instance, name) for name in names):
        yield _error(f"{short(instance)} is not of type {', '.join(map(repr, names))}")


def size(kind: str, longest: bool) -> Callable[..., Iterable[Any]]:
    """``minItems``, ``maxItems``, ``minLength``, ... : a bound on ``len`` of one type."""

    def check(validator: Any, bound: Any, instance: Any, schema: Any) -> Iterable[Any]:
        if validator.is_type(instance, kind):
            if longest and len(instance) > bound:
                yield _error(f"{short(instance)} is longer than {bound}")
            elif not longest and len(instance) < bound:
                yield _error(f"{short(instance)} is shorter than {bound}")

    return check


_BOUNDS: Final = {
    "minimum": (operator.lt, "is less than the minimum of"),
    "maximum": (operator.gt, "is greater than the maximum of"),
    "exclusiveMinimum": (operator.le, "is less than or equal to the minimum of"),
    "exclusiveMaximum": (operator.ge, "is greater than or equal to the maximum of"),
}


def number_bound(name: str) -> Callable[..., Iterable[Any]]:
    """``minimum``, ``maximum`` and their exclusive forms, as jsonschema decides them."""
    compare, words = _BOUNDS[name]

    def check(validator: Any, bound: Any, instance: Any, schema: Any) -> Iterable[Any]:
        if validator.is_type(instance, "number") and compare(instance, bound):
            yield _error(f"{short(instance)} {words} {short(bound)}")

    return check


def multiple_of(validator: Any, divisor: Any, instance: Any, schema: Any) -> Iterable[Any]:
    """``multipleOf``, as jsonschema decides it (a fraction when the float overflows)."""
    if not validator.is_type(instance, "number"):
        return
    if isinstance(divisor, float):
        quotient = instance / divisor
        try:
            failed = int(quotient) != quotient
        except OverflowError:
            failed = (Fraction(instance) / Fraction(divisor)).denominator != 1
    else:
        failed = bool(instance % divisor)
    if failed:
        yield _error(f"{short(instance)} is not a multiple of {short(divisor)}")


def unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterable[Any]:
    if not (unique and validator.is_type(instance, "array")):
        return
    if not SCALAR_TYPES.issuperset(map(type, instance)):
        # Arrays and objects are hashed through their canonical form, a step each;
        # plain values are hashed in C.
        stop = spend(len(instance), at_once=True)
        if stop is not None:
            yield from stop
            return
    if not all_unique(instance):
        yield _error("has non-unique elements")


# -- values allowed by value ---------------------------------------------------------------


def enum(validator: Any, allowed: Any, instance: Any, schema: Any) -> Iterable[Any]:
    """``enum``: one look-up of the instance's key among the allowed values' keys."""
    choices = schema.choices if type(schema) is Node else None
    if choices is None:
        if not isinstance(allowed, list):
            allowed = list(allowed)
        choices = (frozenset(map(json_key, allowed)), max(map(value_count, allowed), default=0))
        stop = spend(sum(map(value_count, allowed)) // VALUES_PER_STEP)
        if stop is not None:
            yield from stop
            return
    keys, largest = choices
    found = _key(instance, largest)
    if isinstance(found, list):
        yield from found
    elif found is None or found not in keys:
        yield _error(f"{short(instance)} is not one of the allowed values")


def const(validator: Any, expected: Any, instance: Any, schema: Any) -> Iterable[Any]:
    """``const``: the instance's key against the expected value's."""
    constant = schema.constant if type(schema) is Node else None
    if constant is None:
        constant = (json_key(expected), value_count(expected))
    key, count = constant
    found = _key(instance, count)
    if isinstance(found, list):
        yield from found
    elif found is None or found != key:
        yield _error(f"{short(instance)} is not the expected value")


def _key(instance: Any, most: int) -> Any:
    """The instance's key (None past ``most`` values: it equals none), or errors to yield.

    A step per `VALUES_PER_STEP` values hashed, charged as they are.
    """
    if not isinstance(instance, (list, dict)):
        return json_key(instance)
    charged = 0
    stopped: list[Any] = []

    def check(counted: int) -> bool:
        nonlocal charged
        steps = counted // VALUES_PER_STEP - charged
        charged += steps
        stop = spend(steps)
        if stop is not None:
            stopped.extend(stop)
            return False
        return True

    key, counted = sized_key(instance, most, check)
    if key is None and counted <= most:  # the budget ran out
        return stopped
    return key


# -- patterns -------------------------------------------------------------------------------


def matcher(schema: Any, pattern: str) -> Any:
    """The compiled matcher of ``pattern``, kept by the prepared ``schema`` object."""
    kept = schema.matchers if type(schema) is Node else None
    if kept is not None and pattern in kept:
        return kept[pattern]
    return compile_pattern(pattern)  # an object not prepared (never in a validator)


def _search(found: Any, text: str) -> bool:
    return found is not None and bool(found.isinstance_python(text))


def pattern(validator: Any, wanted: str, instance: Any, schema: Any) -> Iterable[Any]:
    if not validator.is_type(instance, "string"):
        return
    stop = spend(len(instance) // CHARS_PER_STEP, at_once=True)
    if stop is not None:
        yield from stop
        return
    if not _search(matcher(schema, wanted), instance):
        yield _error("does not match the pattern")


def _search_cost(patterns: int, keys: Iterable[str], count: int) -> int:
    """Steps to search ``count`` keys with ``patterns`` patterns each."""
    return patterns * (count + sum(map(len, keys)) // CHARS_PER_STEP)


def pattern_properties(
    validator: Any, patterns: dict[str, Any], instance: Any, schema: Any
) -> Iterable[Any]:
    if not validator.is_type(instance, "object") or not instance:
        return
    # Each key is searched with each pattern, and a match descends even into an empty
    # subschema (no keyword of its own charges for that).
    stop = spend(_search_cost(len(patterns), instance, len(instance)), at_once=True)
    if stop is not None:
        yield from stop
        return
    for wanted, subschema in patterns.items():
        found = matcher(schema, wanted)
        for key, value in instance.items():
            if _search(found, key):
                yield from validator.descend(value, subschema, path=key, schema_path=wanted)


def additional_properties(validator: Any, extra: Any, instance: Any, schema: Any) -> Iterable[Any]:
    if not validator.is_type(instance, "object") or not instance:
        return
    declared = schema.get("properties", {})
    by_pattern = schema.get("patternProperties", {})
    stop = spend(_search_cost(len(by_pattern), instance, len(instance)), at_once=True)
    if stop is not None:
        yield from stop
        return
    found = [matcher(schema, wanted) for wanted in by_pattern]
    others = [
        key
        for key in instance
        if key not in declared and not any(_search(each, key) for each in found)
    ]
    if validator.is_type(extra, "object"):
        stop = spend(len(others))  # a descent each, even into an empty subschema
        if stop is not None:
            yield from stop
            return
        for key in others:
            yield from validator.descend(instance[key], extra, path=key)
    elif not extra and others:
        yield _error("has properties the schema does not allow")


# -- names of an object's keys ---------------------------------------------------------------


def properties(validator: Any, declared: Any, instance: Any, schema: Any) -> Iterable[Any]:
    """``properties``, going through the smaller of the instance's keys and the names.

    The errors come in the schema's order, as jsonschema gives them.
    """
    if not validator.is_type(instance, "object"):
        return
    order = schema.order if type(schema) is Node else None
    if order is not None and len(instance) < len(declared):
        stop = spend(len(instance) // KEYS_PER_STEP, at_once=True)
        present = sorted((name for name in instance if name in order), key=order.__getitem__)
    else:
        stop = spend(len(declared) // KEYS_PER_STEP, at_once=True)
        present = [name for name in declared if name in instance]
    if stop is not None:
        yield from stop
        return
    for name in present:
        yield from validator.descend(instance[name], declared[name], path=name, schema_path=name)


def required(validator: Any, names: Any, instance: Any, schema: Any) -> Iterable[Any]:
    if not validator.is_type(instance, "object"):
        return
    needed = schema.needed if type(schema) is Node else None
    if needed is not None and len(instance) >= len(needed) and instance.keys() >= needed:
        return  # all present: one subset check in C
    stop = spend(len(names) // KEYS_PER_STEP, at_once=True)
    if stop is not None:
        yield from stop
        return
    for name in names:
        if name not in instance:
            yield _error(f"{short(name)} is a required property")


def dependent_required(
    validator: Any, dependencies: Any, instance: Any, schema: Any
) -> Iterable[Any]:
    if not validator.is_type(instance, "object"):
        return
    stop = spend(len(dependencies) // KEYS_PER_STEP, at_once=True)
    if stop is not None:
        yield from stop
        return
    for name, dependency in dependencies.items():
        if name not in instance:
            continue
        stop = spend(len(dependency) // KEYS_PER_STEP, at_once=True)
        if stop is not None:
            yield from stop
            return
        for each in dependency:
            if each not in instance:
                yield _error(f"{short(each)} is a dependency of {short(name)}")


def dependent_schemas(
    validator: Any, dependencies: Any, instance: Any, schema: Any
) -> Iterable[Any]:
    if not validator.is_type(instance, "object"):
        return
    stop = spend(len(dependencies) // KEYS_PER_STEP, at_once=True)
    if stop is not None:
        yield from stop
        return
    for name, dependency in dependencies.items():
        if name in instance:
            yield from validator.descend(instance, dependency, schema_path=name)


# -- branches ----------------------------------------------------------------------------------


def is_valid(validator: Any, instance: Any, subschema: Any) -> bool:
    """Whether ``instance`` is valid under ``subschema``, charged like a descent.

    ``true`` and ``false`` are answered at once (jsonschema's own answer to ``false``
    prints the whole instance).
    """
    if subschema is True or subschema is False:
        spend(1)
        return subschema
    spend(descent_cost(subschema), at_once=True)
    return bool(validator.evolve(schema=subschema).is_valid(instance))


def any_of(validator: Any, options: Any, instance: Any, schema: Any) -> Iterable[Any]:
    errors: list[Any] = []
    for index, option in enumerate(options):
        found = list(validator.descend(instance, option, schema_path=index))
        if not found:
            return
        errors.extend(found)
    yield _error(f"{short(instance)} is not valid under any of the given schemas", context=errors)


def one_of(validator: Any, options: Any, instance: Any, schema: Any) -> Iterable[Any]:
    errors: list[Any] = []
    valid = 0
    for index, option in enumerate(options):
        found = list(validator.descend(instance, option, schema_path=index))
        if found and not valid:
            errors.extend(found)
        valid += not found
        if valid > 1:
            yield _error(f"{short(instance)} is valid under more than one of the given schemas")
            return
    if not valid:
        yield _error(
            f"{short(instance)} is not valid under any of the given schemas", context=errors
        )


def not_(validator: Any, refused: Any, instance: Any, schema: Any) -> Iterable[Any]:
    if is_valid(validator, instance, refused):
        yield _error(f"{short(instance)} should not be valid under the given schema")


def if_(validator: Any, condition: Any, instance: Any, schema: Any) -> Iterable[Any]:
    """``if``, ``then`` and ``else``, as jsonschema decides them."""
    if is_valid(validator, instance, condition):
        if "then" in schema:
            yield from validator.descend(instance, schema["then"], schema_path="then")
    elif "else" in schema:
        yield from validator.descend(instance, schema["else"], schema_path="else")


def contains(validator: Any, wanted: Any, instance: Any, schema: Any) -> Iterable[Any]:
    if not validator.is_type(instance, "array"):
        return
    least = schema.get("minContains", 1)
    most = schema.get("maxContains", len(instance))
    matches = 0
    if wanted is True or wanted is False:
        matches = len(instance) if wanted else 0
    else:
        spend(descent_cost(wanted), at_once=True)
        checker = validator.evolve(schema=wanted)
        for item in instance:
            if checker.is_valid(item):
                matches += 1
                if matches > most:
                    break
    if matches > most:
        yield _error(
            f"has more than {most} matching items", validator="maxContains", validator_value=most
        )
    elif matches < least:
        if matches:
            yield _error(
                f"has fewer than {least} matching items",
                validator="minContains",
                validator_value=least,
            )
        else:
            yield _error(f"{short(instance)} does not contain items matching the given schema")


def reference(keyword: Callable[..., Iterable[Any]]) -> Callable[..., Iterable[Any]]:
    """``$ref`` or ``$dynamicRef``, charged for the reference's length too.

    Resolving a reference parses it and walks the schema along it.
    """

    def resolve(validator: Any, ref: Any, instance: Any, schema: Any) -> Iterator[Any]:
        stop = spend(len(ref) // CHARS_PER_STEP if isinstance(ref, str) else 0, at_once=True)
        if stop is not None:
            return iter(stop)
        return iter(keyword(validator, ref, instance, schema) or ())

    return resolve
