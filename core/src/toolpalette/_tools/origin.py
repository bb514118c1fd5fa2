"""Provenance: where a tool comes from, and the one spelling of a distribution's label.

Kept apart from the providers (which need pydantic) so that listings, problems and the
command line can name a tool's origin without importing them.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Origin", "distribution_label"]


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
