"""``ClientChannel``: how a running tool talks to its caller (log, elicit, sample, roots).

Whoever runs a call supplies the channel (a host's callback, the MCP server); without
one, logs go to `logging` and the rest raise `ClientRequestError`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol, runtime_checkable

from toolpalette.errors import ClientRequestError

__all__ = [
    "DEFAULT_ROUND_TRIP",
    "LOG_LEVELS",
    "ClientChannel",
    "Elicited",
    "LoggingChannel",
    "Root",
    "Sampled",
    "check_level",
    "log_to_logging",
]

LOG_LEVELS: Final = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
"""The log levels of ``ToolContext.log``, least severe first (RFC 5424, as MCP has them)."""

DEFAULT_ROUND_TRIP: Final = 300.0
"""Seconds one question to the client (elicit, sample, roots) may take by default."""

_PY_LEVELS: Final = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO + 5,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL + 5,
    "emergency": logging.CRITICAL + 10,
}


@dataclass(frozen=True)
class Elicited:
    """The user's answer to `ToolContext.elicit()`."""

    action: Literal["accept", "decline", "cancel"]
    """``accept`` (``content`` holds the answer), ``decline`` or ``cancel``."""
    content: Mapping[str, Any] | None = None
    """The fields the user filled in, when accepted."""

    @property
    def accepted(self) -> bool:
        """Whether the user accepted (and ``content`` holds the answer)."""
        return self.action == "accept"


@dataclass(frozen=True)
class Sampled:
    """The client's completion for `ToolContext.sample()`."""

    content: Mapping[str, Any]
    """The message's content block (``{"type": "text", "text": ...}``, an image, ...)."""
    role: str = "assistant"
    """The message's role."""
    model: str | None = None
    """The model the client used, if it says."""
    stop_reason: str | None = None
    """Why the completion stopped (``endTurn``, ``maxTokens``, ...), if it says."""

    @property
    def text(self) -> str | None:
        """The completion's text, when its content is text."""
        value = self.content.get("text") if self.content.get("type") == "text" else None
        return value if isinstance(value, str) else None


@dataclass(frozen=True)
class Root:
    """One of the client's roots (a folder or location it lets the tool work in)."""

    uri: str
    """The root's URI (``file:///...``)."""
    name: str | None = None
    """A human-readable name, if the client gives one."""
    meta: Mapping[str, Any] = field(default_factory=dict)
    """The root's ``_meta``, if any."""


@runtime_checkable
class ClientChannel(Protocol):
    """What runs a call supplies so its tool can talk to the caller.

    ``log`` may be called from any thread and must not block; the other three are
    awaited on the call's event loop and raise `ClientRequestError` when the
    caller cannot answer. ``key``, when the tool gives one, names the question (an MCP
    2026-07-28 input request's key); a host may ignore it. A host implements the ones
    it supports (subclass `LoggingChannel` to get the defaults for the rest).
    """

    def log(self, level: str, message: str, data: Any) -> None:
        """Deliver one log line (``level`` is one of `LOG_LEVELS`)."""
        ...

    async def elicit(
        self, message: str, schema: Mapping[str, Any], *, key: str | None = None
    ) -> Elicited:
        """Ask the user ``message``, for an answer of the flat object ``schema``."""
        ...

    async def sample(
        self,
        messages: Sequence[Mapping[str, Any]],
        options: Mapping[str, Any],
        *,
        key: str | None = None,
    ) -> Sampled:
        """Ask the caller's model for a completion of ``messages`` (MCP's shapes)."""
        ...

    async def roots(self, *, key: str | None = None) -> list[Root]:
        """The caller's roots."""
        ...


class LoggingChannel:
    """The channel of a call nobody talks for: logs to `logging`, the rest refused."""

    def log(self, level: str, message: str, data: Any) -> None:
        log_to_logging(level, message, data)

    async def elicit(
        self, message: str, schema: Mapping[str, Any], *, key: str | None = None
    ) -> Elicited:
        raise ClientRequestError(feature="elicitation", reason="unsupported")

    async def sample(
        self,
        messages: Sequence[Mapping[str, Any]],
        options: Mapping[str, Any],
        *,
        key: str | None = None,
    ) -> Sampled:
        raise ClientRequestError(feature="sampling", reason="unsupported")

    async def roots(self, *, key: str | None = None) -> list[Root]:
        raise ClientRequestError(feature="roots", reason="unsupported")


def check_level(level: object) -> str:
    """``level`` if it is one of `LOG_LEVELS`.

    Raises:
        ValueError: any other value.
    """
    if not isinstance(level, str) or level not in _PY_LEVELS:
        raise ValueError(f"level must be one of {', '.join(LOG_LEVELS)}")
    return level


def log_to_logging(level: str, message: str, data: Any, logger: str = "toolpalette.tool") -> None:
    """One tool log line on the `logging` module (``data`` as the record's extra)."""
    logging.getLogger(logger).log(
        _PY_LEVELS.get(level, logging.INFO), "%s", message, extra={"toolpalette_data": data}
    )
