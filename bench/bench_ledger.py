"""The grant ledger's memory over a million refused calls: flat, the hook hearing each.

A stateless server refuses a deferred call of an anonymous client with one grant
record. ``BENCH_LEDGER_RECORDS`` records (default a million) go through
``hub.record_grant`` with a ``toolpalette_grant`` listener counting them, and
``BENCH_LEDGER_CALLS`` refused calls (default 20,000) through ``thinker.call`` as the
server makes them. The table gives the traced memory the ledger holds after a tenth of
the records and after all of them; goal (issue: faults round 4, item 4): the ratio
stays under 1.1 (the window of 10,000 records is full long before a tenth).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import tracemalloc
from typing import Any

from toolpalette import (
    Decision,
    GrantRecord,
    Thinker,
    ToolHub,
    ToolPolicy,
    ToolSelector,
    hookimpl,
    tool,
)

from bench._summary import record

RECORDS = int(os.environ.get("BENCH_LEDGER_RECORDS", "1000000"))
CALLS = int(os.environ.get("BENCH_LEDGER_CALLS", "20000"))


@tool
def wire_money(to_account: str) -> str:
    """Move money (deferred; every grant refused)."""
    return "moved"


class Refusing(ToolPolicy):
    def decide_grant(self, thinker: Any, kind: str, name: str, item: Any) -> Decision:
        return Decision.DENY


class Stateless(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(wire_money, deferred=True)


class Counter:
    def __init__(self) -> None:
        self.heard = 0

    @hookimpl
    def toolpalette_grant(self, record: GrantRecord) -> None:
        self.heard += 1


def _traced() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def _records(hub: ToolHub, n: int, start: int) -> None:
    for i in range(start, start + n):
        hub.record_grant(
            GrantRecord("app.Server", f"c-{i}", 1, "tool", "wire_money", "refused", "denied")
        )


async def _calls(thinker: Thinker, n: int) -> None:
    for i in range(n):
        await thinker.call("wire_money", {"to_account": f"A-{i}"}, deferred=True)


def main(argv: list[str]) -> None:
    logging.getLogger("toolpalette.failures").setLevel(logging.ERROR)  # one per refusal
    hub = ToolHub(autoload=False, config={})
    counter = Counter()
    hub.add_plugin(counter, name="counter")
    tracemalloc.start()
    base = _traced()
    tenth = max(RECORDS // 10, 20_000)
    _records(hub, tenth, 0)
    early = _traced() - base
    _records(hub, RECORDS - tenth, tenth)
    late = _traced() - base
    thinker = hub.bind(Stateless, policy=Refusing(), keep_grants=False)
    before_calls = _traced()
    asyncio.run(_calls(thinker, CALLS // 2))
    calls_half = _traced() - before_calls
    asyncio.run(_calls(thinker, CALLS - CALLS // 2))
    calls_all = _traced() - before_calls
    tracemalloc.stop()
    kept = len(hub.grants())
    print(f"\n## Grant ledger memory ({RECORDS:,} records, {CALLS:,} refused calls)\n")
    print("| case | after a tenth / half | after all | ratio | kept | heard |")
    print("|---|---|---|---|---|---|")
    print(
        f"| records | {early / 1024:,.0f} KiB | {late / 1024:,.0f} KiB | "
        f"{late / early:.2f} | {kept:,} | {counter.heard:,} |"
    )
    print(
        f"| refused calls | {calls_half / 1024:,.0f} KiB | {calls_all / 1024:,.0f} KiB | "
        f"{calls_all / max(calls_half, 1):.2f} | | |"
    )
    record(
        "ledger memory, all records / a tenth",
        late,
        "a tenth",
        early,
        unit="bytes",
        goal="<= 1.1",
    )
