"""``x-mcp-header``: a tool parameter mirrored as an HTTP header (SEP-2243), checked."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Final

__all__ = ["HEADER_KEY", "header_problems", "mirrored_headers"]

HEADER_KEY: Final = "x-mcp-header"
"""The property keyword naming the header (``Mcp-Param-NAME``) a client mirrors it in."""
_TOKEN: Final = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
"""An RFC 9110 token: what a header name may be."""
_TYPES: Final = frozenset({"string", "integer", "boolean"})


def mirrored_headers(schema: Any) -> dict[str, str]:
    """Each top-level-reachable property carrying ``x-mcp-header``: its path to the header."""
    return {
        ".".join(path): node[HEADER_KEY] for path, node in _chain(schema, ()) if HEADER_KEY in node
    }


def header_problems(schema: Any) -> list[str]:
    """Why the ``x-mcp-header`` keywords of an input schema are refused (none: fine).

    A header may sit only on a property reached from the root through ``properties``
    alone, name an RFC 9110 token, be on a ``string``, ``integer`` or ``boolean``
    property, and not repeat another's name (case aside).
    """
    if HEADER_KEY not in repr(schema):  # the common case: no header at all
        return []
    problems: list[str] = []
    on_chain = {id(node) for _, node in _chain(schema, ())}
    for node in _nodes(schema):
        if HEADER_KEY in node and id(node) not in on_chain:
            problems.append(
                f"{HEADER_KEY} is allowed only on a property reached through properties"
            )
    seen: dict[str, str] = {}
    for path, node in _chain(schema, ()):
        if HEADER_KEY not in node:
            continue
        where = ".".join(path)
        name = node[HEADER_KEY]
        if not path:
            problems.append(f"{HEADER_KEY} is allowed only on a property, not the root")
        elif not isinstance(name, str) or not _TOKEN.fullmatch(name):
            problems.append(f"property {where!r}: {HEADER_KEY} must be a header name (a token)")
        elif node.get("type") not in _TYPES:
            problems.append(
                f"property {where!r}: {HEADER_KEY} is allowed only on string, integer and "
                "boolean properties"
            )
        elif name.lower() in seen:
            other = seen[name.lower()]
            problems.append(f"property {where!r}: {HEADER_KEY} {name!r} repeats {other!r}'s")
        else:
            seen[name.lower()] = where
    return problems


def _chain(node: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], dict[str, Any]]]:
    """The root and each property reached from it through ``properties`` alone."""
    if not isinstance(node, dict):
        return
    yield path, node
    properties = node.get("properties")
    if isinstance(properties, dict):
        for key, child in properties.items():
            yield from _chain(child, (*path, str(key)))


_MAPS: Final = frozenset({"properties", "patternProperties", "$defs", "definitions"})
"""Keywords whose value maps names to schemas."""
_DATA: Final = frozenset({"const", "enum", "default", "examples"})
"""Keywords whose value is data, not a schema."""


def _nodes(node: Any) -> Iterator[dict[str, Any]]:
    """Every schema in the schema (the names of a ``properties`` map are not schemas)."""
    if isinstance(node, dict):
        yield node
        for key, child in node.items():
            if key in _DATA:
                continue
            if key in _MAPS and isinstance(child, dict):
                for sub in child.values():
                    yield from _nodes(sub)
            else:
                yield from _nodes(child)
    elif isinstance(node, list):
        for child in node:
            yield from _nodes(child)
