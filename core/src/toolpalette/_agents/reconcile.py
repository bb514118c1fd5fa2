"""A thinker's palette brought, each turn, to what the turn offers: one reconcile.

What a turn offers, in order: the system-wide tools, the declared tools, the tools
admitted through grants (in the order granted), and the meta-tools (``request_tools``
and ``request_skill`` over what is left to ask for, ``read_skill_file`` over the
attached skills' files), each only if the policy offers it; then whatever the
``toolpalette_reconcile`` hooks add or remove; then, for a read-only thinker, the sweep
of every mutating tool.

:meth:`Reconciler.reconcile` computes that palette (:meth:`Reconciler._desired`) and
brings the registry to it with ``registry.sync``, which keeps the position of what
stays, so an unchanged palette keeps its version and its serialized schemas. The tools
granted since the last turn are an input of the one computation: when they are all
that changed (nothing else moved, and no hook touched the palette since the last whole
reconcile), the palette is computed for what they change alone (the granted tools,
appended, and ``request_tools`` over the smaller catalog) and synced within those
names; the sweep then looks at those names only. So a grant costs what it changes, not
what the palette holds, and the result is the palette the whole computation makes
(tests/core/agents/test_thinker_grant_reconcile.py, ``bench/bench_scale.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, overload

from toolpalette._agents.meta import (
    REQUEST_TOOLS,
    ReadSkillFileProvider,
    RequestSkillProvider,
    RequestToolsProvider,
)
from toolpalette._agents.palette import ReadOnlyPalette
from toolpalette._hookcall import call_each, in_call_order
from toolpalette._tools.registry import lookup, sync
from toolpalette.errors import ToolCollisionError

if TYPE_CHECKING:
    from toolpalette._agents.policy import ToolPolicy
    from toolpalette._agents.resolved import ResolvedPalette, ThinkerHub
    from toolpalette._skills import Conversation, Skill
    from toolpalette._tools.provider import ToolProvider
    from toolpalette._tools.registry import ToolRegistry

__all__ = ["Reconciler"]

logger = logging.getLogger("toolpalette.thinker")


def _same_surface(held: ToolProvider, wanted: ToolProvider) -> bool:
    """Equal and with the same schema (a meta-tool's schema moves with its catalog)."""
    return held == wanted and held.input_schema == wanted.input_schema


def _claim(desired: dict[str, ToolProvider], provider: ToolProvider) -> None:
    """Add ``provider`` unless an equal one is there; a different one is a collision.

    Raises:
        ToolCollisionError: e.g. a system-wide tool and a declared tool share a name.
    """
    existing = desired.setdefault(provider.name, provider)
    if existing is not provider and existing != provider:
        raise ToolCollisionError(
            tool_name=provider.name, first=existing.describe(), second=provider.describe()
        )


def _files_of(skill: Skill) -> list[str]:
    """A skill's files besides SKILL.md; none when they cannot be listed (logged)."""
    try:
        return skill.resources()
    except Exception:
        logger.exception("the files of skill %s could not be listed; none offered", skill.id)
        return []


class Reconciler:
    """One thinker's palette registry and what its last reconcile left.

    Args:
        registry: the palette registry (the one the thinker's executor looks names up
            in).
        hub: where the system-wide tools and the reconcile hooks come from.
        policy: the thinker's policy (``offers`` filters every tool).
        read_only: the thinker's read-only binding (the sweep, ``request_tools``'s
            catalog).
    """

    def __init__(
        self, registry: ToolRegistry, hub: ThinkerHub, policy: ToolPolicy, read_only: bool
    ) -> None:
        self.registry = registry
        self._hub = hub
        self._policy = policy
        self._read_only = read_only
        self._resolved: ResolvedPalette | None = None
        self._key: tuple[Any, ...] | None = None
        self._pristine = False
        """Whether the palette is what the last whole reconcile made (no hook changed it)."""
        self._swept_at = -1
        self._reconciled_at = -1
        self._extra: dict[str, ToolProvider] = {}
        """The per-turn tools the last turn added to the palette, by name."""
        self.tool_catalog: dict[str, ToolProvider] = {}
        """The deferred tools the thinker may still ask for, by name."""
        self.skill_catalog: dict[str, Skill] = {}
        """The skills the thinker may still ask for, by id."""

    def reconcile(
        self,
        thinker: Any,
        resolved: ResolvedPalette,
        key: tuple[Any, ...],
        admitted: Mapping[str, ToolProvider],
        granted: Sequence[str],
        extra: Sequence[ToolProvider] = (),
    ) -> None:
        """Bring the palette to what this turn offers: tools, hooks, then the sweep.

        ``resolved`` and ``key`` (the hub's version, the attached skills) say what the
        palette is made from; ``admitted`` holds every tool granted so far, ``granted``
        the names granted since the last turn; ``extra`` the tools offered for this turn
        only (:meth:`_offer_extra`). An unchanged palette costs a version check.

        Raises:
            ToolCollisionError: two tools the turn would offer share a name.
        """
        registry = self.registry
        # Compare the resolved palette by identity, holding it: a freed palette's id can
        # be reused by the next one (as after register_system_tool clears the hub's
        # cache). A palette changed directly since the last turn is reconciled again.
        current = (
            resolved is self._resolved
            and key == self._key
            and registry.version == self._reconciled_at
        )
        if not current or granted:
            planned = self._desired(thinker, resolved, admitted, granted) if current else None
            desired, scope = planned or self._desired(thinker, resolved, admitted, None)
            swept = registry.version == self._swept_at
            sync(registry, desired, same=_same_surface, within=scope)
            if scope is None:
                self._resolved, self._key, self._pristine = resolved, key, True
            elif swept and self._read_only:
                ReadOnlyPalette.sweep(registry, scope)
                self._swept_at = registry.version
        if extra or self._extra:
            self._offer_extra(extra)
        before_hooks = registry.version
        self._run_hooks(thinker)
        if registry.version != before_hooks:
            self._pristine = False  # the next grant cannot be added to what a hook made
        if self._read_only and registry.version != self._swept_at:
            ReadOnlyPalette.sweep(registry)
            self._swept_at = registry.version
        self._reconciled_at = registry.version

    @overload
    def _desired(
        self,
        thinker: Any,
        resolved: ResolvedPalette,
        admitted: Mapping[str, ToolProvider],
        granted: None,
    ) -> tuple[list[ToolProvider], None]: ...

    @overload
    def _desired(
        self,
        thinker: Any,
        resolved: ResolvedPalette,
        admitted: Mapping[str, ToolProvider],
        granted: Sequence[str],
    ) -> tuple[list[ToolProvider], set[str]] | None: ...

    def _desired(
        self,
        thinker: Any,
        resolved: ResolvedPalette,
        admitted: Mapping[str, ToolProvider],
        granted: Sequence[str] | None,
    ) -> tuple[list[ToolProvider], set[str] | None] | None:
        """The palette the turn offers before the hooks and the sweep, and the names it covers.

        With ``granted`` None: the whole palette, covering every name (None). With the
        names granted since the last turn: only what they change (the granted tools in
        the order granted, ``request_tools`` over the smaller catalog), covering those
        names; or None, changing nothing, when that cannot be promised (a hook changed
        the palette since the last whole reconcile, or a granted name is held by
        another tool), for the whole palette to be computed instead.
        """
        policy = self._policy
        desired: dict[str, ToolProvider] = {}
        meta: list[ToolProvider | None]
        if granted is None:
            for provider in (
                *self._hub.system_tools(),
                *resolved.tools.offered,
                *admitted.values(),
            ):
                if policy.offers(provider):
                    _claim(desired, provider)
            conversation: Conversation = thinker.conversation
            attached = set(conversation.attached)
            self.tool_catalog = {
                p.name: p
                for p in resolved.tools.deferred
                if p.name not in desired and policy.offers(p)
            }
            self.skill_catalog = {s.id: s for s in resolved.skills if s.id not in attached}
            meta = [self._request_tools(), self._request_skill(), _read_skill_file(conversation)]
            scope = None
        else:
            if not self._pristine:
                return None
            for name in dict.fromkeys(granted):
                admitted_tool = admitted.get(name)
                held = lookup(self.registry, name)
                if admitted_tool is None or (held is not None and held is not admitted_tool):
                    return None
                if held is None and policy.offers(admitted_tool):
                    desired[name] = admitted_tool
            held_meta = lookup(self.registry, REQUEST_TOOLS)
            if held_meta is not None and not isinstance(held_meta, RequestToolsProvider):
                return None
            self.tool_catalog = {n: p for n, p in self.tool_catalog.items() if n not in admitted}
            meta = [self._request_tools()]
            scope = {*desired, REQUEST_TOOLS}
        for tool in meta:
            if tool is not None and policy.offers(tool):
                desired[tool.name] = tool
        return list(desired.values()), scope

    def _request_tools(self) -> ToolProvider | None:
        """``request_tools`` over the tool catalog, or None when it lists nothing."""
        # A read-only thinker's request_tools lists only read-only tools, so it is
        # read-only too and survives the sweep (admission refuses the others anyway).
        read_only = self._read_only
        requestable = [
            (p.name, p.description)
            for p in self.tool_catalog.values()
            if p.read_only or not read_only
        ]
        return RequestToolsProvider(requestable, read_only=read_only) if requestable else None

    def _request_skill(self) -> ToolProvider | None:
        """``request_skill`` over the skill catalog, or None when it lists nothing."""
        if not self.skill_catalog:
            return None
        return RequestSkillProvider([(s.id, s.description) for s in self.skill_catalog.values()])

    def _offer_extra(self, extra: Sequence[ToolProvider]) -> None:
        """Offer ``extra`` for this turn only, in place of the last turn's per-turn tools.

        Each passes the policy's ``offers`` and collides as a declared tool does: a name
        held by a tool that is not equal to it raises ``ToolCollisionError`` naming both,
        before anything changes; one equal to a tool the palette holds anyway is that
        tool (not added, and not removed when it is no longer given). A read-only
        thinker is not offered the mutating ones, as the sweep would remove them. A new
        name goes at the end of the palette and keeps its place while it is offered
        again. Only what moved is touched: the same tools again cost a look-up each
        (and none, now and last turn, not even the call).
        """
        held = self._extra
        registry = self.registry
        wanted: dict[str, ToolProvider] = {}
        for provider in extra:
            if self._policy.offers(provider):
                _claim(wanted, provider)
        mine: dict[str, ToolProvider] = {}
        for name, provider in wanted.items():
            present = lookup(registry, name)
            if present is not None and present is not held.get(name):
                if present != provider:
                    raise ToolCollisionError(
                        tool_name=name, first=present.describe(), second=provider.describe()
                    )
            elif provider.read_only or not self._read_only:
                mine[name] = provider
        swept = registry.version == self._swept_at
        for name, provider in held.items():
            if name not in mine and lookup(registry, name) is provider:
                registry.unregister(name)
        sync(registry, mine.values(), same=_same_surface, within=mine.keys())
        kept = ((name, lookup(registry, name)) for name in mine)  # the held one when the same
        self._extra = {name: provider for name, provider in kept if provider is not None}
        if swept:
            self._swept_at = registry.version

    def _run_hooks(self, thinker: Any) -> None:
        impls = in_call_order(self._hub.pm.hook.toolpalette_reconcile)
        kwargs = {"thinker": thinker, "registry": self.registry}
        for called in call_each(impls, "toolpalette_reconcile", kwargs):
            if called.error is not None:
                logger.error(
                    "toolpalette_reconcile in %s raised; skipped",
                    called.impl.plugin_name,
                    exc_info=called.error,
                )


def _read_skill_file(conversation: Conversation) -> ToolProvider | None:
    """``read_skill_file`` over the attached skills' files, or None when they have none."""
    files = [(s, path) for s in conversation.skills for path in _files_of(s)]
    return ReadSkillFileProvider(files) if files else None
