"""Searching a thinker's catalogs: the indexes a thinker class shares, and the answers.

``search_tools`` ranks the deferred tools of the thinker's class (``Thinker.tool_ranker``,
the default BM25F ranker of ``ranking.py`` when None) and ``search_skills`` its skills
(by id and description, with the default ranker). An index is built the first time a
search needs it, once per thinker class and catalog: it is kept on the class's
:class:`~toolpalette._agents.resolved.ResolvedPalette` (:class:`CatalogIndexes`), which
the hub caches per class until its catalog changes, so every thinker of the class
searches the same index, and a changed catalog is indexed again. The default ranker
then reads only the tools it has not seen: each class keeps a
:class:`~toolpalette._agents.ranking.TermCache` for as long as the class lives.

An index holds the class's catalog (its read-only tools, for a read-only class); what
one thinker may reach is narrower (its policy's ``offers``, what it was granted
already), so a search reads the ranking in rank order, keeps what is in the thinker's
own catalog (:func:`ranked`), and hands it to admission, which decides each match
(``admission.py``). :func:`answer` is what the model reads.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, NamedTuple

from toolpalette._agents.ranking import (
    LexicalRanker,
    TermCache,
    ToolDocument,
    ToolIndex,
    ToolRanker,
    documents_from,
)

if TYPE_CHECKING:
    from toolpalette._skills import Skill
    from toolpalette._tools.provider import ToolProvider

__all__ = ["DEFAULT_RANKER", "CatalogIndexes", "Found", "Indexed", "answer", "ranked"]

DEFAULT_RANKER: Final = LexicalRanker()
"""The ranker of a thinker class whose ``tool_ranker`` is None."""

_SLACK: Final = 4
"""How many ranked items past the ``limit`` a search reads first (four times more each
time it needs more): most of a class's catalog is in each thinker's."""

_TERM_CACHES: weakref.WeakKeyDictionary[type, TermCache] = weakref.WeakKeyDictionary()
"""Each thinker class's term cache, for as long as the class lives."""
_TERM_CACHES_LOCK = threading.Lock()


class Found(NamedTuple):
    """A search's match, and how it was admitted."""

    item: Any
    """The tool's provider, or the skill."""
    how: Literal["granted", "ask", "pending", "offered"]
    """Granted; a tool a person approves at each call; a skill's grant waiting for one;
    a destructive tool offered, not granted: each call of it is decided when made."""
    instructions: str | None = None
    """A granted skill's instructions, when the thinker keeps no grants."""


@dataclass(frozen=True)
class Indexed:
    """A catalog ready to search: the index, and the items its positions name."""

    index: ToolIndex
    items: tuple[Any, ...]


class CatalogIndexes:
    """The search indexes of one thinker class at one catalog version, built on first use.

    Kept on the class's resolved palette; safe to use from several threads (a second
    thinker asking while the first builds waits for that build).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._built: dict[tuple[Any, ...], tuple[Any, Indexed]] = {}

    def tools(
        self,
        cls: type,
        deferred: Sequence[ToolProvider],
        read_only: bool,
        ranker: ToolRanker | None,
    ) -> Indexed:
        """The index of ``cls``'s deferred tools (its read-only ones if ``read_only``)."""
        chosen = ranker if ranker is not None else DEFAULT_RANKER
        key = ("tool", id(chosen), read_only)
        with self._lock:
            held = self._built.get(key)
            if held is not None and held[0] is chosen:
                return held[1]
            items = tuple(p for p in deferred if p.read_only or not read_only)
            documents = documents_from(items)
            if isinstance(chosen, LexicalRanker):
                index: ToolIndex = chosen.build(documents, cache=_term_cache(cls))
            else:
                index = chosen.build(documents)
            built = Indexed(index, items)
            self._built[key] = (chosen, built)  # the ranker held: its id stays its own
            return built

    def skills(self, skills: Sequence[Skill]) -> Indexed:
        """The index of the class's skills, by full id and description."""
        with self._lock:
            held = self._built.get(("skill",))
            if held is not None:
                return held[1]
            documents = [ToolDocument(s.id, s.description, {}) for s in skills]
            built = Indexed(DEFAULT_RANKER.build(documents), tuple(skills))
            self._built[("skill",)] = (None, built)
            return built


def _term_cache(cls: type) -> TermCache:
    with _TERM_CACHES_LOCK:
        cache = _TERM_CACHES.get(cls)
        if cache is None:
            cache = _TERM_CACHES[cls] = TermCache()
        return cache


def ranked(
    indexed: Indexed,
    query: str,
    catalog: Mapping[str, Any],
    key: Callable[[Any], str],
    limit: int,
) -> Iterator[Any]:
    """The items of ``catalog`` the query finds, best first (lazily: read as needed).

    An item counts only if it is the very one the catalog holds under its name. Reads
    ``limit`` and :data:`_SLACK` more results, then four times more each time the
    caller wants more, until the index has no more.
    """
    items = indexed.items
    seen: set[int] = set()
    wanted = limit + _SLACK
    while True:
        hits = indexed.index.search(query, wanted)
        for position, _score in hits:
            if position in seen or not (isinstance(position, int) and 0 <= position < len(items)):
                continue
            seen.add(position)
            item = items[position]
            if catalog.get(key(item)) is item:
                yield item
        if len(hits) < wanted or wanted >= len(items):
            return
        wanted *= 4


def answer(kind: str, found: Sequence[Found], keep: bool) -> dict[str, Any]:
    """What a search answers: the matches in rank order, and a note on using them."""
    if kind == "tool":
        tools = []
        for match in found:
            info = match.item.info
            entry: dict[str, Any] = {
                "name": info.name,
                "description": info.description,
                "input_schema": info.input_schema,
            }
            if match.how == "ask":
                entry["approval"] = "required"
            tools.append(entry)
        if not tools:
            return {"tools": [], "note": "No tool matched: try other words."}
        note = "You can call these tools now"
        note += "; they are offered from your next turn." if keep else "."
        if any(match.how == "ask" for match in found):
            note += ' A person approves each call of a tool marked "approval": "required".'
        return {"tools": tools, "note": note}
    skills = []
    for match in found:
        skill = match.item
        entry = {"name": skill.id, "description": skill.description}
        if match.how == "pending":
            entry["approval"] = "pending"
        if match.instructions is not None:
            entry["instructions"] = match.instructions
        skills.append(entry)
    if not skills:
        return {"skills": [], "note": "No skill matched: try other words."}
    if keep:
        note = "These skills are added to your instructions from your next turn"
        note += (
            " (a pending one once a person approves it)."
            if any(m.how == "pending" for m in found)
            else "."
        )
    else:
        note = "Follow these skills' instructions."
    return {"skills": skills, "note": note}
