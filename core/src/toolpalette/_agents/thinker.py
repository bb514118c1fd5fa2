"""Thinkers: a host's kinds of agent, each bound to a hub and a conversation.

A ``Thinker`` subclass declares what it may use (``declare_compatible_tools``,
``declare_skills``), whether it is read-only, and its grade. ``hub.bind(Cls)`` gives a
bound thinker; each turn, :meth:`Thinker.begin_turn` reconciles its palette and says
what the model is offered, and :meth:`Thinker.call` runs the model's calls through the
pipeline with that turn's offer and the read-only binding latched at bind time.

The thinker is the public face of three parts, each in its own module and made at
bind time into its binding (``binding.py``): the palette's reconciliation
(``reconcile.py``), the admission of grants (``admission.py``), and the executor that
runs every call, which asks the binding, and nothing else, about read-only, the policy,
approvals and configuration.

The latch: this module holds every live thinker's binding by the thinker's identity, so
no attribute write on the thinker (``setattr``, ``__dict__``, ``object.__setattr__``)
by a tool or a hook reaches it. The thinker holds a reference to its binding only to
keep it alive exactly as long as itself: the binding holds the thinker's tools, which
hold the thinker, so a binding held here would keep every thinker alive for ever.
Tearing that reference out (through ``__dict__``) leaves a thinker that raises
``RuntimeError`` on use; it never widens what it offers or runs. What bind time fixes
and what it guarantees is stated in docs/host-guide.md ("The read-only binding").
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Final

from toolpalette._agents.binding import APPROVED, Binding, make_binding
from toolpalette._agents.grants import GrantDecision
from toolpalette._agents.policy import ToolPolicy
from toolpalette._agents.resolved import (
    PaletteSource,
    ResolvedPalette,
    ThinkerHub,
    resolve_palette,
)
from toolpalette._agents.selector import ToolSelector
from toolpalette._agents.turn import Approval, Turn
from toolpalette._formats.strict import restore_input
from toolpalette._skills import Conversation, SkillSelector
from toolpalette._tools.registry import ToolRegistry, lookup
from toolpalette._tools.strict_json import InputPolicyError, load_input
from toolpalette._tools.tool import ProgressSink, ToolContext

if TYPE_CHECKING:
    from toolpalette._agents.approvals import Notify
    from toolpalette._run.abort import AbortSignal
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

_KEEPALIVE: Final = "_Thinker__binding"
"""The thinker's attribute that keeps its binding alive (never read: see the docstring)."""
_LATCHED = frozenset({"read_only", "is_read_only", "policy", _KEEPALIVE})
"""Names fixed at bind time: assigning or deleting one on a thinker raises
``AttributeError`` (the values live in its binding, so writing them into ``__dict__``
changes nothing)."""

_BINDINGS: dict[int, weakref.ref[Binding]] = {}
"""Each bound thinker's binding, by ``id``, while the thinker lives."""


def _binding(thinker: Thinker) -> Binding:
    ref = _BINDINGS.get(id(thinker))
    binding = ref() if ref is not None else None
    if binding is None:
        raise RuntimeError(
            f"{type(thinker).__name__} is not bound: create thinkers with hub.bind(Cls)"
        )
    return binding


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
        key = id(self)
        cls = type(self)
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
        self._fragments: dict[tuple[str, bool], dict[int, tuple[Any, bytes]]] = {}
        binding = make_binding(
            self,
            read_only=bool(cls.read_only),
            policy=policy or ToolPolicy(),
            approver=approver,
        )
        _BINDINGS[key] = weakref.ref(binding)
        weakref.finalize(self, _BINDINGS.pop, key, None)
        object.__setattr__(self, _KEEPALIVE, binding)

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

    def __delattr__(self, name: str) -> None:
        if name in _LATCHED:
            raise AttributeError(f"{name} is fixed when the thinker is bound")
        super().__delattr__(name)

    # -- turns ----------------------------------------------------------------------

    def begin_turn(self) -> Turn:
        """Reconcile the palette and return what the model is offered this turn.

        Order: system-wide tools, the declared palette, admitted tools, the meta-tools,
        then the ``toolpalette_reconcile`` hooks, then (for a read-only thinker) the
        sweep. An unchanged palette costs a version check and leaves ``version`` and the
        serialized schemas as they were; tools granted since the last turn are added on
        their own (see ``reconcile.py``), so a grant costs what it changes, not what the
        palette holds.
        """
        binding = _binding(self)
        self.turn_number += 1
        resolved = self.hub.resolve_thinker(type(self))
        key = (self.hub.version, tuple(self.conversation.attached))
        grants = binding.grants
        binding.palette.reconcile(self, resolved, key, grants.admitted, grants.take_granted())
        registry = binding.palette.registry
        turn = Turn(
            self.turn_number,
            registry.versioned_surface(),
            self.conversation.preamble,
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

    async def abegin_turn(self) -> Turn:
        """:meth:`begin_turn` for a host on an event loop: MCP listings are awaited first.

        ``begin_turn`` never waits for an MCP server's refresh (the last good listing
        serves while it runs in the background); this awaits, without blocking the
        loop, each refresh in flight or due of the servers the palette comes from,
        within its deadline, so the turn offers the new listing (or, past the deadline,
        none of that server's tools). Then it reconciles as ``begin_turn`` does.
        """
        await self.hub.settle_servers(type(self))
        return self.begin_turn()

    # -- admission ------------------------------------------------------------------

    def admit(self, kind: str, names: Sequence[str]) -> dict[str, Any]:
        """Decide a model's request for deferred tools or skills (the meta-tools call this).

        Returns the outcome by name: ``granted``, ``already_present``, ``pending`` (with
        approval tokens) and ``refused`` (with reasons). Every decision is recorded.
        """
        return _binding(self).grants.admit(kind, names)

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
        if not approved:
            return await executor.execute(
                name, value, context=context, abort=abort, call_id=call_id
            )
        token = APPROVED.set(True)
        try:
            return await executor.execute(
                name, value, context=context, abort=abort, call_id=call_id
            )
        finally:
            APPROVED.reset(token)

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
        provider = lookup(_binding(self).palette.registry, name)
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
        binding = _binding(self)
        approvals = binding.approvals
        if approvals.is_call(token):
            approval = approvals.answer_call(token, approve)
            decision: GrantDecision = "granted" if approve else "refused"
            binding.grants.record("call", approval.name, decision, "a person's decision")
            return approval
        approval = approvals.resolve(token)
        binding.grants.resolve(approval, approve)
        return approval

    def __repr__(self) -> str:
        flag = " read-only" if self.is_read_only else ""
        return f"<{type(self).__name__}{flag} turn {self.turn_number}>"
