"""What toolpalette adds to the mcp SDK's own ``call_tool``, against the same server.

One ``add(a, b)`` tool of an SDK ``MCPServer``, reached two ways, each measured three
ways in the same run:

- in-memory (the server in this process) and over stdio (the server in a subprocess,
  one per case, all started before measuring);
- the SDK's bare ``ClientSession.call_tool`` (the floor), the SDK's ``Client.call_tool``
  (what toolpalette's pool calls), and toolpalette: ``Executor.execute`` of the
  server's ``MCPToolProvider`` (input validation, deadline, output cap, the hop to the
  pool's loop and back);
- and the two parts of toolpalette's overhead alone: its pipeline running a local async
  tool, and the hop to the pool's loop and back with nothing to do.

Cases run in interleaved rounds so that machine noise hits them alike; the table shows
the median (and 90th percentile) of single calls over all rounds, and the overhead
toolpalette adds over the bare session call (goal: under 15 microseconds). That
overhead includes the hop to the pool's own event loop thread and back (two
cross-thread wake-ups), which the bare session, used on the benchmark's own loop, does
not pay. ``BENCH_ROUNDS`` /
``BENCH_CALLS`` scale the run.

Then the delay one server adds to another's calls: calls to the ``add`` server over
stdio, one after the other, while a second server of the same hub is idle (the anchor),
and while that server answers call after call with results a naive validator checks
pair by pair (``uniqueItems`` over :data:`HOSTILE_ITEMS` objects,
``bench/mcp_hostile_server.py``). Both servers share the hub's one client loop; the
figure is the slowest healthy call under the hostile load against the median idle one.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import MCPServer
from toolpalette import Executor, ToolHub, ToolRegistry, tool

from bench._summary import record

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "15"))
CALLS = int(os.environ.get("BENCH_CALLS", "200"))
GOAL_US = 15.0
ARGS = {"a": 1, "b": 2}
SERVER_SCRIPT = Path(__file__).with_name("mcp_add_server.py")
HOSTILE_SCRIPT = Path(__file__).with_name("mcp_hostile_server.py")
HOSTILE_ITEMS = 1500
"""Objects in each hostile result: a naive ``uniqueItems`` compares every pair."""
STALL_CALLS = int(os.environ.get("BENCH_STALL_CALLS", "40"))
"""Healthy calls measured in each phase of the stall case."""


def build_server() -> MCPServer:
    server = MCPServer("bench")

    @server.tool()
    async def add(a: int, b: int) -> int:  # async: no server-side thread hop to measure
        """Add two integers."""
        return a + b

    return server


Case = tuple[str, Callable[[], Awaitable[Any]]]


async def _time(call: Callable[[], Awaitable[Any]], n: int) -> list[float]:
    """Each call's own time in microseconds (per call, so that a stall of the machine
    shows as one slow call, not as a slower round)."""
    clock, times = time.perf_counter, []
    for _ in range(n):
        start = clock()
        await call()
        times.append((clock() - start) * 1e6)
    return times


async def _cases(stack: contextlib.AsyncExitStack) -> tuple[list[Case], list[ToolHub]]:
    cases: list[Case] = []
    hubs: list[ToolHub] = []
    stdio = StdioServerParameters(command=sys.executable, args=[str(SERVER_SCRIPT)])
    for transport, target in (("in-memory", None), ("stdio", stdio)):
        bare = await stack.enter_async_context(Client(target or build_server()))
        wrapped = await stack.enter_async_context(Client(target or build_server()))
        if target is None:
            servers: dict[str, Any] = {"bench": build_server()}
        else:
            servers = {"bench": {"command": sys.executable, "args": [str(SERVER_SCRIPT)]}}
        hub = ToolHub(autoload=False, config={}, mcp_servers=servers)
        hubs.append(hub)
        executor = Executor(hub.catalog())
        session = bare.session

        async def bare_call(session: Any = session) -> Any:
            return await session.call_tool("add", ARGS)

        async def client_call(client: Client = wrapped) -> Any:
            return await client.call_tool("add", ARGS)

        async def toolpalette_call(executor: Executor = executor) -> Any:
            result = await executor.execute("add", ARGS)
            assert not result.is_error, result
            return result

        for call in (bare_call, client_call, toolpalette_call):
            await call()  # warm: sessions open, validators compiled
        cases += [
            (f"{transport}: SDK ClientSession.call_tool", bare_call),
            (f"{transport}: SDK Client.call_tool", client_call),
            (f"{transport}: toolpalette Executor.execute", toolpalette_call),
        ]
    cases += _parts(hubs[0])
    return cases, hubs


async def _nothing() -> None:
    return None


def _parts(hub: ToolHub) -> list[Case]:
    """Where toolpalette's overhead goes: its pipeline alone, and the hop alone."""
    pool = hub.mcp().pool

    @tool(name="local_add")
    async def local_add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    executor = Executor(ToolRegistry([local_add]))

    async def pipeline() -> Any:
        return await executor.execute("local_add", ARGS)

    async def hop() -> Any:
        return await pool.run_async(_nothing())

    return [
        ("part: the pipeline alone (a local async tool)", pipeline),
        ("part: the hop to the pool's loop and back", hop),
    ]


async def measure() -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {}
    async with contextlib.AsyncExitStack() as stack:
        cases, hubs = await _cases(stack)
        try:
            for _ in range(ROUNDS):
                for label, call in cases:
                    samples.setdefault(label, []).extend(await _time(call, CALLS))
        finally:
            for hub in hubs:
                hub.close()
    return samples


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


async def _healthy_calls(executor: Executor, n: int) -> list[float]:
    clock, times = time.perf_counter, []
    for _ in range(n):
        start = clock()
        result = await executor.execute("add", ARGS)
        times.append((clock() - start) * 1e3)
        assert not result.is_error, result
    return times


async def measure_stall() -> tuple[list[float], list[float], int]:
    """Healthy calls' times (ms) beside an idle server, then beside a hostile one.

    Also returns how many hostile calls ended while the healthy ones were measured.
    """
    servers = {
        "add": {"command": sys.executable, "args": [str(SERVER_SCRIPT)]},
        "hostile": {"command": sys.executable, "args": [str(HOSTILE_SCRIPT)], "timeout": 300},
    }
    hub = ToolHub(autoload=False, config={}, mcp_servers=servers)
    try:
        executor = Executor(hub.catalog(), timeout=300, output_cap=1 << 24)
        await _healthy_calls(executor, 5)  # warm
        first = await executor.execute("unique", {"n": HOSTILE_ITEMS})
        assert not first.is_error, first
        idle = await _healthy_calls(executor, STALL_CALLS)
        stop, ended = asyncio.Event(), [0]

        async def hostile() -> None:
            while not stop.is_set():
                await executor.execute("unique", {"n": HOSTILE_ITEMS})
                ended[0] += 1

        task = asyncio.ensure_future(hostile())
        await asyncio.sleep(0.05)
        try:
            loaded = await _healthy_calls(executor, STALL_CALLS)
        finally:
            stop.set()
            await task
        return idle, loaded, ended[0]
    finally:
        hub.close()


def _stall_report() -> None:
    idle, loaded, hostile_calls = asyncio.run(measure_stall())
    rows = []
    for label, times in (("beside an idle server", idle), ("beside the hostile one", loaded)):
        p90 = statistics.quantiles(times, n=10)[-1]
        rows.append((label, f"{statistics.median(times):.2f}", f"{p90:.2f}", f"{max(times):.2f}"))
    print(
        f"\nThe delay one server adds to another's calls: {STALL_CALLS} calls to `add` over "
        f"stdio in each phase; the hostile server answered {hostile_calls} results of "
        f"{HOSTILE_ITEMS} objects under `uniqueItems` meanwhile (milliseconds)\n"
    )
    print(_table(("healthy call", "median ms", "p90 ms", "max ms"), rows))
    record(
        "slowest call to a healthy MCP server beside a hostile one, stdio",
        max(loaded),
        "median call beside an idle server",
        statistics.median(idle),
        unit="ms",
    )


def main(argv: list[str]) -> None:
    """Print the per-call medians and the overhead over the bare session call."""
    samples = asyncio.run(measure())
    medians = {label: statistics.median(values) for label, values in samples.items()}
    rows = []
    for label, median in medians.items():
        transport = label.split(":")[0]
        floor = medians.get(f"{transport}: SDK ClientSession.call_tool")
        added = f"{median - floor:+.1f}" if floor is not None else ""
        p90 = statistics.quantiles(samples[label], n=10)[-1]
        rows.append((label, f"{median:.1f}", f"{p90:.1f}", added))
    print(
        f"{ROUNDS} rounds x {CALLS} calls per case, interleaved; medians (and 90th "
        f"percentiles) of single calls in microseconds; Python {sys.version.split()[0]}\n"
    )
    print(_table(("case", "median µs", "p90 µs", "over bare session µs"), rows))
    print()
    targets = []
    for transport in ("in-memory", "stdio"):
        added = (
            medians[f"{transport}: toolpalette Executor.execute"]
            - medians[f"{transport}: SDK ClientSession.call_tool"]
        )
        status = "met" if added < GOAL_US else "not met"
        targets.append((f"{transport}: added per call < {GOAL_US:g} µs", f"{added:+.1f}", status))
        bare = medians[f"{transport}: SDK ClientSession.call_tool"]
        record(
            f"MCP client call, {transport} (goal: < {GOAL_US:g} µs added)",
            medians[f"{transport}: toolpalette Executor.execute"],
            "bare `ClientSession.call_tool`",
            bare,
            unit="µs",
            goal=f"<= {1 + GOAL_US / bare:.3f}",
        )
    print(_table(("target", "measured µs", "status"), targets))
    _stall_report()


if __name__ == "__main__":
    main(sys.argv[1:])
