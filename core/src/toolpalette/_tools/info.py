"""``ToolInfo``, the one frozen record of what a tool is, and ``Origin``, where it comes from.

Neither needs pydantic, so listings, problems and the command line can use them cheaply.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal, get_args

__all__ = [
    "INFO_FIELDS",
    "TASK_SUPPORT",
    "Origin",
    "TaskSupport",
    "ToolInfo",
    "default_display_name",
    "distribution_label",
]

TaskSupport = Literal["forbidden", "optional", "required"]
"""Whether a tool may run as an MCP task (the tasks extension): ``forbidden`` (it never
does), ``optional`` (when the client supports tasks) or ``required`` (only as a task)."""
TASK_SUPPORT: Final[tuple[str, ...]] = get_args(TaskSupport)
"""The values of `TaskSupport`."""

_EMPTY: Final[Mapping[str, Any]] = MappingProxyType({})


def default_display_name(name: str) -> str:
    """The display name a tool gets when it declares none: its name made readable."""
    return name.replace("_", " ").capitalize()


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolInfo:
    """Everything that describes one tool: what a model, a host and a UI read about it.

    A provider holds one (``provider.info``), and its properties read it. Immutable: a
    provider whose description or schema changes is a new provider, registered in the
    old one's place (as the meta-tools are when their catalog changes). Make a variant
    with [`replace()`][toolpalette.ToolInfo.replace]. The schemas are the provider's own
    dicts, not copies: read them, never change them.
    """

    name: str
    """The tool's name as the model sees it."""
    description: str
    """What the model reads about the tool."""
    input_schema: dict[str, Any] = field(hash=False)
    """The published input JSON Schema (refinements included)."""
    output_schema: dict[str, Any] | None = field(default=None, hash=False)
    """The output JSON Schema, or None when output ships as text."""
    read_only: bool = False
    """Whether the tool leaves the world unchanged; mutating unless declared."""
    destructive: bool = True
    """Whether a mutating call may destroy or overwrite (MCP's ``destructiveHint``)."""
    idempotent: bool = False
    """Whether repeating a mutating call with the same input changes nothing more."""
    open_world: bool = True
    """Whether the tool reaches beyond a closed domain (the web, other services)."""
    display_name: str = ""
    """A human-friendly name; empty when built, it becomes the name made readable."""
    action_verb: str = "Running"
    """What a UI says while the tool runs."""
    weight: float = 1.0
    """Relative cost or priority, for hosts that budget a palette."""
    metadata: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, hash=False)
    """An open mapping the core never reads."""
    concurrency_safe: bool = False
    """Whether calls may overlap when the input does not decide it.

    False unless given: a provider's own default is its ``read_only``, which
    ``provider.info`` reads.
    """
    timeout: float | None = None
    """Seconds a call may run; None takes the executor's default."""
    output_cap: int | None = None
    """Largest output in bytes of JSON text; None takes the executor's default."""
    guidance: str | None = None
    """A short text for the conversation's preamble while the tool is offered, or None.

    No provider format has a place for it in a tool's definition (MCP's is the server's
    ``instructions``), so the exports leave it out.
    """
    task_support: TaskSupport = "forbidden"
    """Whether the MCP server may run the tool as a task (see `TaskSupport`)."""

    def __post_init__(self) -> None:
        if not self.display_name:
            object.__setattr__(self, "display_name", default_display_name(str(self.name)))

    def replace(self, **changes: Any) -> ToolInfo:
        """A copy of this record with ``changes`` (field names to new values).

        Raises:
            TypeError: a key is not a field of the record.
        """
        return dataclasses.replace(self, **changes)


INFO_FIELDS: Final[tuple[str, ...]] = tuple(f.name for f in dataclasses.fields(ToolInfo))
"""The record's fields: each is also the provider property of that name."""


# -- provenance ---------------------------------------------------------------------


@dataclass(frozen=True)
class Origin:
    """Where a provider comes from: the pack, its distribution, and the module (or server)."""

    pack: str | None = None
    """The entry point name of the pack (or the name given to ``add_plugin``)."""
    distribution: str | None = None
    """The distribution that ships it, e.g. ``toolpalette-files``."""
    version: str | None = None
    """That distribution's version."""
    module: str | None = None
    """The module that defines the tool."""
    server: str | None = None
    """The MCP server that serves the tool, for a tool of an MCP server."""

    def describe(self) -> str:
        """``module (distribution version)``, with whatever parts are known."""
        if self.server is not None:
            where = f"MCP server {self.server!r}"
            return f"{where} of pack {self.pack!r}" if self.pack else where
        where = self.module or self.pack or "unknown module"
        label = distribution_label(self.distribution, self.version)
        return f"{where} ({label})" if label else where


def distribution_label(distribution: str | None, version: str | None) -> str | None:
    """``distribution version`` (``?`` for an unknown version), or None without a distribution.

    The one spelling of "which distribution" in problems, listings and error messages.
    """
    if not distribution:
        return None
    return f"{distribution} {version or '?'}"
