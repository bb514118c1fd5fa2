"""toolpalette: tool packs and skill bundles for LLM agents.

The public names, each imported on first use: ``import toolpalette`` loads no pack and
imports neither jsonschema nor mcp.
"""

from __future__ import annotations

import importlib as _importlib
import typing as _typing

from toolpalette.errors import (
    ClientRequestError,
    ConfigError,
    IncompatiblePluginError,
    InvalidInputError,
    InvalidManifestError,
    InvalidToolSchemaError,
    MCPServerError,
    PluginError,
    PluginLoadError,
    PluginWarning,
    SkillIntegrityError,
    SkillNotFoundError,
    SkillWarning,
    ToolCollisionError,
    ToolDefinitionError,
    ToolError,
    ToolNotFoundError,
    ToolpaletteDeprecationWarning,
    ToolpaletteError,
    ToolpaletteWarning,
    UserError,
)
from toolpalette.hookspecs import hookimpl

if _typing.TYPE_CHECKING:
    from toolpalette._agents.content import ContentSelector, OfferedContent
    from toolpalette._agents.grants import GrantRecord
    from toolpalette._agents.meta import (
        ENUM_LIMIT,
        SKILL_ENUM_LIMIT,
        RequestSkillProvider,
        RequestToolsProvider,
    )
    from toolpalette._agents.meta_search import SearchSkillsProvider, SearchToolsProvider
    from toolpalette._agents.policy import Decision, ToolPolicy
    from toolpalette._agents.reconcile import ReadOnlyPalette
    from toolpalette._agents.sandbox import CodeLimits
    from toolpalette._agents.selector import ResolvedTools, ToolSelector
    from toolpalette._agents.thinker import Thinker
    from toolpalette._agents.turn import Approval, Overhead, Turn
    from toolpalette._formats.calls import ToolCall, calls_from, render_result, replies
    from toolpalette._hub import ToolHub
    from toolpalette._plugins.catalog import PluginInfo
    from toolpalette._plugins.problems import Problem
    from toolpalette._plugins.servers import MCPServerSpec
    from toolpalette._run.abort import AbortSignal
    from toolpalette._run.call import CallScope
    from toolpalette._run.executor import Executor, execute, execute_many
    from toolpalette._run.reports import ToolErrorReport
    from toolpalette._run.rules import Rules
    from toolpalette._run.telemetry import configure_telemetry
    from toolpalette._search.ranking import LexicalRanker, ToolDocument, ToolIndex, ToolRanker
    from toolpalette._skills import Conversation, Skill, SkillRegistry, SkillSelector
    from toolpalette._skills.manifest import SkillManifest
    from toolpalette._tools.changes import resource_updated
    from toolpalette._tools.channel import ClientChannel, Elicited, LoggingChannel, Root, Sampled
    from toolpalette._tools.function_tool import function_tool
    from toolpalette._tools.info import Origin, ToolInfo
    from toolpalette._tools.prompt import PackPrompt, prompt
    from toolpalette._tools.provider import (
        BoundTool,
        ClassToolProvider,
        FunctionToolProvider,
        ToolProvider,
    )
    from toolpalette._tools.registry import Surface, SurfaceDiff, ToolRegistry
    from toolpalette._tools.resource import PackResource, resource
    from toolpalette._tools.result import Audio, File, Image, ResourceLink, ToolResult
    from toolpalette._tools.tool import Tool, ToolContext, ToolSpec, tool

__all__ = [
    "AbortSignal",
    "Approval",
    "Audio",
    "BoundTool",
    "CallScope",
    "ClassToolProvider",
    "ClientChannel",
    "ClientRequestError",
    "CodeLimits",
    "ConfigError",
    "ContentSelector",
    "Conversation",
    "Decision",
    "ENUM_LIMIT",
    "Elicited",
    "Executor",
    "File",
    "FunctionToolProvider",
    "GrantRecord",
    "Image",
    "IncompatiblePluginError",
    "InvalidInputError",
    "InvalidManifestError",
    "InvalidToolSchemaError",
    "LexicalRanker",
    "LoggingChannel",
    "MCPServerError",
    "MCPServerSpec",
    "OfferedContent",
    "Origin",
    "Overhead",
    "PackPrompt",
    "PackResource",
    "PluginError",
    "PluginInfo",
    "PluginLoadError",
    "PluginWarning",
    "Problem",
    "ReadOnlyPalette",
    "RequestSkillProvider",
    "RequestToolsProvider",
    "ResolvedTools",
    "ResourceLink",
    "Root",
    "Rules",
    "SKILL_ENUM_LIMIT",
    "Sampled",
    "SearchSkillsProvider",
    "SearchToolsProvider",
    "Skill",
    "SkillIntegrityError",
    "SkillManifest",
    "SkillNotFoundError",
    "SkillRegistry",
    "SkillSelector",
    "SkillWarning",
    "Surface",
    "SurfaceDiff",
    "Thinker",
    "Tool",
    "ToolCall",
    "ToolCollisionError",
    "ToolContext",
    "ToolDefinitionError",
    "ToolDocument",
    "ToolError",
    "ToolErrorReport",
    "ToolHub",
    "ToolIndex",
    "ToolInfo",
    "ToolNotFoundError",
    "ToolPolicy",
    "ToolProvider",
    "ToolRanker",
    "ToolRegistry",
    "ToolResult",
    "ToolSelector",
    "ToolSpec",
    "ToolpaletteDeprecationWarning",
    "ToolpaletteError",
    "ToolpaletteWarning",
    "Turn",
    "UserError",
    "__version__",
    "calls_from",
    "configure_telemetry",
    "execute",
    "execute_many",
    "function_tool",
    "hookimpl",
    "prompt",
    "render_result",
    "replies",
    "resource",
    "resource_updated",
    "tool",
]

_LAZY: dict[str, str] = {
    "AbortSignal": "toolpalette._run.abort",
    "Approval": "toolpalette._agents.turn",
    "Audio": "toolpalette._tools.result",
    "BoundTool": "toolpalette._tools.provider",
    "ClassToolProvider": "toolpalette._tools.provider",
    "CallScope": "toolpalette._run.call",
    "CodeLimits": "toolpalette._agents.sandbox",
    "ClientChannel": "toolpalette._tools.channel",
    "ContentSelector": "toolpalette._agents.content",
    "Conversation": "toolpalette._skills",
    "Decision": "toolpalette._agents.policy",
    "ENUM_LIMIT": "toolpalette._agents.meta",
    "Elicited": "toolpalette._tools.channel",
    "Executor": "toolpalette._run.executor",
    "File": "toolpalette._tools.result",
    "FunctionToolProvider": "toolpalette._tools.provider",
    "GrantRecord": "toolpalette._agents.grants",
    "Image": "toolpalette._tools.result",
    "LexicalRanker": "toolpalette._search.ranking",
    "LoggingChannel": "toolpalette._tools.channel",
    "MCPServerSpec": "toolpalette._plugins.servers",
    "OfferedContent": "toolpalette._agents.content",
    "Origin": "toolpalette._tools.info",
    "Overhead": "toolpalette._agents.turn",
    "PackPrompt": "toolpalette._tools.prompt",
    "PackResource": "toolpalette._tools.resource",
    "PluginInfo": "toolpalette._plugins.catalog",
    "Problem": "toolpalette._plugins.problems",
    "ReadOnlyPalette": "toolpalette._agents.reconcile",
    "RequestSkillProvider": "toolpalette._agents.meta",
    "RequestToolsProvider": "toolpalette._agents.meta",
    "ResolvedTools": "toolpalette._agents.selector",
    "ResourceLink": "toolpalette._tools.result",
    "Root": "toolpalette._tools.channel",
    "Rules": "toolpalette._run.rules",
    "SKILL_ENUM_LIMIT": "toolpalette._agents.meta",
    "Sampled": "toolpalette._tools.channel",
    "SearchSkillsProvider": "toolpalette._agents.meta_search",
    "SearchToolsProvider": "toolpalette._agents.meta_search",
    "Skill": "toolpalette._skills",
    "SkillManifest": "toolpalette._skills.manifest",
    "SkillRegistry": "toolpalette._skills",
    "SkillSelector": "toolpalette._skills",
    "Surface": "toolpalette._tools.registry",
    "SurfaceDiff": "toolpalette._tools.registry",
    "Thinker": "toolpalette._agents.thinker",
    "Tool": "toolpalette._tools.tool",
    "ToolCall": "toolpalette._formats.calls",
    "ToolContext": "toolpalette._tools.tool",
    "ToolDocument": "toolpalette._search.ranking",
    "ToolErrorReport": "toolpalette._run.reports",
    "ToolHub": "toolpalette._hub",
    "ToolIndex": "toolpalette._search.ranking",
    "ToolInfo": "toolpalette._tools.info",
    "ToolPolicy": "toolpalette._agents.policy",
    "ToolProvider": "toolpalette._tools.provider",
    "ToolRanker": "toolpalette._search.ranking",
    "ToolRegistry": "toolpalette._tools.registry",
    "ToolResult": "toolpalette._tools.result",
    "ToolSelector": "toolpalette._agents.selector",
    "ToolSpec": "toolpalette._tools.tool",
    "Turn": "toolpalette._agents.turn",
    "calls_from": "toolpalette._formats.calls",
    "configure_telemetry": "toolpalette._run.telemetry",
    "execute": "toolpalette._run.executor",
    "execute_many": "toolpalette._run.executor",
    "function_tool": "toolpalette._tools.function_tool",
    "prompt": "toolpalette._tools.prompt",
    "render_result": "toolpalette._formats.calls",
    "replies": "toolpalette._formats.calls",
    "resource": "toolpalette._tools.resource",
    "resource_updated": "toolpalette._tools.changes",
    "tool": "toolpalette._tools.tool",
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
