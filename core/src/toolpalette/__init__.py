"""toolpalette: tool packs and skill bundles for LLM agents.

Third parties ship tool packs and skilljars as ordinary distributions; a host composes a
palette per kind of agent from whatever is installed, offers it to a model, and runs the
model's tool calls through one hardened pipeline. Importing this package loads no
plugin, and imports neither jsonschema nor mcp.
"""

from __future__ import annotations

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
from toolpalette._skills import (
    Conversation,
    Skill,
    SkillManifest,
    SkillRegistry,
    SkillSelector,
)
from toolpalette._thinker import Approval, Thinker, Turn
from toolpalette._tool import Tool, ToolContext, ToolSpec, tool
from toolpalette.errors import (
    InvalidInputError,
    ToolCollisionError,
    ToolError,
    ToolNotFoundError,
    ToolpaletteError,
)
from toolpalette.hookspecs import hookimpl

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

for _name in __all__:
    _obj = globals().get(_name)
    if isinstance(_obj, type) and _obj.__module__.startswith("toolpalette._"):
        _obj.__module__ = "toolpalette"
del _name, _obj


def __getattr__(name: str) -> str:
    if name == "__version__":
        from importlib.metadata import version

        return version("toolpalette")
    raise AttributeError(f"module 'toolpalette' has no attribute {name!r}")
