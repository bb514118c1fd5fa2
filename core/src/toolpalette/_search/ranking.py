"""Ranking a thinker's deferred tools against a query: the engine behind ``search_tools``.

The default is BM25F over four fields; another ranker implements `ToolRanker`.
"""

from __future__ import annotations

import heapq
import math
import threading
from array import array
from bisect import bisect_left
from collections import defaultdict, deque
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import chain, count, islice, repeat
from operator import add, itemgetter, mul, rshift, truediv
from typing import Any, NamedTuple, Protocol

from toolpalette._search.terms import fields, terms, word_terms

__all__ = [
    "MAX_QUERY_CHARS",
    "MAX_QUERY_TERMS",
    "FieldWeights",
    "LexicalIndex",
    "LexicalRanker",
    "TermCache",
    "ToolDocument",
    "ToolIndex",
    "ToolRanker",
    "documents_from",
    "fields_of",
    "terms",
]

MAX_QUERY_CHARS = 4096
"""The most characters of a query read; the rest is ignored."""

MAX_QUERY_TERMS = 64
"""The most distinct terms of a query that count, in the order they come (so a search
reads at most this many postings per tool)."""


class ToolDocument(NamedTuple):
    """One tool as a ranker reads it: plain data, no provider class."""

    name: str
    description: str
    input_schema: Mapping[str, Any]


class _Describes(Protocol):
    """What `documents_from()` reads: a ``ToolProvider`` is one."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def input_schema(self) -> Mapping[str, Any]: ...


def documents_from(providers: Iterable[_Describes]) -> list[ToolDocument]:
    """The documents of ``providers``, in their order (positions in results follow it)."""
    return [ToolDocument(p.name, p.description, p.input_schema) for p in providers]


def fields_of(document: ToolDocument) -> tuple[str, str, str, str]:
    """A tool's text as the default ranker reads it, in four fields (see ``terms.py``).

    The name, the description, the parameters' names and the parameters' descriptions
    (nested ones included), each normalized (NFKC) and the last two joined with spaces:
    what another ranker may index too.
    """
    return fields(document.name, document.description, document.input_schema)


class ToolIndex(Protocol):
    """A catalog ready to search; built once by a [`ToolRanker`][toolpalette.ToolRanker]."""

    def search(self, query: str, limit: int) -> list[tuple[int, float]]:
        """At most ``limit`` ``(position, score)`` pairs, best first; none for a blank query."""
        ...


class ToolRanker(Protocol):
    """Builds the index a thinker's ``search_tools`` searches (the default: BM25F)."""

    def build(self, documents: Sequence[ToolDocument]) -> ToolIndex:
        """Index ``documents``; a result's position is its index in this sequence."""
        ...


# --- The default ranker: BM25F -------------------------------------------------------------


@dataclass(frozen=True)
class FieldWeights:
    """How much a term found in each field counts (BM25F); tuned on BFCL (bench/README.md).

    A weight of 0 leaves the field out of the index.

    Raises:
        ValueError: a weight is negative or not finite.
    """

    name: float = 2.0
    description: float = 1.0
    parameter_names: float = 0.25
    parameter_descriptions: float = 0.6

    def __post_init__(self) -> None:
        if not all(0.0 <= w < math.inf for w in self.as_tuple()):
            raise ValueError("field weights must be finite and at least 0")

    def as_tuple(self) -> tuple[float, float, float, float]:
        """The weights in field order: name, description, parameter names and descriptions."""
        return (self.name, self.description, self.parameter_names, self.parameter_descriptions)


_FIELDS = 4
"""Fields per tool. The fields of a catalog are numbered in one sequence,
``4 * position + field``, so a field's number says its tool (``number >> 2``)."""

_SHORT_POSITIONS = 1 << 16
"""The largest catalog whose postings hold tool positions in 16 bits."""

_EXACT = 1e-9
"""The relative slack of the pruning bounds, so that rounding never drops a result."""


class _Scored(NamedTuple):
    """One term's postings, once scored: the tools it occurs in and its score in each."""

    positions: list[int]
    """The tools it occurs in, ascending."""
    scores: array[float]
    """Its BM25F score in each of them (32-bit floats: compact, and precise enough)."""


class _Catalog(NamedTuple):
    """What building leaves for scoring terms: the catalog's size and its fields."""

    size: int
    share: array[float]
    """Per field number: what one occurrence of a term there adds to its frequency in
    the tool (BM25F's field weight over the field's length normalization)."""
    k1: float


class LexicalIndex:
    """A catalog indexed for BM25F. Safe to search from several threads at once.

    Holds, for each term of the catalog, the fields it occurs in; the first search that
    uses a term computes its score in each tool, under a lock, and appends it to one
    pair of arrays every scored term shares (tools, scores: 6 bytes a posting in a
    catalog of up to 65,536 tools, 8 in a larger one), with where the term's postings
    start and its best score (two more arrays, by the term's slot). A search adds up
    its terms' scores with MaxScore pruning: rarest (best-scoring) terms first; once
    the best scores of the terms left cannot lift a tool the search has not met to the
    ``limit``-th score so far, those terms are read only for the few tools that can
    still reach it (a binary search in each term's ascending tools). The results are
    those of adding up every posting.
    """

    __slots__ = (
        "_bests",
        "_catalog",
        "_lock",
        "_pending",
        "_positions",
        "_scores",
        "_slots",
        "_starts",
    )

    def __init__(self, catalog: _Catalog, pending: dict[str, list[array[int]]]) -> None:
        self._catalog = catalog
        self._pending = pending
        self._slots: dict[str, int] = {}
        """Each scored term's slot in `_starts` and `_bests`."""
        self._starts = array("I", [0])
        """Per slot, where the term's postings start; the next slot's start ends them."""
        self._bests = array("f")
        """Per slot, the term's best score."""
        self._positions = array("H" if catalog.size <= _SHORT_POSITIONS else "i")
        self._scores = array("f")
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._catalog.size

    def search(self, query: str, limit: int) -> list[tuple[int, float]]:
        """At most ``limit`` ``(position, score)`` pairs, best first, ties in catalog order.

        Raises:
            ValueError: ``limit`` is below 1.
        """
        if limit < 1:
            raise ValueError("limit must be at least 1")  # never the value: a model sent it
        return self._ranked(self._found(query), limit)[0]

    def search_counted(
        self, query: str, limit: int, left_out: Collection[int] = ()
    ) -> tuple[list[tuple[int, float]], int]:
        """`search()`, and how many tools the query matches at all, but ``left_out``.

        The tools the search added up are counted as they are; the terms it pruned are
        read once more, in C (a set's union), for the count.

        Raises:
            ValueError: ``limit`` is below 1.
        """
        if limit < 1:
            raise ValueError("limit must be at least 1")  # never the value: a model sent it
        found = self._found(query)
        if not found:
            return [], 0
        hits, totals, pruned = self._ranked(found, limit)
        positions = self._positions
        matched: Collection[int] = totals
        if pruned:
            matched = set(totals).union(*(positions[lo:hi] for lo, hi, _ in pruned))
        return hits, len(matched) - sum(1 for p in left_out if p in matched)

    def matching(self, query: str) -> set[int]:
        """The positions of every tool one of the query's terms occurs in (however weakly).

        What a search could return with no ``limit``: a search's answer says how many.
        """
        positions = self._positions
        return set().union(*(positions[lo:hi] for lo, hi, _ in self._found(query)))

    def _found(self, query: str) -> list[tuple[int, int, float]]:
        """The spans of the query's terms the catalog holds (the first terms that count)."""
        wanted: dict[str, None] = {}
        for term in terms(query[:MAX_QUERY_CHARS]):
            wanted[term] = None
            if len(wanted) >= MAX_QUERY_TERMS:
                break
        starts, bests = self._starts, self._bests
        slots = [s for s in map(self._slot, wanted) if s is not None]
        return [(starts[s], starts[s + 1], bests[s]) for s in slots]

    def warm(self) -> None:
        """Score every term now, so that no search pays for a term's first use.

        For a host that would rather pay once, up front (in a background thread after
        building, say): the index can be searched meanwhile, from any thread.
        """
        for term in list(self._pending):
            self._slot(term)

    def _slot(self, term: str) -> int | None:
        """The term's slot, its postings scored now if this is the first search using it."""
        slot = self._slots.get(term)
        if slot is not None or term not in self._pending:
            return slot
        with self._lock:
            slot = self._slots.get(term)
            if slot is None:
                positions, scores = _score(self._catalog, self._pending[term])
                self._positions.extend(positions)
                self._scores.extend(scores)
                # Its end before its slot: a search that finds the slot reads the end.
                self._starts.append(len(self._positions))
                self._bests.append(max(scores))
                # Slotted before it leaves the pending terms: a search that reads both
                # without the lock always finds the term in one of them.
                slot = self._slots[term] = len(self._bests) - 1
                del self._pending[term]
                if not self._pending:  # every term scored: what scoring reads can go
                    self._pending = {}  # (a dict never shrinks as it empties)
                    self._catalog = self._catalog._replace(share=array("d"))
        return slot

    def _ranked(
        self, found: list[tuple[int, int, float]], limit: int
    ) -> tuple[list[tuple[int, float]], dict[int, float], list[tuple[int, int, float]]]:
        """The best ``limit`` hits; the sums (exact for every hit); the terms pruned.

        Terms are added up best score first. Once the best scores of the terms left
        add up to less than the ``limit``-th sum so far (``floor``: a lower bound of the
        ``limit``-th result), a tool none of the terms read so far holds cannot be a
        result, so those terms are only looked up for the tools whose sum could still
        reach the floor.
        """
        positions, scores = self._positions, self._scores
        order = sorted(found, key=itemgetter(2), reverse=True)
        left = sum(best for _, _, best in order)
        totals: dict[int, float] = {}
        floor = 0.0
        read = 0
        for lo, hi, best in order:
            if left < floor * (1.0 - _EXACT):
                break
            left -= best
            read += 1
            if not totals:
                totals = dict(zip(positions[lo:hi], scores[lo:hi], strict=True))
            else:
                get = totals.get
                for position, score in zip(positions[lo:hi], scores[lo:hi], strict=True):
                    totals[position] = get(position, 0.0) + score
            if read < len(order) and len(totals) >= limit:
                floor = heapq.nlargest(limit, totals.values())[-1]
        pruned = order[read:]
        reach = floor * (1.0 - _EXACT)
        candidates = [p for p, total in totals.items() if total + left >= reach]
        for lo, hi, best in pruned:
            left -= best
            if len(candidates) * 8 > hi - lo:  # cheaper to read the term's postings
                wanted = set(candidates)
                for position, score in zip(positions[lo:hi], scores[lo:hi], strict=True):
                    if position in wanted:
                        totals[position] += score
            else:
                for position in candidates:
                    at = bisect_left(positions, position, lo, hi)
                    if at < hi and positions[at] == position:
                        totals[position] += scores[at]
            candidates = [p for p in candidates if totals[p] + left >= reach]
        # Ascending positions first, so the stable sort leaves ties in catalog order.
        candidates.sort()
        ranked = sorted(candidates, key=totals.__getitem__, reverse=True)[:limit]
        return [(p, totals[p]) for p in ranked], totals, pruned


def _score(catalog: _Catalog, occurrences: list[array[int]]) -> _Scored:
    """A term's BM25F score in every tool it occurs in, from the fields it occurs in.

    ``occurrences`` holds one ascending list of field numbers per distinct word that
    gives the term (a field once per occurrence). Done a term at a time in C loops, not
    an occurrence at a time in Python.
    """
    size, share, k1 = catalog
    numbers = occurrences[0] if len(occurrences) == 1 else sorted(chain.from_iterable(occurrences))
    positions = list(map(rshift, numbers, repeat(2)))
    frequencies = list(map(share.__getitem__, numbers))
    if len(set(positions)) < len(positions):  # in two fields of one tool, or twice in one
        summed = dict.fromkeys(positions, 0.0)
        deque(
            map(
                summed.__setitem__,
                positions,
                map(add, map(summed.__getitem__, positions), frequencies),
            ),
            0,
        )
        positions = list(summed)
        frequencies = list(summed.values())
    df = len(positions)
    idf = math.log(1.0 + (size - df + 0.5) / (df + 0.5)) * (k1 + 1.0)
    saturated = map(truediv, frequencies, map(add, frequencies, repeat(k1)))
    return _Scored(positions, array("f", map(mul, repeat(idf), saturated)))


class _WordIds(dict[str, int]):
    """Each distinct word a number, given (and the word cut into terms) when first seen."""

    def __init__(self) -> None:
        super().__init__()
        self.terms: list[tuple[str, ...]] = []
        """Each word's terms, by its number."""
        self._pieces: dict[str, str] = {}

    def forget_pieces(self) -> None:
        """Drop what cutting words remembered (rebuilt by the next build that needs it)."""
        self._pieces = {}

    def __missing__(self, word: str) -> int:
        self[word] = number = len(self.terms)
        self.terms.append(tuple(word_terms(word, self._pieces)))
        return number


_Kept = tuple[Mapping[str, Any], str, str, "array[int]"]
"""What the cache keeps of a tool, by its input schema's identity: the schema (so that
identity is not reused while kept), the name and description, and the tool's words."""


class TermCache:
    """Each tool's words, kept from one build of the default ranker to the next.

    A catalog that changes (a pack joins, a tool is renamed) is indexed again; with the
    cache, the new build reads only the tools it has not seen (their fields, split into
    words), takes the others' words from what it kept, and cuts into terms only the
    words no earlier build cut. A tool is known by the identity of its input schema,
    its name and its description (the cache holds the schema, so that identity cannot
    be reused while kept): a provider is built once and hands out the same schema, so
    an unchanged tool is a hit, and a changed one is read again.

    Each tool is kept as one ``array`` of 32-bit numbers (its four fields' lengths in
    words, then its words as numbers in a vocabulary the cache's tools share), a few
    hundred bytes per tool. The cache holds the tools of the latest build only; the
    vocabulary keeps every word seen, and is started afresh when it holds more than
    twice the words of the latest catalog. One build at a time uses a cache
    (`lock`).
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        """Held by the build that reads and updates the cache."""
        self._weights: tuple[float, ...] | None = None
        self._words = _WordIds()
        self._tools: dict[int, _Kept] = {}
        self.used = 0
        """How many distinct words the latest build's tools use."""

    def __len__(self) -> int:
        return len(self._tools)

    def words(
        self, documents: Sequence[ToolDocument], weights: tuple[float, ...]
    ) -> list[array[int]]:
        """Each document's field lengths and words (read now, or kept), in order.

        Call with `lock` held. Keeps exactly ``documents`` afterwards.
        """
        if weights != self._weights or len(self._words) > 2 * self.used + 4096:
            self._weights, self._words, self._tools = weights, _WordIds(), {}
        known = self._tools
        number = self._words.__getitem__
        kept: dict[int, _Kept] = {}
        found = []
        for document in documents:
            name, description, schema = document
            held = known.get(id(schema))
            if held is None or held[0] is not schema or held[1:3] != (name, description):
                pairs = zip(fields_of(document), weights, strict=True)
                texts = [text.split() if weight else [] for text, weight in pairs]
                read = array("i", map(len, texts))
                read.extend(map(number, chain.from_iterable(texts)))
                held = (schema, name, description, read)
            kept[id(schema)] = held
            found.append(held[3])
        self._tools = kept
        self._words.forget_pieces()
        return found

    def terms_of(self, word: int) -> tuple[str, ...]:
        """The terms of the word numbered ``word`` (call with `lock` held)."""
        return self._words.terms[word]


class LexicalRanker:
    """The default `ToolRanker`: BM25F over name, description and parameters.

    ``k1`` is the term-frequency saturation, ``b`` the length normalization (the same
    for every field, whose length is its number of words), ``weights`` how much each
    field counts.
    """

    def __init__(
        self, weights: FieldWeights | None = None, *, k1: float = 1.2, b: float = 0.75
    ) -> None:
        if not (0.0 < k1 < math.inf and 0.0 <= b <= 1.0):
            raise ValueError("k1 must be positive and finite, and b between 0 and 1")
        self.weights = weights or FieldWeights()
        self.k1 = k1
        self.b = b

    def build(
        self, documents: Sequence[ToolDocument], *, cache: TermCache | None = None
    ) -> LexicalIndex:
        """Read every tool and group the catalog's terms, field by field.

        Each tool is cut into terms once (each distinct word of a build once); with a
        ``cache`` kept from the previous build of a catalog, only the tools it has not
        seen are read, and the others' terms come from it (see `TermCache`).
        """
        cache = cache if cache is not None else TermCache()
        with cache.lock:
            found = cache.words(documents, self.weights.as_tuple())
            # Each distinct word, and the numbers of the fields it occurs in (4 *
            # position + field, once per occurrence): one pass, in C loops.
            where: defaultdict[int, array[int]] = defaultdict(partial(array, "i"))
            lengths = list(chain.from_iterable(islice(f, _FIELDS) for f in found))
            numbers = chain.from_iterable(map(repeat, count(), lengths))
            words = chain.from_iterable(islice(f, _FIELDS, None) for f in found)
            deque(map(array.append, map(where.__getitem__, words), numbers), 0)
            cache.used = len(where)
            pending: dict[str, list[array[int]]] = {}
            terms_of = cache.terms_of
            for word, numbers_of_word in where.items():
                for term in terms_of(word):
                    lists = pending.get(term)
                    if lists is None:
                        pending[term] = [numbers_of_word]
                    else:
                        lists.append(numbers_of_word)
        return LexicalIndex(self._catalog(len(documents), lengths), pending)

    def _catalog(self, size: int, lengths: list[int]) -> _Catalog:
        weights = self.weights.as_tuple()
        b = self.b
        norms = []
        for field in range(_FIELDS):
            average = sum(lengths[field::_FIELDS]) / size if size else 0.0
            norms.append(b / average if average else 0.0)
        # BM25's length normalization, 1 - b + b * length / average (never 0: an empty
        # field, whose share no term reads, counts as 1).
        share = array(
            "d",
            [
                weights[n & 3] / ((1.0 - b + norms[n & 3] * length) or 1.0)
                for n, length in enumerate(lengths)
            ],
        )
        return _Catalog(size, share, self.k1)
