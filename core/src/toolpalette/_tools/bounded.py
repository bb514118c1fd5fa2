"""The bounded JSON Schema validator: Draft 2020-12, its work bounded by the input's size.

:func:`compile_validator` builds a jsonschema validator whose keywords never do more
than the input asks for: patterns match in a linear-time engine, ``uniqueItems``
hashes, ``enum`` and ``const`` compare as JSON values in time bounded by the smaller,
an ``items`` schema that a type (or strings' values) decides checks plain items in C,
and messages quote a short prefix of the instance, never all of it. Every keyword
charges its steps to the budget of :mod:`toolpalette._tools.budget` (one a call, and
one per item or key it goes through), so a :func:`~toolpalette._tools.budget.schema_errors`
call stops where its budget runs out. References are never retrieved: only those
inside the schema itself resolve.

jsonschema is imported here lazily, never by ``import toolpalette``.
"""

from __future__ import annotations

import itertools
import operator
import reprlib
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final

from toolpalette._tools.budget import out_of_steps, spend
from toolpalette._tools.json_values import SCALAR_TYPES, all_unique, json_equal

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = ["compile_validator", "linear_pattern"]


def _refuse_retrieval(uri: str) -> Any:
    raise LookupError(f"schema references are never retrieved ({len(uri)} characters refused)")


@lru_cache(maxsize=1)
def _empty_registry() -> Any:
    from referencing import Registry

    return Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]


def compile_validator(schema: dict[str, Any]) -> Validator:
    """A Draft 2020-12 validator for ``schema`` that never retrieves a reference.

    Its work is bounded by the input's size: ``pattern``, ``patternProperties`` and
    ``additionalProperties`` match with a linear-time regular expression engine (never a
    backtracking one), and ``uniqueItems`` hashes items instead of comparing every pair.
    Its messages quote at most a short prefix of the instance (but for
    ``unevaluatedItems`` and ``unevaluatedProperties``, which name what is left over).
    Run through :func:`~toolpalette._tools.budget.schema_errors`, its work is also
    bounded by a budget of steps.
    """
    validator: Validator = _bounded_class()(schema, registry=_empty_registry())
    return validator


def _counted(keyword: Callable[..., Any]) -> Callable[..., Any]:
    """``keyword``, charged one step a call (and skipped once over budget)."""

    def counted(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        stop = spend(1)
        return keyword(validator, value, instance, schema) if stop is None else stop

    return counted


def _per_item(keyword: Callable[..., Any]) -> Callable[..., Any]:
    """``keyword``, charged one step per item or key of the instance before it runs.

    For the keywords that go through every item (``contains``, ``unevaluatedItems``) or
    key (``propertyNames``, ``unevaluatedProperties``), even under an empty subschema,
    which no keyword of its own would charge.
    """

    def per_item(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        if isinstance(instance, (list, dict)):
            stop = spend(len(instance))
            if stop is not None:
                return stop
        return keyword(validator, value, instance, schema)

    return per_item


@lru_cache(maxsize=1)
def _bounded_class() -> Any:
    from jsonschema import Draft202012Validator, validators

    standard = Draft202012Validator.VALIDATORS
    keywords = {
        **standard,
        "pattern": _pattern_keyword,
        "patternProperties": _pattern_properties_keyword,
        "additionalProperties": _additional_properties_keyword,
        "uniqueItems": _unique_items_keyword,
        "items": _items_keyword,
        "type": _type_keyword,
        "enum": _enum_keyword,
        "const": _const_keyword,
        "anyOf": _any_of_keyword,
        "oneOf": _one_of_keyword,
        "not": _not_keyword,
        "minItems": _size_keyword("array", longest=False),
        "maxItems": _size_keyword("array", longest=True),
        "minLength": _size_keyword("string", longest=False),
        "maxLength": _size_keyword("string", longest=True),
        "minProperties": _size_keyword("object", longest=False),
        "maxProperties": _size_keyword("object", longest=True),
        "contains": _per_item(_contains_keyword),
        **{
            name: _per_item(standard[name])
            for name in ("propertyNames", "unevaluatedItems", "unevaluatedProperties")
        },
    }
    return validators.extend(  # type: ignore[no-untyped-call]
        Draft202012Validator, {name: _counted(fn) for name, fn in keywords.items()}
    )


@lru_cache(maxsize=512)
def linear_pattern(pattern: str) -> Any:
    """A matcher of ``pattern`` in a linear-time engine (search semantics), or None.

    None means the pattern needs what such an engine lacks (look-around,
    back-references): a schema that uses one is refused (see
    :func:`~toolpalette._tools.schema.check_schema`).
    """
    from pydantic_core import SchemaError, SchemaValidator, core_schema

    try:
        return SchemaValidator(core_schema.str_schema(pattern=pattern, regex_engine="rust-regex"))
    except SchemaError:
        return None


def _search(pattern: str, text: str) -> bool:
    matcher = linear_pattern(pattern)
    return matcher is not None and bool(matcher.isinstance_python(text))


def _pattern_keyword(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterable[Any]:
    from jsonschema import ValidationError

    if validator.is_type(instance, "string") and not _search(pattern, instance):
        yield ValidationError("does not match the pattern")


def _pattern_properties_keyword(
    validator: Any, patterns: dict[str, Any], instance: Any, schema: Any
) -> Iterable[Any]:
    if not validator.is_type(instance, "object"):
        return
    # Each key is searched with each pattern, and a match descends even into an empty
    # subschema (no keyword of its own charges for that).
    stop = spend(len(patterns) * len(instance))
    if stop is not None:
        yield from stop
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties_keyword(
    validator: Any, extra: Any, instance: Any, schema: Any
) -> Iterable[Any]:
    from jsonschema import ValidationError

    if not validator.is_type(instance, "object"):
        return
    declared = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    stop = spend(len(patterns) * len(instance))
    if stop is not None:
        yield from stop
        return
    others = [
        key
        for key in instance
        if key not in declared and not any(_search(pattern, key) for pattern in patterns)
    ]
    if validator.is_type(extra, "object"):
        stop = spend(len(others))  # a descent each, even into an empty subschema
        if stop is not None:
            yield from stop
            return
        for key in others:
            yield from validator.descend(instance[key], extra, path=key)
    elif not extra and others:
        yield ValidationError("has properties the schema does not allow")


def _unique_items_keyword(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterable[Any]:
    from jsonschema import ValidationError

    if not (unique and validator.is_type(instance, "array")):
        return
    if not SCALAR_TYPES.issuperset(map(type, instance)):
        # Arrays and objects are hashed through their canonical form, a step each;
        # plain values are hashed in C.
        stop = spend(len(instance))
        if stop is not None:
            yield from stop
            return
    if not all_unique(instance):
        yield ValidationError("has non-unique elements")


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


def _items_keyword(validator: Any, items: Any, instance: Any, schema: Any) -> Iterable[Any]:
    """``items`` (Draft 2020-12), with the items a type alone decides checked in C.

    An item schema that names only a type (and annotations) accepts an item of one of
    the Python types that JSON type stands for without a descent; so does one of
    strings allowed by value (``enum`` or ``const`` of strings, with or without
    ``type``) and an ``anyOf`` of such schemas (see :func:`_simple_items`). The other
    items (a wrong type, ``1.0`` for ``integer``, the first of each string not allowed)
    descend as usual, a step each.
    """
    from jsonschema import ValidationError

    if not validator.is_type(instance, "array"):
        return
    prefix = len(schema.get("prefixItems", []))
    if len(instance) <= prefix:
        return
    if items is False:
        yield ValidationError(f"expected at most {prefix} items")
        return
    simple = _simple_items(items)
    rest: Sequence[int] = range(prefix, len(instance))
    if simple is not None:
        # Only the odd items descend: found by C-level list and set methods.
        accepted, texts = simple
        if accepted is _ANY_TYPE:
            return
        kinds = list(map(type, itertools.islice(instance, prefix, None)))
        odd_kinds = set(kinds) - accepted
        if not odd_kinds:
            return
        odd: list[int] = []
        for kind in odd_kinds:
            if kind is str and texts:  # a string is accepted by its value
                strings = itertools.compress(
                    itertools.islice(instance, prefix, None),
                    map(operator.is_, kinds, itertools.repeat(str)),
                )
                # The first place of each string not accepted (a string equals no other
                # JSON value, so list.index finds just that string).
                odd.extend(instance.index(text, prefix) - prefix for text in set(strings) - texts)
            else:
                odd.extend(_positions(kinds, kind))
        if not odd:
            return
        stop = spend(len(odd))
        if stop is not None:
            yield from stop
            return
        rest = sorted(prefix + i for i in odd)
    else:
        stop = spend(len(rest))
        if stop is not None:
            yield from stop
            return
    for index in rest:
        yield from validator.descend(instance=instance[index], schema=items, path=index)
        if out_of_steps():  # every later item would cost a descent and find nothing
            return


def _simple_items(items: Any) -> tuple[frozenset[type], frozenset[str]] | None:
    """What an item schema accepts without a descent, or None to descend always.

    ``(types, texts)``: an item whose Python type is in ``types`` is accepted whatever
    its value, and a string in ``texts`` is accepted too. For an item schema of a type
    alone (:func:`_types_alone`); of ``enum`` or ``const`` of strings, with or without
    a ``type``; or of ``anyOf`` over such schemas (annotations allowed everywhere).
    """
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
        accepted: frozenset[type] = frozenset()
        texts: frozenset[str] = frozenset()
        for branch in branches:
            part = _simple_items(branch)
            if part is None:
                return None
            accepted, texts = accepted | part[0], texts | part[1]
        return accepted, texts
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


def _positions(kinds: list[type], kind: type) -> Iterable[int]:
    """Where ``kind`` is in ``kinds``, each found by ``list.index``."""
    index = -1
    while True:
        try:
            index = kinds.index(kind, index + 1)
        except ValueError:
            return
        yield index


def _types_alone(items: Any) -> frozenset[type] | None:
    """The Python types an item schema accepts by type alone, or None to descend always.

    ``True`` and an item schema of annotations only accept everything.
    """
    if items is True:
        return _ANY_TYPE
    if not isinstance(items, dict) or not _ANNOTATIONS.issuperset(
        key for key in items if key != "type"
    ):
        return None
    kind = items.get("type")
    if kind is None:
        return _ANY_TYPE
    names = [kind] if isinstance(kind, str) else kind
    if not isinstance(names, list) or not all(name in _JSON_TYPES for name in names):
        return None
    return frozenset(python for name in names for python in _JSON_TYPES[name])


_ANY_TYPE: Final[frozenset[type]] = frozenset({str, int, float, bool, type(None), list, dict})


# -- keywords whose stock messages print the whole instance -----------------------------
# jsonschema writes ``repr(instance)`` into most messages: for a megabyte array that is
# a megabyte of text per error, once per branch of an ``anyOf``. These quote a short
# prefix instead (the messages only ever reach logs, as a refusal's ``__cause__``).

_SHORT: Final = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = 60
_SHORT.maxlist = _SHORT.maxdict = 6
_SHORT.maxlevel = 3


def _short(instance: Any) -> str:
    """The start of ``repr(instance)``, in time bounded whatever its size."""
    return _SHORT.repr(instance)


def _type_keyword(validator: Any, types: Any, instance: Any, schema: Any) -> Iterable[Any]:
    from jsonschema import ValidationError

    names = types if isinstance(types, list) else [types]
    if not any(validator.is_type(instance, name) for name in names):
        yield ValidationError(f"{_short(instance)} is not of type {', '.join(map(repr, names))}")


def _enum_keyword(validator: Any, enums: Any, instance: Any, schema: Any) -> Iterable[Any]:
    from jsonschema import ValidationError

    if not any(json_equal(each, instance) for each in enums):
        yield ValidationError(f"{_short(instance)} is not one of the allowed values")


def _const_keyword(validator: Any, const: Any, instance: Any, schema: Any) -> Iterable[Any]:
    from jsonschema import ValidationError

    if not json_equal(const, instance):
        yield ValidationError(f"{_short(instance)} is not the expected value")


def _any_of_keyword(validator: Any, options: Any, instance: Any, schema: Any) -> Iterable[Any]:
    from jsonschema import ValidationError

    errors: list[Any] = []
    for index, option in enumerate(options):
        found = list(validator.descend(instance, option, schema_path=index))
        if not found:
            return
        errors.extend(found)
    yield ValidationError(
        f"{_short(instance)} is not valid under any of the given schemas", context=errors
    )


def _one_of_keyword(validator: Any, options: Any, instance: Any, schema: Any) -> Iterable[Any]:
    from jsonschema import ValidationError

    errors: list[Any] = []
    valid = 0
    for index, option in enumerate(options):
        found = list(validator.descend(instance, option, schema_path=index))
        if found and not valid:
            errors.extend(found)
        valid += not found
        if valid > 1:
            yield ValidationError(
                f"{_short(instance)} is valid under more than one of the given schemas"
            )
            return
    if not valid:
        yield ValidationError(
            f"{_short(instance)} is not valid under any of the given schemas", context=errors
        )


def _not_keyword(validator: Any, refused: Any, instance: Any, schema: Any) -> Iterable[Any]:
    from jsonschema import ValidationError

    if validator.evolve(schema=refused).is_valid(instance):
        yield ValidationError(f"{_short(instance)} should not be valid under the given schema")


def _contains_keyword(validator: Any, wanted: Any, instance: Any, schema: Any) -> Iterable[Any]:
    from jsonschema import ValidationError

    if not validator.is_type(instance, "array"):
        return
    least = schema.get("minContains", 1)
    most = schema.get("maxContains", len(instance))
    checker = validator.evolve(schema=wanted)
    matches = 0
    for item in instance:
        if checker.is_valid(item):
            matches += 1
            if matches > most:
                yield ValidationError(
                    f"has more than {most} matching items",
                    validator="maxContains",
                    validator_value=most,
                )
                return
    if matches < least:
        if matches:
            yield ValidationError(
                f"has fewer than {least} matching items",
                validator="minContains",
                validator_value=least,
            )
        else:
            yield ValidationError(
                f"{_short(instance)} does not contain items matching the given schema"
            )


def _size_keyword(kind: str, longest: bool) -> Callable[..., Iterable[Any]]:
    """``minItems``, ``maxItems``, ``minLength``, ... : a bound on ``len`` of one type."""

    def size(validator: Any, bound: Any, instance: Any, schema: Any) -> Iterable[Any]:
        from jsonschema import ValidationError

        if validator.is_type(instance, kind):
            if longest and len(instance) > bound:
                yield ValidationError(f"{_short(instance)} is longer than {bound}")
            elif not longest and len(instance) < bound:
                yield ValidationError(f"{_short(instance)} is shorter than {bound}")

    return size
