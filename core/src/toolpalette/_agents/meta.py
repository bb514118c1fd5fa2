"""The meta-tools: asking for more tools or skills, and reading an attached skill's files."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, Protocol

from toolpalette._skills import Skill
from toolpalette._tools.info import ToolInfo
from toolpalette._tools.provider import BoundTool, ToolProvider
from toolpalette._tools.tool import TOOL_NAME, ToolContext
from toolpalette.errors import ToolError

__all__ = [
    "ENUM_LIMIT",
    "REQUEST_TOOLS",
    "SKILL_ENUM_LIMIT",
    "Admitter",
    "CatalogEntry",
    "Checked",
    "ReadSkillFileProvider",
    "RequestSkillProvider",
    "RequestToolsProvider",
]

REQUEST_TOOLS: Final = "request_tools"
"""The name ``request_tools`` is offered under (a thinker looks its own up by it)."""

ENUM_LIMIT: Final = 16
"""The most deferred tools the ``auto`` mode offers as ``request_tools``'s enum.

Above it, ``search_tools``. Picked from the context-cost bench (bench/bench_deferral.py):
the largest catalog whose enum costs no more bytes per turn than ``search_tools`` and
one search's answer at the default limit (five definitions), in ``openai_chat`` and
``anthropic`` alike, rounded down."""

SKILL_ENUM_LIMIT: Final = 5
"""The most skills the ``auto`` mode offers as ``request_skill``'s enum (then
``search_skills``), picked the same way as [`ENUM_LIMIT`][toolpalette.ENUM_LIMIT]: with
skills' longer descriptions the enum reaches ``search_skills`` and one answer of five
skills at five skills, in both formats.
"""

MAX_REQUESTED: Final = 256
"""The most names one request may carry (duplicates included: each is decided once)."""

_SKILL_ID: Final = re.compile(r"^[a-z0-9][a-z0-9.-]{0,252}/[a-z0-9][a-z0-9-]{0,63}\Z")
"""A well-formed full skill id (bundle id, a slash, the skill's name), for echoing."""

CatalogEntry = tuple[str, str]
"""A catalog member: its name (or full skill id) and its description."""


class Admitter(Protocol):
    """What a meta-tool's parent (the bound thinker) does with a request or a search."""

    def admit(
        self, kind: str, names: Sequence[str], *, principal: str | None = None
    ) -> dict[str, Any]:
        """Decide every name; returns ``{"granted": [...], "refused": [...], ...}``."""
        ...

    def search(
        self, kind: str, query: str, limit: int, *, principal: str | None = None
    ) -> dict[str, Any]:
        """The best matches of the catalog, each admitted; returns the search's answer."""
        ...


class Checked(ToolProvider):
    """What a meta-tool validates the model's input against, instead of what it publishes.

    Args:
        name: the meta-tool's name.
        schema: what it accepts.

    Refusals name the meta-tool, with the pipeline's texts (paths and expected types,
    never values). Never run: it only checks.
    """

    def __init__(self, name: str, schema: dict[str, Any]) -> None:
        self._record = ToolInfo(name=name, description="", input_schema=schema)

    @property
    def info(self) -> ToolInfo:
        return self._record

    def create(self, parent: Any = None) -> BoundTool:
        raise TypeError("only checks input")


def _names_checked(name: str, field: str) -> Checked:
    """Any non-empty list of strings under ``field``: each is decided on its own."""
    return Checked(
        name,
        {
            "type": "object",
            "properties": {field: {"type": "array", "items": {"type": "string"}, "minItems": 1}},
            "required": [field],
            "additionalProperties": False,
        },
    )


def _shown(kind: str, name: str) -> bool:
    """Whether a name the model sent may be repeated back: a well-formed name or id."""
    return bool(TOOL_NAME.match(name) if kind == "tool" else _SKILL_ID.match(name))


def _without_echo(kind: str, field: str, names: Sequence[str], outcome: dict[str, Any]) -> None:
    """Name each refused item that is not well formed by its place in the list instead."""
    first: dict[str, int] = {}
    for index, name in enumerate(names):
        first.setdefault(name, index)
    for refused in outcome.get("refused", ()):
        name = refused["name"]
        if not _shown(kind, name):
            refused["name"] = f"{field}[{first.get(name, 0)}]"


def _catalog_schema(field: str, noun: str, catalog: Sequence[CatalogEntry]) -> dict[str, Any]:
    members = [
        {"type": "string", "enum": [name], "description": description}
        for name, description in catalog
    ]
    items: dict[str, Any] = {"anyOf": members} if members else {"type": "string", "enum": []}
    return {
        "type": "object",
        "properties": {
            field: {
                "type": "array",
                "description": f"The {noun} to request, by name (each once).",
                "items": items,
                "minItems": 1,
            }
        },
        "required": [field],
        "additionalProperties": False,
    }


class _RequestProvider(ToolProvider):
    """Common ground of the two meta-tools; equal to any other instance of its type."""

    _kind: str
    _field: str
    _noun: str
    _name: str
    _description: str

    _read_only: bool = False

    def __init__(self, catalog: Sequence[CatalogEntry]) -> None:
        self.catalog: tuple[CatalogEntry, ...] = tuple(catalog)
        """The members the model may ask for, in catalog order."""
        self._checked = _names_checked(self._name, self._field)

    @functools.cached_property
    def info(self) -> ToolInfo:
        return ToolInfo(
            name=self._name,
            description=self._description,
            input_schema=_catalog_schema(self._field, self._noun, self.catalog),
            read_only=self._read_only,
        )

    def parse_input(self, raw: str | bytes | Mapping[str, Any]) -> Any:
        """Any non-empty list of names: each is decided on its own (see the module)."""
        return self._checked.parse_input(raw)

    def create(self, parent: Any = None) -> BoundTool:
        if parent is None or not hasattr(parent, "admit"):
            raise TypeError(f"{self._name} runs only for a bound thinker")
        kind, field = self._kind, self._field

        def call(value: dict[str, Any], ctx: ToolContext | None) -> dict[str, Any]:
            names = list(value[field])
            if len(names) > MAX_REQUESTED:
                raise ToolError(
                    f"Ask for at most {MAX_REQUESTED} {self._noun} at a time, each once.",
                    code="invalid_input",
                    status=400,
                )
            principal = ctx.principal if ctx is not None else None  # on the record
            result: dict[str, Any] = parent.admit(kind, names, principal=principal)
            _without_echo(kind, field, names, result)
            return result

        return BoundTool(call, is_async=False, takes_context=True)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))


class RequestToolsProvider(_RequestProvider):
    """``request_tools``: admit deferred tools from the thinker's catalog, callable at once.

    Mutating (it widens the palette) unless built with ``read_only=True``, as a
    read-only thinker builds it: its catalog then holds only read-only tools, so it
    survives the sweep.
    """

    def __init__(self, catalog: Sequence[CatalogEntry], *, read_only: bool = False) -> None:
        super().__init__(catalog)
        self._read_only = read_only

    _kind = "tool"
    _field = "names"
    _noun = "tools"
    _name = REQUEST_TOOLS
    _description = (
        "Ask for more tools. Each allowed value of `names` is a tool you may request, with "
        "what it does. Granted tools can be called now and are offered from your next turn."
    )


class RequestSkillProvider(_RequestProvider):
    """``request_skill``: attach skills to the conversation, from the next turn on.

    Read-only (it changes only what the model reads), so it survives the sweep.
    """

    _kind = "skill"
    _field = "skills"
    _noun = "skills"
    _name = "request_skill"
    _description = (
        "Ask for skills: instructions for specific kinds of work. Each allowed value of "
        "`skills` is a skill you may request, with what it is for. Granted skills are added "
        "to your instructions from your next turn."
    )
    _read_only = True


SkillFile = tuple[Skill, str]
"""An attached skill and the relative path of one of its files."""

_MAX_FILE_BYTES = 256 * 1024
"""The largest skill file ``read_skill_file`` returns."""


class ReadSkillFileProvider(ToolProvider):
    """``read_skill_file``: read one file of a skill attached to the conversation.

    Offered when attached skills have files besides ``SKILL.md`` (a preamble that links
    to ``references/guide.md`` can then be followed). Read-only. Its catalog is an
    ``enum`` of ``<skill id>/<path>`` entries; the file is read through
    `Skill.resource()`, which refuses paths that leave the skill's folder.
    """

    def __init__(self, files: Sequence[SkillFile]) -> None:
        self.files: dict[str, SkillFile] = {
            f"{skill.id}/{path}": (skill, path) for skill, path in files
        }
        """The readable files by catalog entry, in catalog order."""

    @functools.cached_property
    def info(self) -> ToolInfo:
        schema = {
            "type": "object",
            "properties": {
                "file": {
                    "type": "string",
                    "description": "The file to read: the skill's id, a slash, then the "
                    "file's path inside the skill (as the skill's instructions name it).",
                    "enum": list(self.files),
                }
            },
            "required": ["file"],
            "additionalProperties": False,
        }
        return ToolInfo(
            name="read_skill_file",
            description="Read a file that comes with one of your skills (references, "
            "examples, templates), as text. Each allowed value of `file` is one such file.",
            input_schema=schema,
            read_only=True,
            concurrency_safe=True,
        )

    def create(self, parent: Any = None) -> BoundTool:
        files = dict(self.files)

        def call(value: dict[str, Any], _context: Any) -> str:
            entry = files.get(value["file"])
            if entry is None:  # validation refuses it first; kept in case it was bypassed
                raise ToolError(
                    "That file is not one of your skills' files.", status=404, code="unknown_file"
                )
            skill, path = entry
            try:
                data = skill.resource(path)
            except (OSError, ValueError):
                raise ToolError(
                    "That file could not be read.", status=404, code="unknown_file"
                ) from None
            if len(data) > _MAX_FILE_BYTES:
                raise ToolError(
                    f"The file is larger than {_MAX_FILE_BYTES} bytes; it cannot be read here.",
                    status=413,
                    code="too_large",
                )
            try:
                return data.decode("utf-8")
            except UnicodeDecodeError:
                raise ToolError(
                    "That file is not text (UTF-8); it cannot be read here.",
                    status=415,
                    code="not_text",
                ) from None

        return BoundTool(call, is_async=False, takes_context=False)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))
