"""Entry-point discovery shared by tool packs and skilljars: find, never import."""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from toolpalette._tools.info import distribution_label
from toolpalette.errors import IncompatiblePluginError

__all__ = [
    "PLUGIN_GROUP",
    "SKILLJAR_GROUP",
    "EntryPointInfo",
    "check_core_requirement",
    "core_version",
    "describe",
    "discover",
    "entry_points_of",
    "headers",
    "incompatibility",
    "plainly_met",
]

PLUGIN_GROUP: Final = "toolpalette.plugins"
"""The entry point group of tool packs."""
SKILLJAR_GROUP: Final = "toolpalette.skilljars"
"""The entry point group of skilljars."""


@dataclass(frozen=True)
class EntryPointInfo:
    """One installed entry point, described without importing it."""

    group: str
    """The entry point group."""
    name: str
    """The entry point name: a pack's name, or a skilljar's bundle id."""
    value: str
    """The target, ``module`` or ``module:attribute``."""
    distribution: str | None
    """The name of the distribution that declares it."""
    version: str | None
    """That distribution's version."""
    entry_point: Any = field(default=None, repr=False, compare=False)
    """The underlying ``importlib.metadata.EntryPoint`` (its ``dist`` reads metadata), or
    None for an entry point read from the installed files directly."""

    @property
    def module(self) -> str:
        """The module (or package) the entry point names."""
        return self.value.partition(":")[0].strip()

    @property
    def label(self) -> str:
        """``distribution version``, or the entry point name when the dist is unknown."""
        return distribution_label(self.distribution, self.version) or self.name

    def load(self) -> Any:
        """Import and return the target (the only step here that imports anything).

        Through the standard library's ``EntryPoint``, made here when the entry point was
        read from the installed files directly.
        """
        entry_point = self.entry_point
        if entry_point is None:
            import importlib.metadata

            entry_point = importlib.metadata.EntryPoint(self.name, self.value, self.group)
        return entry_point.load()


def discover(group: str) -> list[EntryPointInfo]:
    """Every entry point in ``group``, sorted by name then distribution, without importing.

    A distribution found twice on ``sys.path`` counts once (the first on the path, as
    the import system would pick it); two distributions declaring the same entry point
    name are both listed, so that the collision can be reported.
    """
    found = [describe(ep)[0] for ep in entry_points_of(group)]
    found.sort(key=lambda info: (info.name, info.distribution or ""))
    return found


def describe(ep: Any) -> tuple[EntryPointInfo, list[str]]:
    """The entry point's info and its distribution's ``Requires-Dist`` lines.

    The metadata headers are read directly (one file read, no ``email`` parser): only
    ``Name``, ``Version`` and ``Requires-Dist`` are needed, and they come before the body.
    """
    dist = getattr(ep, "dist", None)
    text = (dist.read_text("METADATA") or dist.read_text("PKG-INFO") or "") if dist else ""
    name, version, requires = headers(text)
    return EntryPointInfo(ep.group, ep.name, ep.value, name, version, ep), requires


def headers(text: str) -> tuple[str | None, str | None, list[str]]:
    """``Name``, ``Version`` and the ``Requires-Dist`` lines of a ``METADATA`` text.

    Only the headers are read (they end at the first blank line); a folded continuation
    line is never taken for a header.
    """
    name = version = None
    requires: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            break  # end of the headers
        if line[0].isspace():
            continue  # a folded continuation of the previous header
        key, _, value = line.partition(":")
        key, value = key.strip().lower(), value.strip()
        if key == "name" and name is None:
            name = value
        elif key == "version" and version is None:
            version = value
        elif key == "requires-dist":
            requires.append(value)
    return name, version, requires


@functools.lru_cache(maxsize=1)
def core_version() -> str:
    """The installed toolpalette version (read once per process).

    Read from the ``METADATA`` of the first toolpalette distribution on ``sys.path``
    (as ``importlib.metadata`` would find it, without importing it or listing every
    distribution); ``importlib.metadata`` answers when that folder cannot be found.
    """
    from toolpalette._plugins.installed import folder_of, read

    folder = folder_of("toolpalette")
    text = (read(folder, "METADATA") or read(folder, "PKG-INFO")) if folder else None
    version = headers(text)[1] if text else None
    if version is not None:
        return version
    import importlib.metadata

    return importlib.metadata.version("toolpalette")


def check_core_requirement(info: EntryPointInfo) -> IncompatiblePluginError | None:
    """The error to report when ``info``'s distribution excludes this toolpalette, else None.

    Reads the distribution's ``Requires-Dist`` (see `incompatibility()`).
    """
    dist = getattr(info.entry_point, "dist", None)
    return incompatibility(info.name, (dist.requires if dist is not None else None) or [])


def incompatibility(name: str, requires: Iterable[str]) -> IncompatiblePluginError | None:
    """The error when a ``Requires-Dist`` line on ``toolpalette`` excludes this version.

    Extras and environment markers that do not apply are ignored, and so are lines that
    do not parse. No requirement means compatible.
    """
    installed = core_version()
    requires = [line for line in requires if not plainly_met(line, installed)]
    if not requires:
        return None
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name
    from packaging.version import InvalidVersion, Version

    for line in requires:
        try:
            requirement = Requirement(line)
            if canonicalize_name(requirement.name) != "toolpalette":
                continue
            if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
                continue
            ok = requirement.specifier.contains(Version(installed), prereleases=True)
        except (InvalidRequirement, InvalidVersion):
            continue
        if not ok:
            return IncompatiblePluginError(
                plugin_name=name, required=str(requirement.specifier), installed=installed
            )
    return None


_RELEASE: Final = re.compile(r"[0-9]+(?:\.[0-9]+)*")
_PLAIN_PIN: Final = re.compile(
    r"toolpalette\s*((?:<=|>=|==|!=|<|>)\s*[0-9]+(?:\.[0-9]+)*"
    r"(?:\s*,\s*(?:<=|>=|==|!=|<|>)\s*[0-9]+(?:\.[0-9]+)*)*)\s*",
    re.IGNORECASE,
)
_COMPARE: Final[dict[str, Callable[[tuple[int, ...], tuple[int, ...]], bool]]] = {
    "<=": operator.le,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    ">": operator.gt,
}


def plainly_met(line: str, installed: str) -> bool:
    """Whether ``line`` is a plain pin on toolpalette (``toolpalette>=0.1,<1``) it meets.

    Decided without ``packaging`` (tens of milliseconds to import, on every cold listing)
    when the installed version and every bound are plain release numbers, where
    packaging's rules come down to comparing the numbers padded with zeros. False
    leaves the line to packaging: any other form, and a pin this version fails (whose
    error quotes packaging's spelling of the specifier).
    """
    pin = _PLAIN_PIN.fullmatch(line)
    if pin is None or not _RELEASE.fullmatch(installed):
        return False
    have = _release(installed)
    for clause in pin[1].split(","):
        clause = clause.strip()
        op = clause[:2] if clause[:2] in _COMPARE else clause[:1]
        bound = _release(clause[len(op) :].strip())
        width = max(len(have), len(bound))
        padded = have + (0,) * (width - len(have)), bound + (0,) * (width - len(bound))
        if not _COMPARE[op](*padded):
            return False
    return True


def _release(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def entry_points_of(group: str) -> Any:
    """The standard library's entry points of ``group`` (imported here: it is slow to import)."""
    import importlib.metadata

    return importlib.metadata.entry_points(group=group)
