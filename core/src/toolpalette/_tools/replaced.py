"""`ReplacedProvider`: one provider offered with some fields of its record replaced."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from types import MappingProxyType
from typing import Any

from toolpalette._tools.info import INFO_FIELDS, ToolInfo
from toolpalette._tools.provider import BoundTool, ToolProvider
from toolpalette._tools.tool import TOOL_NAME
from toolpalette.errors import InvalidInputError

__all__ = ["ReplacedProvider"]


class ReplacedProvider(ToolProvider):
    """``inner`` with some fields of its record replaced; everything else is its own.

    Its `info` is ``inner.info.replace(**changes)``, so a field added to the record is
    carried without a line here. What a listing and a rename read (name, description,
    read-only, display name) is the replaced value, else the wrapped provider's, read
    without building the record: a listing must not build schemas (a definition that
    cannot be built is reported where the catalog builds it). Validation, the runnable
    tool and the per-call decisions are the wrapped provider's; a refusal names the tool
    as offered. Two wrappers are equal when they wrap equal providers with equal
    changes, so a pack loaded twice still yields one entry.

    Raises:
        TypeError: a key of ``changes`` is not a field of the record.
        ValueError: a new ``name`` is not a valid tool name.
    """

    def __init__(self, inner: ToolProvider, **changes: Any) -> None:
        unknown = sorted(set(changes) - set(INFO_FIELDS))
        if unknown:
            raise TypeError(f"not fields of a tool's record: {', '.join(unknown)}")
        name = changes.get("name", inner.name)
        if not (isinstance(name, str) and TOOL_NAME.match(name)):
            raise ValueError(f"{name!r} is not a valid tool name (is the prefix too long?)")
        self.inner = inner
        """The provider offered differently."""
        self.changes: Mapping[str, Any] = MappingProxyType(changes)
        """The replaced fields and their values."""
        self.origin = inner.origin

    @property
    def info(self) -> ToolInfo:
        """The wrapped provider's record with the changes."""
        info: ToolInfo | None = self.__dict__.get("_info")
        if info is None:
            info = self.__dict__["_info"] = self.inner.info.replace(**self.changes)
        return info

    # What a listing and a rename read, without building the record (nor the schemas).

    @property
    def name(self) -> str:
        name: str = self.changes.get("name", self.inner.name)
        return name

    @property
    def description(self) -> str:
        description: str = self.changes.get("description", self.inner.description)
        return description

    @property
    def read_only(self) -> bool:
        read_only: bool = self.changes.get("read_only", self.inner.read_only)
        return read_only

    @property
    def display_name(self) -> str:
        display_name: str = self.changes.get("display_name", self.inner.display_name)
        return display_name

    def is_concurrency_safe(self, value: Any) -> bool:
        """As the wrapped provider decides."""
        return self.inner.is_concurrency_safe(value)

    def resource_key(self, value: Any) -> Hashable | None:
        """As the wrapped provider decides."""
        return self.inner.resource_key(value)

    def grade_for(self, parent: Any) -> str | None:
        """As the wrapped provider decides."""
        return self.inner.grade_for(parent)

    def parse_input(self, raw: Any) -> Any:
        """Validate like the wrapped provider; refusals name the tool as offered."""
        try:
            return self.inner.parse_input(raw)
        except InvalidInputError as exc:
            if exc.tool_name == self.name:
                raise
            raise InvalidInputError(tool_name=self.name, problems=exc.problems) from exc.__cause__

    def dump_output(self, value: Any) -> Any:
        """As the wrapped provider does."""
        return self.inner.dump_output(value)

    def create(self, parent: Any = None) -> BoundTool:
        """The wrapped provider's tool."""
        return self.inner.create(parent)

    def describe(self) -> str:
        """The wrapped provider's description, and the name it is offered under."""
        return f"{self.inner.describe()}, offered as {self.name!r}"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ReplacedProvider):
            return NotImplemented
        return self.inner == other.inner and dict(self.changes) == dict(other.changes)

    def __hash__(self) -> int:
        return hash((ReplacedProvider, self.name, self.inner))
