"""A thinker's palette brought to what each turn offers (one reconcile); `ReadOnlyPalette`."""

from __future__ import annotations

import logging
import threading
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, final, overload

from toolpalette._agents.meta import (
    ENUM_LIMIT,
    REQUEST_TOOLS,
    SKILL_ENUM_LIMIT,
    ReadSkillFileProvider,
    RequestSkillProvider,
    RequestToolsProvider,
)
from toolpalette._agents.meta_search import (
    SEARCH_SKILLS,
    SEARCH_TOOLS,
    SearchSkillsProvider,
    SearchToolsProvider,
)
from toolpalette._hookcall import call_each, in_call_order
from toolpalette._search.bundles import Bundle, entries
from toolpalette._tools.registry import ToolRegistry, lookup, sync
from toolpalette.errors import ToolCollisionError, ToolError

if TYPE_CHECKING:
    from toolpalette._agents.policy import ToolPolicy
    from toolpalette._agents.resolved import ResolvedPalette, ThinkerHub
    from toolpalette._agents.sandbox import CodeLimits
    from toolpalette._skills import Conversation, Skill
    from toolpalette._tools.provider import ToolProvider

__all__ = ["ReadOnlyPalette", "Reconciler", "SearchMode"]

logger = logging.getLogger("toolpalette.thinker")

SearchMode = Literal["auto", "enum", "search", "native"]
"""How a thinker reaches its deferred tools and skills (``Thinker.tool_search``)."""

_HINT_NAMES: Final = 20
"""The most names a refusal lists of what may be requested."""
_HINT_CHARS: Final = 400
"""The most characters of names it lists."""


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
        read_only: the thinker's read-only binding (the sweep, the catalog the meta-tools
            reach).
        mode: the thinker's ``tool_search`` mode.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        hub: ThinkerHub,
        policy: ToolPolicy,
        read_only: bool,
        mode: SearchMode = "auto",
    ) -> None:
        self.registry = registry
        """The palette the thinker's executor looks names up in: published, not worked on."""
        self._work = registry
        """The palette before the reconcile hooks: the live one while no hook is
        implemented, a private registry while hooks are, so that what they change is
        staged each turn on a copy of it and never builds up (`_publish()`)."""
        self._published_at = -1
        self._hub = hub
        self._policy = policy
        self._read_only = read_only
        self.mode: SearchMode = mode
        """The thinker's ``tool_search`` mode."""
        self.code_limits: CodeLimits | None = None
        """The bounds of ``run_code``'s scripts when the thinker is in code mode, else None."""
        self._lock = threading.RLock()
        """Held by a reconcile and by a grant added during a turn (from a worker thread)."""
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
        self.requestable: dict[str, ToolProvider] = {}
        """The part of `tool_catalog` the model may reach: its read-only tools for
        a read-only thinker, all of it otherwise (the thinker's deferred catalog)."""
        self.skill_catalog: dict[str, Skill] = {}
        """The skills the thinker may still ask for, by id."""
        self.bundles: dict[str, Bundle] = {}
        """The bundles of the declared tools, by name (``bundles.py``)."""
        self.skill_bundles: dict[str, Bundle] = {}
        """The skilljars declared whole, by bundle id."""
        self.catalog_version = 0
        """Grows whenever the catalogs change."""

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
        only (`_offer_extra()`). An unchanged palette costs a version check.

        Raises:
            ToolCollisionError: two tools the turn would offer share a name.
        """
        with self._lock:
            self._reconcile(thinker, resolved, key, admitted, granted, extra)

    def _reconcile(
        self,
        thinker: Any,
        resolved: ResolvedPalette,
        key: tuple[Any, ...],
        admitted: Mapping[str, ToolProvider],
        granted: Sequence[str],
        extra: Sequence[ToolProvider],
    ) -> None:
        hooks = in_call_order(self._hub.pm.hook.toolpalette_reconcile)
        staged = bool(hooks)
        if staged != (self._work is not self.registry):  # hooks came or went: start over
            self._work = ToolRegistry() if staged else self.registry
            self._resolved, self._extra, self._swept_at = None, {}, -1
        registry = self._work
        # Compare the resolved palette by identity, holding it: a freed palette's id can
        # be reused by the next one (as after register_system_tool clears the hub's
        # cache). A palette changed directly since the last turn is reconciled again.
        current = (
            resolved is self._resolved
            and key == self._key
            and registry.version == self._reconciled_at
            and self.registry.version == self._published_at
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
        if self._read_only and registry.version != self._swept_at:
            ReadOnlyPalette.sweep(registry)
            self._swept_at = registry.version
        self._reconciled_at = registry.version
        if staged:
            self._publish(thinker, hooks)
        self._published_at = self.registry.version

    def _publish(self, thinker: Any, hooks: Sequence[Any]) -> None:
        """Run the hooks on a copy of this turn's palette, then bring the live one to it.

        Each turn starts from the palette the turn computes, so a tool a hook stopped
        adding is gone and one it removed once is back; a hook that makes the same
        change every turn leaves the live palette, and its version, as they were.
        """
        stage = ToolRegistry()
        for provider in self._work.providers():
            stage.replace(provider)  # a copy: held as they are, nothing re-checked
        kwargs = {"thinker": thinker, "registry": stage}
        for called in call_each(hooks, "toolpalette_reconcile", kwargs):
            if called.error is not None:
                logger.error(
                    "toolpalette_reconcile in %s raised; skipped",
                    called.impl.plugin_name,
                    exc_info=called.error,
                )
        if self._read_only:
            ReadOnlyPalette.sweep(stage)
        sync(self.registry, stage.providers(), same=_same_surface)

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
            self.requestable = (
                {n: p for n, p in self.tool_catalog.items() if p.read_only}
                if self._read_only
                else self.tool_catalog
            )
            self.skill_catalog = {s.id: s for s in resolved.skills if s.id not in attached}
            self.bundles = {b.name: b for b in resolved.tools.bundles}
            self.skill_bundles = {b.name: b for b in resolved.skill_bundles}
            self.catalog_version += 1
            meta = [self._tools_meta(), self._skills_meta(), _read_skill_file(conversation)]
            meta.append(self._code_meta(desired.values()))
            scope = None
        else:
            if not self._pristine:
                return None
            for name in dict.fromkeys(granted):
                admitted_tool = admitted.get(name)
                held = lookup(self._work, name)
                if admitted_tool is None or (held is not None and held is not admitted_tool):
                    return None
                if held is None and policy.offers(admitted_tool):
                    desired[name] = admitted_tool
            for name, kind in (
                (REQUEST_TOOLS, RequestToolsProvider),
                (SEARCH_TOOLS, SearchToolsProvider),
            ):
                held_meta = lookup(self._work, name)
                if held_meta is not None and not isinstance(held_meta, kind):
                    return None
            # In place: a catalog of ten thousand tools is not copied for each grant.
            for name in granted:
                self.tool_catalog.pop(name, None)
                self.requestable.pop(name, None)
            self.catalog_version += 1
            meta = [self._tools_meta()]
            scope = {*desired, REQUEST_TOOLS, SEARCH_TOOLS}
        for tool in meta:
            if tool is not None and policy.offers(tool):
                desired[tool.name] = tool
        return list(desired.values()), scope

    def searches(self, kind: str) -> bool:
        """Whether the model reaches this catalog through a search (else an enum)."""
        mode = self.mode
        if mode == "enum":
            return False
        if kind == "tool":
            listed = entries(self.requestable, self.bundles.values())
            return mode != "auto" or len(listed) > ENUM_LIMIT
        listed_skills = entries(self.skill_catalog, self.skill_bundles.values())
        return mode == "search" or len(listed_skills) > SKILL_ENUM_LIMIT

    def _tools_meta(self) -> ToolProvider | None:
        """``request_tools`` or ``search_tools`` over the catalog; None when it is empty."""
        # A read-only thinker's meta-tool reaches only read-only tools, so it is
        # read-only too and survives the sweep (admission refuses the others anyway).
        read_only = self._read_only
        if not self.requestable:
            return None
        if self.searches("tool"):
            return SearchToolsProvider(read_only=read_only)
        requestable = entries(self.requestable, self.bundles.values())
        return RequestToolsProvider(requestable, read_only=read_only)

    def _code_meta(self, offered: Collection[ToolProvider]) -> ToolProvider | None:
        """``run_code`` over the offered tools (and a listed catalog); None unless code mode."""
        limits = self.code_limits
        if limits is None:
            return None
        from toolpalette._agents.code_mode import RunCodeProvider

        searched = self.searches("tool")
        tools = [*offered, *([] if searched else self.requestable.values())]
        if self._read_only:
            tools = [t for t in tools if t.read_only]
        return RunCodeProvider(tools, limits, read_only=self._read_only, searched=searched)

    def _skills_meta(self) -> ToolProvider | None:
        """``request_skill`` or ``search_skills`` over the skills; None when there are none."""
        if not self.skill_catalog:
            return None
        if self.searches("skill"):
            return SearchSkillsProvider()
        return RequestSkillProvider(entries(self.skill_catalog, self.skill_bundles.values()))

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
        registry = self._work
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

    def not_requestable(self, kind: str, granted: Collection[str] = ()) -> str:
        """Why a name off the catalog is refused, with what may be asked for instead.

        ``granted`` is left out of the names listed (granted while a request is
        decided, before the catalog knows it).
        """
        if self.searches(kind):
            tool = SEARCH_TOOLS if kind == "tool" else SEARCH_SKILLS
            return f"not requestable here; find what you may request with {tool}"
        catalog = self.requestable if kind == "tool" else self.skill_catalog
        names = [name for name in catalog if name not in granted]
        listed: list[str] = []
        size = 0
        for name in names[:_HINT_NAMES]:
            size += len(name) + 2
            if size > _HINT_CHARS:
                break
            listed.append(name)
        listing = ", ".join(listed) or "nothing"
        if len(listed) < len(names):
            listing += f" and {len(names) - len(listed)} more"
        return f"not requestable here; you may request: {listing}"

    def forget(self) -> None:
        """Reconcile the whole palette at the next turn (a kept grant was evicted)."""
        with self._lock:
            self._resolved = None

    def add_granted(
        self, thinker: Any, admitted: Mapping[str, ToolProvider], granted: Sequence[str]
    ) -> None:
        """Add tools granted during a turn to the palette now, as the next turn would.

        When the palette is what the last reconcile left, the granted tools are added as
        that reconcile's step for grants adds them (the same places, the same sweep), and
        the catalogs shrink; the meta-tools stay as the turn offered them until the
        next turn rebuilds them (which ``granted`` is given again). Otherwise (a hook or
        a direct registration changed the palette, or no turn began yet) each granted
        tool is registered where its name is free, and the next turn reconciles the
        whole palette.
        """
        with self._lock:
            live = self.registry
            untouched = live.version == self._published_at
            self._add_granted(thinker, admitted, granted)
            if self._work is not live:  # the hooks ran this turn: add to what they left
                for name in dict.fromkeys(granted):
                    provider = lookup(self._work, name)
                    if provider is not None and lookup(live, name) is None:
                        live.replace(provider)
            if untouched:  # else changed directly since the turn: reconciled whole next turn
                self._published_at = live.version

    def _add_granted(
        self, thinker: Any, admitted: Mapping[str, ToolProvider], granted: Sequence[str]
    ) -> None:
        registry = self._work
        resolved = self._resolved
        names = set(granted)
        if resolved is not None and registry.version == self._reconciled_at:
            planned = self._desired(thinker, resolved, admitted, granted)
            if planned is not None:
                tools = [p for p in planned[0] if p.name in names]
                added = {p.name for p in tools}  # those held already stay as they are
                swept = registry.version == self._swept_at
                sync(registry, tools, same=_same_surface, within=added)
                if swept and self._read_only:
                    ReadOnlyPalette.sweep(registry, added)
                    self._swept_at = registry.version
                self._reconciled_at = registry.version
                return
        for name in dict.fromkeys(granted):
            self.tool_catalog.pop(name, None)
            self.requestable.pop(name, None)
            provider = admitted.get(name)
            if provider is None or lookup(registry, name) is not None:
                continue
            if self._policy.offers(provider) and (provider.read_only or not self._read_only):
                registry.register(provider)
        self.catalog_version += 1


def _read_skill_file(conversation: Conversation) -> ToolProvider | None:
    """``read_skill_file`` over the attached skills' files, or None when they have none."""
    files = [(s, path) for s in conversation.skills for path in _files_of(s)]
    return ReadSkillFileProvider(files) if files else None


# -- the read-only palette ---------------------------------------------------------------


@final
class ReadOnlyPalette:
    """The two halves of the read-only guarantee.

    [`sweep()`][toolpalette.ReadOnlyPalette.sweep] keeps mutating tools out of what the
    model is offered; at call time they are refused, because a registry can be widened
    after the sweep (by a reconcile hook, a system-wide tool, a grant, a direct
    registration). A thinker's executor refuses them itself, from its binding's
    read-only flag (``_run/rules.py``);
    [`require_read_only()`][toolpalette.ReadOnlyPalette.require_read_only] is the same
    check for an executor built by hand
    (``Executor(require_read_only=ReadOnlyPalette.require_read_only)``). Both run
    outside every hook.
    """

    @staticmethod
    def sweep(registry: ToolRegistry, names: Iterable[str] | None = None) -> list[str]:
        """Remove every mutating provider from ``registry``; returns the removed names, sorted.

        ``names`` limits the sweep to those tools, for a caller that knows only they
        changed since the last whole sweep (a thinker adding the tools granted since).
        """
        if names is None:
            keep = [p.name for p in registry.providers() if p.read_only]
            return registry.retain(keep)
        removed = []
        for name in sorted(set(names)):
            provider = lookup(registry, name)
            if provider is not None and not provider.read_only and registry.unregister(name):
                removed.append(name)
        return removed

    @staticmethod
    def require_read_only(provider: ToolProvider) -> None:
        """Refuse a mutating provider.

        Raises:
            ToolError: status 403, code ``read_only``, when ``provider`` is mutating.
        """
        if not provider.read_only:
            raise ToolError(
                f"Tool {provider.name!r} changes things, and this agent is read-only.",
                code="read_only",
                status=403,
            )
