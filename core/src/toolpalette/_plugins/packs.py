"""The hub's record of each pack, and the scan that finds them cheaply."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final, Literal

from toolpalette._plugins.discovery import (
    EntryPointInfo,
    describe,
    entry_points_of,
    headers,
    incompatibility,
)
from toolpalette._plugins.installed import Installed, entries_in, read, snapshot
from toolpalette._plugins.problems import Problem
from toolpalette._tools.info import Origin
from toolpalette.errors import IncompatiblePluginError

if TYPE_CHECKING:
    from toolpalette._tools.provider import ToolProvider

__all__ = ["Pack", "PackStatus", "scan"]

_CORE: Final = re.compile(r"^toolpalette(?![-_.A-Za-z0-9])", re.IGNORECASE)
_CORE_UNPINNED: Final = re.compile(r"^toolpalette\s*(\[[^\]]*\])?\s*$", re.IGNORECASE)

PackStatus = Literal["not-loaded", "loaded", "failed", "incompatible", "blocked", "disabled"]
"""Where a pack stands: not needed yet, imported, broken, refused, or switched off."""


class Pack:
    """The hub's mutable record of one pack (an entry point, or a plugin added in code)."""

    __slots__ = (
        "_entry_point",
        "_found_in",
        "_info",
        "_requires",
        "checked",
        "claim_hint",
        "claim_source",
        "module",
        "name",
        "plugin_name",
        "problems",
        "providers",
        "status",
    )

    def __init__(
        self,
        name: str,
        module: str | None,
        *,
        entry_point: Any = None,
        info: EntryPointInfo | None = None,
        found_in: tuple[str, str, str] | None = None,
    ) -> None:
        self.name = name
        """The entry point name, or the name given to ``add_plugin``."""
        self.module = module
        """The hooks module: the entry point's target, or the added plugin's module."""
        self.status: PackStatus = "not-loaded"
        self.plugin_name: str | None = None
        """The name pluggy knows it by (another pack's, for one module behind two names)."""
        self.providers: list[ToolProvider] = []
        """Its tools, renamed or prefixed as the host configured."""
        self.problems: list[Problem] = []
        """What went wrong while loading it."""
        self.checked = False
        """Whether its tools' schemas were built (and the broken ones moved to problems)."""
        self.claim_source: str | None = None
        """For a claim that is no pack (an MCP server's tools): where it comes from
        (``from toolpalette.toml``), as collision reports name it."""
        self.claim_hint: str | None = None
        """For such a claim: how to resolve a collision with its own keys."""
        self._entry_point = entry_point
        self._info = info
        self._found_in = found_in
        """``(group, value, metadata folder)`` of an entry point read by `scan()`."""
        self._requires: list[str] | None = None

    @property
    def info(self) -> EntryPointInfo | None:
        """The entry point with its distribution's name and version (read on first use)."""
        if self._info is None:
            if self._found_in is not None:
                group, value, folder = self._found_in
                text = read(folder, "METADATA") or read(folder, "PKG-INFO") or ""
                dist, version, self._requires = headers(text)
                self._info = EntryPointInfo(group, self.name, value, dist, version)
            elif self._entry_point is not None:
                self._info, self._requires = describe(self._entry_point)
        return self._info

    def incompatibility(self) -> IncompatiblePluginError | None:
        """The error to report when the pack's requirement on toolpalette excludes this one.

        Reads the ``Requires-Dist`` lines already read with the name and version, and
        needs ``packaging`` only when a line pins toolpalette to some versions.
        """
        info = self.info
        if info is None:
            return None
        if self._requires is None:  # an info given by hand: read the distribution's
            dist = getattr(info.entry_point, "dist", None)
            self._requires = list(getattr(dist, "requires", None) or [])
        pinned = [r for r in self._requires if _CORE.match(r) and not _CORE_UNPINNED.match(r)]
        return incompatibility(self.name, pinned) if pinned else None

    @property
    def distribution(self) -> str | None:
        """The distribution's name, when the pack is installed."""
        info = self.info
        return info.distribution if info else None

    @property
    def origin(self) -> Origin:
        """Provenance for its tools (the module is filled in per tool)."""
        info = self.info
        return Origin(
            self.name, info.distribution if info else None, info.version if info else None
        )

    @property
    def label(self) -> str | None:
        """``distribution version`` for problems, or None for a plugin added in code."""
        info = self.info
        return info.label if info and info.distribution else None

    @property
    def added_in_code(self) -> bool:
        """Whether the pack was added with ``add_plugin`` rather than installed."""
        return self._entry_point is None and self._info is None and self._found_in is None

    def problem(
        self, kind: Any, reason: str, item: str | None = None, detail: str | None = None
    ) -> None:
        """Record a problem of this pack (``detail``: where its code raised, for ``check -v``)."""
        self.problems.append(Problem(kind, reason, self.name, self.label, item, detail))


def scan(group: str, installed: Installed | None = None) -> list[Pack]:
    """A record per entry point in ``group``, sorted by name, importing and parsing nothing.

    Read from ``installed`` (a new snapshot by default): each distribution once, the
    first on ``sys.path``, as the import system would pick it. When ``sys.path`` holds
    an archive the snapshot cannot list, the standard library's ``entry_points`` is read
    instead.
    """
    if installed is None:
        installed = snapshot()
    if installed is None:
        found = [
            Pack(ep.name, ep.value.partition(":")[0].strip(), entry_point=ep)
            for ep in entry_points_of(group)
        ]
    else:
        found = [
            Pack(name, value.partition(":")[0].strip(), found_in=(group, value, dist.folder))
            for dist in installed.declaring(group)
            for name, value in entries_in(dist.entry_points or "", group)
        ]
    found.sort(key=lambda pack: pack.name)
    return found
