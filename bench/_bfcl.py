"""The Berkeley Function Calling Leaderboard's questions, as tool-search cases.

Reads the data files of the ``bfcl-eval`` distribution (installed with ``--no-deps`` by
``nox -s bench``: its own dependencies are the leaderboard's model clients, which the
data does not need) through its metadata, without importing the package. The
non-live categories are read: each question file holds one JSON object per line (the
user's turn and the functions offered), and ``possible_answer/`` the ground truth (the
functions the question must call).

Every function of every category goes into one catalog (identical definitions, by name
and description, once); each question is a query whose ground truth is the set of its
own definitions that the answer calls.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

DISTRIBUTION = "bfcl-eval"
CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple")
# Older releases name the first category "simple" and the files BFCL_v3_*.
PREFIXES = ("BFCL_v4_", "BFCL_v3_")
ALIASES = {"simple_python": ("simple_python", "simple")}


@dataclass(frozen=True)
class Case:
    """One question: its category, the user's text and the catalog positions it needs."""

    category: str
    query: str
    expected: frozenset[int]


@dataclass(frozen=True)
class Data:
    """The catalog (name, description, input schema per function) and the questions."""

    version: str
    functions: list[tuple[str, str, dict[str, Any]]]
    cases: list[Case]


class Unavailable(Exception):
    """The data cannot be read: the reason is the message."""


def _data_folder() -> tuple[str, Path]:
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        raise Unavailable(f"{DISTRIBUTION} is not installed") from None
    folder = Path(str(dist.locate_file("bfcl_eval/data")))
    if not folder.is_dir():
        raise Unavailable(f"{DISTRIBUTION} {dist.version} has no bfcl_eval/data folder")
    return dist.version, folder


def _file(folder: Path, category: str) -> tuple[Path, Path]:
    for name in ALIASES.get(category, (category,)):
        for prefix in PREFIXES:
            question = folder / f"{prefix}{name}.json"
            answer = folder / "possible_answer" / f"{prefix}{name}.json"
            if question.is_file() and answer.is_file():
                return question, answer
    raise Unavailable(f"no question and answer files for the category {category!r}")


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _user_text(question: Any) -> str:
    turns = question if isinstance(question, list) else [question]
    texts: list[str] = []
    for turn in turns:
        for message in turn if isinstance(turn, list) else [turn]:
            if isinstance(message, dict) and message.get("role") == "user":
                texts.append(str(message.get("content", "")))
            elif isinstance(message, str):
                texts.append(message)
    return "\n".join(texts)


def load() -> Data:
    """The catalog and the questions of :data:`CATEGORIES`; :class:`Unavailable` if not."""
    version, folder = _data_folder()
    functions: list[tuple[str, str, dict[str, Any]]] = []
    position: dict[tuple[str, str], int] = {}
    cases: list[Case] = []
    for category in CATEGORIES:
        questions, answers = _file(folder, category)
        truth = {row["id"]: row["ground_truth"] for row in _lines(answers)}
        for row in _lines(questions):
            own: dict[str, int] = {}
            for function in row["function"]:
                key = (function["name"], function.get("description", ""))
                if key not in position:
                    position[key] = len(functions)
                    functions.append((key[0], key[1], function.get("parameters") or {}))
                own.setdefault(key[0], position[key])
            called = {name for call in truth.get(row["id"], []) for name in call}
            if not called or not called <= own.keys():
                raise Unavailable(f"{row['id']}: its answer calls a function it does not offer")
            expected = frozenset(own[name] for name in called)
            cases.append(Case(category, _user_text(row["question"]), expected))
    if not cases:
        raise Unavailable("no questions found")
    return Data(version, functions, cases)


# The leaderboard's own type names, as JSON Schema names them ("any": no type at all).
JSON_TYPES = {"dict": "object", "float": "number", "tuple": "array", "any": None}


def json_schema(parameters: Any) -> Any:
    """A function's ``parameters`` as JSON Schema: the leaderboard's type names replaced.

    The data writes Python's type names (``dict``, ``float``, ``tuple``, ``any``) where a
    JSON Schema has ``object``, ``number``, ``array`` or no ``type``; everything else is
    kept as it is.
    """
    if isinstance(parameters, list):
        return [json_schema(each) for each in parameters]
    if not isinstance(parameters, dict):
        return parameters
    schema: dict[str, Any] = {}
    for key, value in parameters.items():
        if key == "type" and isinstance(value, str) and value in JSON_TYPES:
            if JSON_TYPES[value] is not None:
                schema[key] = JSON_TYPES[value]
        elif key in ("properties", "$defs"):
            schema[key] = {name: json_schema(each) for name, each in value.items()}
        elif key in ("items", "additionalProperties", "anyOf", "oneOf", "allOf"):
            schema[key] = json_schema(value)
        else:
            schema[key] = value
    return schema
