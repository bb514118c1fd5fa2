"""One provider offered with some fields of its record replaced (a new name, say)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from toolpalette._tools.info import INFO_FIELDS, ToolInfo, serving_fields
from toolpalette._tools.provider import BoundTool, ToolProvider
from toolpalette._tools.tool import TOOL_NAME
from toolpalette.errors import InvalidInputError

__all__ = ["ReplacedProvider"]


def _served(field: str) -> Callable[[ReplacedProvider], Any]:
    def get(self: ReplacedProvider) -> Any:
        changes = self.changes
        return changes[field] if field in changes else getattr(self.inner, field)

    return get


@serving_fields(_served)
class ReplacedProvider(ToolProvider):
    """``inner`` with some fields of its record replaced; everything else is its own.

    Its `info` is ``inner.info.replace(**changes)``. Each descriptive property
    reads the replaced value, else the wrapped provider's property, without building the
    record: listing a renamed tool reads its name, description and flags and must not
    build its schemas (a definition that cannot be built is reported where the catalog
    builds it). Validation, the runnable tool and the per-call decisions are the wrapped
    provider's; a refusal names the tool as offered. Two wrappers are equal when they
    wrap equal providers with equal changes, so a pack loaded twice still yields one
    entry.

    Raises:
        TypeError: a key of ``changes`` is not a field of the record.
        ValueError: a new ``name`` is not a valid tool name.
    """

    if TYPE_CHECKING:  # served generically, by the decorator
        name: str
        description: str
        input_schema: dict[str, Any]

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
