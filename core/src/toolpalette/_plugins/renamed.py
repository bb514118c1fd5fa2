"""A pack's tool offered under the name the host's configuration gives it.

Built by the pack catalog for each tool the host renames or prefixes (see
:mod:`toolpalette._plugins.config`); kept apart from the configuration itself so that
reading a configuration needs no provider machinery.
"""

from __future__ import annotations

from typing import Any

from toolpalette._tools.provider import BoundTool, ToolProvider
from toolpalette._tools.tool import TOOL_NAME
from toolpalette.errors import InvalidInputError

__all__ = ["RenamedProvider"]


class RenamedProvider(ToolProvider):
    """A provider offered under another name, as the host's configuration asks.

    Everything but the name comes from the wrapped provider. Two renamed providers are
    equal when they wrap equal providers under the same name, so a pack loaded twice
    still yields one entry.
    """

    def __init__(self, inner: ToolProvider, name: str) -> None:
        if not TOOL_NAME.match(name):
            raise ValueError(f"{name!r} is not a valid tool name (is the prefix too long?)")
        self.inner = inner
        """The provider the pack returned."""
        self._name = name
        self.origin = inner.origin

    name = property(lambda self: self._name)
    description = property(lambda self: self.inner.description)
    input_schema = property(lambda self: self.inner.input_schema)
    output_schema = property(lambda self: self.inner.output_schema)
    weight = property(lambda self: self.inner.weight)
    action_verb = property(lambda self: self.inner.action_verb)
    read_only = property(lambda self: self.inner.read_only)
    metadata = property(lambda self: self.inner.metadata)
    concurrency_safe = property(lambda self: self.inner.concurrency_safe)
    timeout = property(lambda self: self.inner.timeout)
    output_cap = property(lambda self: self.inner.output_cap)

    def is_concurrency_safe(self, value: Any) -> bool:
        """As the wrapped provider decides."""
        return self.inner.is_concurrency_safe(value)

    def resource_key(self, value: Any) -> Any:
        """As the wrapped provider decides."""
        return self.inner.resource_key(value)

    def grade_for(self, parent: Any) -> str | None:
        """As the wrapped provider decides."""
        return self.inner.grade_for(parent)

    def parse_input(self, raw: Any) -> Any:
        """Validate like the wrapped provider; refusals name the new tool name."""
        try:
            return self.inner.parse_input(raw)
        except InvalidInputError as exc:
            raise InvalidInputError(tool_name=self._name, problems=exc.problems) from exc.__cause__

    def dump_output(self, value: Any) -> Any:
        """As the wrapped provider does."""
        return self.inner.dump_output(value)

    def create(self, parent: Any = None) -> BoundTool:
        """Build the wrapped provider's tool."""
        return self.inner.create(parent)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RenamedProvider):
            return NotImplemented
        return self._name == other._name and self.inner == other.inner

    def __hash__(self) -> int:
        return hash((RenamedProvider, self._name, self.inner))
