"""Stateful admission, as a Hypothesis state machine.

Random sequences of: a pack joining the hub, a system-wide tool, a tool removed from the
palette mid-turn, a new turn, request_tools with catalog names or junk (through the
model's call, or straight to ``admit`` past validation, or from several threads at
once), and calls of random names.
Invariants: a call succeeds only for a name offered at the start of its turn (declared,
system-wide, from a pack, or granted earlier) or granted during it; each turn offers
exactly what the model predicts; grants stay inside the catalog; the granted records
are the grants, once each; the palette version never decreases.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import types
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)
from toolpalette import Thinker, ToolHub, ToolSelector, hookimpl, tool

RAN: list[str] = []


def _make(name: str, read_only: bool) -> Callable[[], str]:
    def fn() -> str:
        RAN.append(name)
        return name

    fn.__doc__ = f"The {name} tool."
    return tool(name=name, read_only=read_only)(fn)


def _tools(prefix: str, flags: list[bool]) -> dict[str, Callable[[], str]]:
    return {f"{prefix}{i}": _make(f"{prefix}{i}", flag) for i, flag in enumerate(flags)}


DECLARED = _tools("declared_", [True, False])
DEFERRED = _tools("deferred_", [True, False, True, False])
PACKED = _tools("packed_", [True, False, True])
SYSTEM = _tools("system_", [True, False])
ALL = {**DECLARED, **DEFERRED, **PACKED, **SYSTEM}


def _is_read_only(name: str) -> bool:
    from toolpalette import FunctionToolProvider

    return FunctionToolProvider(ALL[name]).read_only


READ_ONLY = {name for name in ALL if _is_read_only(name)}
JUNK = ["", "DECLARED_0", "deferred_0 ", "request_tools", "nope", "deferred_9"]
NAMES = st.sampled_from([*ALL, *JUNK, "request_tools", "request_skill"])


def _selector() -> ToolSelector:
    selector = ToolSelector().package("propack")
    for fn in DECLARED.values():
        selector.tool(fn)
    for fn in DEFERRED.values():
        selector.tool(fn, deferred=True)
    return selector


class Agent(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return _selector()


class ReadOnlyAgent(Agent):
    read_only = True


def _pack_module(name: str) -> types.ModuleType:
    module = types.ModuleType(f"propack.{name}")

    def toolpalette_register_tools() -> list[object]:
        return [PACKED[name]]

    module.toolpalette_register_tools = hookimpl(toolpalette_register_tools)  # type: ignore[attr-defined]
    return module


class Admission(RuleBasedStateMachine):
    """The hub and one bound thinker, against a model of what it should offer."""

    @initialize(read_only=st.booleans())
    def bind(self, read_only: bool) -> None:
        RAN.clear()
        self.loop = asyncio.new_event_loop()
        self.hub = ToolHub(autoload=False, config={})
        self.read_only = read_only
        self.thinker = self.hub.bind(ReadOnlyAgent if read_only else Agent)
        self.packs: set[str] = set()
        self.system: set[str] = set()
        self.granted: set[str] = set()
        self.offered: frozenset[str] = frozenset()
        self.removed: set[str] = set()
        self.catalog: frozenset[str] = frozenset()
        self.version = -1
        self.new_turn()

    # -- the model ------------------------------------------------------------------

    def expected_offer(self) -> set[str]:
        names = set(DECLARED) | self.packs | self.system | self.granted
        if self.read_only:
            names = {n for n in names if n in READ_ONLY}
        if self.requestable():
            names.add("request_tools")
        return names

    def requestable(self) -> set[str]:
        """What request_tools lists: a read-only agent may only ask for read-only tools."""
        catalog = set(DEFERRED) - self.granted
        return catalog & READ_ONLY if self.read_only else catalog

    def call(self, name: object, data: Any) -> Any:
        return self.loop.run_until_complete(self.thinker.call(name, data))

    def teardown(self) -> None:
        loop = getattr(self, "loop", None)
        if loop is not None:
            loop.close()

    # -- rules ----------------------------------------------------------------------

    @rule(name=st.sampled_from(sorted(PACKED)))
    def add_pack(self, name: str) -> None:
        if name not in self.packs:
            self.hub.add_plugin(_pack_module(name), name=f"pack-{name}")
            self.packs.add(name)

    @rule(name=st.sampled_from(sorted(SYSTEM)))
    def add_system_tool(self, name: str) -> None:
        self.hub.register_system_tool(SYSTEM[name])
        self.system.add(name)

    @rule(data=st.data())
    def remove_mid_turn(self, data: st.DataObject) -> None:
        present = sorted(self.thinker.palette.tool_names())
        if present:
            name = data.draw(st.sampled_from(present))
            assert self.thinker.palette.unregister(name)
            self.removed.add(name)

    @rule()
    def new_turn(self) -> None:
        turn = self.thinker.begin_turn()
        assert turn.version >= self.version
        self.version = turn.version
        self.offered = frozenset(turn.tool_names)
        self.removed = set()
        assert set(self.offered) == self.expected_offer()
        assert len(turn.tool_names) == len(self.offered)
        if "request_tools" in self.offered:
            [meta] = [p for p in turn.tools if p.name == "request_tools"]
            members = meta.input_schema["properties"]["names"]["items"]["anyOf"]
            self.catalog = frozenset(m["enum"][0] for m in members)
            assert self.catalog == self.requestable()
        else:
            self.catalog = frozenset()
        assert all(p.read_only for p in turn.tools) or not self.read_only

    @precondition(lambda self: "request_tools" in self.offered)
    @rule(names=st.lists(NAMES, max_size=4))
    def request_tools(self, names: list[str]) -> None:
        before = len(self.hub.grants())
        result = self.call("request_tools", {"names": names})
        if "request_tools" in self.removed:
            assert result.status == 404
            return
        if not names:
            assert (result.status, result.code) == (400, "invalid_input"), result
            assert len(self.hub.grants()) == before
            return
        assert result.status == 200, result.text
        self.check_outcome(names, json.loads(result.text), echo=False)

    @rule(names=st.lists(NAMES, max_size=4))
    def admit_past_validation(self, names: list[str]) -> None:
        self.check_outcome(names, self.thinker.admit("tool", names), echo=True)

    def check_outcome(self, names: list[str], outcome: dict[str, Any], echo: bool) -> None:
        """Each name decided on its own; a grant is callable at once (in this turn)."""
        refused = [r["name"] for r in outcome["refused"]]
        for name in dict.fromkeys(names):
            if name in self.granted or (
                self.thinker.palette.has_tool(name) and name not in DEFERRED
            ):
                assert name in outcome["already_present"]
            elif name not in DEFERRED or (self.read_only and name not in READ_ONLY):
                # The model's junk is never repeated back: its place in the list is.
                shown = echo or re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name) is not None
                assert (name in refused) is shown, (name, refused)
            else:
                assert name in outcome["granted"]
                self.granted.add(name)
                self.offered |= {name}

    @rule(name=st.sampled_from(sorted(DEFERRED)), threads=st.integers(2, 6))
    def concurrent_admits(self, name: str, threads: int) -> None:
        start = threading.Barrier(threads)
        outcomes: list[dict[str, Any]] = []

        def ask() -> None:
            start.wait()
            outcomes.append(self.thinker.admit("tool", [name]))

        workers = [threading.Thread(target=ask) for _ in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        granted = sum(name in o["granted"] for o in outcomes)
        if name in self.granted or (self.read_only and name not in READ_ONLY):
            assert granted == 0
        else:
            assert granted == 1
            self.granted.add(name)
            self.offered |= {name}

    @rule(name=NAMES)
    def call_a_name(self, name: str) -> None:
        RAN.clear()
        if name.startswith("request_"):
            return  # asking is request_tools' rule
        result = self.call(name, {})
        in_palette = self.thinker.palette.has_tool(name)
        if name in self.offered and in_palette:
            assert result.status == 200, result
            assert [name] == RAN
            assert not self.read_only or name in READ_ONLY
        else:
            assert result.is_error
            assert (result.status, result.code) == (
                (403, "not_offered") if in_palette else (404, "unknown_tool")
            )
            assert RAN == []

    @rule(junk=st.one_of(st.none(), st.integers(), st.text(max_size=8)))
    def call_junk(self, junk: object) -> None:
        RAN.clear()
        result = self.call(junk, {})
        if isinstance(junk, str) and junk in self.offered and self.thinker.palette.has_tool(junk):
            assert result.status in (200, 400)
        else:
            assert result.is_error
        assert RAN in ([], [junk])

    # -- invariants -----------------------------------------------------------------

    @invariant()
    def grants_stay_in_the_catalog(self) -> None:
        assert self.granted <= set(DEFERRED)
        if self.read_only:
            assert self.granted <= READ_ONLY

    @invariant()
    def the_record_matches_the_grants(self) -> None:
        granted = [g.name for g in self.hub.grants() if g.decision == "granted"]
        assert sorted(granted) == sorted(self.granted)
        assert all(g.kind == "tool" for g in self.hub.grants())

    @invariant()
    def the_version_never_decreases(self) -> None:
        assert self.thinker.palette.version >= self.version


TestAdmission = Admission.TestCase
TestAdmission.settings = settings(
    max_examples=40,
    stateful_step_count=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
