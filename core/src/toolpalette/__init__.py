"""toolpalette: tool packs and skill bundles for LLM agents.

Third parties ship tool packs and skilljars as ordinary distributions; a host composes a
palette per kind of agent from whatever is installed, offers it to a model, and runs the
model's tool calls through one hardened pipeline. Importing this package loads no
plugin, and imports neither jsonschema nor mcp: the public names below are imported on
first use, so ``import toolpalette`` in a pack's hooks module costs little.
"""

from __future__ import annotations

import importlib as _importlib
import typing as _typing

from toolpalette.errors import (
    InvalidInputError,
    ToolCollisionError,
    ToolError,
    ToolNotFoundError,
    ToolpaletteError,
)
from toolpalette.hookspecs import hookimpl

if _typing.TYPE_CHECKING:
    from toolpalette._abort import AbortSignal
    from toolpalette._executor import Executor, execute, execute_many
    from toolpalette._grants import GrantRecord
    from toolpalette._hub import PluginInfo, ToolHub
    from toolpalette._meta import RequestSkillProvider, RequestToolsProvider
    from toolpalette._palette import ReadOnlyPalette
    from toolpalette._policy import Decision, ToolPolicy
    from toolpalette._problems import Problem
    from toolpalette._provider import (
        BoundTool,
        ClassToolProvider,
        FunctionToolProvider,
        Origin,
        ToolProvider,
    )
    from toolpalette._registry import Surface, SurfaceDiff, ToolRegistry
    from toolpalette._reports import ToolErrorReport
    from toolpalette._result import ToolResult
    from toolpalette._selector import ResolvedTools, ToolSelector
    from toolpalette._servers import MCPServerSpec
    from toolpalette._skills import Conversation, Skill, SkillManifest, SkillRegistry, SkillSelector
    from toolpalette._thinker import Thinker
    from toolpalette._tool import Tool, ToolContext, ToolSpec, tool
    from toolpalette._turn import Approval, Turn

__all__ = [
    "AbortSignal",
    "Approval",
    "BoundTool",
    "ClassToolProvider",
    "Conversation",
    "Decision",
    "Executor",
    "FunctionToolProvider",
    "GrantRecord",
    "InvalidInputError",
    "MCPServerSpec",
    "Origin",
    "PluginInfo",
    "Problem",
    "ReadOnlyPalette",
    "RequestSkillProvider",
    "RequestToolsProvider",
    "ResolvedTools",
    "Skill",
    "SkillManifest",
    "SkillRegistry",
    "SkillSelector",
    "Surface",
    "SurfaceDiff",
    "Thinker",
    "Tool",
    "ToolCollisionError",
    "ToolContext",
    "ToolError",
    "ToolErrorReport",
    "ToolHub",
    "ToolNotFoundError",
    "ToolPolicy",
    "ToolProvider",
    "ToolRegistry",
    "ToolResult",
    "ToolSelector",
    "ToolSpec",
    "ToolpaletteError",
    "Turn",
    "__version__",
    "execute",
    "execute_many",
    "hookimpl",
    "tool",
]

_LAZY: dict[str, str] = {
    "AbortSignal": "toolpalette._abort",
    "Approval": "toolpalette._turn",
    "BoundTool": "toolpalette._provider",
    "ClassToolProvider": "toolpalette._provider",
    "Conversation": "toolpalette._skills",
    "Decision": "toolpalette._policy",
    "Executor": "toolpalette._executor",
    "FunctionToolProvider": "toolpalette._provider",
    "GrantRecord": "toolpalette._grants",
    "MCPServerSpec": "toolpalette._servers",
    "Origin": "toolpalette._provider",
    "PluginInfo": "toolpalette._hub",
    "Problem": "toolpalette._problems",
    "ReadOnlyPalette": "toolpalette._palette",
    "RequestSkillProvider": "toolpalette._meta",
    "RequestToolsProvider": "toolpalette._meta",
    "ResolvedTools": "toolpalette._selector",
    "Skill": "toolpalette._skills",
    "SkillManifest": "toolpalette._skills",
    "SkillRegistry": "toolpalette._skills",
    "SkillSelector": "toolpalette._skills",
    "Surface": "toolpalette._registry",
    "SurfaceDiff": "toolpalette._registry",
    "Thinker": "toolpalette._thinker",
    "Tool": "toolpalette._tool",
    "ToolContext": "toolpalette._tool",
    "ToolErrorReport": "toolpalette._reports",
    "ToolHub": "toolpalette._hub",
    "ToolPolicy": "toolpalette._policy",
    "ToolProvider": "toolpalette._provider",
    "ToolRegistry": "toolpalette._registry",
    "ToolResult": "toolpalette._result",
    "ToolSelector": "toolpalette._selector",
    "ToolSpec": "toolpalette._tool",
    "Turn": "toolpalette._turn",
    "execute": "toolpalette._executor",
    "execute_many": "toolpalette._executor",
    "tool": "toolpalette._tool",
}
"""Public names imported on first use, and the module that defines each."""


def __getattr__(name: str) -> _typing.Any:
    if name == "__version__":
        from importlib.metadata import version

        return version("toolpalette")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolpalette' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    if isinstance(value, type) and value.__module__.startswith("toolpalette._"):
        value.__module__ = "toolpalette"  # where users find it, and pickle looks it up
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
