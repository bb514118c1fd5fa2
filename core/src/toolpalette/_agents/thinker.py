"""Thinkers: a host's kinds of agent, each bound to a hub and a conversation.

A ``Thinker`` subclass declares what it may use (``declare_compatible_tools``,
``declare_skills``), whether it is read-only, and its grade. ``hub.bind(Cls)`` gives a
bound thinker; each turn, :meth:`Thinker.begin_turn` reconciles its palette and says
what the model is offered, and :meth:`Thinker.call` runs the model's calls through the
pipeline with that turn's offer and the read-only binding latched at bind time.

What bind time fixes (read-only, the policy, the pipeline that runs the calls and the
pending approvals) is held outside the thinker, in a frozen :class:`_Binding` this module
keys by the thinker's identity: no attribute write on the thinker (``setattr``,
``__dict__``, ``object.__setattr__``) by a tool or a hook can reach it. What this does
and does not guarantee is stated in docs/host-guide.md ("The read-only binding").
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
import uuid
import weakref
from collections.abc import Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NamedTuple, Protocol

from toolpalette._agents.approvals import Approvals, Notify
from toolpalette._agents.grants import GrantDecision, GrantRecord
from toolpalette._agents.meta import (
    REQUEST_TOOLS,
    ReadSkillFileProvider,
    RequestSkillProvider,
    RequestToolsProvider,
)
from toolpalette._agents.palette import ReadOnlyPalette
from toolpalette._agents.policy import ToolPolicy
from toolpalette._agents.selector import ResolvedTools, ToolSelector, ToolSource
from toolpalette._agents.turn import Approval, Turn
from toolpalette._formats.strict import restore_input
from toolpalette._hookcall import call_each, first_result, in_call_order
from toolpalette._run.consent import Decision, read_decision
from toolpalette._run.executor import Executor
from toolpalette._skills import Conversation, Skill, SkillSelector
from toolpalette._tools.provider import ToolProvider
from toolpalette._tools.registry import ToolRegistry, lookup, sync
from toolpalette._tools.strict_json import InputPolicyError, load_input
from toolpalette._tools.tool import ProgressSink, ToolContext
from toolpalette.errors import ToolCollisionError

if TYPE_CHECKING:
    from toolpalette._plugins.config import HubConfig
    from toolpalette._plugins.manager import ToolpaletteManager
    from toolpalette._run.abort import AbortSignal
    from toolpalette._run.reports import Reporter
    from toolpalette._skills import SkillRegistry
    from toolpalette._tools.result import ToolResult

__all__ = [
    "Approval",
    "PaletteSource",
    "ResolvedPalette",
    "Thinker",
    "ThinkerHub",
    "Turn",
    "resolve_palette",
]

logger = logging.getLogger("toolpalette.thinker")


@dataclass
class ResolvedPalette:
    """What a thinker class resolves to, cached on the hub per class and hub version."""

    tools: ResolvedTools
    skills: tuple[Skill, ...]


class PaletteSource(ToolSource, Protocol):
    """What a thinker class's declarations are resolved against: tools and skills."""

    def skills(self) -> SkillRegistry:
        """The registry skill selectors choose from."""
        ...


class ThinkerHub(Protocol):
    """The hub as a bound thinker uses it (``toolpalette.ToolHub`` is one).

    Typed here, below the hub, so the agents layer never imports the hub's module.
    """

    @property
    def version(self) -> int:
        """Grows whenever a pack's tools join (the thinker's reconcile keys on it)."""
        ...

    @property
    def pm(self) -> ToolpaletteManager:
        """The plugin manager whose ``hook`` calls the host hooks."""
        ...

    @property
    def config(self) -> HubConfig:
        """The host's configuration (the worker pool's size, each pack's settings)."""
        ...

    def resolve_thinker(self, cls: type[Thinker]) -> ResolvedPalette:
        """``cls``'s resolved tools and skills (cached by the hub)."""
        ...

    def system_tools(self) -> list[ToolProvider]:
        """The tools offered to every thinker of the hub."""
        ...

    def record_grant(self, record: GrantRecord) -> None:
        """Keep an admission decision on the hub's record."""
        ...

    def pack_config(self, pack: str) -> Mapping[str, Any]:
        """The host's settings for one pack."""
        ...

    def tool_error_reporters(self) -> Iterable[Reporter]:
        """The host's failure-report callbacks."""
        ...


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


_APPROVED: ContextVar[bool] = ContextVar("toolpalette_approved", default=False)
"""Set while a call runs that a person approved before it was made (``approved=True``)."""


def _bind(thinker: Thinker, read_only: bool, policy: ToolPolicy, approver: Notify | None) -> None:
    """Fix ``thinker``'s binding; its calls' policy and approvals close over it, not ``self``."""
    hub = thinker.hub
    approvals = Approvals(approver, withdrawn=thinker._withdrawn)
    ref = weakref.ref(thinker)

    def decide_call(provider: ToolProvider, value: Any) -> Decision:
        return policy.decide_call(ref(), provider, value)

    async def ask(provider: ToolProvider, value: Any, _ctx: ToolContext | None) -> bool:
        data = value.model_dump(mode="json") if hasattr(value, "model_dump") else value
        owner = ref()
        if owner is not None and _APPROVED.get():
            owner._record("call", provider.name, "granted", "approved before the call")
            return True
        turn = owner.turn_number if owner is not None else 0
        return await approvals.ask_call(
            Approval(uuid.uuid4().hex, "call", provider.name, data, turn)
        )

    executor = Executor(
        thinker.palette,
        offered=(),
        read_only=read_only,
        require_read_only=ReadOnlyPalette.require_read_only if read_only else None,
        policy=decide_call,
        approve=ask,
        config_for=lambda p: hub.pack_config(p.origin.pack or "") if p.origin else {},
        hook=hub.pm.hook.toolpalette_tool_error,
        worker_threads=hub.config.worker_threads,
    )
    _BINDINGS[id(thinker)] = _Binding(read_only, policy, executor, approvals)
    weakref.finalize(thinker, _BINDINGS.pop, id(thinker), None)


def resolve_palette(source: PaletteSource, cls: type[Thinker]) -> ResolvedPalette:
    """Resolve ``cls``'s selectors against ``source`` (uncached; the hub caches per class)."""
    tools = cls.declare_compatible_tools().resolve(source)
    skills = tuple(cls.declare_skills().get_skills(source.skills()))
    return ResolvedPalette(tools, skills)


_LATCHED = frozenset({"read_only", "is_read_only", "policy"})
"""Names fixed at bind time: assigning one on a thinker raises ``AttributeError`` (the
values live in its :class:`_Binding`, so writing them into ``__dict__`` changes nothing)."""


class _Binding(NamedTuple):
    """What bind time fixed for one thinker; immutable, and held outside the thinker."""

    read_only: bool
    """The read-only binding: mutating tools are neither offered, granted nor run."""
    policy: ToolPolicy
    """Decides calls and grants."""
    executor: Executor
    """The pipeline of every call, for the thinker's life (class tools keep their state)."""
    approvals: Approvals
    """The thinker's pending approvals."""


_BINDINGS: dict[int, _Binding] = {}
"""Each live thinker's binding, by ``id``; an entry goes when its thinker is collected."""


def _binding(thinker: Thinker) -> _Binding:
    try:
        return _BINDINGS[id(thinker)]
    except KeyError:
        raise RuntimeError(
            f"{type(thinker).__name__} is not bound: create thinkers with hub.bind(Cls)"
        ) from None


class Thinker:
    """Base class of a host's agent kinds.

    Subclasses set the class attributes :attr:`read_only` and :attr:`grade` and override
    the classmethods :meth:`declare_compatible_tools` and :meth:`declare_skills`. Bind
    with ``hub.bind(Cls, conversation=None)``; the read-only binding is latched then and
    nothing (a tool, a hook, an attribute assignment) can widen it afterwards.
    """

    read_only: ClassVar[bool] = False
    """Whether agents of this kind may only use read-only tools."""
    grade: ClassVar[str | None] = None
    """The model grade this kind runs on; model-dependent tools without a grade take it."""
    strict: ClassVar[bool] = False
    """Whether the turn's schemas are normalized into each provider's strict subset
    (optional fields sent as required and nullable); a null the model gives for such a
    field then means "not given", and the tool's default applies."""

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        """The tools this kind may use (offered up front or deferred); none by default."""
        return ToolSelector()

    @classmethod
    def declare_skills(cls) -> SkillSelector:
        """The skills this kind may request; none by default."""
        return SkillSelector()

    def __init__(
        self,
        hub: ThinkerHub,
        conversation: Conversation | None = None,
        *,
        policy: ToolPolicy | None = None,
        run_id: str | None = None,
        user: Mapping[str, Any] | None = None,
        approver: Notify | None = None,
    ) -> None:
        self.hub = hub
        """The hub the thinker was bound to."""
        self.conversation = conversation if conversation is not None else Conversation()
        """The conversation whose preamble carries admitted skills."""
        self.run_id = run_id or uuid.uuid4().hex
        """Identifies this run in reports."""
        self.user: Mapping[str, Any] = dict(user or {})
        """Whatever the host passes about its user (reaches tools through ToolContext)."""
        self.palette = ToolRegistry()
        """This thinker's palette registry, reconciled each turn."""
        self.turn_number = 0
        """The current turn's number (0 before the first)."""
        self._turn: Turn | None = None
        self._admitted: dict[str, ToolProvider] = {}
        self._admit_lock = threading.RLock()
        self._granted: list[str] = []
        self._key: tuple[Any, ...] | None = None
        self._resolved: ResolvedPalette | None = None
        self._pristine = False
        self._swept_at = -1
        self._reconciled_at = -1
        self._tool_catalog: dict[str, ToolProvider] = {}
        self._skill_catalog: dict[str, Skill] = {}
        self._fragments: dict[tuple[str, bool], dict[int, tuple[ToolProvider, bytes]]] = {}
        _bind(self, bool(type(self).read_only), policy or ToolPolicy(), approver)

    # -- the latch ----------------------------------------------------------------

    @property
    def is_read_only(self) -> bool:
        """The read-only binding latched at bind time."""
        return _binding(self).read_only

    @property
    def policy(self) -> ToolPolicy:
        """Decides calls and grants (allow, deny, ask); fixed at bind time, like read-only."""
        return _binding(self).policy

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _LATCHED:
            raise AttributeError(f"{name} is fixed when the thinker is bound")
        super().__setattr__(name, value)

    # -- turns ----------------------------------------------------------------------

    def begin_turn(self) -> Turn:
        """Reconcile the palette and return what the model is offered this turn.

        Order: system-wide tools, the declared palette, admitted tools, the meta-tools,
        then the ``toolpalette_reconcile`` hooks, then (for a read-only thinker) the
        sweep. An unchanged palette costs a version check and leaves ``version`` and the
        serialized schemas as they were; tools granted since the last turn are added on
        their own (see :meth:`_add_granted`), so a grant costs what it changes, not what
        the palette holds.
        """
        self.turn_number += 1
        palette = self.hub.resolve_thinker(type(self))
        key = (self.hub.version, tuple(self.conversation.attached))
        with self._admit_lock:
            granted, self._granted = self._granted, []
        # Compare the resolved palette by identity, holding it: a freed palette's id can be
        # reused by the next one (as after register_system_tool clears the hub's cache).
        # A palette changed directly since the last turn is reconciled again.
        stale = (
            palette is not self._resolved
            or key != self._key
            or self.palette.version != self._reconciled_at
        )
        if stale or (granted and not self._add_granted(granted)):
            self._sync(self._desired(palette))
            self._resolved = palette
            self._key = key
            self._pristine = True
        before_hooks = self.palette.version
        self._run_reconcile_hooks()
        if self.palette.version != before_hooks:
            self._pristine = False  # the next grant cannot be added to what a hook made
        binding = _binding(self)
        if binding.read_only and self.palette.version != self._swept_at:
            ReadOnlyPalette.sweep(self.palette)
            self._swept_at = self.palette.version
        self._reconciled_at = self.palette.version
        turn = Turn(
            self.turn_number,
            self.palette.versioned_surface(),
            self._preamble(),
            strict=bool(type(self).strict),
            _fragments=self._fragments,
        )
        executor = binding.executor
        executor.offered = turn.surface.name_set
        executor.context = ToolContext(
            parent=self, run_id=self.run_id, thread_id=self.conversation.id, user=self.user
        )
        executor.on_tool_error = tuple(self.hub.tool_error_reporters())
        self._turn = turn
        return turn

    def _preamble(self) -> str:
        return self.conversation.preamble

    def _desired(self, palette: ResolvedPalette) -> list[ToolProvider]:
        """The whole palette this turn should offer, before the hooks and the sweep."""
        policy = self.policy
        desired: dict[str, ToolProvider] = {}
        for provider in (
            *self.hub.system_tools(),
            *palette.tools.offered,
            *self._admitted.values(),
        ):
            if policy.offers(provider):
                _claim(desired, provider)
        attached = set(self.conversation.attached)
        self._tool_catalog = {
            p.name: p for p in palette.tools.deferred if p.name not in desired and policy.offers(p)
        }
        self._skill_catalog = {s.id: s for s in palette.skills if s.id not in attached}
        meta: list[ToolProvider | None] = [self._request_tools(self._tool_catalog)]
        if self._skill_catalog:
            entries = [(s.id, s.description) for s in self._skill_catalog.values()]
            meta.append(RequestSkillProvider(entries))
        files = [(s, path) for s in self.conversation.skills for path in _files_of(s)]
        if files:
            meta.append(ReadSkillFileProvider(files))
        for tool in meta:
            if tool is not None and policy.offers(tool):
                desired[tool.name] = tool
        return list(desired.values())

    def _request_tools(self, catalog: Mapping[str, ToolProvider]) -> ToolProvider | None:
        """``request_tools`` over ``catalog``, or None when it lists nothing."""
        # A read-only thinker's request_tools lists only read-only tools, so it is
        # read-only too and survives the sweep (admit refuses the others anyway).
        read_only = self.is_read_only
        requestable = [
            (p.name, p.description) for p in catalog.values() if p.read_only or not read_only
        ]
        return RequestToolsProvider(requestable, read_only=read_only) if requestable else None

    def _add_granted(self, names: Sequence[str]) -> bool:
        """Add the tools granted since the last turn to a palette otherwise current.

        The result is exactly what :meth:`_desired` and a sync would make (the granted
        tools appended in the order granted, ``request_tools`` rebuilt in place over the
        smaller catalog, the sweep applied to what was added), at a cost that follows
        the grants and the deferred catalog rather than the palette's size. Returns
        False, changing nothing, when that cannot be promised: a hook changed the
        palette since the last sync, or a granted name is held by another tool; the
        whole reconcile then runs instead.
        """
        if not self._pristine:
            return False
        policy = self.policy
        adding: list[ToolProvider] = []
        for name in dict.fromkeys(names):
            provider = self._admitted.get(name)
            held = lookup(self.palette, name)
            if provider is None or (held is not None and held is not provider):
                return False
            if held is None and policy.offers(provider):
                adding.append(provider)
        catalog = {n: p for n, p in self._tool_catalog.items() if n not in self._admitted}
        wanted = self._request_tools(catalog)
        if wanted is not None and not policy.offers(wanted):
            wanted = None
        held_meta = lookup(self.palette, REQUEST_TOOLS)
        if held_meta is not None and not isinstance(held_meta, RequestToolsProvider):
            return False
        was_swept = self.palette.version == self._swept_at
        for provider in adding:
            self.palette.register(provider)
        if wanted is None:
            if held_meta is not None:
                self.palette.unregister(held_meta.name)
        elif held_meta is None:
            self.palette.register(wanted)
        elif not _same_surface(held_meta, wanted):
            self.palette.replace(wanted)
        self._tool_catalog = catalog
        if was_swept and _binding(self).read_only:
            added = [p.name for p in adding]
            if wanted is not None:
                added.append(wanted.name)
            ReadOnlyPalette.sweep(self.palette, added)
            self._swept_at = self.palette.version
        return True

    def _sync(self, desired: Sequence[ToolProvider]) -> None:
        sync(self.palette, desired, same=_same_surface)

    def _run_reconcile_hooks(self) -> None:
        impls = in_call_order(self.hub.pm.hook.toolpalette_reconcile)
        kwargs = {"thinker": self, "registry": self.palette}
        for called in call_each(impls, "toolpalette_reconcile", kwargs):
            if called.error is not None:
                logger.error(
                    "toolpalette_reconcile in %s raised; skipped",
                    called.impl.plugin_name,
                    exc_info=called.error,
                )

    # -- admission ------------------------------------------------------------------

    def admit(self, kind: str, names: Sequence[str]) -> dict[str, Any]:
        """Decide a model's request for deferred tools or skills (the meta-tools call this).

        Returns the outcome by name: ``granted``, ``already_present``, ``pending`` (with
        approval tokens) and ``refused`` (with reasons). Every decision is recorded.
        """
        outcome: dict[str, Any] = {
            "granted": [],
            "already_present": [],
            "pending": [],
            "refused": [],
        }
        with self._admit_lock:
            for name in dict.fromkeys(names):
                decision, reason = self._admit_one(kind, name)
                self._record(kind, name, decision, reason)  # before any withdrawal of it
                if decision == "granted":
                    outcome["granted"].append(name)
                elif decision == "already_present":
                    outcome["already_present"].append(name)
                elif decision == "pending":
                    outcome["pending"].append(name)
                else:
                    outcome["refused"].append({"name": name, "reason": reason})
        if outcome["granted"]:
            outcome["note"] = "Granted items are available from your next turn."
        return outcome

    def _admit_one(self, kind: str, name: str) -> tuple[GrantDecision, str]:
        if kind == "tool":
            if name in self._admitted or (
                self.palette.has_tool(name) and name not in self._tool_catalog
            ):
                return "already_present", ""
            item: Any = self._tool_catalog.get(name)
        else:
            if name in self.conversation.attached:
                return "already_present", ""
            item = self._skill_catalog.get(name)
        if item is None:
            return "refused", f"not in this agent's {kind} catalog"
        if kind == "tool" and _binding(self).read_only and not item.read_only:
            return "refused", "this agent is read-only and the tool changes things"
        impls = in_call_order(self.hub.pm.hook.toolpalette_admit)
        called = first_result(
            impls, "toolpalette_admit", {"thinker": self, "kind": kind, "name": name}
        )
        verdict = called.result if called is not None else None
        if called is not None and called.error is not None:
            # A broken host hook refuses (fail closed), and is on the record.
            logger.error(
                "toolpalette_admit raised for %s %r; refused", kind, name, exc_info=called.error
            )
            return "refused", "a host hook failed while deciding"
        if verdict is False or isinstance(verdict, str):
            return "refused", verdict if isinstance(verdict, str) else "refused by a host hook"
        try:
            decision, _ = read_decision(self.policy.decide_grant(self, kind, name, item))
        except Exception:  # a broken policy refuses (fail closed), and is on the record
            logger.exception("the policy raised deciding %s %r; refused", kind, name)
            return "refused", "the policy failed while deciding"
        if decision is Decision.DENY:
            return "refused", "denied by policy"
        if decision is Decision.ASK:
            pending: Literal["tool", "skill"] = "tool" if kind == "tool" else "skill"
            approval = Approval(uuid.uuid4().hex, pending, name, None, self.turn_number)
            if not _binding(self).approvals.ask_grant(approval):
                return "refused", "no person could be asked (the approver failed)"
            return "pending", "waiting for a person's approval"
        failed = self._grant(kind, name, item)
        return ("refused", failed) if failed else ("granted", "")

    def _has(self, kind: str, name: str) -> bool:
        if kind == "tool":
            return name in self._admitted
        return self.conversation.is_attached(name)

    def _grant(self, kind: str, name: str, item: Any) -> str:
        """Admit ``item``; returns why it could not be, or ``""`` when it was."""
        if kind == "tool":
            self._admitted[name] = item
            self._granted.append(name)
            return ""
        try:
            self.conversation.attach(item)  # reads the body: a bad one fails here
        except Exception:
            logger.exception("skill %r could not be attached; refused", name)
            return "the skill's instructions could not be read"
        return ""

    def _record(self, kind: str, name: str, decision: GrantDecision, reason: str) -> None:
        record = GrantRecord(
            thinker=f"{type(self).__module__}.{type(self).__qualname__}",
            conversation=self.conversation.id,
            turn=self.turn_number,
            kind="tool" if kind == "tool" else "skill" if kind == "skill" else "call",
            name=name,
            decision=decision,
            reason=reason,
        )
        self.hub.record_grant(record)

    def _withdrawn(self, approval: Approval) -> None:
        """A grant's approver failed after the grant was recorded pending: record the end."""
        with self._admit_lock:
            self._record(approval.kind, approval.name, "refused", "the approver failed")

    def pending_approvals(self) -> list[Approval]:
        """The calls and grants waiting for a human, oldest first."""
        return _binding(self).approvals.pending()

    # -- calls ------------------------------------------------------------------------

    async def call(
        self,
        name: object,
        input: Any,
        *,
        call_id: str | None = None,
        on_progress: ProgressSink | None = None,
        abort: AbortSignal | None = None,
        approved: bool = False,
    ) -> ToolResult:
        """Run one model call through the pipeline, with this turn's offer and binding.

        Never raises for anything the model sent: every failure is a ``ToolResult``.
        ``call_id`` (the provider's id for the call) reaches the tool's context and the
        failure report; ``abort`` ends the call at once when the host gives up on it.
        When the policy asks for approval the call pauses: an :class:`Approval` appears
        in :meth:`pending_approvals` (and goes to the ``approver`` callback, if the host
        gave one), and the call resumes or is refused when the host calls
        :meth:`resolve_approval`.

        ``on_progress`` receives ``(done, total, message)`` each time the tool calls
        ``ctx.report_progress`` (from the tool's own thread for a sync tool); aborting
        ``abort`` stops the call with a 499 result.

        ``approved=True`` says a person already approved this very call through the
        host's own flow (an agent framework's deferred approval, say): a policy's
        ``ask`` is then answered yes without pausing, and recorded as granted. A
        ``deny`` still refuses.
        """
        turn = self._turn if self._turn is not None else self.begin_turn()
        binding = _binding(self)
        binding.approvals.loop = asyncio.get_running_loop()
        executor = binding.executor
        context = None
        if on_progress is not None and executor.context is not None:
            context = dataclasses.replace(executor.context, on_progress=on_progress)
        value = self._restore(name, input) if turn.strict else input
        token = _APPROVED.set(approved)
        try:
            return await executor.execute(
                name, value, context=context, abort=abort, call_id=call_id
            )
        finally:
            _APPROVED.reset(token)

    async def call_many(
        self, calls: Iterable[Sequence[Any]], *, abort: AbortSignal | None = None
    ) -> list[ToolResult]:
        """Run the calls of one model turn; results come back in the order of ``calls``.

        Each call is a :class:`~toolpalette.ToolCall` (from ``turn.calls_from``) or a
        tuple ``(name, input)`` or ``(name, input, call_id)``. Concurrency-safe calls run
        together, others alone, as ``Executor.execute_many`` runs them.
        """
        turn = self._turn if self._turn is not None else self.begin_turn()
        batch: list[tuple[object, Any, str | None]] = []
        for call in calls:
            name = call[0] if len(call) > 0 else None
            value = call[1] if len(call) > 1 else None
            call_id = call[2] if len(call) > 2 else None
            batch.append((name, self._restore(name, value) if turn.strict else value, call_id))
        binding = _binding(self)
        binding.approvals.loop = asyncio.get_running_loop()
        return await binding.executor.execute_many(batch, abort=abort)

    def _restore(self, name: object, raw: Any) -> Any:
        """Undo strict normalization on a model's input (nulls for optional fields)."""
        provider = lookup(self.palette, name)
        if provider is None:
            return raw
        try:
            value = load_input(raw)
        except InputPolicyError:
            return raw  # the pipeline refuses it with the same 400
        return restore_input(provider.input_schema, value)

    def resolve_approval(self, token: str, *, approve: bool) -> Approval:
        """Approve or deny a paused call or a pending grant; the decision goes on the record.

        A paused call then resumes (or is refused with 403 ``denied``); an approved
        grant takes effect from the next turn.

        Raises:
            KeyError: ``token`` is not pending: unknown, already resolved, or withdrawn
                (its call ended, was aborted or cancelled, or its approver failed).
        """
        approvals = _binding(self).approvals
        decision: GrantDecision = "granted" if approve else "refused"
        if approvals.is_call(token):
            approval = approvals.answer_call(token, approve)
            self._record("call", approval.name, decision, "a person's decision")
            return approval
        approval = approvals.resolve(token)
        with self._admit_lock:
            catalog: Mapping[str, Any] = (
                self._tool_catalog if approval.kind == "tool" else self._skill_catalog
            )
            item = catalog.get(approval.name)
            reason = "a person's decision"
            if approve and self._has(approval.kind, approval.name):
                decision = "already_present"  # granted meanwhile (another approval): one grant
            elif approve and item is None:
                decision = "refused"
                reason = f"approved, but no longer in this agent's {approval.kind} catalog"
            elif approve:
                failed = self._grant(approval.kind, approval.name, item)
                if failed:
                    decision, reason = "refused", failed
            self._record(approval.kind, approval.name, decision, reason)
        return approval

    def __repr__(self) -> str:
        flag = " read-only" if self.is_read_only else ""
        return f"<{type(self).__name__}{flag} turn {self.turn_number}>"
