"""Every exception and warning toolpalette raises: one hierarchy with structured fields.

The tree, and when each is raised: docs/errors.md.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

__all__ = [
    "ClientRequestError",
    "ConfigError",
    "IncompatiblePluginError",
    "InputProblem",
    "InvalidInputError",
    "InvalidManifestError",
    "InvalidToolSchemaError",
    "MCPServerError",
    "PluginError",
    "PluginLoadError",
    "PluginWarning",
    "SkillIntegrityError",
    "SkillNotFoundError",
    "SkillWarning",
    "ToolCollisionError",
    "ToolDefinitionError",
    "ToolError",
    "ToolNotFoundError",
    "ToolpaletteDeprecationWarning",
    "ToolpaletteError",
    "ToolpaletteWarning",
    "UserError",
]


class ToolpaletteError(Exception):
    """Base class of every exception toolpalette raises."""

    def __reduce__(self) -> str | tuple[Any, ...]:
        # Subclasses take keyword fields, not the message; rebuild from the fields.
        # A class without fields of its own takes its message: pickle it as usual.
        if type(self)._fields is ToolpaletteError._fields:
            return super().__reduce__()
        return (_rebuild, (type(self), self._fields(), self.args), self.__dict__)

    def _fields(self) -> dict[str, Any]:
        return {}


_E = TypeVar("_E", bound=ToolpaletteError)


def _rebuild(
    cls: type[ToolpaletteError], fields: dict[str, Any], args: tuple[Any, ...] = ()
) -> ToolpaletteError:
    try:
        return cls(**fields)
    except TypeError:  # a subclass with its own constructor: the pickled state restores it
        return _bare(cls, args)


def _bare(cls: type[_E], args: tuple[Any, ...]) -> _E:
    error = cls.__new__(cls)
    error.args = args
    return error


class UserError(ToolpaletteError):
    """A developer mistake: the code that declares a tool, a schema or a skill is wrong."""


class ToolDefinitionError(UserError):
    """A ``@tool`` declaration or ``Tool`` subclass cannot become a tool."""

    def __init__(self, *, tool_name: str, reason: str) -> None:
        self.tool_name = tool_name
        """The tool's name, or the decorated object's qualified name."""
        self.reason = reason
        """What is wrong and how to fix it."""
        super().__init__(f"Tool {tool_name!r} is not a valid tool: {reason}")

    def _fields(self) -> dict[str, Any]:
        return {"tool_name": self.tool_name, "reason": self.reason}


class InvalidToolSchemaError(UserError):
    """A tool's input or output schema is not valid, or a refiner failed to narrow it."""

    def __init__(self, *, tool_name: str, errors: Sequence[str]) -> None:
        self.tool_name = tool_name
        """The tool whose schema was refused."""
        self.errors = tuple(errors)
        """One readable line per problem."""
        super().__init__(f"Tool {tool_name!r} has an invalid schema: " + "; ".join(self.errors))

    def _fields(self) -> dict[str, Any]:
        return {"tool_name": self.tool_name, "errors": self.errors}


class InvalidManifestError(UserError, ValueError):
    """A skill's ``SKILL.md`` front matter or a skilljar's metadata is invalid."""

    def __init__(self, *, jar: str, field: str, reason: str) -> None:
        self.jar = jar
        """The bundle id, or the skill's folder when there is no bundle."""
        self.field = field
        """The front-matter field (or ``"SKILL.md"`` for the file as a whole)."""
        self.reason = reason
        """What is wrong and how to fix it."""
        super().__init__(f"{jar}: field {field!r}: {reason}")

    def _fields(self) -> dict[str, Any]:
        return {"jar": self.jar, "field": self.field, "reason": self.reason}


class ConfigError(UserError, ValueError):
    """The host's configuration cannot be read: not valid TOML, or a key of the wrong type.

    Raised when a hub is built (``ToolHub(config=...)``); the command line prints its
    message on one line and exits with status 2. Keys nothing reads are not errors but
    ``config`` problems (``toolpalette check`` reports them).
    """

    def __init__(
        self,
        *,
        reason: str,
        source: str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        self.reason = reason
        """What is wrong and how to fix it."""
        self.source = source
        """The file, as the host named it (None for a configuration given in code)."""
        self.line = line
        """The line of the file where reading failed (1-based), when known."""
        self.column = column
        """The column of that line (1-based), when known."""
        where = source or "toolpalette configuration"
        if line is not None:
            where += f", line {line}" + (f", column {column}" if column is not None else "")
        super().__init__(f"{where}: {reason}")

    def _fields(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "source": self.source,
            "line": self.line,
            "column": self.column,
        }


class ToolCollisionError(ToolpaletteError, ValueError):
    """Two different providers claim the same tool name.

    Never resolved silently: the host renames or prefixes one side in its
    configuration (see the host guide).
    """

    def __init__(self, *, tool_name: str, first: str, second: str, hint: str = "") -> None:
        self.tool_name = tool_name
        """The contested name."""
        self.first = first
        """The provider already registered, with its distribution and version when known."""
        self.second = second
        """The provider that was refused, likewise."""
        self.hint = hint or (
            "rename or prefix one of them in the host configuration "
            "([tool.toolpalette] rename / prefix, or ToolHub(rename=..., prefix=...)), "
            "or exclude one pack (TOOLPALETTE_BLOCK_PLUGINS)"
        )
        """How to resolve the collision."""
        super().__init__(
            f"Tool name {tool_name!r} is claimed twice: by {first} and by {second}; {self.hint}"
        )

    def _fields(self) -> dict[str, Any]:
        return {
            "tool_name": self.tool_name,
            "first": self.first,
            "second": self.second,
            "hint": self.hint,
        }


class PluginError(ToolpaletteError):
    """An installed pack or skilljar could not be used; the rest of the hub still works."""


class PluginLoadError(PluginError):
    """A pack failed to import, a hook raised, or a hook returned something unusable.

    The original exception, when there is one, is ``__cause__``.
    """

    def __init__(self, *, plugin_name: str, distribution: str | None, reason: str) -> None:
        self.plugin_name = plugin_name
        """The entry point name (or the name given to ``add_plugin``)."""
        self.distribution = distribution
        """``name version`` of the distribution that ships it, when known."""
        self.reason = reason
        """What went wrong, readable."""
        where = f" (from {distribution})" if distribution else ""
        super().__init__(f"Plugin {plugin_name!r}{where}: {reason}")

    def _fields(self) -> dict[str, Any]:
        return {
            "plugin_name": self.plugin_name,
            "distribution": self.distribution,
            "reason": self.reason,
        }


class IncompatiblePluginError(PluginError):
    """A pack declares a requirement on ``toolpalette`` that this version does not meet."""

    def __init__(self, *, plugin_name: str, required: str, installed: str) -> None:
        self.plugin_name = plugin_name
        """The entry point name."""
        self.required = required
        """The pack's declared specifier, e.g. ``>=2,<3``."""
        self.installed = installed
        """The installed toolpalette version."""
        super().__init__(
            f"Plugin {plugin_name!r} requires toolpalette{required}, "
            f"but {installed} is installed; upgrade one of them"
        )

    def _fields(self) -> dict[str, Any]:
        return {
            "plugin_name": self.plugin_name,
            "required": self.required,
            "installed": self.installed,
        }


class MCPServerError(ToolpaletteError):
    """An MCP server could not be used: it did not start, did not answer, or failed to list.

    The original exception, when there is one, is ``__cause__``. The reason is for the
    host (``toolpalette check``, logs); a model never reads it.
    """

    def __init__(self, *, server: str, reason: str) -> None:
        self.server = server
        """The server's configured name."""
        self.reason = reason
        """What went wrong, readable; never a header or environment value."""
        super().__init__(f"MCP server {server!r}: {reason}")

    def _fields(self) -> dict[str, Any]:
        return {"server": self.server, "reason": self.reason}


class ToolNotFoundError(ToolpaletteError, LookupError):
    """No tool of that name is available; the message lists the ones that are."""

    def __init__(self, *, tool_name: object, available: Sequence[str]) -> None:
        self.tool_name = tool_name
        """The name asked for (possibly not a string)."""
        self.available = tuple(available)
        """The names that are available, sorted."""
        super().__init__(_unavailable_text(tool_name, self.available))

    def __str__(self) -> str:
        return str(self.args[0])

    def _fields(self) -> dict[str, Any]:
        return {"tool_name": self.tool_name, "available": self.available}


class SkillNotFoundError(ToolpaletteError, LookupError):
    """No skill of that id is available; the message lists the ones that are."""

    def __init__(self, *, skill_id: str, available: Sequence[str]) -> None:
        self.skill_id = skill_id
        """The full skill id asked for."""
        self.available = tuple(available)
        """The ids that are available, sorted."""
        listing = ", ".join(self.available) if self.available else "none"
        super().__init__(f"Skill {skill_id!r} is not available. Available skills: {listing}")

    def __str__(self) -> str:
        return str(self.args[0])

    def _fields(self) -> dict[str, Any]:
        return {"skill_id": self.skill_id, "available": self.available}


class SkillIntegrityError(ToolpaletteError, OSError):
    """A file of a skill served over MCP is not what its entry said: it is refused.

    Its size or ``sha256`` digest differs from the skill entry's (``skills/list``), its
    front matter differs from the entry's, or it is not a file the entry lists. The
    content is never used; listing the server's skills again picks up a changed skill.
    """

    def __init__(self, *, skill_id: str, uri: str, reason: str) -> None:
        self.skill_id = skill_id
        """The skill's full id in the registry."""
        self.uri = uri
        """The URI of the file that was refused."""
        self.reason = reason
        """What did not match."""
        super().__init__(f"Skill {skill_id!r}: {uri} was refused: {reason}")

    def __str__(self) -> str:
        return str(self.args[0])

    def _fields(self) -> dict[str, Any]:
        return {"skill_id": self.skill_id, "uri": self.uri, "reason": self.reason}


@dataclass(frozen=True)
class InputProblem:
    """One reason model input was refused: where, and what the schema declares there."""

    path: str
    """Where the problem is, as a dotted path with list indexes (``items[2].name``);
    ``"(input)"`` for the input as a whole."""
    expected: str
    """What the schema declares there (``integer``, ``required field``, ...)."""

    def __str__(self) -> str:
        return f"at {self.path}: expected {self.expected}"


MAX_SHOWN_PROBLEMS = 8
"""The most problems an InvalidInputError's message lists (all are in ``problems``)."""


class InvalidInputError(ToolpaletteError, ValueError):
    """Model input was refused; correctable by the model.

    The message names field paths and declared types only, never a value the model
    sent. The validator's own complaint, which may quote the value, is ``__cause__``.
    """

    def __init__(self, *, tool_name: str, problems: Sequence[InputProblem]) -> None:
        self.tool_name = tool_name
        """The tool whose input was refused."""
        self.problems = problems = tuple(problems)
        """The problems found, in input order (validation stops after the first 64)."""
        if len(problems) == 1:  # the common refusal: built on every invalid call
            detail = str(problems[0])
        else:
            detail = "; ".join(map(str, problems[:MAX_SHOWN_PROBLEMS])) or "input refused"
            if len(problems) > MAX_SHOWN_PROBLEMS:
                detail += f"; and {len(problems) - MAX_SHOWN_PROBLEMS} more problems"
        super().__init__(f"Invalid input for tool {tool_name!r}: {detail}")

    def _fields(self) -> dict[str, Any]:
        return {"tool_name": self.tool_name, "problems": self.problems}


_CLIENT_REASONS: Final = {
    "unsupported": "the caller does not support it",
    "timed_out": "the caller did not answer in time",
    "failed": "the caller could not answer",
}


class ClientRequestError(ToolpaletteError):
    """A tool asked its caller something the caller cannot answer (``ToolContext``).

    Raised by ``ToolContext.elicit``, ``sample`` and ``roots``: the host set no
    callback for it, the MCP client did not declare the capability or has no way to be
    asked during this request, or it did not answer within the deadline. A tool may
    catch it and go on without the answer. The message never holds what was asked or
    answered.
    """

    def __init__(self, *, feature: str, reason: str) -> None:
        self.feature = feature
        """What was asked: ``elicitation``, ``sampling`` or ``roots``."""
        self.reason = reason
        """Why there is no answer: ``unsupported``, ``timed_out`` or ``failed``."""
        why = _CLIENT_REASONS.get(reason, reason)
        super().__init__(f"The tool's {feature} request got no answer: {why}.")

    def _fields(self) -> dict[str, Any]:
        return {"feature": self.feature, "reason": self.reason}


class ToolError(ToolpaletteError):
    """Raise from a tool to give the model a deliberate, readable failure.

    Unlike any other exception (whose text is never shown to the model), a ToolError
    keeps its ``code``, ``status`` and ``user_message`` all the way to the result.
    """

    def __init__(self, user_message: str, *, code: str = "tool_error", status: int = 422) -> None:
        self.user_message = user_message
        """The text the model sees."""
        self.code = code
        """A short machine-readable code (``not_found``, ``conflict``, ...)."""
        self.status = status
        """An HTTP-like status: 4xx the model can correct, 5xx it cannot."""
        super().__init__(user_message)

    def _fields(self) -> dict[str, Any]:
        return {"user_message": self.user_message, "code": self.code, "status": self.status}

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_tool_error, (type(self), self._fields(), self.args), self.__dict__)


def _rebuild_tool_error(
    cls: type[ToolError], fields: dict[str, Any], args: tuple[Any, ...] = ()
) -> ToolError:
    message = fields.pop("user_message")
    try:
        return cls(message, **fields)
    except TypeError:  # a subclass with its own constructor: the pickled state restores it
        return _bare(cls, args)


class ToolpaletteWarning(UserWarning):
    """Base class of every warning toolpalette emits."""


class PluginWarning(ToolpaletteWarning):
    """A pack loaded, but something it offered was skipped (e.g. a class without @tool)."""


class SkillWarning(ToolpaletteWarning):
    """A skill was loaded leniently (a cosmetic problem) or skipped."""


class ToolpaletteDeprecationWarning(ToolpaletteWarning, DeprecationWarning):
    """A name or hook argument that will be removed; the message says what replaces it."""


_MAX_LISTED: Final = 100
"""An unknown tool's message lists at most this many available names."""
_WELL_FORMED: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _unavailable_text(name: object, available: Sequence[str]) -> str:
    """The one text for an unknown or not-offered tool name, to a model or a developer.

    `ToolNotFoundError`'s message, which the pipeline's 404/403 answer reuses
    (``str(ToolNotFoundError(...))``), so both read the same (no existence oracle).

    The name is quoted only when it is a well-formed tool name (a model's garbage is
    never echoed); at most `_MAX_LISTED` names are listed, so a huge catalog
    cannot flood the model.
    """
    label = f"Tool '{name}'" if isinstance(name, str) and _WELL_FORMED.fullmatch(name) else None
    listing = ", ".join(available[:_MAX_LISTED]) if available else "none"
    if len(available) > _MAX_LISTED:
        listing += f" and {len(available) - _MAX_LISTED} more"
    return f"{label or 'The requested tool'} is not available. Available tools: {listing}."
