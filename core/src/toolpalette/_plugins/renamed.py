"""A pack's tool offered under the name the host's configuration gives it."""

from __future__ import annotations

from toolpalette._tools.info import default_display_name
from toolpalette._tools.provider import ToolProvider
from toolpalette._tools.replaced import ReplacedProvider

__all__ = ["renamed"]


def renamed(inner: ToolProvider, name: str) -> ReplacedProvider:
    """``inner`` offered as ``name``: its record with the name replaced, nothing else.

    Schemas, annotations, options, metadata and origin stay the tool's own. A display
    name the tool declared stays too; one derived from the old name (``search`` shown
    as "Search") follows the new one, so two prefixed copies of a tool do not show
    under one title.

    Raises:
        ValueError: ``name`` is not a valid tool name.
    """
    if inner.display_name == default_display_name(inner.name):
        return ReplacedProvider(inner, name=name, display_name=default_display_name(name))
    return ReplacedProvider(inner, name=name)
