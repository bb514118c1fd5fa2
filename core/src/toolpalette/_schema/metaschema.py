"""Deciding without jsonschema that a schema is valid Draft 2020-12, for the common keywords.

It only ever says "valid"; on anything unsure the caller runs jsonschema.
"""

from __future__ import annotations

import re
from typing import Any, Final

__all__ = [
    "ANCHOR_PATTERN",
    "ID_PATTERN",
    "KEYWORDS",
    "SCHEMA_URIS",
    "SIMPLE_TYPES",
    "surely_valid",
]

SCHEMA_URIS: Final = frozenset(
    {
        "https://json-schema.org/draft/2020-12/schema",
        "https://json-schema.org/draft/2020-12/schema#",
        # What zod-based servers (the TypeScript MCP SDK's) declare on every tool: the
        # check reads it as 2020-12 all the same (the metaschema asks ``$schema`` for a
        # string, and the validators are 2020-12 whatever the root declares).
        "http://json-schema.org/draft-07/schema",
        "http://json-schema.org/draft-07/schema#",
    }
)
"""The ``$schema`` values the walk accepts (any other is left to jsonschema)."""

# The metaschema's patterns, matched as jsonschema matches them (``re.search``).
ID_PATTERN: Final = re.compile(r"^[^#]*#?$")
ANCHOR_PATTERN: Final = re.compile(r"^[A-Za-z_][-A-Za-z0-9._]*$")
SIMPLE_TYPES: Final = frozenset(
    {"array", "boolean", "integer", "null", "number", "object", "string"}
)

# What each keyword's value must be (the kinds the walk checks, below).
_SCHEMA = 0  # a schema: an object or a boolean
_SCHEMAS = 1  # a non-empty array of schemas
_SCHEMA_MAP = 2  # an object whose values are schemas
_STRING = 3
_BOOLEAN = 4
_NUMBER = 5
_POSITIVE = 6  # a number > 0
_COUNT = 7  # a non-negative integer
_TYPE = 8  # a simple type's name, or a non-empty array of unique ones
_STRINGS = 9  # an array of unique strings
_STRINGS_MAP = 10  # an object whose values are arrays of unique strings
_ARRAY = 11  # any array
_DEPENDENCIES = 12  # an object whose values are schemas or arrays of unique strings
_ID_STRING = 13  # a string matching ID_PATTERN
_ANCHOR_STRING = 14  # a string matching ANCHOR_PATTERN
_SCHEMA_URI = 15  # one of SCHEMA_URIS
_ANY = 16
_UNSURE = 17  # named by the metaschema, not checked here: left to jsonschema

KEYWORDS: Final[dict[str, int]] = {
    # core
    "$id": _ID_STRING,
    "$schema": _SCHEMA_URI,
    "$ref": _STRING,
    "$anchor": _ANCHOR_STRING,
    "$dynamicRef": _UNSURE,
    "$dynamicAnchor": _UNSURE,
    "$vocabulary": _UNSURE,
    "$comment": _STRING,
    "$defs": _SCHEMA_MAP,
    # applicator
    "prefixItems": _SCHEMAS,
    "items": _SCHEMA,
    "contains": _SCHEMA,
    "additionalProperties": _SCHEMA,
    "properties": _SCHEMA_MAP,
    "patternProperties": _SCHEMA_MAP,
    "dependentSchemas": _SCHEMA_MAP,
    "propertyNames": _SCHEMA,
    "if": _SCHEMA,
    "then": _SCHEMA,
    "else": _SCHEMA,
    "allOf": _SCHEMAS,
    "anyOf": _SCHEMAS,
    "oneOf": _SCHEMAS,
    "not": _SCHEMA,
    # unevaluated
    "unevaluatedItems": _SCHEMA,
    "unevaluatedProperties": _SCHEMA,
    # validation
    "type": _TYPE,
    "const": _ANY,
    "enum": _ARRAY,
    "multipleOf": _POSITIVE,
    "maximum": _NUMBER,
    "exclusiveMaximum": _NUMBER,
    "minimum": _NUMBER,
    "exclusiveMinimum": _NUMBER,
    "maxLength": _COUNT,
    "minLength": _COUNT,
    "pattern": _STRING,
    "maxItems": _COUNT,
    "minItems": _COUNT,
    "uniqueItems": _BOOLEAN,
    "maxContains": _COUNT,
    "minContains": _COUNT,
    "maxProperties": _COUNT,
    "minProperties": _COUNT,
    "required": _STRINGS,
    "dependentRequired": _STRINGS_MAP,
    # meta-data
    "title": _STRING,
    "description": _STRING,
    "default": _ANY,
    "deprecated": _BOOLEAN,
    "readOnly": _BOOLEAN,
    "writeOnly": _BOOLEAN,
    "examples": _ARRAY,
    # format-annotation
    "format": _STRING,
    # content
    "contentEncoding": _STRING,
    "contentMediaType": _STRING,
    "contentSchema": _SCHEMA,
    # the older keywords the 2020-12 metaschema still names
    "definitions": _SCHEMA_MAP,
    "dependencies": _DEPENDENCIES,
    "$recursiveAnchor": _UNSURE,
    "$recursiveRef": _UNSURE,
}
"""Every keyword the 2020-12 metaschema names, and what its value must be."""


def surely_valid(schema: object) -> bool:
    """Whether ``schema`` is valid against the Draft 2020-12 metaschema, surely.

    True only when every keyword met is checked here and its value is what the
    metaschema allows; False when invalid or unsure (then ask jsonschema).
    """
    seen: set[int] = set()
    pending: list[Any] = [schema]
    while pending:
        node = pending.pop()
        if node is True or node is False:
            continue
        if type(node) is not dict:
            return False
        if id(node) in seen:
            continue
        seen.add(id(node))
        for key, value in node.items():
            kind = KEYWORDS.get(key) if type(key) is str else _UNSURE
            if kind is None or kind == _ANY:
                continue
            if kind == _SCHEMA:
                pending.append(value)
            elif kind == _SCHEMAS:
                if type(value) is not list or not value:
                    return False
                pending.extend(value)
            elif kind in (_SCHEMA_MAP, _DEPENDENCIES):
                if type(value) is not dict:
                    return False
                for name, each in value.items():
                    if type(name) is not str:
                        return False
                    if kind == _DEPENDENCIES and type(each) is list:
                        if not _unique_strings(each):
                            return False
                    else:
                        pending.append(each)
            elif not _leaf_valid(kind, value):
                return False
    return True


def _leaf_valid(kind: int, value: Any) -> bool:
    """Whether a keyword's value that holds no schema to walk is what ``kind`` allows."""
    if kind == _STRING:
        return isinstance(value, str)
    if kind == _TYPE:
        if type(value) is str:
            return value in SIMPLE_TYPES
        return (
            type(value) is list
            and bool(value)
            and all(type(each) is str and each in SIMPLE_TYPES for each in value)
            and len(set(value)) == len(value)
        )
    if kind == _STRINGS:
        return type(value) is list and _unique_strings(value)
    if kind == _COUNT:
        if type(value) is int:
            return value >= 0
        return type(value) is float and value.is_integer() and value >= 0
    if kind == _NUMBER:
        return type(value) is int or type(value) is float
    if kind == _POSITIVE:
        return (type(value) is int or type(value) is float) and value > 0
    if kind == _BOOLEAN:
        return value is True or value is False
    if kind == _ARRAY:
        return type(value) is list
    if kind == _STRINGS_MAP:
        return type(value) is dict and all(
            type(name) is str and type(each) is list and _unique_strings(each)
            for name, each in value.items()
        )
    if kind == _ID_STRING:
        return isinstance(value, str) and ID_PATTERN.search(value) is not None
    if kind == _ANCHOR_STRING:
        return isinstance(value, str) and ANCHOR_PATTERN.search(value) is not None
    if kind == _SCHEMA_URI:
        return type(value) is str and value in SCHEMA_URIS
    return False


def _unique_strings(values: list[Any]) -> bool:
    return all(type(each) is str for each in values) and len(set(values)) == len(values)
