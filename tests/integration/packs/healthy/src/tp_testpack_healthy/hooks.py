"""Hooks of the healthy test pack."""

from __future__ import annotations

from typing import Any

import toolpalette


@toolpalette.hookimpl
def toolpalette_register_tools() -> list[Any]:
    from tp_testpack_healthy import tools

    return [tools.echo, tools.Counter, tools.UPPER]
