"""Every hook toolpalette calls, and the ``hookimpl`` marker packs use.

Signatures only grow, so an implementation may take any subset of the arguments.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["PROJECT", "hookimpl", "hookspec"]

PROJECT = "toolpalette"
hookspec = pluggy.HookspecMarker(PROJECT)
"""Marks the specifications below."""
hookimpl = pluggy.HookimplMarker(PROJECT)
"""Marks a plugin's implementation of a hook; exported as ``toolpalette.hookimpl``."""


# -- registration: what a pack offers ------------------------------------------------


@hookspec
def toolpalette_register_tools() -> Iterable[Any] | Any:
    """Called once per pack, when the hub first needs the pack's tools.

    Returns one tool or an iterable of tools: ``@tool`` functions, ``@tool``
    ``Tool`` subclasses, or ``ToolProvider`` instances. ``None`` means no tools.

    Every implementation is called on its own: one that raises or returns something
    that is not a tool is recorded in ``hub.problems()`` and the rest still load. The
    core attaches provenance (pack, distribution, version, module) to each tool.

    .. versionadded:: 0.1
    """


@hookspec
def toolpalette_register_skills() -> Iterable[Any] | Any:
    """Called once per pack, when the hub first needs the skills built in code.

    Returns one ``Skill`` or an iterable of them (see ``toolpalette.Skill``); ``None``
    means no skills. Skills from skilljars need no hook: they are data.

    Each implementation is called on its own; failures are recorded in
    ``hub.problems()``.

    .. versionadded:: 0.1
    """


@hookspec
def toolpalette_register_prompts() -> Iterable[Any] | Any:
    """Called once per pack, when the hub first needs the packs' prompts.

    Returns one ``@toolpalette.prompt`` function or an iterable of them; ``None``
    means none. Each implementation is called on its own; failures are recorded in
    ``hub.problems()``.

    .. versionadded:: 0.2
    """


@hookspec
def toolpalette_register_resources() -> Iterable[Any] | Any:
    """Called once per pack, when the hub first needs the packs' resources.

    Returns one ``@toolpalette.resource(...)`` function or an iterable of them;
    ``None`` means none. Each implementation is called on its own; failures are
    recorded in ``hub.problems()``.

    .. versionadded:: 0.2
    """


@hookspec
def toolpalette_register_mcp_servers() -> Iterable[Any] | Any:
    """Called once per pack, when the hub first needs the MCP servers a pack bridges.

    Returns one server description or an iterable of them: a mapping with ``name``
    and either ``command`` (a list, for stdio) or ``url`` (streamable HTTP), and an
    optional ``trusted`` flag. ``None`` means none.

    Each implementation is called on its own; failures are recorded in
    ``hub.problems()``.

    .. versionadded:: 0.1
    """


# -- palettes: what a thinker is offered ---------------------------------------------


@hookspec
def toolpalette_reconcile(thinker: Any, registry: Any) -> None:
    """Called each turn, after a thinker's palette is assembled and before the read-only sweep.

    thinker: the bound thinker whose palette is being reconciled.
    registry: a ``ToolRegistry`` staged with this turn's palette; the hook may register
        or unregister tools, and what it leaves is what the turn offers.

    Returns nothing; the return value is ignored.

    Each turn stages the palette afresh, so what a hook changes lasts one turn: a tool
    it stops adding is gone next turn, one it removed once comes back. A hook that
    makes the same change every turn leaves the palette's version unchanged.

    Every implementation runs, in pluggy's order; one that raises is logged and
    skipped. A read-only thinker's sweep and per-call check run after (and regardless
    of) this hook, so it cannot widen a read-only binding.

    .. versionadded:: 0.1
    """


@hookspec(firstresult=True)
def toolpalette_admit(thinker: Any, kind: str, name: str) -> bool | str | None:
    """Called when a model asks to admit a deferred tool or a skill, before the policy.

    thinker: the bound thinker that asked.
    kind: ``"tool"`` or ``"skill"``.
    name: the tool name or full skill id asked for.

    Returns True to allow, False or a reason (a string) to refuse, or None for no
    opinion. Stops at the first non-None result.

    A refusal is final; an allow still passes the read-only binding and the policy.

    .. versionadded:: 0.1
    """


@hookspec
def toolpalette_grant(record: Any) -> None:
    """Called after every admission request is decided (granted or refused).

    record: the ``GrantRecord`` (thinker, conversation, turn, kind, name, decision,
        reason, time).

    Returns nothing. Every implementation runs; one that raises is logged and ignored.

    .. versionadded:: 0.1
    """


# -- execution: what happened to a call ----------------------------------------------


@hookspec
def toolpalette_tool_error(report: Any) -> None:
    """Called after a tool call failed, without the call waiting for it.

    report: the ``ToolErrorReport`` (tool, input, error, status, code, duration,
        context); it holds the full error, which the model never sees.

    Returns nothing. Every implementation runs in the background; one that raises or
    blocks is logged and ignored, and a report that cannot be delivered is counted.
    The caller's own abort is never reported, nor is a direct call outside a run.

    .. versionadded:: 0.1
    """
