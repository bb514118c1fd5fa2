"""The environment switches (every ``TOOLPALETTE_*`` variable), read in one place."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

__all__ = [
    "BLOCK_ENV",
    "CACHE_DIR_ENV",
    "DISABLE_ENV",
    "NO_CACHE_ENV",
    "ONLY_ENV",
    "TRACE_ENV",
    "Switches",
    "parse_names",
]

DISABLE_ENV: Final = "TOOLPALETTE_DISABLE_PLUGIN_AUTOLOAD"
"""Set to anything non-empty: no installed pack is used unless ``ONLY_ENV`` names it."""
ONLY_ENV: Final = "TOOLPALETTE_PLUGINS"
"""``a,b``: only these installed packs are used (and skilljars stay on)."""
BLOCK_ENV: Final = "TOOLPALETTE_BLOCK_PLUGINS"
"""``a,b``: these packs are never imported."""
CACHE_DIR_ENV: Final = "TOOLPALETTE_CACHE_DIR"
"""Where the listing cache lives (default: the user's cache folder)."""
NO_CACHE_ENV: Final = "TOOLPALETTE_NO_CACHE"
"""Set to a non-empty value other than ``0`` to neither read nor write the listing cache."""
TRACE_ENV: Final = "TOOLPALETTE_TRACE_PLUGINS"
"""Set (to anything non-empty) to log every hook call and its results."""


@dataclass(frozen=True)
class Switches:
    """What the environment turns on or off, read once."""

    only: frozenset[str] | None = None
    """The only packs used (``TOOLPALETTE_PLUGINS``), or None for every installed one."""
    autoload_disabled: bool = False
    """``TOOLPALETTE_DISABLE_PLUGIN_AUTOLOAD`` is set."""
    blocked: frozenset[str] = frozenset()
    """The packs never imported (``TOOLPALETTE_BLOCK_PLUGINS``)."""
    cache_dir: str | None = None
    """Where the listing cache lives, or None for the user's cache folder."""
    no_cache: bool = False
    """The listing cache is neither read nor written."""
    trace: bool = False
    """Hook calls are logged to the ``toolpalette.trace`` logger."""

    @property
    def discovers(self) -> bool:
        """Whether installed packs and skilljars are discovered at all.

        Off only when autoload is disabled and no ``TOOLPALETTE_PLUGINS`` list names
        packs to use anyway.
        """
        return self.only is not None or not self.autoload_disabled

    def uses(self, pack: str) -> bool:
        """Whether the installed pack ``pack`` is used: listed (if there is a list), not blocked."""
        return (self.only is None or pack in self.only) and pack not in self.blocked

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Switches:
        """The switches as ``environ`` (default: ``os.environ``) sets them."""
        env = os.environ if environ is None else environ
        return cls(
            only=parse_names(env.get(ONLY_ENV)),
            autoload_disabled=bool(env.get(DISABLE_ENV, "").strip()),
            blocked=parse_names(env.get(BLOCK_ENV)) or frozenset(),
            cache_dir=env.get(CACHE_DIR_ENV) or None,
            no_cache=env.get(NO_CACHE_ENV, "0") not in ("", "0"),
            trace=bool(env.get(TRACE_ENV)),
        )


def parse_names(raw: str | None) -> frozenset[str] | None:
    """The names in a comma-separated list, or None when the variable is unset.

    Blanks around names are dropped; a name containing a comma is double-quoted.
    """
    if raw is None:
        return None
    import csv  # only when a list is given: most processes set none

    try:
        fields = next(csv.reader([raw], skipinitialspace=True), [])
    except csv.Error:  # an unbalanced quote or a line break: read it as plain names
        fields = raw.split(",")
    return frozenset(name.strip() for name in fields if name.strip())
