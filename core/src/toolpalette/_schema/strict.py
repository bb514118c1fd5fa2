"""The strict subsets of JSON Schema that model providers enforce, encoded once.

Which schemas qualify, normalizing into a subset, and undoing that on the way in.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

__all__ = ["Dialect", "Normalized", "normalize", "problems", "qualifies", "restore_input"]

Dialect = Literal["openai", "anthropic"]
"""A provider's strict subset: ``openai`` (Chat Completions and Responses) or ``anthropic``."""

# -- the subsets -----------------------------------------------------------------------

_ANNOTATIONS: Final = frozenset({"title", "description", "examples", "$comment"})
"""Keywords that only describe; every provider accepts them."""
_STRUCTURE: Final = frozenset(
    {"type", "enum", "anyOf", "properties", "required", "additionalProperties", "items"}
    | {"$ref", "$defs", "definitions"}
)
"""Keywords both strict subsets accept (with the rules checked in `_check_node()`)."""
_EXTRA: Final[dict[str, frozenset[str]]] = {
    "openai": frozenset(
        {"pattern", "format", "minItems", "maxItems", "multipleOf"}
        | {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}
    ),
    "anthropic": frozenset({"const", "default", "format", "minItems"}),
}
"""Keywords only one subset accepts."""
_FORMATS: Final[dict[str, frozenset[str]]] = {
    "openai": frozenset(
        {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
    ),
    "anthropic": frozenset(
        {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4"}
        | {"ipv6", "uuid"}
    ),
}
"""The string formats each subset accepts."""
_REQUIRES_ALL: Final[dict[str, bool]] = {"openai": True, "anthropic": False}
"""Whether every property must be listed in ``required``."""
_RECURSION: Final[dict[str, bool]] = {"openai": True, "anthropic": False}
"""Whether a ``$ref`` may lead back to a definition it is inside."""
_LABEL: Final[dict[str, str]] = {"openai": "OpenAI", "anthropic": "Anthropic"}

_CONSTRAINTS: Final[dict[str, str]] = {
    "minimum": "at least {}",
    "maximum": "at most {}",
    "exclusiveMinimum": "more than {}",
    "exclusiveMaximum": "less than {}",
    "multipleOf": "a multiple of {}",
    "minLength": "at least {} characters",
    "maxLength": "at most {} characters",
    "pattern": "matching the pattern {}",
    "format": "in {} format",
    "minItems": "at least {} items",
    "maxItems": "at most {} items",
    "uniqueItems": "without duplicates",
}
"""Validation keywords that normalization may leave out of a schema, since the pipeline
enforces them anyway; the model reads them in the description instead."""
_SCHEMA_MAPS: Final = ("properties", "$defs", "definitions")


# -- qualifying --------------------------------------------------------------------------


def qualifies(schema: Any, dialect: Dialect) -> bool:
    """Whether ``dialect``'s strict mode accepts ``schema`` as it stands."""
    return not problems(schema, dialect)


def problems(schema: Any, dialect: Dialect) -> list[str]:
    """Why ``schema`` is outside ``dialect``'s strict subset, one line each; empty if inside.

    Each line names the place (``properties.limit``) and the keyword at fault.
    """
    found: list[str] = []
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        return ["the root is not an object schema"]
    if "anyOf" in schema:
        found.append("(root): `anyOf` at the root")
    for path, node in _walk(schema):
        found.extend(_check_node(path, node, schema, dialect))
    return found


def _walk(node: Any, path: str = "") -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every subschema of ``node`` with its dotted path (the root's path is empty)."""
    if not isinstance(node, Mapping):
        return
    yield path, node
    prefix = f"{path}." if path else ""
    for key, value in node.items():
        if key in _SCHEMA_MAPS and isinstance(value, Mapping):
            for name, child in value.items():
                yield from _walk(child, f"{prefix}{key}.{name}")
        elif key in ("anyOf", "oneOf", "allOf", "prefixItems") and isinstance(value, list):
            for index, child in enumerate(value):
                yield from _walk(child, f"{prefix}{key}[{index}]")
        elif key in ("items", "additionalProperties", "not", "if", "then", "else", "contains"):
            yield from _walk(value, f"{prefix}{key}")


def _check_node(
    path: str, node: Mapping[str, Any], root: Mapping[str, Any], dialect: Dialect
) -> list[str]:
    where = path or "(root)"
    label = _LABEL[dialect]
    allowed = _ANNOTATIONS | _STRUCTURE | _EXTRA[dialect]
    found = [
        f"{where}: `{key}` is outside {label}'s strict subset" for key in node if key not in allowed
    ]
    if "$ref" in node:
        siblings = [k for k in node if k != "$ref"]
        if siblings:
            found.append(f"{where}: a `$ref` with sibling keys ({', '.join(sorted(siblings))})")
        elif not _RECURSION[dialect] and _recursive(root, str(node["$ref"])):
            found.append(f"{where}: a recursive `$ref` ({label}'s strict mode has no recursion)")
    if "format" in node and node["format"] not in _FORMATS[dialect]:
        found.append(f"{where}: format {node['format']!r} is outside {label}'s strict subset")
    if dialect == "anthropic" and node.get("minItems", 0) not in (0, 1):
        found.append(f"{where}: `minItems` other than 0 or 1")
    if "enum" in node and not all(
        v is None or isinstance(v, (str, int, float, bool)) for v in node["enum"]
    ):
        found.append(f"{where}: an `enum` of non-primitive values")
    if _is_object(node):
        if node.get("additionalProperties") is not False:
            found.append(f"{where}: an object without `additionalProperties: false`")
        properties = node.get("properties") or {}
        if _REQUIRES_ALL[dialect] and set(node.get("required") or ()) != set(properties):
            found.append(f"{where}: not every property is required")
        if _REQUIRES_ALL[dialect] and "required" not in node:
            found.append(f"{where}: no `required` list (an empty one is needed)")
    return found


def _is_object(node: Mapping[str, Any]) -> bool:
    kind = node.get("type")
    return (
        kind == "object" or (isinstance(kind, list) and "object" in kind) or ("properties" in node)
    )


def _resolve(root: Mapping[str, Any], ref: str) -> Any:
    """The local definition ``ref`` points at (``#/$defs/Name``), or None."""
    if not ref.startswith("#/"):
        return None
    node: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def _recursive(root: Mapping[str, Any], ref: str) -> bool:
    """Whether following ``ref`` can lead back to ``ref``."""
    seen: set[str] = set()
    stack = [ref]
    while stack:
        current = stack.pop()
        target = _resolve(root, current)
        for _path, node in _walk(target):
            inner = node.get("$ref")
            if inner == ref:
                return True
            if isinstance(inner, str) and inner not in seen:
                seen.add(inner)
                stack.append(inner)
    return False


# -- normalizing ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Normalized:
    """A schema brought into a strict subset, or the reasons it could not be."""

    schema: dict[str, Any]
    """The normalized schema (the original one when ``problems`` is not empty)."""
    problems: tuple[str, ...]
    """Why the schema could not be normalized; empty when it was."""
    narrowed: tuple[str, ...]
    """What the model no longer sees (an alternative left out, a constraint moved into
    the description); the pipeline still accepts and checks all of it."""

    @property
    def ok(self) -> bool:
        """Whether the normalized schema is in the subset."""
        return not self.problems


class _Unsupported(Exception):
    """A keyword normalization cannot rewrite (``not``, ``patternProperties``, a map)."""


_UNREWRITABLE: Final = frozenset(
    {"not", "if", "then", "else", "dependentRequired", "dependentSchemas", "dependencies"}
    | {"patternProperties", "unevaluatedProperties", "propertyNames", "minProperties"}
    | {"maxProperties", "unevaluatedItems", "contains", "minContains", "maxContains"}
    | {"$dynamicRef", "$dynamicAnchor", "additionalItems"}
)


def normalize(schema: Mapping[str, Any], dialect: Dialect) -> Normalized:
    """Bring ``schema`` into ``dialect``'s strict subset where it can.

    Optional properties become required and nullable (null then means "not given": see
    `restore_input()`); objects are closed; a ``$ref`` with siblings is inlined;
    ``oneOf`` becomes ``anyOf``, ``const`` an ``enum`` of one, ``prefixItems`` an
    ``items``; validation keywords outside the subset move into the description, and an
    ``anyOf`` alternative that cannot be expressed (a free-form map, say) is left out.
    What cannot be rewritten (``not``, ``patternProperties``, a root that is a map) is
    reported in `Normalized.problems`.
    """
    text = json.dumps(schema)  # key order kept: a provider keeps it in the arguments
    return _normalize_cached(text, dialect)


@functools.lru_cache(maxsize=1024)
def _normalize_cached(text: str, dialect: Dialect) -> Normalized:
    original = json.loads(text)
    narrowed: list[str] = []
    try:
        result = _Normalizer(original, dialect, narrowed).node(original, "")
    except _Unsupported as exc:
        return Normalized(original, (str(exc),), ())
    left = problems(result, dialect)
    if left:
        return Normalized(original, tuple(left), ())
    return Normalized(result, (), tuple(narrowed))


class _Normalizer:
    def __init__(self, root: dict[str, Any], dialect: Dialect, narrowed: list[str]) -> None:
        self.root = root
        self.dialect = dialect
        self.narrowed = narrowed
        self.allowed = _ANNOTATIONS | _STRUCTURE | _EXTRA[dialect]

    def node(self, node: Any, path: str) -> Any:
        if not isinstance(node, Mapping):
            return node
        where = path or "(root)"
        node = dict(node)
        bad = _UNREWRITABLE.intersection(node)
        if bad:
            raise _Unsupported(f"{where}: `{sorted(bad)[0]}` cannot be expressed in strict mode")
        if "$ref" in node and len(node) > 1:
            target = _resolve(self.root, str(node.pop("$ref")))
            if not isinstance(target, Mapping):
                raise _Unsupported(f"{where}: a `$ref` that does not resolve locally")
            node = {**target, **node}
        if "allOf" in node:
            parts = node.pop("allOf")
            if not isinstance(parts, list) or len(parts) != 1 or not isinstance(parts[0], Mapping):
                raise _Unsupported(f"{where}: `allOf` cannot be expressed in strict mode")
            node = self.node({**parts[0], **node}, path)
        if "oneOf" in node:
            node["anyOf"] = node.pop("oneOf")
        if "const" in node and "const" not in self.allowed:
            node["enum"] = [node.pop("const")]
        if "prefixItems" in node:
            node = self._tuple(node)
        notes: list[str] = []
        for key in list(node):
            if key in self.allowed and self._keeps(key, node[key]):
                continue
            if key in _CONSTRAINTS:
                notes.append(_CONSTRAINTS[key].format(json.dumps(node.pop(key))))
            elif key == "default":
                node.pop(key)  # an optional field's default is re-applied on the way in
            elif key not in self.allowed:
                raise _Unsupported(f"{where}: `{key}` cannot be expressed in strict mode")
        if notes:
            self.narrowed.append(f"{where}: {', '.join(notes)} (checked, not constrained)")
            base = str(node.get("description") or "").rstrip()
            node["description"] = f"{base} ({'; '.join(notes)})".strip()
        prefix = f"{path}." if path else ""
        for key in _SCHEMA_MAPS:
            if key in node and key != "properties":
                node[key] = {n: self.node(s, f"{prefix}{key}.{n}") for n, s in node[key].items()}
        if "items" in node:
            node["items"] = self.node(node["items"], f"{prefix}items")
        if "anyOf" in node:
            node["anyOf"] = self._alternatives(node["anyOf"], where, prefix)
        if _is_object(node):
            node = self._object(node, where, prefix)
        return node

    def _keeps(self, key: str, value: Any) -> bool:
        if key == "format":
            return value in _FORMATS[self.dialect]
        if key == "minItems" and self.dialect == "anthropic":
            return value in (0, 1)
        return True

    def _tuple(self, node: dict[str, Any]) -> dict[str, Any]:
        members = node.pop("prefixItems")
        extra = node.pop("items", None)
        kinds: list[Any] = []
        for member in [*members, *([extra] if isinstance(extra, Mapping) else [])]:
            if member not in kinds:
                kinds.append(member)
        node["items"] = kinds[0] if len(kinds) == 1 else {"anyOf": kinds}
        if extra is False or (extra is None and "maxItems" not in node):
            node.setdefault("maxItems", len(members))
        node.setdefault("minItems", len(members))
        return node

    def _alternatives(self, branches: list[Any], where: str, prefix: str) -> list[Any]:
        kept: list[Any] = []
        for index, branch in enumerate(branches):
            try:
                candidate = self.node(branch, f"{prefix}anyOf[{index}]")
            except _Unsupported:
                candidate = None
            if candidate is None or _branch_problems(candidate, self.dialect):
                self.narrowed.append(f"{where}: alternative {index} left out")
                continue
            kept.append(candidate)
        if not kept:
            raise _Unsupported(f"{where}: no alternative of `anyOf` fits strict mode")
        return kept

    def _object(self, node: dict[str, Any], where: str, prefix: str) -> dict[str, Any]:
        extra = node.get("additionalProperties")
        properties = dict(node.get("properties") or {})
        if isinstance(extra, Mapping) or (extra is True and not properties):
            raise _Unsupported(f"{where}: an object with free-form keys (a map)")
        if extra is not False:
            self.narrowed.append(f"{where}: closed to the properties listed")
        node["additionalProperties"] = False
        required = list(node.get("required") or [])
        for name, child in properties.items():
            child = self.node(child, f"{prefix}properties.{name}")
            if name not in required:
                child = _nullable(child)
                required.append(name)
            properties[name] = child
        node["properties"] = properties
        node["required"] = [*[n for n in required if n in properties]]
        return node


def _branch_problems(node: Any, dialect: Dialect) -> list[str]:
    """`problems()` for a subschema that need not be an object (an ``anyOf`` branch)."""
    if not isinstance(node, Mapping):
        return []
    return [
        line
        for path, child in _walk(node)
        for line in _check_node(path, child, {}, dialect)
        if "recursive" not in line
    ]


def _accepts_null(node: Mapping[str, Any]) -> bool:
    kind = node.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(isinstance(b, Mapping) and _accepts_null(b) for b in node.get("anyOf") or ()) or (
        None in (node.get("enum") or ())
    )


def _nullable(node: Any) -> Any:
    """``node`` that also accepts null (the strict form of an optional field)."""
    if not isinstance(node, dict) or _accepts_null(node):
        return node
    kind = node.get("type")
    if isinstance(kind, str) and "anyOf" not in node and "$ref" not in node:
        widened = {**node, "type": [kind, "null"]}
        if "enum" in node:
            widened["enum"] = [*node["enum"], None]
        return widened
    described = {k: node[k] for k in ("title", "description") if k in node}
    inner = {k: v for k, v in node.items() if k not in described}
    return {**described, "anyOf": [inner, {"type": "null"}]}


# -- on the way in ---------------------------------------------------------------------------


def restore_input(schema: Mapping[str, Any], value: Any) -> Any:
    """Undo normalization on a model's input: a null for an optional field is "not given".

    Walks ``value`` along the tool's own (unnormalized) ``schema`` and drops every null
    given for a property that is optional there and does not accept null, so that the
    tool's default applies. Anything else is returned as it came (validation is the
    pipeline's job). Returns a new value; ``value`` is not changed.
    """
    return _restore(schema, schema, value, 0)


def _restore(root: Mapping[str, Any], node: Any, value: Any, depth: int) -> Any:
    if not isinstance(node, Mapping) or depth > 64:
        return value
    if "$ref" in node:
        target = _resolve(root, str(node["$ref"]))
        node = (
            {**target, **{k: v for k, v in node.items() if k != "$ref"}}
            if isinstance(target, Mapping)
            else node
        )
    for key in ("allOf", "anyOf", "oneOf"):
        for branch in node.get(key) or ():
            if _fits(root, branch, value):
                value = _restore(root, branch, value, depth + 1)
                break
    if isinstance(value, dict) and isinstance(node.get("properties"), Mapping):
        properties = node["properties"]
        required = set(node.get("required") or ())
        restored: dict[str, Any] = {}
        for key, item in value.items():
            child = properties.get(key)
            if (
                item is None
                and key not in required
                and isinstance(child, Mapping)
                and not _accepts_null(_deref(root, child))
            ):
                continue  # "not given": the tool's default applies
            restored[key] = _restore(root, child, item, depth + 1)
        return restored
    if isinstance(value, list):
        members = node.get("prefixItems")
        if isinstance(members, list):
            return [
                _restore(root, members[i] if i < len(members) else node.get("items"), v, depth + 1)
                for i, v in enumerate(value)
            ]
        if isinstance(node.get("items"), Mapping):
            return [_restore(root, node["items"], v, depth + 1) for v in value]
    return value


def _deref(root: Mapping[str, Any], node: Mapping[str, Any]) -> Mapping[str, Any]:
    if "$ref" in node:
        target = _resolve(root, str(node["$ref"]))
        if isinstance(target, Mapping):
            return {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def _fits(root: Mapping[str, Any], branch: Any, value: Any) -> bool:
    """Whether ``value`` has the shape of ``branch`` (objects: its keys; arrays: an array)."""
    if not isinstance(branch, Mapping):
        return False
    branch = _deref(root, branch)
    if isinstance(value, dict):
        properties = branch.get("properties")
        return isinstance(properties, Mapping) and set(value) <= set(properties)
    if isinstance(value, list):
        return branch.get("type") == "array" or "items" in branch or "prefixItems" in branch
    return False
