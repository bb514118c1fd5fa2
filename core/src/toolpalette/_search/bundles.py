"""Bundles: a pack, a distribution or an MCP server deferred whole, as one catalog entry.

A bundle is found, asked for and granted as one thing (its name and one description);
granting it grants each of its tools, one by one, through admission.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from toolpalette._search.ranking import ToolDocument

__all__ = [
    "MAX_BUNDLE_DESCRIPTION",
    "Bundle",
    "bundle_name",
    "catalog_items",
    "entries",
    "skill_items",
]

MAX_BUNDLE_DESCRIPTION: Final = 1024
"""The most characters of a bundle's description the model reads."""

_NOT_NAME: Final = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass(frozen=True)
class Bundle:
    """A deferred bundle: the name the model asks for, what it is for, and its tools."""

    name: str
    """Its catalog name (a well-formed tool name, made from what the selector named)."""
    description: str
    """One line: the pack's own, else its distribution's summary, else its tools' names."""
    tools: tuple[str, ...]
    """The names of its deferred tools, in the selector's order (a skilljar's: the full
    ids of its skills)."""
    source: str
    """What the selector named: ``"package:x"``, ``"distribution:x"``, ``"server:x"``, or
    ``"skilljar:x"``."""

    def document(self, providers: Mapping[str, Any]) -> ToolDocument:
        """What the ranker reads: the bundle's name and description, and its tools' words.

        Its tools' names and descriptions are part of its description field, so a
        query in any of its tools' words finds the bundle; no schema is read.
        """
        words = [self.description]
        for name in self.tools:
            provider = providers.get(name)
            if provider is not None:
                words.append(f"{name}: {provider.description}")
        return ToolDocument(self.name, "\n".join(words), {})

    def members(self, catalog: Mapping[str, Any]) -> list[Any]:
        """Its tools still in ``catalog`` (the thinker's deferred catalog), in order."""
        return [catalog[name] for name in self.tools if name in catalog]


def bundle_name(target: str) -> str:
    """A well-formed catalog name for what a selector entry named (``a.b`` is ``a_b``)."""
    name = _NOT_NAME.sub("_", target).strip("_")[:64]
    return name or "bundle"


def skill_items(
    skills: Sequence[Any], bundles: Sequence[Bundle]
) -> tuple[list[Any], list[ToolDocument]]:
    """`catalog_items()` for skills: loose skills by id and description, then each jar."""
    bundled = {skill_id for bundle in bundles for skill_id in bundle.tools}
    by_id = {s.id: s for s in skills}
    items: list[Any] = [s for s in skills if s.id not in bundled]
    documents = [ToolDocument(s.id, s.description, {}) for s in items]
    for bundle in bundles:
        items.append(bundle)
        documents.append(bundle.document(by_id))
    return items, documents


def catalog_items(
    deferred: Sequence[Any], bundles: Sequence[Bundle]
) -> tuple[list[Any], list[ToolDocument]]:
    """The items a search ranks, and their documents: loose tools, then each bundle.

    A bundled tool is found through its bundle only: the catalog shows one line per
    bundle, whatever it holds.
    """
    bundled = {name for bundle in bundles for name in bundle.tools}
    by_name = {p.name: p for p in deferred}
    items: list[Any] = [p for p in deferred if p.name not in bundled]
    documents = [ToolDocument(p.name, p.description, p.input_schema) for p in items]
    for bundle in bundles:
        items.append(bundle)
        documents.append(bundle.document(by_name))
    return items, documents


def entries(catalog: Mapping[str, Any], bundles: Iterable[Bundle]) -> list[tuple[str, str]]:
    """A request's enum: each loose item of ``catalog``, then each bundle with items left."""
    bundles = list(bundles)
    bundled = {name for bundle in bundles for name in bundle.tools}
    listed = [(n, p.description) for n, p in catalog.items() if n not in bundled]
    for bundle in bundles:
        if bundle.members(catalog) and bundle.name not in catalog:
            listed.append((bundle.name, bundle.description))
    return listed
