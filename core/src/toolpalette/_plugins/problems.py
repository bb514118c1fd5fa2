"""Problems: what the hub skipped and why, kept for ``hub.problems()`` and ``check``."""

from __future__ import annotations

import linecache
import os
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "Problem",
    "ProblemKind",
    "describe_exception",
    "describe_origin",
    "describe_type",
    "safe_str",
]

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
    "skill-link",  # a tool names a skill that is not installed
    "skill-requirement",  # a skill needs tools or packs that are not installed (or reachable)
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
    detail: str | None = field(default=None, compare=False)
    """For a problem raised by a pack's code: the whole message and the place it was
    raised (file, line, function, source line), shown by ``toolpalette check -v``."""

    @property
    def fatal(self) -> bool:
        """Whether something was skipped by mistake.

        Not a cosmetic skill warning, a pack the host blocked on purpose, nor a tool's
        link to a skill that is not installed (the tool works without it).
        """
        return self.kind not in ("skill-warning", "blocked", "skill-link")

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


def describe_origin(exc: BaseException) -> str | None:
    """The whole message of ``exc`` and where it was raised, for ``check -v``; None if unknown.

    The place is the innermost frame of its traceback (the pack's own code, when the
    pack raised), as ``file:line in function``, with that line's source. Bounded, and
    it cannot fail.
    """
    try:
        frame = exc.__traceback__
        if frame is None:
            return None
        while frame.tb_next is not None:
            frame = frame.tb_next
        code = frame.tb_frame.f_code
        line = frame.tb_lineno
        source = linecache.getline(code.co_filename, line).strip()
        where = f"{_shown_path(code.co_filename)}:{line} in {code.co_name}"
        if source:
            where += f": {source}"
        message = (_message(exc) or "").strip()
        text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
        detail = f"{text}\n  at {where}"
    except Exception:  # a traceback of an odd shape: no detail rather than no problem
        return None
    return detail if len(detail) <= 4 * _REASON_LIMIT else detail[: 4 * _REASON_LIMIT - 3] + "..."


def _shown_path(path: str) -> str:
    """``path`` relative to the current directory when it lies inside it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return path if relative.startswith("..") else relative
