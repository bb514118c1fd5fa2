"""Thinkers: a host's kinds of agent, each bound to a hub and a conversation.

What bind time fixes (the latch): docs/host-guide/thinkers.md and docs/architecture.md.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import uuid
import weakref
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Final

from toolpalette._agents.binding import Binding, approved_before, make_binding, script_approver
from toolpalette._agents.content import ContentSelector
from toolpalette._agents.deferral import call_at_call_time
from toolpalette._agents.grants import GrantDecision
from toolpalette._agents.links import link_text
from toolpalette._agents.policy import ToolPolicy
from toolpalette._agents.reconcile import SearchMode
from toolpalette._agents.resolved import (
    PaletteSource,
    ResolvedPalette,
    ThinkerHub,
    resolve_palette,
)
from toolpalette._agents.sandbox import CodeLimits, available
from toolpalette._agents.selector import ToolSelector
from toolpalette._agents.turn import Approval, ChangeLog, Turn, offered_guidance
from toolpalette._run.call import CallScope, refuse
from toolpalette._schema.strict import restore_input
from toolpalette._schema.strict_json import InputPolicyError, load_input
from toolpalette._search import search as _search
from toolpalette._skills import Conversation, SkillSelector
from toolpalette._tools.channel import ClientChannel
from toolpalette._tools.provider import as_provider
from toolpalette._tools.registry import ToolRegistry, lookup
from toolpalette._tools.tool import ProgressSink, ToolContext
from toolpalette.errors import ToolCollisionError

if TYPE_CHECKING:
    from toolpalette._agents.approvals import Notify
    from toolpalette._formats.export import Namespace
    from toolpalette._run.abort import AbortSignal
    from toolpalette._run.call import Approver
    from toolpalette._search.ranking import ToolRanker
    from toolpalette._tools.provider import ToolProvider
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

MAX_GRANTED: Final = 20
"""``Thinker.max_granted``'s default: a search grants up to 5 tools, so about four
searches' worth of grants stay offered (each definition costs its tokens on every
request), and a tool the model keeps calling is never the one evicted."""

_MODES: Final = ("auto", "enum", "search", "native")
"""The values of ``Thinker.tool_search``."""

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

    Subclasses set the class attributes [`read_only`][toolpalette.Thinker.read_only] and
    [`grade`][toolpalette.Thinker.grade] and override the classmethods
    [`declare_compatible_tools()`][toolpalette.Thinker.declare_compatible_tools] and
    [`declare_skills()`][toolpalette.Thinker.declare_skills]. Bind with ``hub.bind(Cls,
    conversation=None)``; the read-only binding is latched then and nothing (a tool, a
    hook, an attribute assignment, a class attribute changed later, a second
    ``__init__``) can widen it afterwards.
    """

    read_only: ClassVar[bool] = False
    """Whether agents of this kind may only use read-only tools (read once, at bind)."""
    grade: ClassVar[str | None] = None
    """The model grade this kind runs on; model-dependent tools without a grade take it."""
    strict: ClassVar[bool] = False
    """Whether the turn's schemas are normalized into each provider's strict subset
    (optional fields sent as required and nullable); a null the model gives for such a
    field then means "not given", and the tool's default applies. Read once, at bind."""
    tool_search: ClassVar[SearchMode] = "auto"
    """How the model reaches the deferred tools and skills: ``"enum"`` (``request_tools``
    and ``request_skill``, whose schemas list the catalog), ``"search"``
    (``search_tools`` and ``search_skills``, whose definitions are the same whatever
    the catalog), ``"auto"`` (the enum up to ``ENUM_LIMIT`` tools and
    ``SKILL_ENUM_LIMIT`` skills, the search above), or ``"native"`` (the provider's
    own tool search in the formats that have one, ``search_tools`` elsewhere; every
    call of a deferred tool is decided at call time). Read when the thinker is bound."""
    max_granted: ClassVar[int | None] = MAX_GRANTED
    """How many tools granted through ``request_tools`` and ``search_tools`` the thinker
    keeps at most (default 20; None keeps every grant). A grant beyond
    it evicts the least recently granted or called one: it is recorded ``evicted``,
    stays callable until the turn ends, leaves the palette at the next turn and can be
    asked for again. Read once, at bind."""
    tool_ranker: ClassVar[ToolRanker | None] = None
    """Ranks the deferred tools for ``search_tools`` (a ``ToolRanker``: ``build``, then
    ``search``); None is the default lexical ranker (BM25F), which needs no model and
    no network. Its index is built once per class and catalog, and shared."""

    code_mode: ClassVar[bool] = False
    """Whether the model is also offered ``run_code``: a Python script that calls the
    thinker's tools as functions, each call through the pipeline, in a sandbox (the
    ``code`` extra, ``pydantic-monty``). Off by default. Read when the thinker is bound."""
    code_limits: ClassVar[CodeLimits] = CodeLimits()
    """The bounds of each ``run_code`` script (wall time, memory, tool calls, output);
    read when the thinker is bound."""

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        """The tools this kind may use (offered up front or deferred); none by default."""
        return ToolSelector()

    @classmethod
    def declare_skills(cls) -> SkillSelector:
        """The skills this kind may request; none by default."""
        return SkillSelector()

    @classmethod
    def declare_content(cls) -> ContentSelector:
        """The packs' prompts and resources this kind offers (over MCP); none by default."""
        return ContentSelector()

    def __init__(
        self,
        hub: ThinkerHub,
        conversation: Conversation | None = None,
        *,
        policy: ToolPolicy | None = None,
        run_id: str | None = None,
        user: Mapping[str, Any] | None = None,
        approver: Notify | None = None,
        keep_grants: bool = True,
        client: ClientChannel | None = None,
    ) -> None:
        key = id(self)
        if key in _BINDINGS:
            raise RuntimeError(
                f"{type(self).__name__} is already bound: a bound thinker cannot be "
                "initialized again"
            )
        cls = type(self)
        if cls.tool_search not in _MODES:
            raise ValueError(f"{cls.__name__}.tool_search must be one of {', '.join(_MODES)}")
        code_mode = bool(cls.code_mode)
        if code_mode and not isinstance(cls.code_limits, CodeLimits):
            raise TypeError(f"{cls.__name__}.code_limits must be a toolpalette.CodeLimits")
        if code_mode and not available():
            raise RuntimeError(
                f"{cls.__name__}.code_mode needs the sandbox: pip install 'toolpalette[code]'"
            )
        bound = cls.max_granted
        if bound is not None and (type(bound) is not int or bound < 1):
            raise ValueError(f"{cls.__name__}.max_granted must be a whole number >= 1, or None")
        self.hub = hub
        """The hub the thinker was bound to."""
        self.conversation = conversation if conversation is not None else Conversation()
        """The conversation whose preamble carries admitted skills."""
        self.run_id = run_id or uuid.uuid4().hex
        """Identifies this run in reports."""
        self.user: Mapping[str, Any] = dict(user or {})
        """Whatever the host passes about its user (reaches tools through ToolContext)."""
        self.client = client
        """How the thinker's tools talk to the host (``ToolContext.log``, ``elicit``,
        ``sample``, ``roots``): the host's `ClientChannel`, or None (logs go to
        `logging`, questions raise ``ClientRequestError``)."""
        self.palette = ToolRegistry()
        """This thinker's palette registry, reconciled each turn."""
        self.turn_number = 0
        """The current turn's number (0 before the first)."""
        self._changes = ChangeLog(self.palette.version)
        self.palette.on_surface_changed(self._changes)
        self._overheads: dict[tuple[str, bool], Any] = {}
        self._turn: Turn | None = None
        self._fragments: dict[tuple[str, bool], dict[int, tuple[Any, bytes]]] = {}
        self._deferred: tuple[int, tuple[ToolProvider, ...]] = (-1, ())
        self._absent_at: dict[str, tuple[Any, int, frozenset[int]]] = {}
        binding = make_binding(
            self,
            read_only=bool(cls.read_only),
            strict=bool(cls.strict),
            policy=policy or ToolPolicy(),
            approver=approver,
            keep_grants=bool(keep_grants),
            mode=cls.tool_search,
            max_granted=bound,
        )
        if code_mode:
            binding.palette.code_limits = cls.code_limits
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

    def begin_turn(self, *, extra: Iterable[object] = ()) -> Turn:
        """Reconcile the palette and return what the model is offered this turn.

        Order: system-wide tools, the declared palette, admitted tools, the meta-tools,
        the ``extra`` tools, then the ``toolpalette_reconcile`` hooks, then (for a
        read-only thinker) the sweep. An unchanged palette costs a version check and
        leaves ``version`` and the serialized schemas as they were; tools granted since
        the last turn are added on their own (see ``reconcile.py``), so a grant costs
        what it changes, not what the palette holds.

        ``extra`` offers tools for this turn only (providers, ``@tool`` functions or
        classes): they collide with the palette's tools as declared tools do, a
        read-only thinker is not offered the mutating ones, and they are gone at the
        next turn unless given again. The turn's preamble ends with the guidance of
        the tools it offers; ``turn.changes`` says what moved since the last turn.

        Raises:
            ToolCollisionError: two tools the turn would offer share a name (an
                ``extra`` tool and another, say); the turn is not begun.
            ToolDefinitionError: an ``extra`` object is not a tool; nothing changes.
        """
        binding = _binding(self)
        offered = [as_provider(obj) for obj in extra] if extra else []
        self.turn_number += 1
        resolved = self.hub.resolve_thinker(type(self))
        key = (self.hub.version, tuple(self.conversation.attached))
        grants = binding.grants
        try:
            binding.palette.reconcile(
                self, resolved, key, grants.admitted, grants.take_granted(), extra=offered
            )
        except ToolCollisionError:
            self.turn_number -= 1  # not begun: the next one takes this number
            raise
        registry = binding.palette.registry
        surface = registry.versioned_surface()
        previous = self._turn.surface if self._turn is not None else None
        touched = self._changes.take(surface.version)
        guidance = offered_guidance(
            surface, previous, self._turn.guidance if self._turn else (), touched
        )
        native = binding.palette.mode == "native"
        turn = Turn(
            self.turn_number,
            surface,
            self.conversation.preamble_with(self._linked(guidance, resolved, surface)),
            strict=binding.strict,
            native=native,
            deferred=self._deferred_catalog() if native else (),
            namespaces=self._namespaces(resolved) if native else (),
            _fragments=self._fragments,
            _previous=previous,
            _touched=touched,
            _guidance=guidance,
            _overheads=self._overheads,
        )
        binding.current.scope = CallScope(
            offered=turn.surface.name_set,
            context=ToolContext(
                parent=self,
                run_id=self.run_id,
                thread_id=self.conversation.id,
                user=self.user,
                channel=self.client,
            ),
            reporters=tuple(self.hub.tool_error_reporters()),
        )
        self._turn = turn
        return turn

    async def abegin_turn(self, *, extra: Iterable[object] = ()) -> Turn:
        """`begin_turn()` for a host on an event loop: MCP listings are awaited first.

        ``begin_turn`` never waits for an MCP server's refresh (the last good listing
        serves while it runs in the background); this awaits, without blocking the
        loop, each refresh in flight or due of the servers the palette comes from,
        within its deadline, so the turn offers the new listing (or, past the deadline,
        none of that server's tools). Then it reconciles as ``begin_turn`` does, with
        the same ``extra`` tools for this turn.
        """
        await self.hub.settle_servers(type(self))
        return self.begin_turn(extra=extra)

    # -- admission ------------------------------------------------------------------

    def admit(
        self, kind: str, names: Sequence[str], *, principal: str | None = None
    ) -> dict[str, Any]:
        """Decide a model's request for deferred tools or skills (the meta-tools call this).

        Returns the outcome by name: ``granted``, ``already_present``, ``pending`` (with
        approval tokens) and ``refused`` (with reasons). Every decision is recorded, for
        ``principal`` (the asking call's ``ToolContext.principal``; None: the host's own).
        """
        return _binding(self).grants.admit(kind, names, principal)

    def search(
        self, kind: str, query: str, limit: int, *, principal: str | None = None
    ) -> dict[str, Any]:
        """Answer a model's search of the deferred tools (``kind="tool"``) or the skills.

        The meta-tools ``search_tools`` and ``search_skills`` call this. The best
        matches of the thinker's catalog, in rank order, are each admitted (as
        [`admit()`][toolpalette.Thinker.admit] admits): refused ones are left out,
        granted ones can be called at once, a tool that needs a person is returned with
        ``"approval": "required"`` and each call of it is approved. Every decision is
        recorded, for ``principal`` (as in ``admit``).
        """
        binding = _binding(self)
        cls = type(self)
        resolved = self.hub.resolve_thinker(cls)
        palette = binding.palette
        if kind == "tool":
            indexed = resolved.search.tools(
                cls,
                resolved.tools.deferred,
                binding.read_only,
                cls.tool_ranker,
                resolved.tools.bundles,
            )
            catalog: Mapping[str, Any] = palette.requestable
            key: Callable[[Any], str] = _name_of
        else:
            indexed = resolved.search.skills(resolved.skills, resolved.skill_bundles)
            catalog, key = palette.skill_catalog, _id_of
        # Counted by the first read, before the search's grants shrink the catalog.
        counted: list[int] = []
        found_in = _search.ranked(
            indexed,
            query,
            catalog,
            key,
            limit,
            diverse=kind == "tool",
            counted=counted,
            left_out=self._absent(kind, indexed, catalog, key),
        )
        if kind != "tool" and resolved.links:
            found_in = _linked_first(found_in, self._linked_skills(resolved), limit)
        reading = _search.Reading(found_in)
        grants = binding.grants
        found = grants.search(kind, reading, limit, principal)
        total = counted[0] if counted and counted[0] >= 0 else None
        more = not reading.exhausted
        links, skills = resolved.links, palette.skill_catalog

        def skills_of(name: str) -> list[str]:
            return [s for s in links.get(name, ()) if s in skills]

        return _search.answer(
            kind, found, grants.keep, total=total, more=more, skills_of=skills_of if links else None
        )

    def deferred_tools(self) -> tuple[ToolProvider, ...]:
        """The thinker's deferred catalog: the tools it may reach but is not offered.

        Its selectors' deferred tools that the policy offers, minus what it already
        holds (granted, or offered otherwise); only the read-only ones for a read-only
        thinker. What ``request_tools`` and ``search_tools`` reach, and what
        ``call(..., deferred=True)`` may run. Begins a turn if none is open; cheap
        afterwards (kept until the catalog changes).
        """
        if self._turn is None:
            self.begin_turn()
        return self._deferred_catalog()

    def _linked(
        self, guidance: Sequence[tuple[str, str]], resolved: ResolvedPalette, surface: Any
    ) -> Sequence[tuple[str, str]]:
        """The turn's tool guidance, with the skills each offered tool names.

        Only the skills the model may still ask for are named; a tool with no guidance
        gets a section of its own.
        """
        links = resolved.links
        if not links:
            return guidance
        palette = _binding(self).palette
        catalog = palette.skill_catalog
        texts = dict(guidance)
        order: list[str] = []
        for name in surface.names:
            if name in texts:
                order.append(name)
            skills = [s for s in links.get(name, ()) if s in catalog]
            if skills:
                line = link_text(skills, searches=palette.searches("skill"))
                texts[name] = f"{texts[name].strip()}\n{line}" if name in texts else line
                if order[-1:] != [name]:
                    order.append(name)
        return [(name, texts[name]) for name in order]

    def _absent(
        self, kind: str, indexed: Any, catalog: Mapping[str, Any], key: Callable[[Any], str]
    ) -> frozenset[int]:
        """The index's positions this thinker's catalog lacks, kept per catalog version.

        Read before a search's grants shrink the catalog: the count is of what it found.
        """
        version = _binding(self).palette.catalog_version
        held = self._absent_at.get(kind)
        if held is not None and held[0] is indexed and held[1] == version:
            return held[2]
        left_out = _search.absent(indexed, catalog, key)
        self._absent_at[kind] = (indexed, version, left_out)
        return left_out

    def _linked_skills(self, resolved: ResolvedPalette) -> frozenset[str]:
        """The skills the tools this thinker holds now name."""
        registry = _binding(self).palette.registry
        return frozenset(
            skill
            for name, skills in resolved.links.items()
            if registry.has_tool(name)
            for skill in skills
        )

    def _namespaces(self, resolved: ResolvedPalette) -> tuple[Namespace, ...]:
        """The bundles of the deferred catalog, as ``export_deferred`` groups them."""
        catalog = _binding(self).palette.requestable
        found = []
        for bundle in resolved.tools.bundles:
            members = tuple(p.name for p in bundle.members(catalog))
            if members:
                found.append((bundle.name, bundle.description, members))
        return tuple(found)

    def _deferred_catalog(self) -> tuple[ToolProvider, ...]:
        palette = _binding(self).palette
        version, tools = self._deferred
        if version != palette.catalog_version:
            tools = tuple(palette.requestable.values())
            self._deferred = (palette.catalog_version, tools)
        return tools

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
        deferred: bool = False,
        channel: ClientChannel | None = None,
        principal: str | None = None,
    ) -> ToolResult:
        """Run one model call through the pipeline, with this turn's offer and binding.

        Never raises for anything the model sent: every failure is a ``ToolResult``.
        ``call_id`` (the provider's id for the call) reaches the tool's context and the
        failure report; ``abort`` ends the call at once when the host gives up on it.
        When the policy asks for approval the call pauses: an
        [`Approval`][toolpalette.Approval] appears in
        [`pending_approvals()`][toolpalette.Thinker.pending_approvals] (and goes to the
        ``approver`` callback, if the host gave one), and the call resumes or is refused
        when the host calls
        [`resolve_approval()`][toolpalette.Thinker.resolve_approval].

        ``on_progress`` receives ``(done, total, message)`` each time the tool calls
        ``ctx.report_progress`` (from the tool's own thread for a sync tool); aborting
        ``abort`` stops the call with a 499 result. ``channel`` answers the tool's
        ``ctx.log``, ``elicit``, ``sample`` and ``roots`` for this call (instead of the
        thinker's ``client``), and is where the call's `Approval` says its caller is.
        ``principal`` is who the call is made for (an MCP request's verified principal):
        the tool's ``ctx.principal``, and every grant record the call makes, name it. A
        shared thinker serves many principals at once, so each call brings its own; a
        tool that calls the thinker again passes its ``ctx.channel`` and
        ``ctx.principal`` to make that call for the same caller.

        ``approved=True`` says a person already approved this very call through the
        host's own flow (an agent framework's deferred approval, say): a policy's
        ``ask`` is then answered yes without pausing, and recorded as granted. A
        ``deny`` still refuses.

        ``deferred=True`` (automatic in a ``native`` turn) lets a name of the deferred
        catalog ([`deferred_tools()`][toolpalette.Thinker.deferred_tools]) that this
        turn does not offer be admitted for this one call, at call time: the
        ``toolpalette_admit`` hooks and the policy's ``decide_grant`` decide, the
        decision is recorded, and an admitted call runs through the pipeline like an
        offered one. A grant the policy asks about makes the call ask a person (the
        approver, or ``approved=True``), and the answer is recorded as the grant.
        Nothing is kept. A name the policy denies or the catalog lacks is answered
        exactly as an unknown name (no existence oracle).
        """
        return await self._made(
            name, input, call_id, on_progress, abort, approved, deferred, channel, principal
        )

    async def _call_in_script(
        self, name: str, input: Any, call_id: str, parent: str, abort: Any, caller: Any
    ) -> ToolResult:
        """One call a ``run_code`` script makes, for its caller (the script's context).

        Made for the script's principal; an approval it asks names the script's
        ``channel`` (whose asker answers it) and the script's call, while its tool talks
        through the thinker's own channel, as before. An approval of the script
        approves none of its calls.
        """
        channel = caller.channel if caller is not None else None
        principal = caller.principal if caller is not None else None
        approver = script_approver(_binding(self).grants, channel, call_id, parent)
        return await self._made(
            name, input, call_id, None, abort, False, True, None, principal, approver
        )

    def _made(
        self,
        name: object,
        input: Any,
        call_id: str | None,
        on_progress: ProgressSink | None,
        abort: AbortSignal | None,
        approved: bool,
        deferred: bool,
        channel: ClientChannel | None,
        principal: str | None,
        approver: Approver | None = None,
    ) -> Awaitable[ToolResult]:
        """The pipeline's call (`call()`), to await; ``approver`` asks for this call only."""
        turn = self._turn if self._turn is not None else self.begin_turn()
        binding = _binding(self)
        binding.approvals.loop = asyncio.get_running_loop()
        executor = binding.executor
        scope = binding.current.scope
        context = scope.context
        if (
            on_progress is not None or channel is not None or principal is not None
        ) and context is not None:
            context = dataclasses.replace(
                context,
                on_progress=on_progress or context.on_progress,
                channel=channel or context.channel,
                principal=principal or context.principal,
            )
        # An approval covers this call, not the calls it makes (a run_code script's, or
        # a tool's that calls the thinker again): those carry the turn's own scope.
        if approved:
            scope = dataclasses.replace(scope, approver=approved_before(binding.grants))
        elif approver is not None:
            scope = dataclasses.replace(scope, approver=approver)
        binding.grants.used(name)
        if self._at_call_time(name, deferred or turn.native, binding):
            admitted = binding.grants.at_call(name, principal)
            if admitted is not None:
                provider, ask = admitted
                return call_at_call_time(
                    executor,
                    binding.grants,
                    provider,
                    ask,
                    self._restore_with(provider, input) if turn.strict else input,
                    scope=scope,
                    context=context,
                    abort=abort,
                    call_id=call_id,
                )
        value = self._restore(name, input) if turn.strict else input
        return executor.execute(
            name, value, context=context, abort=abort, call_id=call_id, scope=scope
        )

    def _at_call_time(self, name: object, deferred: bool, binding: Binding | None = None) -> bool:
        """Whether a call of ``name`` is decided at call time (not offered this turn)."""
        if not isinstance(name, str):
            return False
        binding = binding or _binding(self)
        offered = binding.current.scope.offered
        if offered is not None and name in offered:
            return False
        return deferred or binding.grants.asks_at_call(name)

    async def call_many(
        self,
        calls: Iterable[Sequence[Any]],
        *,
        abort: AbortSignal | None = None,
        deferred: bool = False,
        principal: str | None = None,
    ) -> list[ToolResult]:
        """Run the calls of one model turn; results come back in the order of ``calls``.

        Each call is a [`ToolCall`][toolpalette.ToolCall] (from ``turn.calls_from``) or
        a tuple ``(name, input)`` or ``(name, input, call_id)``. Concurrency-safe calls
        run together, others alone, as ``Executor.execute_many`` runs them. ``deferred``
        is [`call()`][toolpalette.Thinker.call]'s: a call decided at call time runs
        alone, in its place. ``principal`` is who the calls are made for, as in ``call``.
        """
        turn = self._turn if self._turn is not None else self.begin_turn()
        batch: list[tuple[object, Any, str | None]] = []
        for call in calls:
            name = call[0] if len(call) > 0 else None
            value = call[1] if len(call) > 1 else None
            call_id = call[2] if len(call) > 2 else None
            batch.append((name, value, call_id))
        binding = _binding(self)
        binding.approvals.loop = asyncio.get_running_loop()
        deferred = deferred or turn.native
        scope = binding.current.scope
        if principal is not None and scope.context is not None:
            context = dataclasses.replace(scope.context, principal=principal)
            scope = dataclasses.replace(scope, context=context)
        results: list[ToolResult] = []
        start = 0
        for name, _value, _call_id in batch:
            binding.grants.used(name)
        for end, (name, value, call_id) in enumerate([*batch, (None, None, None)]):
            alone = end < len(batch) and self._at_call_time(name, deferred, binding)
            if end < len(batch) and not alone:
                continue
            offered = [
                (n, self._restore(n, v) if turn.strict else v, i) for n, v, i in batch[start:end]
            ]
            if offered:
                results += await binding.executor.execute_many(offered, abort=abort, scope=scope)
            if alone:
                results.append(
                    await self.call(
                        name,
                        value,
                        call_id=call_id,
                        abort=abort,
                        deferred=True,
                        principal=principal,
                    )
                )
            start = end + 1
        return results

    def _restore(self, name: object, raw: Any) -> Any:
        """Undo strict normalization on a model's input (nulls for optional fields)."""
        provider = lookup(_binding(self).palette.registry, name)
        return raw if provider is None else self._restore_with(provider, raw)

    @staticmethod
    def _restore_with(provider: ToolProvider, raw: Any) -> Any:
        try:
            value = load_input(raw)
        except InputPolicyError:
            return raw  # the pipeline refuses it with the same 400
        return restore_input(provider.input_schema, value)

    def resolve_approval(
        self, token: str, *, approve: bool, unasked: str | None = None
    ) -> Approval:
        """Approve or deny a paused call or a pending grant; the decision goes on the record.

        A paused call then resumes (or is refused with 403 ``denied``); an approved
        grant takes effect from the next turn. ``unasked`` (with ``approve`` False)
        says that no person could be asked, and why: a paused call is then refused with
        403 ``approval_required`` and that text, and the record gives it as the reason
        (instead of "a person's decision"). Write it for the model: it reads it.

        Raises:
            KeyError: ``token`` is not pending: unknown, already resolved, or withdrawn
                (its call ended, was aborted or cancelled, or its approver failed).
        """
        binding = _binding(self)
        approvals = binding.approvals
        if approvals.is_call(token):
            if unasked is not None and not approve:
                approval = approvals.answer_call(token, refuse(403, "approval_required", unasked))
                binding.grants.record(
                    "call", approval.name, "refused", unasked, principal=approval.principal
                )
                return approval
            approval = approvals.answer_call(token, approve)
            decision: GrantDecision = "granted" if approve else "refused"
            binding.grants.record(
                "call",
                approval.name,
                decision,
                "a person's decision",
                call_id=approval.call_id,
                parent=approval.parent,
                principal=approval.principal,
            )
            return approval
        approval = approvals.resolve(token)
        binding.grants.resolve(approval, approve)
        return approval

    def _record_call(
        self,
        name: str,
        decision: GrantDecision,
        reason: str,
        call_id: str,
        parent: str,
        principal: str | None = None,
    ) -> None:
        """Put a call a ``run_code`` script made on the grant record, under its script."""
        _binding(self).grants.record(
            "call", name, decision, reason, call_id=call_id, parent=parent, principal=principal
        )

    def __repr__(self) -> str:
        flag = " read-only" if self.is_read_only else ""
        return f"<{type(self).__name__}{flag} turn {self.turn_number}>"


def _linked_first(found: Iterator[Any], linked: frozenset[str], limit: int) -> Iterator[Any]:
    """``found`` with, among its first matches, the skills in ``linked`` moved first."""
    head = list(itertools.islice(found, limit * 4))
    head.sort(key=lambda item: getattr(item, "id", None) not in linked)
    yield from head
    yield from found


def _name_of(provider: Any) -> str:
    name: str = provider.name
    return name


def _id_of(skill: Any) -> str:
    skill_id: str = skill.id
    return skill_id
