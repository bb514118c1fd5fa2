"""The meta-tools of large catalogs: ``search_tools`` and ``search_skills``."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, Final

from toolpalette._agents.meta import Checked, RequestSkillProvider, RequestToolsProvider
from toolpalette._tools.info import ToolInfo
from toolpalette._tools.provider import BoundTool, ToolProvider
from toolpalette._tools.tool import ToolContext

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_LIMIT",
    "META_TOOLS",
    "SEARCH_SKILLS",
    "SEARCH_TOOLS",
    "SearchSkillsProvider",
    "SearchToolsProvider",
]

SEARCH_TOOLS: Final = "search_tools"
"""The name ``search_tools`` is offered under."""

SEARCH_SKILLS: Final = "search_skills"
"""The name ``search_skills`` is offered under."""

DEFAULT_LIMIT: Final = 5
"""How many matches a search returns when the model gives no ``limit``."""

MAX_LIMIT: Final = 20
"""The most matches one search returns."""


def _search_schema(noun: str, example: str) -> dict[str, Any]:
    """A search's published input: the same whatever the catalog, in both strict subsets.

    ``limit`` is required and nullable (OpenAI's strict mode wants every field
    required) and its range is in its description (Anthropic's has no numeric bounds);
    the handler's own check enforces it, and also takes ``limit`` left out.
    """
    return {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": f"What you need to do, in a few words (for example: {example}).",
            },
            "limit": {
                "type": ["integer", "null"],
                "description": f"How many {noun} to return, from 1 to {MAX_LIMIT}; "
                f"null returns {DEFAULT_LIMIT}.",
            },
        },
        "required": ["query", "limit"],
        "additionalProperties": False,
    }


_SEARCH_CHECKED: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "limit": {"type": ["integer", "null"], "minimum": 1, "maximum": MAX_LIMIT},
    },
    "required": ["query"],
    "additionalProperties": False,
}
"""What a search accepts: ``limit`` may be left out, and is bounded."""

_NOTE: Final = {"type": "string", "description": "What to do with the matches."}

_MATCHES: Final = {
    "type": ["integer", "null"],
    "description": "How many entries of the catalog match the query (null: unknown).",
}
_MORE: Final = {
    "type": "boolean",
    "description": "Whether more may match past the limit (search again to see them).",
}


_TOOLS_FOUND: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "tools": {
            "type": "array",
            "description": "The matches, best first.",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "description": {"type": "string"},
                    "input_schema": {"type": "object"},
                    "approval": {
                        "type": "string",
                        "enum": ["required"],
                        "description": "A person approves each call of this tool.",
                    },
                    "bundle": {
                        "type": "string",
                        "description": "The bundle this tool came with.",
                    },
                    "skills": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "Skills that teach this tool's use (ask for them).",
                    },
                },
                "required": ["name", "description", "input_schema"],
            },
        },
        "bundles": {
            "type": "array",
            "description": "The bundles found (sets of tools granted together).",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "description": {"type": "string"},
                    "tools": {"type": "array", "items": {"type": "string"}},
                    "guidance": {"type": "string"},
                },
                "required": ["name", "description", "tools"],
            },
        },
        "matches": _MATCHES,
        "more": _MORE,
        "note": _NOTE,
    },
    "required": ["tools"],
}
"""The answer of ``search_tools``."""


_SKILLS_FOUND: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "skills": {
            "type": "array",
            "description": "The matches, best first.",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The full skill id."},
                    "description": {"type": "string"},
                    "approval": {
                        "type": "string",
                        "enum": ["pending"],
                        "description": "Attached once a person approves it.",
                    },
                    "instructions": {"type": "string"},
                    "bundle": {
                        "type": "string",
                        "description": "The skilljar this skill came with.",
                    },
                },
                "required": ["name", "description"],
            },
        },
        "bundles": {
            "type": "array",
            "description": "The skilljars found whole (their skills are attached together).",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "description": {"type": "string"},
                    "skills": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["name", "description", "skills"],
            },
        },
        "matches": _MATCHES,
        "more": _MORE,
        "note": _NOTE,
    },
    "required": ["skills"],
}
"""The answer of ``search_skills``."""


class _SearchProvider(ToolProvider):
    """Common ground of the two searches; equal to any other instance of its type."""

    _kind: str
    _name: str
    _description: str
    _input: dict[str, Any]
    _output: dict[str, Any]

    _read_only: bool = False

    def __init__(self) -> None:
        self._checked = Checked(self._name, _SEARCH_CHECKED)

    @functools.cached_property
    def info(self) -> ToolInfo:
        return ToolInfo(
            name=self._name,
            description=self._description,
            input_schema=self._input,
            output_schema=self._output,
            read_only=self._read_only,
        )

    def parse_input(self, raw: str | bytes | Mapping[str, Any]) -> Any:
        """A query, and a limit from 1 to `MAX_LIMIT` (null or left out: the default)."""
        return self._checked.parse_input(raw)

    def create(self, parent: Any = None) -> BoundTool:
        if parent is None or not hasattr(parent, "search"):
            raise TypeError(f"{self._name} runs only for a bound thinker")
        kind = self._kind

        # Async, so the pipeline runs it on the loop: a search is short CPU work, which
        # costs less than the hand-off to a worker thread (bench/bench_deferral.py).
        async def call(value: dict[str, Any], ctx: ToolContext | None) -> dict[str, Any]:
            limit = value.get("limit") or DEFAULT_LIMIT
            principal = ctx.principal if ctx is not None else None  # on the record
            found: dict[str, Any] = parent.search(kind, value["query"], limit, principal=principal)
            return found

        return BoundTool(call, is_async=True, takes_context=True)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))


class SearchToolsProvider(_SearchProvider):
    """``search_tools``: the deferred tools that best match a query, each admitted.

    Its definition is the same whatever the catalog holds. The answer lists the matches
    in rank order, each with its name, description and input schema (and
    ``"approval": "required"`` for one a person approves when it is called); they can
    be called at once and, when the thinker keeps its grants, are offered from the next
    turn. Mutating (it widens the palette) unless built with ``read_only=True``, as a
    read-only thinker builds it (its catalog holds only read-only tools).
    """

    _kind = "tool"
    _name = SEARCH_TOOLS
    _description = (
        "Find more tools by what you need to do. Returns the best matches, each with its "
        "input schema; you can call them right away."
    )
    _input = _search_schema("tools", "send an invoice by e-mail")
    _output = _TOOLS_FOUND

    def __init__(self, *, read_only: bool = False) -> None:
        super().__init__()
        self._read_only = read_only


class SearchSkillsProvider(_SearchProvider):
    """``search_skills``: the skills that best match a query, each admitted.

    Its definition is the same whatever the catalog holds. A granted skill attaches to
    the conversation and rides its preamble from the next turn (when the thinker keeps
    its grants; otherwise its instructions come back in the answer). Read-only (it
    changes only what the model reads), so it survives the sweep.
    """

    _kind = "skill"
    _name = SEARCH_SKILLS
    _description = (
        "Find skills (instructions for specific kinds of work) by what you need to do. "
        "Matching skills are added to your instructions."
    )
    _input = _search_schema("skills", "write a safe SQL query")
    _output = _SKILLS_FOUND
    _read_only = True


META_TOOLS: Final = (
    RequestToolsProvider,
    RequestSkillProvider,
    SearchToolsProvider,
    SearchSkillsProvider,
)
"""The meta-tools that ask for more: a call of one is not asked about, its grants are."""
