"""Ranking a thinker's deferred tools against a query: the engine behind ``search_tools``.

A document is a tool as plain data (:class:`ToolDocument`: name, description, input
schema), so this module depends on no provider class; :func:`documents_from` reads them
from anything with ``.name``, ``.description`` and ``.input_schema``. Positions in
results are indexes into the sequence the index was built from.

The default ranker, :class:`LexicalRanker`, is BM25F over four fields: the name, the
description, the parameters' names and the parameters' descriptions (nested ones
included), each weighted and length-normalized on its own before one saturation per
term. Text is cut into terms by :func:`terms`: words and identifiers split on ``_``,
``.``, ``-``, camelCase and digits, the whole identifier kept as one more term (so
``math.factorial``, asked for by name, finds that tool first), lowercased, a few stop
words dropped, and plural, ``-ing`` and ``-ed`` endings folded. The field weights were
tuned on the Berkeley Function Calling Leaderboard's questions (bench/README.md).

Building reads every tool and groups the catalog's words once; a term's scores in
every tool are computed the first time a query uses it, then kept, so a catalog pays
only for the terms its queries use (a thinker rebuilds its index when its deferred
tools change, and most of a catalog's words are never asked for). Queries are model
text, so a search's work is bounded whatever it is given: only the first
:data:`MAX_QUERY_CHARS` characters are read and the first :data:`MAX_QUERY_TERMS`
distinct terms count. An empty or blank query finds nothing.

Writing another ranker (embeddings, a service of the host's): an object whose
``build(documents)`` returns an index whose ``search(query, limit)`` returns
``(position, score)`` pairs, best first, at most ``limit`` of them (see
:class:`ToolRanker` and :class:`ToolIndex`). A sketch::

    class EmbeddingRanker:
        def build(self, documents):
            return EmbeddingIndex([embed(f"{d.name}: {d.description}") for d in documents])

    class EmbeddingIndex:
        def __init__(self, vectors):
            self.vectors = vectors

        def search(self, query, limit):
            if not query.strip():
                return []
            q = embed(query[:MAX_QUERY_CHARS])
            scores = [dot(q, v) for v in self.vectors]
            order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
            return [(i, scores[i]) for i in order[:limit]]

``build`` runs when a catalog changes and ``search`` at every model query, so the work
that does not depend on the query belongs in ``build`` (or is kept once done, as the
default keeps its terms' scores). Like the default, an index should find nothing for a
blank query, break ties by catalog order, bound its work on a long query, never repeat
the query in an error, and allow searches from several threads at once.
"""

from __future__ import annotations

import math
import re
import threading
import unicodedata
from array import array
from collections import defaultdict, deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, compress, count, repeat
from operator import add, ge, mul, rshift, truediv
from typing import Any, NamedTuple, Protocol

__all__ = [
    "MAX_QUERY_CHARS",
    "MAX_QUERY_TERMS",
    "FieldWeights",
    "LexicalIndex",
    "LexicalRanker",
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

_MAX_PARAMETERS = 256
"""The most parameters (nested ones included) read from one input schema."""

_MAX_SCHEMA_NODES = 1024
"""The most subschemas (objects, arrays, branches, definitions) read from one schema."""


class ToolDocument(NamedTuple):
    """One tool as a ranker reads it: plain data, no provider class."""

    name: str
    description: str
    input_schema: Mapping[str, Any]


class _Describes(Protocol):
    """What :func:`documents_from` reads: a ``ToolProvider`` is one."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def input_schema(self) -> Mapping[str, Any]: ...


def documents_from(providers: Iterable[_Describes]) -> list[ToolDocument]:
    """The documents of ``providers``, in their order (positions in results follow it)."""
    return [ToolDocument(p.name, p.description, p.input_schema) for p in providers]


class ToolIndex(Protocol):
    """A catalog ready to search; built once by a :class:`ToolRanker`."""

    def search(self, query: str, limit: int) -> list[tuple[int, float]]:
        """At most ``limit`` ``(position, score)`` pairs, best first; none for a blank query."""
        ...


class ToolRanker(Protocol):
    """Builds the index a thinker's ``search_tools`` searches (the default: BM25F)."""

    def build(self, documents: Sequence[ToolDocument]) -> ToolIndex:
        """Index ``documents``; a result's position is its index in this sequence."""
        ...


# --- Terms -------------------------------------------------------------------------------

_STOP_WORDS = frozenset(
    (
        *("a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "could"),
        *("do", "does", "e", "eg", "etc", "for", "from", "given", "has"),
        *("have", "how", "i", "ie", "if", "in", "into", "is", "it", "its", "me", "my", "of"),
        *("on", "or", "our", "please", "s", "should", "so", "some", "t", "than", "that"),
        *("the", "their", "them", "then", "there", "these", "this", "those", "to", "use"),
        *("used", "using", "want", "was", "we", "were", "what", "when", "where", "which"),
        *("who", "will", "with", "would", "you", "your"),
    )
)
"""Words too common in tool texts and questions to tell tools apart (and the ``s`` of
``user's``, the ``e`` of ``e.g.``)."""

# A word or an identifier: runs of letters and digits joined by single `_`, `.` or `-`.
_COMPOUND = re.compile(r"[^\W_]+(?:[._\-][^\W_]+)*")
_SEPARATOR = re.compile(r"[._\-]")
# Inside one ASCII run: "HTTPServer2Go" -> HTTP, Server, 2, Go.
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_VOWELS = frozenset("aeiouy")


def _stem(word: str) -> str:
    """Fold plural, ``-ing`` and ``-ed`` endings and a final ``e``: ``queries`` -> ``query``.

    Deliberately light: it only maps the forms a tool's text and a question use for the
    same thing to one term (``files``/``file``, ``creating``/``created``/``create``),
    never makes words readable. Short words and words with digits stay as they are.
    """
    if len(word) <= 3 or not word.isalpha():
        return word
    last = word[-1]
    if last == "s":
        if word.endswith("ies") and len(word) > 4:
            word = word[:-3] + "y"
        elif word.endswith(("sses", "shes", "ches", "xes", "zes")):
            word = word[:-2]
        elif not word.endswith(("ss", "us", "is")):
            word = word[:-1]
    elif last == "g":
        if word.endswith("ing") and len(word) > 5 and not _VOWELS.isdisjoint(word[:-3]):
            word = _undouble(word[:-3])
    elif last == "d":
        if word.endswith("ied") and len(word) > 4:
            word = word[:-3] + "y"
        elif (
            word.endswith("ed")
            and not word.endswith("eed")
            and len(word) > 4
            and not _VOWELS.isdisjoint(word[:-2])
        ):
            word = _undouble(word[:-2])
    if word[-1] == "e" and len(word) > 3:
        word = word[:-1]
    return word


def _undouble(stem: str) -> str:
    """``runn`` -> ``run``, ``stopp`` -> ``stop``; ``install``, ``pass``, ``buzz`` stay."""
    if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in "lsz" and stem[-1].isalpha():
        return stem[:-1]
    return stem


def _piece_term(piece: str, memo: dict[str, str]) -> str:
    """One lowercase piece's term (``""`` for a stop word), remembered in ``memo``."""
    term = memo.get(piece)
    if term is None:
        term = memo[piece] = "" if piece in _STOP_WORDS else _stem(piece)
    return term


def _pieces(compound: str) -> list[str]:
    """The lowercase pieces of one identifier: split at separators, case changes, digits."""
    pieces: list[str] = []
    for part in _SEPARATOR.split(compound):
        if (part.isalpha() and part.islower()) or not part.isascii():
            pieces.append(part.lower())
        else:
            pieces.extend(p.lower() for p in _CAMEL.findall(part))
    return pieces


_PUNCTUATION = "\"'`.,;:!?()[]{}<>*"
"""Stripped from around a word before the fast paths of :func:`_word_terms`."""


def _piece_terms(pieces: list[str], memo: dict[str, str]) -> list[str]:
    """The terms of lowercase pieces, stop words left out (looked up in C when known)."""
    found: list[str | None] = list(map(memo.get, pieces))
    if None in found:
        found = [_piece_term(p, memo) for p in pieces]
    return list(filter(None, found))


def _word_terms(word: str, memo: dict[str, str]) -> list[str]:
    """The terms of one whitespace-separated word, punctuation around it included.

    Each identifier gives its pieces' terms, then the whole identifier (lowercased,
    separators dropped) when it has several pieces. Plain words, capitalized words and
    snake_case identifiers take fast paths that give what the general one would.
    """
    core = word.strip(_PUNCTUATION) if word.isascii() else ""
    if core.isalpha():
        if core.islower() or core[1:].islower():  # "word", "Word"
            term = _piece_term(core.lower(), memo)
            return [term] if term else []
    elif core.islower() and core.replace("_", "").isalpha():  # "snake_case"
        pieces = core.split("_")
        if "" in pieces:
            pieces = list(filter(None, pieces))
        found = _piece_terms(pieces, memo)
        if len(pieces) > 1:
            found.append("".join(pieces))
        return found
    found = []
    for compound in _COMPOUND.findall(word):
        pieces = _pieces(compound)
        found += _piece_terms(pieces, memo)
        if len(pieces) > 1:
            found.append("".join(pieces))
    return found


def _normalized(text: str) -> str:
    return text if text.isascii() else unicodedata.normalize("NFKC", text)


def terms(text: str) -> list[str]:
    """The terms of ``text``, in order, repeats kept: what documents and queries match on."""
    memo: dict[str, str] = {}
    found: list[str] = []
    for word in _normalized(text).split():
        found.extend(_word_terms(word, memo))
    return found


# --- Reading a tool ------------------------------------------------------------------------

_NESTING = frozenset(("properties", "items", "anyOf", "oneOf", "allOf", "$ref"))
"""The keywords under which a schema holds more parameters."""


def _parameters(schema: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The names and the descriptions of a schema's parameters, nested ones included.

    Follows ``properties``, ``items``, ``anyOf``/``oneOf``/``allOf`` and local ``$ref``s
    into ``$defs`` or ``definitions`` (each definition once), reading at most
    :data:`_MAX_SCHEMA_NODES` subschemas and :data:`_MAX_PARAMETERS` parameters; anything
    else in the schema is ignored, and so is any part that is not a JSON object.
    """
    names: list[str] = []
    descriptions: list[str] = []
    root = schema if isinstance(schema, dict) else dict(schema)
    definitions: dict[str, Any] = {}
    for key in ("$defs", "definitions"):
        found = root.get(key)
        if isinstance(found, dict):
            definitions.update((f"#/{key}/{name}", value) for name, value in found.items())
    stack: list[Any] = [root]
    budget = _MAX_SCHEMA_NODES
    while stack and budget and len(names) < _MAX_PARAMETERS:
        node = stack.pop()
        budget -= 1
        if not isinstance(node, dict):
            continue
        properties = node.get("properties")
        if isinstance(properties, dict):
            for name, spec in properties.items():
                names.append(str(name))
                if isinstance(spec, dict):
                    text = spec.get("description")
                    if isinstance(text, str):
                        descriptions.append(text)
                    if not _NESTING.isdisjoint(spec):
                        stack.append(spec)
        items = node.get("items")
        if isinstance(items, dict):
            stack.append(items)
        elif isinstance(items, list):
            stack.extend(items)
        for key in ("anyOf", "oneOf", "allOf"):
            branches = node.get(key)
            if isinstance(branches, list):
                stack.extend(branches)
        ref = node.get("$ref")
        if isinstance(ref, str) and ref in definitions:
            stack.append(definitions.pop(ref))  # each definition read once
    return names[:_MAX_PARAMETERS], descriptions[:_MAX_PARAMETERS]


def fields_of(document: ToolDocument) -> tuple[str, str, str, str]:
    """A tool's text as the default ranker reads it, in four fields.

    The name, the description, the parameters' names and the parameters' descriptions
    (nested ones included, see :func:`_parameters`), each normalized (NFKC) and the
    last two joined with spaces: what another ranker may index too.
    """
    names, descriptions = _parameters(document.input_schema)
    return (
        _normalized(document.name),
        _normalized(document.description or ""),
        _normalized(" ".join(names)),
        _normalized(" ".join(descriptions)),
    )


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

_SMALL = 256
"""Up to this many postings, a search adds them up in a dict; past it, in a list."""

_FLOOR_AT = 64
"""A term in more tools than this keeps its best scores, to skip weak hits at search."""

_FLOOR_DEPTH = 20
"""How many of its best scores such a term keeps (a larger ``limit`` goes without)."""


class _Postings(NamedTuple):
    """One term's postings: where it occurs, how much it scores there, its best scores."""

    positions: array[int]
    """The tools it occurs in, ascending."""
    scores: array[float]
    """Its BM25F score in each of them."""
    best: tuple[float, ...]
    """Its :data:`_FLOOR_DEPTH` best scores, best first, when in over :data:`_FLOOR_AT` tools."""


class _Catalog(NamedTuple):
    """What building leaves for scoring terms: the catalog's size and its fields."""

    size: int
    share: list[float]
    """Per field number: what one occurrence of a term there adds to its frequency in
    the tool (BM25F's field weight over the field's length normalization)."""
    k1: float


class LexicalIndex:
    """A catalog indexed for BM25F. Safe to search from several threads at once.

    Holds, for each term of the catalog, the fields it occurs in; the first search that
    uses a term computes its score in each tool (:class:`_Postings`), under a lock, and
    keeps it. A search adds up its terms' scores tool by tool and keeps the best: a term
    in many tools knows its best scores, and the ``limit``-th of them is a floor that
    every result reaches (those tools score at least that on that term alone), so weaker
    tools are dropped before the final sort.
    """

    __slots__ = ("_catalog", "_lock", "_pending", "_scored")

    def __init__(self, catalog: _Catalog, pending: dict[str, list[list[int]]]) -> None:
        self._catalog = catalog
        self._pending = pending
        self._scored: dict[str, _Postings] = {}
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
        wanted: dict[str, None] = {}
        for term in terms(query[:MAX_QUERY_CHARS]):
            wanted[term] = None
            if len(wanted) >= MAX_QUERY_TERMS:
                break
        found = [p for p in map(self._postings, wanted) if p is not None]
        if not found:
            return []
        if sum(len(p.positions) for p in found) <= _SMALL:
            return self._search_small(found, limit)
        return self._search_dense(found, limit)

    def warm(self) -> None:
        """Score every term now, so that no search pays for a term's first use.

        For a host that would rather pay once, up front (in a background thread after
        building, say): the index can be searched meanwhile, from any thread.
        """
        for term in list(self._pending):
            self._postings(term)

    def _postings(self, term: str) -> _Postings | None:
        """The term's postings, scored now if this is the first search that uses it."""
        postings = self._scored.get(term)
        if postings is not None or term not in self._pending:
            return postings
        with self._lock:
            postings = self._scored.get(term)
            if postings is None:
                postings = self._scored[term] = _score(self._catalog, self._pending.pop(term))
        return postings

    @staticmethod
    def _search_small(found: list[_Postings], limit: int) -> list[tuple[int, float]]:
        totals: dict[int, float] = {}
        get = totals.get
        for postings in found:
            for position, score in zip(postings.positions, postings.scores, strict=True):
                totals[position] = get(position, 0.0) + score
        # Ascending positions first, so the stable sort leaves ties in catalog order.
        ranked = sorted(sorted(totals), key=totals.__getitem__, reverse=True)[:limit]
        return [(p, totals[p]) for p in ranked]

    def _search_dense(self, found: list[_Postings], limit: int) -> list[tuple[int, float]]:
        """Many postings: added up in one list and filtered in C, not one by one.

        The tools touched are kept in a set while that costs less than reading the
        whole list at the end (fewer postings than half the catalog).
        """
        size = self._catalog.size
        totals = [0.0] * size
        read, write = totals.__getitem__, totals.__setitem__
        touched: set[int] | None = (
            set() if sum(len(p.positions) for p in found) < size // 2 else None
        )
        floor = 0.0
        for postings in found:
            positions = postings.positions
            deque(map(write, positions, map(add, map(read, positions), postings.scores)), 0)
            if touched is not None:
                touched.update(positions)
            if limit <= len(postings.best) and postings.best[limit - 1] > floor:
                floor = postings.best[limit - 1]
        if touched is None:  # every tool, in ascending order
            kept = list(compress(count(), map(ge, totals, repeat(floor or math.ulp(0.0)))))
        else:
            kept = sorted(compress(touched, map(ge, map(read, touched), repeat(floor))))
        # Ascending positions, so the stable sort leaves ties in catalog order.
        ranked = sorted(kept, key=read, reverse=True)[:limit]
        return [(p, totals[p]) for p in ranked]


def _score(catalog: _Catalog, occurrences: list[list[int]]) -> _Postings:
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
    scores = array("d", map(mul, repeat(idf), saturated))
    best = tuple(sorted(scores, reverse=True)[:_FLOOR_DEPTH]) if df > _FLOOR_AT else ()
    return _Postings(array("i", positions), scores, best)


class LexicalRanker:
    """The default :class:`ToolRanker`: BM25F over name, description and parameters.

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

    def build(self, documents: Sequence[ToolDocument]) -> LexicalIndex:
        """Read every tool and group the catalog's words by term.

        Done a catalog at a time, not a word at a time: every field's words are grouped
        by word in one pass, and each distinct word is cut into terms once.
        """
        words = list(map(str.split, chain.from_iterable(map(fields_of, documents))))
        for field, weight in enumerate(self.weights.as_tuple()):
            if not weight:
                words[field::_FIELDS] = [[]] * len(documents)
        lengths = list(map(len, words))
        # Each distinct word, and the numbers of the fields it occurs in.
        where: defaultdict[str, list[int]] = defaultdict(list)
        numbers = chain.from_iterable(map(repeat, count(), lengths))
        deque(map(list.append, map(where.__getitem__, chain.from_iterable(words)), numbers), 0)
        del words
        pending: dict[str, list[list[int]]] = {}
        memo: dict[str, str] = {}
        for word, numbers_of_word in where.items():
            for term in _word_terms(word, memo):
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
        share = [
            weights[n & 3] / ((1.0 - b + norms[n & 3] * length) or 1.0)
            for n, length in enumerate(lengths)
        ]
        return _Catalog(size, share, self.k1)
