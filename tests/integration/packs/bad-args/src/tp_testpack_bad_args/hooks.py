"""Hooks of a test pack whose implementation asks for an argument the spec lacks."""

from __future__ import annotations

from typing import Any

import toolpalette


@toolpalette.hookimpl
def toolpalette_register_tools(workspace: Any) -> Any:
    return []
