"""Searching a thinker's catalogs: the indexes a thinker class shares, and the answers."""

from __future__ import annotations

import heapq
import re
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, NamedTuple

from toolpalette._search.bundles import Bundle, catalog_items, skill_items
from toolpalette._search.ranking import (
    LexicalIndex,
    LexicalRanker,
    TermCache,
    ToolIndex,
    ToolRanker,
)

if TYPE_CHECKING:
    from toolpalette._skills import Skill
    from toolpalette._tools.provider import ToolProvider

__all__ = [
    "DEFAULT_RANKER",
    "CatalogIndexes",
    "Found",
    "Indexed",
    "Reading",
    "absent",
    "answer",
    "count_matches",
    "diversified",
    "name_prefix",
    "ranked",
]

DEFAULT_RANKER: Final = LexicalRanker()
"""The ranker of a thinker class whose ``tool_ranker`` is None."""

_SLACK: Final = 4
"""How many ranked items past the ``limit`` a search reads first (four times more each
time it needs more): most of a class's catalog is in each thinker's."""

DIVERSITY: Final = 0.8
"""What each earlier result of the same name prefix, past `DIVERSITY_FREE`,
multiplies a result's score by when the results are read in order: a fourth
``github_...`` tool must score 1.25 times another prefix's best to rank before it, a
fifth 1.56 times. bench/bench_search.py chose both values: BFCL's recall@5 does not
drop (its questions often need several ``calculate_...`` functions at once), and on
its prefix-heavy catalog the tools of other prefixes rise."""

DIVERSITY_FREE: Final = 3
"""How many results of one prefix are read before `DIVERSITY` applies."""

_PREFIX: Final = re.compile(r"[A-Za-z0-9]+")

_MAX_LIMIT: Final = 20
"""The most matches one search returns (``meta_search.MAX_LIMIT``, which imports this
module's callers)."""

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
    members: tuple[Found, ...] = ()
    """A bundle's tools, each as it was admitted (the item is then a ``Bundle``)."""


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
        bundles: Sequence[Bundle] = (),
    ) -> Indexed:
        """The index of ``cls``'s deferred tools (its read-only ones if ``read_only``).

        A bundle is one item, whose document holds its tools' words; its tools are not
        items of their own (``bundles.py``).
        """
        chosen = ranker if ranker is not None else DEFAULT_RANKER
        key = ("tool", id(chosen), read_only)
        with self._lock:
            held = self._built.get(key)
            if held is not None and held[0] is chosen:
                return held[1]
            reachable = [p for p in deferred if p.read_only or not read_only]
            listed, documents = catalog_items(reachable, bundles)
            items = tuple(listed)
            if isinstance(chosen, LexicalRanker):
                index: ToolIndex = chosen.build(documents, cache=_term_cache(cls))
            else:
                index = chosen.build(documents)
            built = Indexed(index, items)
            self._built[key] = (chosen, built)  # the ranker held: its id stays its own
            return built

    def skills(self, skills: Sequence[Skill], bundles: Sequence[Bundle] = ()) -> Indexed:
        """The index of the class's skills, by full id and description (a jar: one item)."""
        with self._lock:
            held = self._built.get(("skill",))
            if held is not None:
                return held[1]
            items, documents = skill_items(skills, bundles)
            built = Indexed(DEFAULT_RANKER.build(documents), tuple(items))
            self._built[("skill",)] = (None, built)
            return built


def _term_cache(cls: type) -> TermCache:
    with _TERM_CACHES_LOCK:
        cache = _TERM_CACHES.get(cls)
        if cache is None:
            cache = _TERM_CACHES[cls] = TermCache()
        return cache


def name_prefix(name: str) -> str:
    """A tool name's first word (``github`` of ``github_create_issue``), lower-cased."""
    found = _PREFIX.match(name)
    return found.group().lower() if found else name


def diversified(
    hits: Sequence[tuple[int, float]],
    group_of: Callable[[int], str],
    decay: float = DIVERSITY,
    free: int = DIVERSITY_FREE,
) -> list[tuple[int, float]]:
    """``hits`` (best first) reordered so that one group cannot fill the top.

    Read greedily: the next result is the one whose score, times ``decay`` for each
    result of its group already read past the first ``free``, is highest (ties: the
    earlier hit). Every hit is kept, with its own score; a group of one never moves
    down.
    """
    if decay >= 1.0 or len(hits) <= free:
        return list(hits)
    groups: dict[str, list[int]] = {}
    for rank, (position, _score) in enumerate(hits):
        groups.setdefault(group_of(position), []).append(rank)
    if len(groups) == len(hits):
        return list(hits)
    heap = [(-hits[ranks[0]][1], ranks[0], group, 0) for group, ranks in groups.items()]
    heapq.heapify(heap)
    order: list[tuple[int, float]] = []
    while heap:
        _, rank, group, taken = heapq.heappop(heap)
        order.append(hits[rank])
        ranks = groups[group]
        taken += 1
        if taken < len(ranks):
            following = ranks[taken]
            weight = decay ** max(0, taken - free + 1)
            heapq.heappush(heap, (-hits[following][1] * weight, following, group, taken))
    return order


def ranked(
    indexed: Indexed,
    query: str,
    catalog: Mapping[str, Any],
    key: Callable[[Any], str],
    limit: int,
    *,
    diverse: bool = False,
    counted: list[int] | None = None,
    left_out: frozenset[int] = frozenset(),
) -> Iterator[Any]:
    """The items of ``catalog`` the query finds, best first (lazily: read as needed).

    An item counts only if it is the very one the catalog holds under its name. Reads
    ``limit`` and `_SLACK` more results, then four times more each time the
    caller wants more, until the index has no more. ``diverse`` reorders each read
    by name prefix (`diversified()`). With ``counted``, the first read appends to it
    how many items the query matches but ``left_out`` (the default index counts them as
    it searches; another's, through `count_matches()`).
    """
    items = indexed.items
    seen: set[int] = set()
    wanted = limit + _SLACK

    def group_of(position: int) -> str:
        return name_prefix(key(items[position]))

    index = indexed.index
    while True:
        if counted is not None and not counted:
            if isinstance(index, LexicalIndex):
                read, matched = index.search_counted(query, wanted, left_out)
                counted.append(matched)
            else:
                read = index.search(query, wanted)
                total = count_matches(indexed, query, left_out)
                counted.append(-1 if total is None else total)
        else:
            read = index.search(query, wanted)
        hits = _positions(read, len(items))
        for position, _score in diversified(hits, group_of) if diverse else hits:
            if position in seen:
                continue
            seen.add(position)
            item = items[position]
            if isinstance(item, Bundle):
                if item.members(catalog):
                    yield item
            elif catalog.get(key(item)) is item:
                yield item
        if len(read) < wanted or wanted >= len(items):
            return
        wanted *= 4


def _tool_entry(match: Found, bundle: str | None = None) -> dict[str, Any]:
    info = match.item.info
    entry: dict[str, Any] = {
        "name": info.name,
        "description": info.description,
        "input_schema": info.input_schema,
    }
    if bundle is not None:
        entry["bundle"] = bundle
    if match.how == "ask":
        entry["approval"] = "required"
    return entry


def _bundle_entry(match: Found) -> dict[str, Any]:
    bundle: Bundle = match.item
    entry: dict[str, Any] = {
        "name": bundle.name,
        "description": bundle.description,
        "tools": [m.item.name for m in match.members],
    }
    guidance = [f"{m.item.name}: {m.item.guidance}" for m in match.members if m.item.guidance]
    if guidance:
        entry["guidance"] = "\n".join(guidance)
    return entry


class Reading(Iterator[Any]):
    """An iterator of ranked items that says, once read, whether it was read to the end."""

    def __init__(self, items: Iterator[Any]) -> None:
        self._items = items
        self.exhausted = False
        """Whether every item was read (none is left past what the caller took)."""

    def __next__(self) -> Any:
        try:
            return next(self._items)
        except StopIteration:
            self.exhausted = True
            raise


def absent(
    indexed: Indexed, catalog: Mapping[str, Any], key: Callable[[Any], str]
) -> frozenset[int]:
    """The positions of the index whose item ``catalog`` does not hold (granted, hidden).

    What `count_matches()` leaves out; one pass over the index, which a thinker
    keeps while its catalog stays as it is (most of a class's index is in it).
    """
    missing = []
    for position, item in enumerate(indexed.items):
        if isinstance(item, Bundle):
            if not item.members(catalog):
                missing.append(position)
        elif catalog.get(key(item)) is not item:
            missing.append(position)
    return frozenset(missing)


def count_matches(indexed: Indexed, query: str, left_out: frozenset[int]) -> int | None:
    """How many items the query matches at all, but ``left_out``; None if the index cannot say.

    The default index can (``LexicalIndex.matching``; a search counts them itself,
    ``search_counted``); another ranker's index can by having a ``matching(query)``
    method that returns positions.
    """
    matching = getattr(indexed.index, "matching", None)
    if not callable(matching):
        return None
    size = len(indexed.items)
    found = {p for p in matching(query) if isinstance(p, int) and 0 <= p < size}
    return len(found) - len(found & left_out) if left_out else len(found)


def _counted(shown: int, total: int | None, more: bool, noun: str) -> str:
    """The start of a search's note: how many matches are shown, of how many."""
    if total is not None:
        text = f"{shown} of {total} matching {noun}."
    else:
        text = f"{shown} matching {noun}."
    if more:
        text += (
            f" More may match past this limit: search again with a higher limit (up to "
            f"{_MAX_LIMIT}) or other words."
        )
    return text


def _positions(hits: Sequence[tuple[int, float]], size: int) -> list[tuple[int, float]]:
    """The hits that name an item (another ranker may return anything)."""
    return [
        (p, float(s))
        for p, s in hits
        if isinstance(p, int) and 0 <= p < size and isinstance(s, (int, float))
    ]


def answer(
    kind: str,
    found: Sequence[Found],
    keep: bool,
    *,
    total: int | None = None,
    more: bool = False,
    skills_of: Callable[[str], Sequence[str]] | None = None,
) -> dict[str, Any]:
    """What a search answers: the matches in rank order, how many, and a note on using them.

    ``total`` is how many items the query matches (None: unknown), ``more`` whether
    ranked items were left unread past the limit; the answer says both (``matches``,
    ``more``, and the note's first sentence). ``skills_of`` names the skills that go
    with a tool (the model may ask for them): a tool entry lists them under ``skills``.

    A bundle's tools are listed where the bundle ranks, each marked with its name
    (``"bundle"``), and the bundle itself in ``bundles`` with its tools' guidance.
    """
    if kind == "tool":
        tools: list[dict[str, Any]] = []
        bundles: list[dict[str, Any]] = []
        for match in found:
            if isinstance(match.item, Bundle):
                bundles.append(_bundle_entry(match))
                tools.extend(_tool_entry(m, match.item.name) for m in match.members)
            else:
                tools.append(_tool_entry(match))
        if skills_of is not None:
            for entry in tools:
                linked = skills_of(entry["name"])
                if linked:
                    entry["skills"] = list(linked)
        if not tools:
            return {"tools": [], "matches": 0, "more": False, "note": _NO_TOOL}
        note = _counted(len(found), total, more, "entries" if bundles else "tools")
        note += " You can call these tools now"
        note += "; they are offered from your next turn." if keep else "."
        if any(t.get("approval") == "required" for t in tools):
            note += ' A person approves each call of a tool marked "approval": "required".'
        answered: dict[str, Any] = {"tools": tools}
        if bundles:
            answered["bundles"] = bundles
        answered.update(_counts(len(found), total, more))
        answered["note"] = note
        return answered
    skills: list[dict[str, Any]] = []
    jars: list[dict[str, Any]] = []
    for match in found:
        if isinstance(match.item, Bundle):
            members = match.members
            jars.append(
                {
                    "name": match.item.name,
                    "description": match.item.description,
                    "skills": [m.item.id for m in members],
                }
            )
            skills.extend(_skill_entry(m, match.item.name) for m in members)
        else:
            skills.append(_skill_entry(match))
    if not skills:
        return {"skills": [], "matches": 0, "more": False, "note": _NO_SKILL}
    note = _counted(len(found), total, more, "entries" if jars else "skills") + " "
    if keep:
        note += "These skills are added to your instructions from your next turn"
        note += (
            " (a pending one once a person approves it)."
            if any(s.get("approval") == "pending" for s in skills)
            else "."
        )
    else:
        note += "Follow these skills' instructions."
    listed: dict[str, Any] = {"skills": skills}
    if jars:
        listed["bundles"] = jars
    return {**listed, **_counts(len(found), total, more), "note": note}


def _skill_entry(match: Found, bundle: str | None = None) -> dict[str, Any]:
    skill = match.item
    entry: dict[str, Any] = {"name": skill.id, "description": skill.description}
    if bundle is not None:
        entry["bundle"] = bundle
    if match.how == "pending":
        entry["approval"] = "pending"
    if match.instructions is not None:
        entry["instructions"] = match.instructions
    return entry


_NO_TOOL: Final = "No tool matched: try other words."
_NO_SKILL: Final = "No skill matched: try other words."


def _counts(shown: int, total: int | None, more: bool) -> dict[str, Any]:
    """The answer's ``matches`` (at least what it shows) and ``more``."""
    counted: dict[str, Any] = {"matches": max(total, shown) if total is not None else None}
    counted["more"] = more
    return counted
