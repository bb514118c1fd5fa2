"""How findable each tool is behind ``search_tools``: queries made from its own text."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from toolpalette._search.ranking import LexicalRanker, ToolDocument, documents_from
from toolpalette._search.search import _SLACK, diversified, name_prefix

__all__ = ["QUERY_WORDS", "TOP", "Unfound", "queries_of", "unfound"]

TOP: Final = 5
"""The rank a tool's own queries should reach: ``search_tools``'s default limit."""

QUERY_WORDS: Final = 12
"""The most words of a query made from a tool's text (what a person asks is short)."""

_SENTENCE: Final = re.compile(r"(?<=[.!?])\s")
_WORD: Final = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Unfound:
    """A tool that one of its own queries does not find in the top `TOP`."""

    tool: str
    source: str
    """Where the query comes from: ``"description"`` or ``"parameters"``."""
    query: str
    rank: int | None
    """Its rank for the query (1 is first), or None past what a search reads."""
    outranked_by: tuple[str, ...]
    """The tools the search placed before it, best first (at most `TOP`)."""


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def _first_sentence(text: str) -> str:
    return _SENTENCE.split(text.strip(), maxsplit=1)[0] if text.strip() else ""


def _parameters(schema: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        for name, spec in properties.items():
            described = spec.get("description") if isinstance(spec, Mapping) else None
            yield str(name), described if isinstance(described, str) else ""


def queries_of(document: ToolDocument) -> list[tuple[str, str]]:
    """A tool's own queries, as ``(source, query)``: its description, its parameters.

    The description's first sentence; then each parameter's name and its
    description's first sentence. Each is cut to `QUERY_WORDS` words; an empty
    one is left out.
    """
    found = []
    described = " ".join(_words(_first_sentence(document.description))[:QUERY_WORDS])
    if described:
        found.append(("description", described))
    words: list[str] = []
    for name, text in _parameters(document.input_schema):
        words += [*_words(name.replace("_", " ")), *_words(_first_sentence(text))]
    if words:
        found.append(("parameters", " ".join(words[:QUERY_WORDS])))
    return found


def unfound(tools: Sequence[Any], top: int = TOP) -> list[Unfound]:
    """Each miss of a tool of ``tools`` that one of its own queries does not rank in the ``top``.

    ``tools`` are providers, or anything with a name, a description and an input schema.
    """
    documents = documents_from(tools)
    index = LexicalRanker().build(documents)
    names = [d.name for d in documents]

    def group(position: int) -> str:
        return name_prefix(names[position])

    found = []
    for position, document in enumerate(documents):
        for source, query in queries_of(document):
            hits = diversified(index.search(query, top + _SLACK), group)
            ranked = [p for p, _ in hits]
            if position in ranked[:top]:
                continue
            rank = ranked.index(position) + 1 if position in ranked else None
            before = tuple(names[p] for p in ranked[:top])
            found.append(Unfound(document.name, source, query, rank, before))
    return found
