"""Admission: deciding whether a thinker may use a deferred tool or a skill, and granting it."""

from __future__ import annotations

import dataclasses
import enum
import logging
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from toolpalette._agents.approvals import Approvals, Notify
from toolpalette._agents.grants import GrantDecision, GrantRecord
from toolpalette._agents.links import required_tools
from toolpalette._agents.turn import Approval
from toolpalette._hookcall import first_result, in_call_order
from toolpalette._run.consent import Decision, contained, read_decision
from toolpalette._search.bundles import Bundle
from toolpalette._search.search import Found

if TYPE_CHECKING:
    from toolpalette._agents.policy import ToolPolicy
    from toolpalette._agents.reconcile import Reconciler
    from toolpalette._tools.provider import ToolProvider

__all__ = ["Admission", "Verdict"]

logger = logging.getLogger("toolpalette.thinker")

_MAX_JUDGED_PER_MATCH = 4
"""A search judges at most this many ranked items per match it may return: a policy
that refuses most of a catalog cannot make one search decide all of it."""

_ASKED_AT_CALL = "a person approves each call of it"
"""The reason on the record of a search's match that needs a person."""
_OFFERED = "destructive: offered, not granted; each call of it is decided when made"
"""The reason on the record of a search's destructive match."""


def _destructive(item: Any) -> bool:
    """Whether a tool may destroy or overwrite: mutating, and not ``destructive=False``."""
    info = item.info
    return not info.read_only and bool(getattr(info, "destructive", True))


class Verdict(enum.Enum):
    """What admission decided about one name, before a way of asking acts on it."""

    REFUSED = "refused"
    """Not in the catalog, or refused by the read-only binding, a hook or the policy."""
    ALLOW = "allow"
    """May be granted."""
    ASK = "ask"
    """Needs a person's approval."""


class Admission:
    """One thinker's admissions: what was granted, what waits for a person, the record.

    Args:
        thinker: the bound thinker (hooks and the policy are told which one asks).
        palette: its reconciler, which holds the catalogs asked from.
        policy: its policy (``decide_grant``).
        read_only: its read-only binding (a mutating tool is never granted).
        approver: the host's approver, told of each approval (calls' and grants').
        keep: whether grants are kept (see the module docstring).
        max_granted: how many granted tools are kept at most (None: no bound).
    """

    def __init__(
        self,
        thinker: Any,
        palette: Reconciler,
        policy: ToolPolicy,
        read_only: bool,
        approver: Notify | None,
        *,
        keep: bool = True,
        max_granted: int | None = None,
    ) -> None:
        self._thinker = thinker
        self._palette = palette
        self._policy = policy
        self._read_only = read_only
        self.keep = keep
        """Whether grants are kept (``hub.bind(..., keep_grants=...)``)."""
        self._lock = threading.RLock()
        self._admitted: dict[str, ToolProvider] = {}
        self._granted: list[str] = []
        self._asked: set[str] = set()
        self.approvals = Approvals(approver, withdrawn=self._withdrawn)
        """The thinker's pending approvals, of calls and of grants."""
        self.max_granted = max_granted
        """How many granted tools are kept at most (``Thinker.max_granted``)."""
        self.on_granted: Callable[[], None] | None = None
        """Called after tools were granted and kept: the binding adds them to the
        palette at once (``binding.py``)."""
        self.on_evicted: Callable[[], None] | None = None
        """Called after a kept grant was evicted: the next turn reconciles the whole
        palette, which the evicted tool leaves (``binding.py``)."""

    @property
    def turn_number(self) -> int:
        """The thinker's current turn (approvals and records carry it)."""
        number: int = self._thinker.turn_number
        return number

    @property
    def admitted(self) -> Mapping[str, ToolProvider]:
        """Every tool granted and kept so far, in the order granted."""
        return self._admitted

    def take_granted(self) -> list[str]:
        """The names of the tools granted since the last call, in order (a turn begins)."""
        with self._lock:
            granted, self._granted = self._granted, []
        return granted

    def granted_since(self) -> list[str]:
        """The names `take_granted()` would give now, left for it (a grant mid-turn)."""
        with self._lock:
            return list(self._granted)

    def used(self, name: object) -> None:
        """A kept grant was called: it becomes the most recently used (evicted last)."""
        if not isinstance(name, str) or name not in self._admitted:
            return  # most calls: nothing kept to move, so no lock
        with self._lock:
            if name in self._admitted:
                self._admitted[name] = self._admitted.pop(name)

    def asks_at_call(self, name: object) -> bool:
        """Whether a search returned ``name`` as needing a person for each call.

        A call of such a name is decided at call time, even when the host did not ask
        for it (``thinker.call``): the search told the model it could call it.
        """
        return name in self._asked

    # -- the three ways of asking ----------------------------------------------------

    def admit(
        self, kind: str, names: Sequence[str], principal: str | None = None
    ) -> dict[str, Any]:
        """Decide a request for deferred tools (``kind="tool"``) or skills, each name once.

        Returns the outcome by name: ``granted``, ``already_present``, ``pending``
        and ``refused`` (with reasons), and a ``note``; a thinker that keeps no grants
        also gets the granted skills' ``instructions``. Every decision is recorded, as
        made for ``principal`` (the asking call's).
        """
        outcome: dict[str, Any] = {
            "granted": [],
            "already_present": [],
            "pending": [],
            "refused": [],
        }
        with self._lock:
            for name in self._expanded(kind, names, outcome):
                decision, reason = self._request(kind, name, outcome, principal)
                # Recorded before any withdrawal of it.
                self.record(kind, name, decision, reason, principal=principal)
                if decision == "refused":
                    outcome["refused"].append({"name": name, "reason": reason})
                else:
                    outcome[decision].append(name)
        if outcome["granted"] or outcome["pending"]:
            outcome["note"] = self._note(kind, bool(outcome["pending"]))
        self._granted_now(principal)
        return outcome

    def _expanded(self, kind: str, names: Sequence[str], outcome: dict[str, Any]) -> list[str]:
        """The names asked for, each once, a bundle's name replaced by its tools'."""
        palette = self._palette
        tool = kind == "tool"
        bundles = palette.bundles if tool else palette.skill_bundles
        catalog: Mapping[str, Any] = palette.tool_catalog if tool else palette.skill_catalog
        expanded: dict[str, None] = {}
        for name in names:
            bundle = bundles.get(name)
            if bundle is None or name in catalog:
                expanded[name] = None
                continue
            members = [n for n in bundle.tools if n in catalog]
            outcome.setdefault("bundles", {})[name] = members
            expanded.update(dict.fromkeys(members))
        return list(expanded)

    def search(
        self, kind: str, ranked: Iterable[Any], limit: int, principal: str | None = None
    ) -> list[Found]:
        """Admit the best of ``ranked`` (catalog items, best first) until ``limit`` are found.

        A refused item is left out (and recorded), an allowed one granted, one that
        needs a person returned marked so (``"ask"``: each call of the tool is approved
        by a person; ``"pending"``: a skill's grant waits for one). At most
        `_MAX_JUDGED_PER_MATCH` items per match are judged. Decisions are recorded as
        made for ``principal``.
        """
        p = principal
        found: list[Found] = []
        budget = limit * _MAX_JUDGED_PER_MATCH
        with self._lock:
            for item in ranked:
                if len(found) >= limit or budget <= 0:
                    break
                budget -= 1
                if isinstance(item, Bundle):
                    members = self._search_bundle(item, p) if kind == "tool" else self._jar(item, p)
                    if members:
                        found.append(Found(item, "granted", members=tuple(members)))
                    continue
                name = item.name if kind == "tool" else item.id
                if self._has(kind, name):
                    continue  # granted since the catalog was read
                verdict, reason = self._judge(kind, name, item)
                if verdict is Verdict.REFUSED:
                    self.record(kind, name, "refused", reason, principal=p)
                    continue
                if verdict is Verdict.ASK and kind == "tool":
                    # Not a pending grant: callable, and each call asks a person.
                    if self.keep:
                        self._asked.add(name)
                    self.record(kind, name, "pending", _ASKED_AT_CALL, principal=p)
                    found.append(Found(item, "ask"))
                    continue
                if verdict is Verdict.ASK:
                    decision, reason = self._ask_for(kind, name, p)
                    self.record(kind, name, decision, reason, principal=p)
                    if decision != "refused":
                        found.append(Found(item, "pending"))
                    continue
                if kind == "tool" and _destructive(item):
                    # Offered, not granted until called: each call is decided when made.
                    if self.keep:
                        self._asked.add(name)
                    self.record(kind, name, "offered", _OFFERED, principal=p)
                    found.append(Found(item, "offered"))
                    continue
                answered: dict[str, Any] = {}
                failed = self._grant(kind, name, item, answered, p)
                self.record(kind, name, "refused" if failed else "granted", failed, principal=p)
                if not failed:
                    instructions = answered.get("instructions", {}).get(name)
                    found.append(Found(item, "granted", instructions))
        self._granted_now(p)
        return found

    def _search_bundle(self, bundle: Bundle, principal: str | None) -> list[Found]:
        """A bundle a search found: each of its tools admitted as a found tool would be."""
        found: list[Found] = []
        for provider in bundle.members(self._palette.requestable):
            name = provider.name
            if self._has("tool", name):
                continue
            verdict, reason = self._judge("tool", name, provider)
            if verdict is Verdict.REFUSED:
                self.record("tool", name, "refused", reason, principal=principal)
            elif verdict is Verdict.ASK:
                if self.keep:
                    self._asked.add(name)
                self.record("tool", name, "pending", _ASKED_AT_CALL, principal=principal)
                found.append(Found(provider, "ask"))
            else:
                self._grant("tool", name, provider)
                reason = f"with the bundle {bundle.name}"
                self.record("tool", name, "granted", reason, principal=principal)
                found.append(Found(provider, "granted"))
        return found

    def _jar(self, bundle: Bundle, principal: str | None) -> list[Found]:
        """A skilljar a search found whole: each of its skills admitted as a found skill."""
        found: list[Found] = []
        catalog = self._palette.skill_catalog
        for skill_id in bundle.tools:
            skill = catalog.get(skill_id)
            if skill is None or self._has("skill", skill_id):
                continue
            verdict, reason = self._judge("skill", skill_id, skill)
            if verdict is Verdict.REFUSED:
                self.record("skill", skill_id, "refused", reason, principal=principal)
                continue
            if verdict is Verdict.ASK:
                decision, reason = self._ask_for("skill", skill_id, principal)
                self.record("skill", skill_id, decision, reason, principal=principal)
                if decision != "refused":
                    found.append(Found(skill, "pending"))
                continue
            answered: dict[str, Any] = {}
            failed = self._grant("skill", skill_id, skill, answered, principal)
            decided: GrantDecision = "refused" if failed else "granted"
            self.record("skill", skill_id, decided, failed, principal=principal)
            if not failed:
                instructions = answered.get("instructions", {}).get(skill_id)
                found.append(Found(skill, "granted", instructions))
        return found

    def at_call(
        self, name: object, principal: str | None = None
    ) -> tuple[ToolProvider, bool] | None:
        """Decide one call of a deferred tool, at call time; nothing is kept.

        Returns the tool and whether a person must approve the call, or None when it
        may not be called (not in the thinker's catalog, or refused: the caller answers
        as for an unknown name). A refusal and an allowed call are recorded now; a call
        a person approves is recorded when they answer (`answered()`). ``principal`` is
        whom the call is made for.
        """
        provider = self._palette.requestable.get(name) if isinstance(name, str) else None
        if provider is None:
            return None
        with self._lock:
            verdict, reason = self._judge("tool", provider.name, provider)
            if verdict is Verdict.REFUSED:
                self.record("tool", provider.name, "refused", reason, principal=principal)
                return None
            if verdict is Verdict.ALLOW:
                reason = "admitted for one call"
                self.record("tool", provider.name, "granted", reason, principal=principal)
        return provider, verdict is Verdict.ASK

    def answered(
        self, name: str, approved: bool, reason: str, principal: str | None = None
    ) -> None:
        """Record a person's answer about a call admitted at call time (`at_call()`)."""
        decision: GrantDecision = "granted" if approved else "refused"
        with self._lock:
            self.record("tool", name, decision, reason, principal=principal)

    # -- judging ----------------------------------------------------------------------

    def _judge(self, kind: str, name: str, item: Any) -> tuple[Verdict, str]:
        """The one decision: catalog, read-only binding, the admit hooks, the policy."""
        thinker = self._thinker
        if item is None:
            return Verdict.REFUSED, self._palette.not_requestable(kind, self._admitted)
        if kind == "tool" and self._read_only and not item.read_only:
            return Verdict.REFUSED, "this agent is read-only and the tool changes things"
        impls = in_call_order(thinker.hub.pm.hook.toolpalette_admit)
        called = first_result(
            impls, "toolpalette_admit", {"thinker": thinker, "kind": kind, "name": name}
        )
        verdict = called.result if called is not None else None
        if called is not None and called.error is not None:
            # A broken host hook refuses (fail closed), and is on the record.
            logger.error(
                "toolpalette_admit raised for %s %r; refused", kind, name, exc_info=called.error
            )
            return Verdict.REFUSED, "a host hook failed while deciding"
        if verdict is False or isinstance(verdict, str):
            reason = verdict if isinstance(verdict, str) else "refused by a host hook"
            return Verdict.REFUSED, reason
        try:
            decision, _ = read_decision(self._policy.decide_grant(thinker, kind, name, item))
        except BaseException as exc:  # a broken policy refuses (fail closed), on the record
            if not contained(exc):
                raise
            logger.error("the policy raised deciding %s %r; refused", kind, name, exc_info=exc)
            return Verdict.REFUSED, "the policy failed while deciding"
        if decision is Decision.DENY:
            return Verdict.REFUSED, "denied by policy"
        if decision is Decision.ASK:
            return Verdict.ASK, ""
        return Verdict.ALLOW, ""

    def _request(
        self, kind: str, name: str, outcome: dict[str, Any], principal: str | None
    ) -> tuple[GrantDecision, str]:
        """One name of a request: judged, then granted or asked about."""
        palette = self._palette
        if kind == "tool":
            if name in self._admitted or (
                palette.registry.has_tool(name) and name not in palette.tool_catalog
            ):
                return "already_present", ""
            item: Any = palette.tool_catalog.get(name)
        else:
            if name in self._thinker.conversation.attached:
                return "already_present", ""
            item = palette.skill_catalog.get(name)
        verdict, reason = self._judge(kind, name, item)
        if verdict is Verdict.REFUSED:
            return "refused", reason
        if verdict is Verdict.ASK:
            return self._ask_for(kind, name, principal)
        failed = self._grant(kind, name, item, outcome, principal)
        return ("refused", failed) if failed else ("granted", "")

    def _ask_for(self, kind: str, name: str, principal: str | None) -> tuple[GrantDecision, str]:
        """What a grant that needs a person becomes.

        A tool the thinker cannot keep, and a search's match, are called with a person's
        approval each time; a kept grant waits for the host's approver.
        """
        if kind == "tool" and not self.keep:
            return "pending", _ASKED_AT_CALL
        if kind != "tool" and not self.keep:
            return "refused", "a person must approve it, and this agent keeps no grants"
        pending: Literal["tool", "skill"] = "tool" if kind == "tool" else "skill"
        turn = self._thinker.turn_number
        approval = Approval(uuid.uuid4().hex, pending, name, None, turn, principal=principal)
        if not self.approvals.ask_grant(approval):
            return "refused", "no person could be asked (the approver failed)"
        return "pending", "waiting for a person's approval"

    def _grant(
        self,
        kind: str,
        name: str,
        item: Any,
        outcome: dict[str, Any] | None = None,
        principal: str | None = None,
    ) -> str:
        """Admit ``item`` (kept, or answered); returns why it could not be, or ``""``."""
        if kind == "tool":
            if self.keep:
                self._asked.discard(name)
                self._admitted[name] = item
                self._granted.append(name)
            return ""
        try:
            if self.keep and self._thinker.conversation.attach(item):  # a bad body fails here
                self._offer_required(item, principal)
            elif outcome is not None:
                outcome.setdefault("instructions", {})[name] = item.body()
        except Exception:
            logger.exception("skill %r could not be attached; refused", name)
            return "the skill's instructions could not be read"
        return ""

    def _offer_required(self, skill: Any, principal: str | None) -> None:
        """Grant the deferred tools a just-attached skill requires, as the policy allows.

        Each is judged as any tool is; one that is refused or needs a person is left to
        be asked for (and the decision is on the record).
        """
        catalog = self._palette.requestable
        for provider in required_tools(skill, catalog):
            name = provider.name
            if self._has("tool", name):
                continue
            verdict, reason = self._judge("tool", name, provider)
            if verdict is Verdict.ALLOW:
                self._grant("tool", name, provider)
                reason = f"required by the skill {skill.id}"
                self.record("tool", name, "granted", reason, principal=principal)
            elif verdict is Verdict.REFUSED:
                self.record("tool", name, "refused", reason, principal=principal)

    def _evict(self, principal: str | None) -> None:
        """Drop the least recently used kept grants beyond ``max_granted``, on the record."""
        bound = self.max_granted
        evicted = False
        while bound is not None and len(self._admitted) > bound:
            name = next(iter(self._admitted))
            del self._admitted[name]
            if name in self._granted:
                self._granted.remove(name)
            reason = f"the least recently used of more than {bound} granted tools (max_granted)"
            self.record("tool", name, "evicted", reason, principal=principal)
            evicted = True
        if evicted and self.on_evicted is not None:
            self.on_evicted()

    def _granted_now(self, principal: str | None) -> None:
        """Evict beyond the bound, then tell the binding that kept grants wait to join."""
        with self._lock:
            self._evict(principal)
        if self._granted and self.on_granted is not None:
            self.on_granted()

    def _note(self, kind: str, pending: bool) -> str:
        if kind != "tool":
            if not self.keep:
                return "Follow the granted skills' instructions (in `instructions`)."
            return "Granted skills are added to your instructions from your next turn."
        note = "Granted tools can be called now"
        note += " and are offered from your next turn." if self.keep else "."
        if pending and not self.keep:
            note += " A person approves each call of a pending tool."
        elif pending:
            note += " Pending tools are granted once a person approves them."
        return note

    def _has(self, kind: str, name: str) -> bool:
        if kind == "tool":
            return name in self._admitted
        return bool(self._thinker.conversation.is_attached(name))

    # -- approvals and the record -------------------------------------------------------

    def resolve(self, approval: Approval, approve: bool) -> None:
        """Apply a person's answer to a pending grant (already taken off the pending list)."""
        decision: GrantDecision = "granted" if approve else "refused"
        with self._lock:
            palette = self._palette
            catalog: Mapping[str, Any] = (
                palette.tool_catalog if approval.kind == "tool" else palette.skill_catalog
            )
            item = catalog.get(approval.name)
            reason = "a person's decision"
            if approve and self._has(approval.kind, approval.name):
                decision = "already_present"  # granted meanwhile (another approval): one grant
            elif approve and item is None:
                decision = "refused"
                reason = f"approved, but no longer in this agent's {approval.kind} catalog"
            elif approve:
                failed = self._grant(approval.kind, approval.name, item, None, approval.principal)
                if failed:
                    decision, reason = "refused", failed
            principal = approval.principal
            self.record(approval.kind, approval.name, decision, reason, principal=principal)
        self._granted_now(approval.principal)

    def record(
        self,
        kind: str,
        name: str,
        decision: GrantDecision,
        reason: str,
        *,
        call_id: str | None = None,
        parent: str | None = None,
        principal: str | None = None,
    ) -> None:
        """Keep one decision on the hub's record (and tell the ``toolpalette_grant`` hooks).

        ``call_id`` and ``parent`` name a call a ``run_code`` script made, and the script's;
        without them, those of the script's call running now, if any (``SCRIPT_CALL``).
        ``principal`` is whom the decision was made for (the asking call's), None for a
        host's own.
        """
        thinker = self._thinker
        cls = type(thinker)
        record = GrantRecord(
            thinker=f"{cls.__module__}.{cls.__qualname__}",
            conversation=thinker.conversation.id,
            turn=thinker.turn_number,
            kind="tool" if kind == "tool" else "skill" if kind == "skill" else "call",
            name=name,
            decision=decision,
            reason=reason,
            principal=principal,
        )
        if call_id is not None:
            record = dataclasses.replace(record, call_id=call_id, parent=parent)
        thinker.hub.record_grant(record)

    def _withdrawn(self, approval: Approval) -> None:
        """A grant's approver failed after the grant was recorded pending: record the end."""
        with self._lock:
            reason, principal = "the approver failed", approval.principal
            self.record(approval.kind, approval.name, "refused", reason, principal=principal)
