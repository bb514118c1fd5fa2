"""Admission: deciding a model's requests for deferred tools and skills, and granting them.

``request_tools`` and ``request_skill`` (and a host's ``thinker.admit``) come here. Each
name is decided once, in order: already present; in the thinker's catalog; the
read-only binding; the ``toolpalette_admit`` hooks (the first answer decides, a raising
one refuses); the policy's ``decide_grant`` (a deny or a raising policy refuses, an ask
waits for a person). A granted tool is offered from the next turn (the reconcile adds
it, ``reconcile.py``); a granted skill attaches to the conversation at once and rides
its preamble from the next turn.

Every decision is a ``GrantRecord`` on the hub, delivered to the ``toolpalette_grant``
hooks, recorded before anything can withdraw it. What a hook, the policy or the
approver raises, whatever it is but ``KeyboardInterrupt``, is contained: a grant is
refused, or the hook's failure logged, and nothing is left granted or pending by it.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from toolpalette._agents.approvals import Approvals, Notify
from toolpalette._agents.grants import GrantDecision, GrantRecord
from toolpalette._agents.turn import Approval
from toolpalette._hookcall import first_result, in_call_order
from toolpalette._run.consent import Decision, contained, read_decision

if TYPE_CHECKING:
    from toolpalette._agents.policy import ToolPolicy
    from toolpalette._agents.reconcile import Reconciler
    from toolpalette._tools.provider import ToolProvider

__all__ = ["Admission"]

logger = logging.getLogger("toolpalette.thinker")


class Admission:
    """One thinker's grants: what was admitted, what waits for a person, the record.

    Args:
        thinker: the bound thinker (hooks and the policy are told which one asks).
        palette: its reconciler, which holds the catalogs asked from.
        policy: its policy (``decide_grant``).
        read_only: its read-only binding (a mutating tool is never granted).
        approver: the host's approver, told of each approval (calls' and grants').
    """

    def __init__(
        self,
        thinker: Any,
        palette: Reconciler,
        policy: ToolPolicy,
        read_only: bool,
        approver: Notify | None,
    ) -> None:
        self._thinker = thinker
        self._palette = palette
        self._policy = policy
        self._read_only = read_only
        self._lock = threading.RLock()
        self._admitted: dict[str, ToolProvider] = {}
        self._granted: list[str] = []
        self.approvals = Approvals(approver, withdrawn=self._withdrawn)
        """The thinker's pending approvals, of calls and of grants."""

    @property
    def turn_number(self) -> int:
        """The thinker's current turn (approvals and records carry it)."""
        number: int = self._thinker.turn_number
        return number

    @property
    def admitted(self) -> Mapping[str, ToolProvider]:
        """Every tool granted so far, in the order granted."""
        return self._admitted

    def take_granted(self) -> list[str]:
        """The names of the tools granted since the last call, in order (a turn begins)."""
        with self._lock:
            granted, self._granted = self._granted, []
        return granted

    def admit(self, kind: str, names: Sequence[str]) -> dict[str, Any]:
        """Decide a request for deferred tools (``kind="tool"``) or skills, each name once.

        Returns the outcome by name: ``granted``, ``already_present``, ``pending``
        and ``refused`` (with reasons). Every decision is recorded.
        """
        outcome: dict[str, Any] = {
            "granted": [],
            "already_present": [],
            "pending": [],
            "refused": [],
        }
        with self._lock:
            for name in dict.fromkeys(names):
                decision, reason = self._decide(kind, name)
                self.record(kind, name, decision, reason)  # before any withdrawal of it
                if decision == "refused":
                    outcome["refused"].append({"name": name, "reason": reason})
                else:
                    outcome[decision].append(name)
        if outcome["granted"]:
            outcome["note"] = "Granted items are available from your next turn."
        return outcome

    def _decide(self, kind: str, name: str) -> tuple[GrantDecision, str]:
        thinker = self._thinker
        palette = self._palette
        if kind == "tool":
            if name in self._admitted or (
                palette.registry.has_tool(name) and name not in palette.tool_catalog
            ):
                return "already_present", ""
            item: Any = palette.tool_catalog.get(name)
        else:
            if name in thinker.conversation.attached:
                return "already_present", ""
            item = palette.skill_catalog.get(name)
        if item is None:
            return "refused", f"not in this agent's {kind} catalog"
        if kind == "tool" and self._read_only and not item.read_only:
            return "refused", "this agent is read-only and the tool changes things"
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
            return "refused", "a host hook failed while deciding"
        if verdict is False or isinstance(verdict, str):
            return "refused", verdict if isinstance(verdict, str) else "refused by a host hook"
        try:
            decision, _ = read_decision(self._policy.decide_grant(thinker, kind, name, item))
        except BaseException as exc:  # a broken policy refuses (fail closed), on the record
            if not contained(exc):
                raise
            logger.error("the policy raised deciding %s %r; refused", kind, name, exc_info=exc)
            return "refused", "the policy failed while deciding"
        if decision is Decision.DENY:
            return "refused", "denied by policy"
        if decision is Decision.ASK:
            pending: Literal["tool", "skill"] = "tool" if kind == "tool" else "skill"
            approval = Approval(uuid.uuid4().hex, pending, name, None, thinker.turn_number)
            if not self.approvals.ask_grant(approval):
                return "refused", "no person could be asked (the approver failed)"
            return "pending", "waiting for a person's approval"
        failed = self._grant(kind, name, item)
        return ("refused", failed) if failed else ("granted", "")

    def _grant(self, kind: str, name: str, item: Any) -> str:
        """Admit ``item``; returns why it could not be, or ``""`` when it was."""
        if kind == "tool":
            self._admitted[name] = item
            self._granted.append(name)
            return ""
        try:
            self._thinker.conversation.attach(item)  # reads the body: a bad one fails here
        except Exception:
            logger.exception("skill %r could not be attached; refused", name)
            return "the skill's instructions could not be read"
        return ""

    def _has(self, kind: str, name: str) -> bool:
        if kind == "tool":
            return name in self._admitted
        return bool(self._thinker.conversation.is_attached(name))

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
                failed = self._grant(approval.kind, approval.name, item)
                if failed:
                    decision, reason = "refused", failed
            self.record(approval.kind, approval.name, decision, reason)

    def record(self, kind: str, name: str, decision: GrantDecision, reason: str) -> None:
        """Keep one decision on the hub's record (and tell the ``toolpalette_grant`` hooks)."""
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
        )
        thinker.hub.record_grant(record)

    def _withdrawn(self, approval: Approval) -> None:
        """A grant's approver failed after the grant was recorded pending: record the end."""
        with self._lock:
            self.record(approval.kind, approval.name, "refused", "the approver failed")
