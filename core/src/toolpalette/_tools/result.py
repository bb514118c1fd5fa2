"""The one result shape every tool call returns, whatever the tool and however it failed."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final, final

__all__ = ["RESULT_KEYS", "ToolResult"]

RESULT_KEYS: Final = ("is_error", "status", "code", "text", "content", "structured")
"""The keys of :meth:`ToolResult.as_dict`, in order: a public contract."""


@final
class ToolResult:
    """What a tool call gives back to the model and the host: one shape for every tool.

    A success has ``is_error`` false, ``status`` 200 and ``code`` ``"ok"``; a failure has
    an HTTP-like ``status`` (4xx the model can correct, 5xx it cannot), a short ``code``
    and a ``text`` written for the model that never quotes a raw exception or an input
    value. Results are immutable; ``content`` returns a fresh list on every access.
    """

    # Read-only properties over private slots: building one (every call does) is then a
    # few plain slot stores, and the public fields cannot be reassigned.
    __slots__ = ("_code", "_content", "_is_error", "_status", "_structured", "_text")

    def __init__(
        self,
        text: str,
        *,
        is_error: bool = False,
        status: int = 200,
        code: str = "ok",
        structured: dict[str, Any] | None = None,
        content: list[dict[str, Any]] | None = None,
    ) -> None:
        self._text = text
        self._is_error = is_error
        self._status = status
        self._code = code
        self._structured = structured
        self._content = tuple(content) if content is not None else None

    @property
    def is_error(self) -> bool:
        """Whether the call failed."""
        return self._is_error

    @property
    def status(self) -> int:
        """200 on success; on failure the HTTP-like status (400, 403, 404, 413, 504, ...)."""
        return self._status

    @property
    def code(self) -> str:
        """``"ok"`` on success; on failure a short machine-readable code (``timeout``, ...)."""
        return self._code

    @property
    def text(self) -> str:
        """The model-readable text: the output as text, or what went wrong."""
        return self._text

    @property
    def structured(self) -> dict[str, Any] | None:
        """The output as a JSON object when the tool publishes an output schema, else None."""
        return self._structured

    @classmethod
    def failure(cls, status: int, code: str, text: str) -> ToolResult:
        """A failed call's result: use it when a host answers a call without running it."""
        return cls(text, is_error=True, status=status, code=code)

    @property
    def content(self) -> list[dict[str, Any]]:
        """The content blocks (MCP-style); one text block unless given otherwise."""
        if self._content is None:
            return [{"type": "text", "text": self.text}]
        return [dict(block) for block in self._content]

    def as_dict(self) -> dict[str, Any]:
        """The JSON-able form, with exactly the keys of :data:`RESULT_KEYS`."""
        return {
            "is_error": self.is_error,
            "status": self.status,
            "code": self.code,
            "text": self.text,
            "content": self.content,
            "structured": self.structured,
        }

    def to_json(self) -> str:
        """:meth:`as_dict` as JSON text (what ``toolpalette call --json`` prints)."""
        return json.dumps(self.as_dict(), ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolResult:
        """Rebuild a result from :meth:`as_dict` output (e.g. read back from a log)."""
        return cls(
            str(data["text"]),
            is_error=bool(data["is_error"]),
            status=int(data["status"]),
            code=str(data["code"]),
            structured=data.get("structured"),
            content=list(data["content"]) if data.get("content") is not None else None,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolResult):
            return NotImplemented
        return self.as_dict() == other.as_dict()

    def __hash__(self) -> int:
        return hash((self.is_error, self.status, self.code, self.text))

    def __reduce__(self) -> tuple[Any, ...]:
        return (ToolResult.from_dict, (self.as_dict(),))

    def __repr__(self) -> str:
        if self.is_error:
            return f"<ToolResult error {self.status} {self.code}: {self.text[:60]!r}>"
        return f"<ToolResult ok: {self.text[:60]!r}>"
