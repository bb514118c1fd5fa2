"""Hooks that fail in every hard way, next to one that works."""

from __future__ import annotations

from typing import Any

import toolpalette

from tp_testpack_hostile import Escape, UnprintableError


@toolpalette.tool(read_only=True)
def survivor() -> str:
    """Still offered although every sibling implementation fails."""
    return "survived"


@toolpalette.hookimpl
def toolpalette_register_tools() -> Any:
    raise UnprintableError


@toolpalette.hookimpl(specname="toolpalette_register_tools")
def toolpalette_register_escape() -> Any:
    raise Escape("escaping from a hook")


@toolpalette.hookimpl(specname="toolpalette_register_tools")
def toolpalette_register_generator_exit() -> Any:
    raise GeneratorExit


@toolpalette.hookimpl(specname="toolpalette_register_tools")
def toolpalette_register_broken_iterable() -> Any:
    def tools() -> Any:
        yield survivor
        raise UnprintableError

    return tools()
