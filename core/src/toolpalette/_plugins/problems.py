"""Problems: what the hub skipped and why, kept for ``hub.problems()`` and ``check``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Problem", "ProblemKind", "describe_exception", "describe_type", "safe_str"]

_REASON_LIMIT = 300

ProblemKind = Literal[
    "import",  # the pack or jar could not be imported
    "hook",  # a hook implementation raised
    "garbage",  # a hook returned something that is not a tool (or skill)
    "invalid-tool",  # a tool with an invalid name, schema or declaration
    "unknown-hook",  # a toolpalette_* implementation for a hook that does not exist
    "incompatible",  # the distribution's requirement on toolpalette excludes this version
    "collision",  # two providers (or jars, or skills) claim one name
    "blocked",  # skipped on purpose (TOOLPALETTE_BLOCK_PLUGINS)
    "invalid-skill",  # a skill that was skipped (unparsable, missing description)
    "skill-warning",  # a skill that loaded with a cosmetic problem
    "invalid-jar",  # a skilljar whose bundle id or package is unusable
    "server",  # an MCP server that did not start, answer, or list its tools
    "config",  # a key of the host's configuration that nothing reads (a typo)
    "invalid-content",  # a prompt or resource a pack returned that cannot be served
]


@dataclass(frozen=True)
class Problem:
    """One thing the hub could not use, or used leniently, and why."""

    kind: ProblemKind
    """What sort of problem it is."""
    reason: str
    """A readable explanation, with a fix hint where there is one; never a secret."""
    pack: str | None = None
    """The pack's entry point name, or the skilljar's bundle id."""
    distribution: str | None = None
    """``name version`` of the distribution, when known."""
    item: str | None = None
    """The tool name or full skill id concerned, when there is one."""

    @property
    def fatal(self) -> bool:
        """Whether something was skipped by mistake.

        Not a cosmetic skill warning, nor a pack the host blocked on purpose.
        """
        return self.kind not in ("skill-warning", "blocked")

    def __str__(self) -> str:
        where = self.pack or "?"
        if self.distribution:
            where += f" ({self.distribution})"
        what = f" [{self.item}]" if self.item else ""
        return f"{self.kind}: {where}{what}: {self.reason}"


def safe_str(obj: object) -> str:
    """``str(obj)``, or a stand-in when that raises (a pack's ``__str__`` can fail)."""
    text = _message(obj)
    return "<unprintable>" if text is None else text


def _message(obj: object) -> str | None:
    """``str(obj)``, or None when that raises or returns no string."""
    try:
        text = str(obj)
    except KeyboardInterrupt:
        raise
    except BaseException:
        return None
    return text if isinstance(text, str) else None


def describe_type(obj: object) -> str:
    """``a value of type X``, read without calling anything of ``obj``'s own."""
    return f"a value of type {type(obj).__name__}"


def describe_exception(exc: BaseException) -> str:
    """``Type: first line of the message``, bounded, for a problem's reason.

    It cannot fail: an exception whose ``__str__`` raises is described by its type.
    """
    text = (_message(exc) or "").strip()
    text = text.splitlines()[0] if text else ""
    if len(text) > _REASON_LIMIT:
        text = text[: _REASON_LIMIT - 3] + "..."
    name = type(exc).__name__
    return f"{name}: {text}" if text else name
