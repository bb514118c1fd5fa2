"""Problems: what the hub skipped and why, kept for ``hub.problems()`` and ``check``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Problem", "ProblemKind"]

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
