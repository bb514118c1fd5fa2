"""The bounded JSON Schema validator: Draft 2020-12, its work bounded by the input's size.

jsonschema is imported here lazily, never by ``import toolpalette``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from toolpalette._schema import keywords as _keywords
from toolpalette._schema.budget import spend
from toolpalette._schema.items import check_items
from toolpalette._schema.prepared import descent_cost, prepare
from toolpalette._schema.unevaluated import unevaluated_items, unevaluated_properties

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = ["compile_validator"]


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
    backtracking one), compiled once here; ``uniqueItems``, ``enum`` and ``const``
    hash; every keyword and descent is charged to the budget (see the module doc). Its
    messages quote at most a short prefix of the instance. Run through
    `schema_errors()`, its work is bounded by a budget of
    steps.

    Raises:
        ValidationDeferred: on an event loop, when preparing the schema costs more
            than the loop's share (`toolpalette._schema.prepared.LOOP_BUILD`).
    """
    validator: Validator = _bounded_class()(prepare(schema), registry=_empty_registry())
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


def _false_error(instance: Any) -> Any:
    """The error jsonschema gives for ``false``, quoting a short prefix of the instance."""
    from jsonschema import ValidationError

    return ValidationError(
        f"False schema does not allow {_keywords.short(instance)}",
        validator=None,  # type: ignore[arg-type]  # as jsonschema's own: no keyword
        validator_value=None,
        instance=instance,
        schema=False,
    )


def _charged_descent(descend: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    """The ``descend`` of jsonschema, charged `descent_cost()`, quick on ``false``."""

    def charged(
        self: Any,
        instance: Any,
        schema: Any,
        path: Any = None,
        schema_path: Any = None,
        resolver: Any = None,
    ) -> Iterator[Any]:
        stop = spend(descent_cost(schema), at_once=True)
        if stop is not None:
            return iter(stop)
        if schema is False:  # jsonschema's error prints the whole instance
            return iter([_false_error(instance)])
        return descend(
            self, instance, schema, path=path, schema_path=schema_path, resolver=resolver
        )

    return charged


@lru_cache(maxsize=1)
def _bounded_class() -> Any:
    from jsonschema import Draft202012Validator, validators

    standard = Draft202012Validator.VALIDATORS
    keywords = {
        **standard,
        "$ref": _keywords.reference(standard["$ref"]),
        "$dynamicRef": _keywords.reference(standard["$dynamicRef"]),
        "additionalProperties": _keywords.additional_properties,
        "anyOf": _keywords.any_of,
        "const": _keywords.const,
        "contains": _per_item(_keywords.contains),
        "dependentRequired": _keywords.dependent_required,
        "dependentSchemas": _keywords.dependent_schemas,
        "enum": _keywords.enum,
        "if": _keywords.if_,
        "items": check_items,
        "maxItems": _keywords.size("array", longest=True),
        "maxLength": _keywords.size("string", longest=True),
        "maxProperties": _keywords.size("object", longest=True),
        "minItems": _keywords.size("array", longest=False),
        "minLength": _keywords.size("string", longest=False),
        "minProperties": _keywords.size("object", longest=False),
        "multipleOf": _keywords.multiple_of,
        "not": _keywords.not_,
        "oneOf": _keywords.one_of,
        "pattern": _keywords.pattern,
        "patternProperties": _keywords.pattern_properties,
        "properties": _keywords.properties,
        "propertyNames": _per_item(standard["propertyNames"]),
        "required": _keywords.required,
        "type": _keywords.type_,
        "unevaluatedItems": _per_item(unevaluated_items),
        "unevaluatedProperties": _per_item(unevaluated_properties),
        "uniqueItems": _keywords.unique_items,
        **{
            name: _keywords.number_bound(name)
            for name in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
        },
    }
    bounded = validators.extend(  # type: ignore[no-untyped-call]
        Draft202012Validator, {name: _counted(fn) for name, fn in keywords.items()}
    )
    # Every descent goes through here (the keywords', and jsonschema's for ``$ref``).
    bounded.descend = _charged_descent(bounded.descend)
    return bounded
