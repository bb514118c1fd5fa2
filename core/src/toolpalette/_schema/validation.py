"""Validating model input against a tool's pydantic model, with work bounded by its size."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, final

import pydantic
from pydantic_core import PydanticCustomError, SchemaError, SchemaValidator

from toolpalette._schema.json_values import all_unique
from toolpalette._schema.paths import (
    MAX_PROBLEMS,
    Location,
    declared_type,
    format_path,
    missing_field,
    no_other_fields,
    resolve,
    walk,
)
from toolpalette.errors import InputProblem

__all__ = ["MAX_PROBLEMS", "ModelInput", "problems_from_errors"]


_REPRESENTATION: Final = frozenset(
    {
        "set_type",
        "frozen_set_type",
        "frozenset_type",
        "tuple_type",
        "is_instance_of",
        "enum",
        "date_type",
        "datetime_type",
        "time_type",
        "time_delta_type",
        "timedelta_type",
        "uuid_type",
        "decimal_type",
        "bytes_type",
        "url_type",
        "multi_host_url_type",
        "model_type",
        "model_attributes_type",
        "dataclass_type",
        "dataclass_exact_type",
        "complex_type",
    }
)
"""Strict-mode error types about a value's Python type that JSON input cannot have."""

_INT64: Final = 2**63


class ModelInput:
    """Validates input for one pydantic model, with bounded work; see the module doc."""

    def __init__(self, model: type[pydantic.BaseModel], schema: dict[str, Any]) -> None:
        self._model = model.__pydantic_validator__
        self._model_core = model.__pydantic_core_schema__
        self._schema = schema
        self._shape: SchemaValidator | None = None
        self._known: dict[tuple[str, Any], _Known] = {}
        self._unions: dict[Any, bool] = {}
        self.fresh = _fresh(self._model_core)
        """Whether the value shares no mutable object with the input: every container
        of it is built anew (no part typed ``Any``, no plain or wrap validator, no
        instance check), so the input need not be copied for the tool's sake."""

    def validate(
        self, data: dict[str, Any], size: int, *, shared: bool = False
    ) -> tuple[Any, Sequence[InputProblem], Exception | None]:
        """``(value, (), None)``, or ``(None, problems, cause)`` when refused.

        ``data`` is a fresh dict that passed the JSON policy and ``size`` its size in
        bytes of JSON; integral floats in ``data`` may be replaced by integers.
        ``shared``: ``data`` (or a container in it) is the caller's, for a `fresh`
        validator: it is then left as it is (copied before integral floats are replaced).
        ``cause`` is pydantic's own error (it quotes values: logs only).
        """
        if size > SHAPE_FIRST:
            refused = self._shape_first(data)
            if refused is not None:
                return None, refused[0], refused[1]
        validator = self._model
        try:
            return validator.validate_python(data, strict=True), (), None
        except pydantic.ValidationError as exc:
            # Kept for logs, without its traceback (one line of this module): holding
            # it would keep this frame alive, which every refusal would pay for.
            cause: pydantic.ValidationError = exc.with_traceback(None)
        count = cause.error_count()
        if count == 1:  # the common refusal: one field wrong, answered as before
            # Read without pydantic's message and context; the value is only looked at.
            error = cause.errors(include_url=False, include_context=False)[0]
            known = self._known.get((error["type"], error["loc"]))
            if known is None:
                known = self._learn(cause)[0]
            if known.settled or (known.integer and not _integral(error["input"])):
                return None, known.problems, cause
        elif count <= _FEW:
            errors = cause.errors(include_url=False)
            knowns = self._learn(cause, errors)
            if not any(map(_Known.representational, knowns, errors)):
                found = dict.fromkeys(p for known in knowns for p in known.problems)
                return None, list(found)[:MAX_PROBLEMS], cause
        else:  # many errors: each read once, nothing remembered
            errors = cause.errors(include_url=False)
            if not any(self._representational(error) for error in errors):
                return None, problems_from_errors(errors, self._schema), cause
        # Some refusal may be about representation only: the JSON pass decides all.
        if shared:  # the pass below changes containers in place: the caller's stay as given
            data = json.loads(json.dumps(data))
        problems = _conform(self._schema, data)
        if problems:
            return None, problems, None
        try:
            value = validator.validate_json(json.dumps(data), strict=True)
        except pydantic.ValidationError as exc:
            return None, problems_from_errors(exc.errors(include_url=False), self._schema), exc
        return value, (), None

    def _shape_first(
        self, data: dict[str, Any]
    ) -> tuple[list[InputProblem], pydantic.ValidationError] | None:
        """The problems and cause when the shape validator refuses ``data``, else None."""
        if self._shape is None:
            self._shape = _shape_validator(self._model_core)
        try:
            # Lax: it refuses only what no representation of the value could pass.
            self._shape.validate_python(data, strict=False)
        except pydantic.ValidationError as exc:
            return problems_from_errors(exc.errors(include_url=False), self._schema), exc
        return None

    def _learn(
        self, cause: pydantic.ValidationError, errors: list[Any] | None = None
    ) -> list[_Known]:
        """What is known of each of ``cause``'s errors (a few), worked out once each."""
        knowns: list[_Known] = []
        for error in errors or cause.errors(include_url=False):
            key = (error["type"], error["loc"])
            known = self._known.get(key)
            if known is None:
                if len(self._known) >= _KNOWN:
                    self._known.clear()
                known = self._known[key] = _Known(error, self._schema, self._through_union(key[1]))
            knowns.append(known)
        return knowns

    def _representational(self, error: Mapping[str, Any]) -> bool:
        kind = error["type"]
        if kind in _REPRESENTATION or self._through_union(error["loc"]):
            return True
        return kind == "int_type" and _integral(error.get("input"))

    def _through_union(self, loc: tuple[object, ...]) -> bool:
        """Whether ``loc`` passes a union (which member fits is the JSON pass's to say)."""
        through = self._unions.get(loc)
        if through is None:
            through = walk(self._schema, loc, Location.PYDANTIC).in_union
            if len(self._unions) >= _KNOWN:
                self._unions.clear()
            self._unions[loc] = through
        return through


_FRESH: Final = frozenset(
    {
        "model",
        "model-fields",
        "model-field",
        "typed-dict",
        "typed-dict-field",
        "dataclass",
        "dataclass-args",
        "dataclass-field",
        "list",
        "tuple",
        "set",
        "frozenset",
        "dict",
        "str",
        "int",
        "float",
        "bool",
        "none",
        "literal",
        "enum",
        "decimal",
        "date",
        "time",
        "datetime",
        "timedelta",
        "uuid",
        "url",
        "multi-host-url",
        "bytes",
        "complex",
        "nullable",
        "default",
        "union",
        "tagged-union",
        "definitions",
        "definition-ref",
        "json-or-python",
        "lax-or-strict",
        "chain",
        "function-after",
        "function-before",
        "custom-error",
    }
)
"""Core schema types whose value is built anew or immutable, given JSON input. Not here
(so not fresh): ``any`` and ``is-instance`` pass the input's object on, a plain or wrap
validator may return it; a type unknown to this list counts as not fresh."""

_NOT_SCHEMA: Final = frozenset(
    {
        "metadata",
        "serialization",
        "computed_fields",
        "function",
        "cls",
        "ref",
        "schema_ref",
        "default",
        "config",
    }
)
"""Keys of a core schema node that hold no schema the input passes through."""


_ITEMS: Final = {
    "list": ("items_schema",),
    "set": ("items_schema",),
    "frozenset": ("items_schema",),
    "tuple": ("items_schema",),
    "dict": ("keys_schema", "values_schema"),
}
"""The keys a container's node must have for its items to be validated (else Any)."""


def _fresh(node: Any) -> bool:
    """Whether validating by core schema ``node`` builds every container anew."""
    if isinstance(node, (list, tuple)):
        return all(map(_fresh, node))
    if not isinstance(node, dict):
        return True  # a leaf (a name, a number, a flag)
    kind = node.get("type")
    if isinstance(kind, str) and kind not in _FRESH:
        return False
    if not isinstance(kind, str):  # a mapping of schemas (fields, a tagged union's choices)
        return all(map(_fresh, node.values()))
    if node.get("custom_init"):  # a model's own __init__ is given the input as it is
        return False
    if kind in _ITEMS and not all(key in node for key in _ITEMS[kind]):
        return False  # a bare list or dict: its items are taken as they are (Any)
    return all(_fresh(child) for key, child in node.items() if key not in _NOT_SCHEMA)


@final
class _Known:
    """How a refusal of one error type at one location is answered.

    Worked out once per `ModelInput` from the schema and the error's type,
    location and context (a constraint's declared limit: the schema's, never the input's).
    """

    __slots__ = ("integer", "problems", "settled")

    def __init__(self, error: Mapping[str, Any], schema: dict[str, Any], union: bool) -> None:
        kind = error["type"]
        self.integer = kind == "int_type" and not union
        """An integer expected: about representation only if the value is JSON's ``1.0``."""
        self.settled = not self.integer and not union and kind not in _REPRESENTATION
        """Never about representation only, whatever the value: neither a Python-only
        type nor inside a union (which member fits is the JSON pass's to say)."""
        self.problems: tuple[InputProblem, ...] = tuple(problems_from_errors([error], schema))
        """The problems the refusal is answered with."""

    def representational(self, error: Mapping[str, Any]) -> bool:
        """Whether ``error`` (of this type, here) may be about representation only."""
        return not self.settled and (not self.integer or _integral(error["input"]))


def _integral(value: Any) -> bool:
    """Whether ``value`` is a float JSON's integer admits (and pydantic's strict mode not)."""
    return type(value) is float and value.is_integer() and abs(value) < _INT64


_FEW: Final = 8
"""Refusals with at most this many errors are answered from what is remembered."""

_KNOWN: Final = 256
"""Refusals (error type and location) a ModelInput remembers (a bounded cache)."""


SHAPE_FIRST: Final = 4096
"""Inputs larger than this (bytes of JSON) are checked for shape before the model runs."""


# -- the shape validator -------------------------------------------------------------------


def _shape_validator(core: Any) -> SchemaValidator:
    """A validator of the shape of a model's input whose errors are bounded (run lax).

    The model's core schema with every model and dataclass replaced by its fields (a
    complete model would otherwise be validated by its own prebuilt validator), every
    container stopping at its first bad item (``fail_fast``), every model that forbids
    extra fields refusing them in one check, and the author's validators left out (a
    before, wrap or plain validator's place accepts anything; an after validator's
    checks its input): it accepts all the model accepts, and more. A model refusal
    after the shape passed comes from an author's validator.
    """
    try:
        return SchemaValidator(_bounded(core, fail_fast=True))
    except SchemaError:  # a pydantic-core without fail_fast: extras still refused at once
        return SchemaValidator(_bounded(core, fail_fast=False))


_CONTAINERS: Final = frozenset({"list", "set", "frozenset", "tuple", "dict"})
_ANY: Final = {"type": "any"}


def _bounded(node: Any, *, fail_fast: bool, forbid: bool = False) -> Any:
    if isinstance(node, list):
        return [_bounded(item, fail_fast=fail_fast) for item in node]
    if not isinstance(node, dict):
        return node
    kind = node.get("type")
    if kind in ("model", "dataclass"):
        config = node.get("config") or {}
        forbid = config.get("extra_fields_behavior") == "forbid"
        return _same_ref(node, _bounded(node["schema"], fail_fast=fail_fast, forbid=forbid))
    if kind in ("function-before", "function-wrap", "function-plain"):
        return _same_ref(node, dict(_ANY))
    if kind == "function-after":
        return _same_ref(node, _bounded(node["schema"], fail_fast=fail_fast, forbid=forbid))
    copied = {
        k: _bounded(v, fail_fast=fail_fast)
        for k, v in node.items()
        if k not in ("ref", "serialization", "post_init")
    }
    if "ref" in node:
        copied["ref"] = node["ref"]
    if fail_fast and kind in _CONTAINERS:
        copied["fail_fast"] = True
    if kind in ("model-fields", "typed-dict") and (
        forbid or node.get("extra_behavior") == "forbid"
    ):
        return {
            "type": "function-before",
            "function": {"type": "no-info", "function": _only(_keys(node))},
            "schema": copied,
        }
    return copied


def _same_ref(node: Mapping[str, Any], replacement: Any) -> Any:
    """``replacement``, answering to ``node``'s ``ref`` (definitions point at it)."""
    if "ref" in node and isinstance(replacement, dict):
        if "ref" in replacement:  # the inner node answers to its own: wrap it
            return {"type": "chain", "steps": [replacement], "ref": node["ref"]}
        replacement = {**replacement, "ref": node["ref"]}
    return replacement


def _keys(node: Mapping[str, Any]) -> frozenset[str]:
    keys: set[str] = set()
    for name, field in (node.get("fields") or {}).items():
        keys.add(name)
        alias = field.get("validation_alias")
        if isinstance(alias, str):
            keys.add(alias)
        elif isinstance(alias, list):  # alias paths and choices: their first keys
            for choice in alias:
                first = choice[0] if isinstance(choice, list) and choice else choice
                if isinstance(first, str):
                    keys.add(first)
    return frozenset(keys)


def _only(allowed: frozenset[str]) -> Any:
    def refuse_extra_fields(value: Any) -> Any:
        if isinstance(value, dict) and not allowed.issuperset(value):
            # One error for all of them: a million extra keys are one problem.
            raise PydanticCustomError("extra_fields", "extra fields are not permitted")
        return value

    return refuse_extra_fields


# -- conforming to JSON Schema's number and uniqueness rules -----------------------------


def _conform(schema: dict[str, Any], data: Any) -> list[InputProblem]:
    """Walk ``data`` along ``schema``, returning the problems found.

    Integral floats at integer fields become integers; arrays declared ``uniqueItems``
    are checked by hashing.

    Linear in the input (each value is visited once per schema branch it can match).
    """
    problems: list[InputProblem] = []
    _conform_node(schema, schema, data, [], problems)
    return problems[:MAX_PROBLEMS]


def _conform_node(
    root: dict[str, Any], node: Any, value: Any, path: list[object], out: list[InputProblem]
) -> Any:
    node = resolve(root, node)
    if not isinstance(node, dict) or len(out) >= MAX_PROBLEMS:
        return value
    options = [o for o in (node.get("anyOf") or node.get("oneOf") or []) if isinstance(o, dict)]
    if options:
        members = [resolve(root, o) for o in options]
        fitting = [m for m in members if isinstance(m, dict) and _fits(m, value)]
        if len(fitting) == 1:
            return _conform_node(root, fitting[0], value, path, out)
        return value
    if type(value) is float and _declares(node, "integer") and not _declares(node, "number"):
        return int(value) if value.is_integer() and abs(value) < _INT64 else value
    if type(value) is int and _declares(node, "number") and not math.isfinite(_as_float(value)):
        out.append(InputProblem(format_path(path), "number"))
        return value
    if isinstance(value, list):
        if node.get("uniqueItems") is True and not all_unique(value):
            out.append(InputProblem(format_path(path), "items without duplicates"))
        declared = node.get("prefixItems")
        prefix: list[Any] = declared if isinstance(declared, list) else []
        items = node.get("items")
        if not prefix and _plain_text(root, items):
            return value  # strings need no conforming: skip the walk
        for i, item in enumerate(value):
            sub = prefix[i] if i < len(prefix) else items
            if sub is not None:
                value[i] = _conform_node(root, sub, item, [*path, i], out)
    elif isinstance(value, dict):
        props = node.get("properties") or {}
        extra = node.get("additionalProperties")
        for key, item in value.items():
            if key in props:
                value[key] = _conform_node(root, props[key], item, [*path, key], out)
            elif isinstance(extra, dict):
                value[key] = _conform_node(root, extra, item, [*path, "*"], out)
    return value


def _plain_text(root: dict[str, Any], node: Any) -> bool:
    node = resolve(root, node)
    return isinstance(node, dict) and node.get("type") == "string" and "anyOf" not in node


def _as_float(value: int) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf


def _declares(node: Mapping[str, Any], kind: str) -> bool:
    declared = node.get("type")
    return declared == kind or (isinstance(declared, list) and kind in declared)


_JSON_TYPES: Final = {
    "null": lambda v: v is None,
    "boolean": lambda v: type(v) is bool,
    "integer": lambda v: type(v) is int or (type(v) is float and v.is_integer()),
    "number": lambda v: type(v) in (int, float),
    "string": lambda v: type(v) is str,
    "array": lambda v: type(v) is list,
    "object": lambda v: type(v) is dict,
}


def _fits(node: Mapping[str, Any], value: Any) -> bool:
    """Whether ``value``'s JSON type is one ``node`` declares (no type: it may be)."""
    declared = node.get("type")
    if declared is None:
        return "const" not in node and "enum" not in node
    kinds = declared if isinstance(declared, list) else [declared]
    return any(_JSON_TYPES.get(kind, lambda v: False)(value) for kind in kinds)


# -- refusals from pydantic's error data ---------------------------------------------------

_BY_TYPE: Final = {
    "greater_than": ("gt", "number > {}"),
    "greater_than_equal": ("ge", "number >= {}"),
    "less_than": ("lt", "number < {}"),
    "less_than_equal": ("le", "number <= {}"),
    "multiple_of": ("multiple_of", "a multiple of {}"),
    "string_too_short": ("min_length", "text of at least {} characters"),
    "string_too_long": ("max_length", "text of at most {} characters"),
    "too_short": ("min_length", "at least {} items"),
    "too_long": ("max_length", "at most {} items"),
    "string_pattern_mismatch": ("pattern", "text matching the pattern {}"),
}
"""Constraint errors, by pydantic type: the context key (a schema value, never the input's)."""


def problems_from_errors(
    errors: Iterable[Mapping[str, Any]], schema: dict[str, Any]
) -> list[InputProblem]:
    """Problems naming paths and declared types only, from pydantic's error dicts.

    Reads each error's ``type``, ``loc`` and, for constraints, the declared limit in
    ``ctx``; never ``input`` or ``msg``. Keys the schema does not declare show as ``*``;
    an error inside a union is reported at the union, with the union's types.
    """
    found: dict[InputProblem, None] = {}
    for error in errors:
        parts, _, through_union = walk(schema, error["loc"], Location.PYDANTIC)
        kind = error["type"]
        if through_union:
            expected = declared_type(schema, parts)
        elif kind == "missing":
            expected = missing_field(schema, parts)
        elif kind in ("extra_forbidden", "extra_fields"):
            if kind == "extra_forbidden":
                parts = parts[:-1]
            parent = resolve(schema, walk(schema, parts, Location.PYDANTIC).node) or {}
            expected = no_other_fields(parent.get("properties") or {})
        elif kind in ("literal_error", "enum"):
            expected = "one of the allowed values"
        elif kind in _BY_TYPE and isinstance(error.get("ctx"), Mapping):
            key, text = _BY_TYPE[kind]
            limit = error["ctx"].get(key)
            expected = text.format(limit) if limit is not None else declared_type(schema, parts)
        else:
            expected = declared_type(schema, parts)
        found.setdefault(InputProblem(format_path(parts), expected))
        if len(found) >= MAX_PROBLEMS:
            break
    return list(found) or [InputProblem("(input)", "a value matching the schema")]
