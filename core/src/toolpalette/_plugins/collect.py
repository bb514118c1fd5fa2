"""The typed boundary around hook calls: call each implementation on its own, check it."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolpalette import _hookcall
from toolpalette._hookcall import Called
from toolpalette._plugins.manager import ToolpaletteManager
from toolpalette._plugins.problems import (
    Problem,
    describe_exception,
    describe_origin,
    describe_type,
    safe_str,
)
from toolpalette._plugins.servers import MCPServerSpec, parse_server
from toolpalette._tools.info import distribution_label
from toolpalette._tools.provider import (
    ClassToolProvider,
    FunctionToolProvider,
    Origin,
    ToolProvider,
    as_provider,
)
from toolpalette._tools.tool import TOOL_NAME
from toolpalette.errors import ToolpaletteError

if TYPE_CHECKING:
    from pluggy._hooks import HookImpl

__all__ = [
    "Collected",
    "call_each",
    "items_of",
    "servers",
    "tools",
]

logger = logging.getLogger("toolpalette.hub")


@dataclass
class Collected:
    """What one pack's register hook gave: usable items and the problems found."""

    items: list[Any] = field(default_factory=list)
    """The usable results, in the order the implementations returned them."""
    problems: list[Problem] = field(default_factory=list)
    """One per implementation that raised and per item that was refused."""


def call_each(
    pm: ToolpaletteManager, hook_name: str, plugin_name: str, **kwargs: Any
) -> Iterator[Called]:
    """Call each implementation of ``hook_name`` by one plugin, each on its own.

    The containment rules are `toolpalette._hookcall.call_each()`'s: nothing a
    pack raises escapes but ``KeyboardInterrupt``, and a wrapper comes back as a
    ``TypeError`` (a register hook has nothing to wrap).
    """
    return _hookcall.call_each(pm.impls_of(hook_name, plugin_name), hook_name, kwargs)


def items_of(result: Any) -> tuple[list[Any], BaseException | None]:
    """Normalise a register hook's result to a list: one item, an iterable, or None.

    Returns the items and the exception raised while iterating, if any (the items
    produced before it are kept).
    """
    if result is None:
        return [], None
    if isinstance(result, (str, bytes, Mapping)) or not isinstance(result, Iterable):
        return [result], None
    if isinstance(result, type):
        return [result], None
    items: list[Any] = []
    try:
        items.extend(result)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        return items, exc
    return items, None


def registered(
    pm: ToolpaletteManager, hook: str, plugin_name: str, origin: Origin
) -> tuple[list[tuple[HookImpl, int, Any]], list[Problem]]:
    """What one plugin's implementations of a register hook return, and what went wrong.

    The one reader of the three register hooks (tools, skills, MCP servers). Each item
    comes with the implementation that returned it and its position in that result; an
    implementation that raised, and one whose result raised while it was iterated, are
    each a ``hook`` problem (the items produced before are kept).
    """
    items: list[tuple[HookImpl, int, Any]] = []
    problems: list[Problem] = []
    for impl, result, exc in call_each(pm, hook, plugin_name):
        if exc is not None:
            reason = f"{hook} raised {describe_exception(exc)}"
            problems.append(_problem(origin, "hook", reason, detail=describe_origin(exc)))
            continue
        got, exc = items_of(result)
        if exc is not None:
            reason = f"iterating what {hook} returned raised {describe_exception(exc)}"
            problems.append(_problem(origin, "hook", reason, detail=describe_origin(exc)))
        items.extend((impl, position, item) for position, item in enumerate(got))
    return items, problems


def tools(pm: ToolpaletteManager, plugin_name: str, origin: Origin) -> Collected:
    """The providers one plugin registers, checked and stamped with provenance.

    ``origin`` gives the pack, distribution and version; each provider's ``module`` is
    the module that defines its function or class (the hooks module otherwise).
    """
    items, problems = registered(pm, "toolpalette_register_tools", plugin_name, origin)
    out = Collected(problems=problems)
    for impl, position, item in items:
        try:
            provider = _provider(item, origin, impl, out.problems, position)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # the item's own attributes raised
            reason = f"reading a returned tool raised {describe_exception(exc)}"
            detail = describe_origin(exc)
            out.problems.append(_problem(origin, "invalid-tool", reason, detail=detail))
            continue
        if provider is not None:
            out.items.append(provider)
    return out


def servers(pm: ToolpaletteManager, packs: Iterable[tuple[str, Origin]]) -> Collected:
    """The MCP servers ``packs`` (each a name and its origin) describe, sorted by name.

    A description of the wrong shape is ``garbage``, and a name several packs use a
    ``collision``: like tools, neither is used, whatever the order the packs loaded in.
    """
    claims: dict[str, list[MCPServerSpec]] = {}
    problems: list[Problem] = []
    for pack, origin in packs:
        found, hook_problems = registered(pm, "toolpalette_register_mcp_servers", pack, origin)
        problems.extend(hook_problems)
        for _impl, _position, item in found:
            try:
                spec = parse_server(item, pack)
            except ValueError as invalid:
                label = distribution_label(origin.distribution, origin.version)
                problems.append(Problem("garbage", str(invalid), pack, label))
                continue
            claims.setdefault(spec.name, []).append(spec)
    for name, specs in claims.items():
        if len(specs) > 1:
            named = ", ".join(sorted(s.pack for s in specs))
            reason = f"MCP server name {name!r} is described by several packs: {named}"
            problems.append(Problem("collision", reason, specs[0].pack, None, name))
    kept = [specs[0] for _name, specs in sorted(claims.items()) if len(specs) == 1]
    return Collected(kept, problems)


def _provider(
    item: Any, origin: Origin, impl: HookImpl, problems: list[Problem], position: int = 0
) -> ToolProvider | None:
    if item is None:
        # None is fine as the whole return value (no tools), not as an item of a list.
        reason = (
            f"toolpalette_register_tools returned None as item {position} of what it "
            "returned; return None for no tools at all, or leave it out of the list"
        )
        problems.append(_problem(origin, "garbage", reason))
        return None
    if isinstance(item, (bool, int, float, complex, str, bytes)):
        reason = f"toolpalette_register_tools returned {describe_type(item)}, not a tool"
        problems.append(_problem(origin, "garbage", reason))
        return None
    try:
        provider = as_provider(item, build=False)  # schemas: built when the catalog needs them
        if provider is item and not isinstance(item, (FunctionToolProvider, ClassToolProvider)):
            _check_foreign(provider)
    except ToolpaletteError as exc:
        kind = "garbage" if _not_a_tool(item) else "invalid-tool"
        problems.append(_problem(origin, kind, safe_str(exc), item=_label(item)))
        return None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # a foreign provider's property raised
        reason = f"reading the tool raised {describe_exception(exc)}"
        detail = describe_origin(exc)
        problems.append(_problem(origin, "invalid-tool", reason, item=_label(item), detail=detail))
        return None
    stamped = Origin(origin.pack, origin.distribution, origin.version, _module(item, impl))
    if provider is not item:  # built (and shared) by as_provider: stamp a copy
        return provider.with_origin(stamped)
    own: ToolProvider = provider  # the pack's own provider object: stamp it
    own.origin = stamped
    return own


def _check_foreign(provider: ToolProvider) -> None:
    """Check what ``@tool`` already checks, for a ToolProvider a pack built by hand."""
    from toolpalette._schema.checks import check_schema
    from toolpalette.errors import ToolDefinitionError

    name = provider.name
    if not isinstance(name, str) or not TOOL_NAME.match(name):
        raise ToolDefinitionError(
            tool_name=str(name),
            reason="names are 1-64 characters of letters, digits, '_' and '-'",
        )
    if not isinstance(provider.description, str) or not provider.description.strip():
        raise ToolDefinitionError(tool_name=name, reason="it needs a non-empty description")
    check_schema(provider.input_schema, name)
    output = provider.output_schema
    if output is not None:
        check_schema(output, name, what="output")


def _not_a_tool(item: Any) -> bool:
    from toolpalette._tools.tool import Tool, get_spec

    if isinstance(item, ToolProvider):
        return False
    if isinstance(item, type) and issubclass(item, Tool):
        return False
    return get_spec(item) is None


def _label(item: Any) -> str:
    if isinstance(item, ToolProvider):
        try:
            return str(item.name)
        except KeyboardInterrupt:
            raise
        except BaseException:
            return type(item).__name__
    return str(getattr(item, "__qualname__", type(item).__name__))


def _module(item: Any, impl: HookImpl) -> str | None:
    """The module that defines the tool: its function's or class's, else the provider's.

    A provider whose class lives in the core (a generic provider a pack configured)
    gets the pack's hooks module instead.
    """
    target = getattr(item, "function", None) or getattr(item, "tool_class", None)
    if target is None:
        target = type(item) if isinstance(item, ToolProvider) else item
    module = getattr(target, "__module__", None)
    if not isinstance(module, str) or module.split(".")[0] == "toolpalette":
        module = getattr(impl.plugin, "__name__", None) or type(impl.plugin).__module__
    return module if isinstance(module, str) else None


def _problem(
    origin: Origin, kind: Any, reason: str, *, item: str | None = None, detail: str | None = None
) -> Problem:
    label = distribution_label(origin.distribution, origin.version)
    return Problem(kind, reason, origin.pack, label, item, detail)
