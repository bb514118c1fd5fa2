"""How the default ranker reads text: terms of words and identifiers, and a tool's fields."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any

__all__ = ["fields", "normalized", "terms", "word_terms"]

_MAX_PARAMETERS = 256
"""The most parameters (nested ones included) read from one input schema."""

_MAX_SCHEMA_NODES = 1024
"""The most subschemas (objects, arrays, branches, definitions) read from one schema."""


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
"""Stripped from around a word before the fast paths of `_word_terms()`."""


def _piece_terms(pieces: list[str], memo: dict[str, str]) -> list[str]:
    """The terms of lowercase pieces, stop words left out (looked up in C when known)."""
    found: list[str | None] = list(map(memo.get, pieces))
    if None in found:
        found = [_piece_term(p, memo) for p in pieces]
    return list(filter(None, found))


def word_terms(word: str, memo: dict[str, str]) -> list[str]:
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


def normalized(text: str) -> str:
    return text if text.isascii() else unicodedata.normalize("NFKC", text)


def terms(text: str) -> list[str]:
    """The terms of ``text``, in order, repeats kept: what documents and queries match on."""
    memo: dict[str, str] = {}
    found: list[str] = []
    for word in normalized(text).split():
        found.extend(word_terms(word, memo))
    return found


# --- Reading a tool ------------------------------------------------------------------------

_NESTING = frozenset(("properties", "items", "anyOf", "oneOf", "allOf", "$ref"))
"""The keywords under which a schema holds more parameters."""


def _parameters(schema: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The names and the descriptions of a schema's parameters, nested ones included.

    Follows ``properties``, ``items``, ``anyOf``/``oneOf``/``allOf`` and local ``$ref``s
    into ``$defs`` or ``definitions`` (each definition once), reading at most
    `_MAX_SCHEMA_NODES` subschemas and `_MAX_PARAMETERS` parameters; anything
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
            # A list at a time, not a parameter at a time: most tools are one such node.
            names.extend(map(str, properties))
            specs = [spec for spec in properties.values() if isinstance(spec, dict)]
            texts = [spec.get("description") for spec in specs]
            descriptions.extend([text for text in texts if isinstance(text, str)])
            stack.extend([spec for spec in specs if not _NESTING.isdisjoint(spec)])
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


def fields(name: str, description: str, schema: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """A tool's text as the default ranker reads it, in four fields.

    The name, the description, the parameters' names and the parameters' descriptions
    (nested ones included, see `_parameters()`), each normalized (NFKC) and the
    last two joined with spaces: what another ranker may index too.
    """
    names, descriptions = _parameters(schema)
    return (
        normalized(name),
        normalized(description or ""),
        normalized(" ".join(names)),
        normalized(" ".join(descriptions)),
    )
