"""The hooks of the conformance pack: its tools, prompts and resources."""

from __future__ import annotations

from typing import Any

import toolpalette


@toolpalette.hookimpl
def toolpalette_register_tools() -> list[Any]:
    from tp_testpack_conformance import tools

    return [*tools.TOOLS, *tools.TASK_TOOLS]


@toolpalette.hookimpl
def toolpalette_register_prompts() -> list[Any]:
    from tp_testpack_conformance import content

    return list(content.PROMPTS)


@toolpalette.hookimpl
def toolpalette_register_resources() -> list[Any]:
    from tp_testpack_conformance import content

    return list(content.RESOURCES)
