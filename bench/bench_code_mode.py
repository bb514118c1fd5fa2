"""Code mode against direct calls: model round trips, result bytes, latency and memory.

Jobs built on the first-party packs (``toolpalette-files``, ``toolpalette-sqlite``) on
scratch data, each replayed by a scripted model twice: the same calls made directly
(one call a turn, and with each turn's independent calls made together), then as one
``run_code`` script. Every call goes through a real thinker's pipeline.

- **Round trips and bytes**: the model turns a job takes (its tool turns, plus the turn
  that answers) and the bytes of tool results that enter the model's context, direct
  against code mode. Goal: at least 3x fewer of both on jobs of 5 or more calls
  (against one call a turn; the parallel figure is printed beside it).
- **Latency**: a 3-call script on a warm sandbox (a kept worker) against the same
  three calls made directly, of a tool that does nothing. Goal: at most 5 ms added.
  A script on the default sandbox (a worker started for each script) is printed too.
- **Inner-call overhead**: one call a script makes (a 50-call script less an empty
  one, per call) against one direct pipeline call. Goal: at most 2x.
- **Memory** per warm sandbox: the worker's resident memory, for information.

Run with ``python -m bench bench_code_mode`` (``--quick``: fewer rounds).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolpalette import CodeLimits, Thinker, ToolHub, ToolSelector, tool
from toolpalette._agents.code_mode import RunCodeProvider
from toolpalette._agents.sandbox import Sandbox
from toolpalette._tools.provider import as_provider

from bench._summary import record

ROUNDS = max(5, int(os.environ.get("BENCH_ROUNDS", "31")))
FILES = 20
CUSTOMERS = 8
LIMITS = CodeLimits(wall_time=30.0, tool_calls=200)


@tool(read_only=True)
def noop(x: int) -> int:
    """Return x (a tool that does nothing, to measure the pipeline and the sandbox)."""
    return x


class Packs(Thinker):
    """The first-party packs' read-only tools, in code mode."""

    code_mode = True
    read_only = True
    code_limits = LIMITS

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().package("toolpalette_files").package("toolpalette_sqlite")


class Bare(Thinker):
    """Only ``noop``; ``run_code`` is given per turn, on a warm or a fresh sandbox."""

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(noop)


def _seed(folder: Path) -> dict[str, Any]:
    workspace = folder / "workspace"
    (workspace / "orders").mkdir(parents=True)
    for i in range(FILES):
        order = {"id": i, "customer": f"c{i % 5}", "amount": 10 + i, "note": "x" * 200}
        (workspace / "orders" / f"order-{i:02d}.json").write_text(json.dumps(order))
    database = folder / "shop.db"
    with contextlib.closing(sqlite3.connect(database)) as db, db:
        db.executescript(
            "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, city TEXT);"
            "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, total REAL);"
        )
        cities = ["Lyon", "Porto", "Berlin", "Oslo"]
        db.executemany(
            "INSERT INTO customers (name, city) VALUES (?, ?)",
            [(f"name{i}", cities[i % 4]) for i in range(CUSTOMERS)],
        )
        db.executemany(
            "INSERT INTO orders (customer_id, total) VALUES (?, ?)",
            [(1 + i % CUSTOMERS, 5.0 + i) for i in range(60)],
        )
    db.close()
    return {"packs": {"files": {"root": str(workspace)}, "sqlite": {"database": str(database)}}}


@dataclass
class Job:
    """A multi-step job: its direct calls, turn by turn, and the script that does it."""

    name: str
    direct: Callable[[Thinker], Awaitable[tuple[list[int], Any]]]
    script: str


async def _sum_files(thinker: Thinker) -> tuple[list[int], Any]:
    """List the folder, read 20 files, sum a field (the model adds up)."""
    sizes: list[int] = []
    listed = await thinker.call("list_directory", {"path": "orders"})
    sizes.append(len(listed.text))
    names = [e["name"] for e in (listed.structured or {})["entries"]]
    total = 0
    for name in names:  # independent of each other: one turn, when made together
        read = await thinker.call("read_file", {"path": f"orders/{name}"})
        sizes.append(len(read.text))
        total += json.loads((read.structured or {})["content"])["amount"]
    return sizes, total


SUM_FILES = """
import json
entries = list_directory(path="orders")["entries"]
total = 0
for entry in entries:
    total += json.loads(read_file(path="orders/" + entry["name"])["content"])["amount"]
total
"""


async def _join(thinker: Thinker) -> tuple[list[int], Any]:
    """Two queries, joined by the model: each customer's city, each order's total."""
    customers = await thinker.call("query", {"sql": "SELECT id, city FROM customers"})
    orders = await thinker.call("query", {"sql": "SELECT customer_id, total FROM orders"})
    city = {row[0]: row[1] for row in (customers.structured or {})["rows"]}
    by_city: dict[str, float] = {}
    for customer, total in (orders.structured or {})["rows"]:
        by_city[city[customer]] = by_city.get(city[customer], 0) + total
    return [len(customers.text), len(orders.text)], by_city


JOIN = """
city = {row[0]: row[1] for row in query(sql="SELECT id, city FROM customers")["rows"]}
by_city = {}
for customer, total in query(sql="SELECT customer_id, total FROM orders")["rows"]:
    by_city[city[customer]] = by_city.get(city[customer], 0) + total
by_city
"""


async def _per_customer(thinker: Thinker) -> tuple[list[int], Any]:
    """List the customers, then one query each for their orders' total: 9 calls."""
    listed = await thinker.call("query", {"sql": "SELECT id FROM customers"})
    sizes = [len(listed.text)]
    totals = {}
    for (customer,) in (listed.structured or {})["rows"]:
        sql = "SELECT total FROM orders WHERE customer_id = ?"
        rows = await thinker.call("query", {"sql": sql, "params": [customer]})
        sizes.append(len(rows.text))
        totals[customer] = sum(r[0] for r in (rows.structured or {})["rows"])
    return sizes, totals


PER_CUSTOMER = """
totals = {}
for (customer,) in query(sql="SELECT id FROM customers")["rows"]:
    rows = query(sql="SELECT total FROM orders WHERE customer_id = ?", params=[customer])
    totals[str(customer)] = sum(r[0] for r in rows["rows"])
totals
"""

JOBS = [
    Job("read 20 files, sum a field", _sum_files, SUM_FILES),
    Job("join two SQLite queries", _join, JOIN),
    Job("one query per customer (9 calls)", _per_customer, PER_CUSTOMER),
]
WAVES = {JOBS[0].name: 2, JOBS[1].name: 1, JOBS[2].name: 2}
"""The turns each job's calls take when a turn's independent calls are made together."""


def _same(direct: Any, scripted: Any) -> bool:
    if isinstance(direct, dict):
        return {str(k): v for k, v in direct.items()} == scripted
    return bool(direct == scripted)


async def round_trips(config: dict[str, Any]) -> None:
    hub = ToolHub(config=config)
    thinker = hub.bind(Packs)
    thinker.begin_turn()
    print(
        "| job | calls | round trips: direct (one a turn) | direct (parallel) | code mode "
        "| result bytes: direct | code mode | bytes ratio |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for job in JOBS:
        sizes, answer = await job.direct(thinker)
        result = await thinker.call("run_code", {"code": job.script})
        assert not result.is_error, result.text
        assert _same(answer, (result.structured or {})["result"]), (answer, result.text)
        calls = len(sizes)
        direct, parallel, code = calls + 1, WAVES[job.name] + 1, 2
        direct_bytes, code_bytes = sum(sizes), len(result.text)
        print(
            f"| {job.name} | {calls} | {direct} | {parallel} | {code} | {direct_bytes:,} "
            f"| {code_bytes:,} | {direct_bytes / code_bytes:.1f}x |"
        )
        goal = ">= 3" if calls >= 5 else ""
        record(
            f"code mode, {job.name}: round trips",
            direct,
            "code mode",
            code,
            unit="turns",
            goal=goal,
        )
        record(
            f"code mode, {job.name}: result bytes",
            direct_bytes,
            "code mode",
            code_bytes,
            unit="B",
            goal=goal,
        )


def _median(samples: list[float]) -> float:
    return statistics.median(samples)


async def _timed(call: Callable[[], Awaitable[Any]], rounds: int) -> list[float]:
    samples = []
    for _ in range(rounds):
        begun = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - begun)
    return samples


def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


async def latency() -> None:
    hub = ToolHub(autoload=False, config={})
    three = "noop(x=1)\nnoop(x=2)\nnoop(x=3)"
    fifty = "for i in range(50):\n    noop(x=i)"
    async with Sandbox(wall_time=LIMITS.wall_time) as sandbox:
        warm = hub.bind(Bare)
        warm.begin_turn(extra=[RunCodeProvider([as_provider(noop)], LIMITS, sandbox=sandbox)])
        fresh = hub.bind(Bare)
        fresh.begin_turn(extra=[RunCodeProvider([as_provider(noop)], LIMITS)])

        async def direct_three() -> None:
            for x in (1, 2, 3):
                await warm.call("noop", {"x": x})

        async def script(thinker: Thinker, code: str) -> None:
            result = await thinker.call("run_code", {"code": code})
            assert not result.is_error, result.text

        for _ in range(3):  # warm both paths up
            await direct_three()
            await script(warm, three)
            await script(fresh, three)
        rounds = ROUNDS
        direct = _median(await _timed(direct_three, rounds))
        warm_three = _median(await _timed(lambda: script(warm, three), rounds))
        fresh_three = _median(await _timed(lambda: script(fresh, three), rounds))
        one_direct = _median(await _timed(lambda: warm.call("noop", {"x": 1}), rounds * 10))
        empty = _median(await _timed(lambda: script(warm, "0"), rounds))
        many = _median(await _timed(lambda: script(warm, fifty), rounds))
        inner = (many - empty) / 50
        async with sandbox.checkout(LIMITS) as session:
            await session.feed_run("x = [i for i in range(1000)]")
            pid = session.worker_pid
            worker_kib = _rss_kib(pid) if pid else 0
    host_kib = _rss_kib(os.getpid())
    ms = 1000.0
    print("\n| case | median |")
    print("|---|---:|")
    print(f"| 3 direct calls of noop | {direct * ms:.2f} ms |")
    print(f"| 3-call script, warm sandbox | {warm_three * ms:.2f} ms |")
    print(f"| 3-call script, a worker started for it (the default) | {fresh_three * ms:.2f} ms |")
    print(f"| empty script, warm sandbox | {empty * ms:.2f} ms |")
    print(f"| one direct pipeline call | {one_direct * 1e6:.0f} us |")
    print(f"| one call inside a script ((50-call script - empty) / 50) | {inner * 1e6:.0f} us |")
    print(f"| warm sandbox worker, resident | {worker_kib / 1024:.1f} MiB |")
    print(f"| this host process, resident | {host_kib / 1024:.1f} MiB |")
    added = (warm_three - direct) * ms
    record(
        "code mode: 3-call script on a warm sandbox, ms added to 3 direct calls",
        added,
        "the goal's 5 ms",
        5.0,
        unit="ms",
        goal="<= 1",
    )
    record(
        "code mode: 3-call script, fresh worker, ms added",
        (fresh_three - direct) * ms,
        "the goal's 5 ms",
        5.0,
        unit="ms",
    )
    record(
        "code mode: one call inside a script",
        inner * 1e6,
        "one direct pipeline call",
        one_direct * 1e6,
        unit="us",
        goal="<= 2",
    )
    record(
        "code mode: memory per warm sandbox",
        worker_kib / 1024,
        "the host process",
        host_kib / 1024,
        unit="MiB",
    )


def main(argv: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-code-") as folder:
        config = _seed(Path(folder))
        asyncio.run(round_trips(config))
    asyncio.run(latency())


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
