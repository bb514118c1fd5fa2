"""What toolpalette adds to the mcp SDK's own ``call_tool``, against the same server.

Every server is reached two ways in the same run, in interleaved rounds so that machine
noise hits them alike: the SDK's bare ``ClientSession.call_tool`` on the benchmark's own
loop (the anchor), and toolpalette's ``Executor.execute`` of the server's tool (input
validation, deadline, output cap, the hop to the pool's loop and back, the result's
conversion). The servers:

- in memory: one ``add(a, b)`` tool of an SDK ``MCPServer`` in this process (and the
  SDK's ``Client.call_tool``, what toolpalette's pool calls, for reference);
- over stdio: the same ``add`` server in a subprocess, ``mcp-server-time``
  (``get_current_time``), ``mcp-server-git`` (``git_status`` of a one-commit
  repository), the filesystem server (``read_text_file``) and ``toolpalette serve``
  itself (``file_info`` of ``toolpalette-files``). A peer whose executable is not
  named by its variable (``TOOLPALETTE_MCP_TIME``, ``TOOLPALETTE_MCP_GIT``,
  ``TOOLPALETTE_MCP_FILESYSTEM``, as the tests use them; ``nox -s bench`` installs
  them) is left out, saying so.

The table shows the median (and 90th percentile) of single calls over all rounds and
the ratio against the bare session call on the same server (goal: at most 1.1x each),
and this process's CPU time per call.
Two parts of toolpalette's overhead are measured alone: its pipeline running a local
async tool, and the hop to the pool's loop and back with nothing to do (two cross-thread
wake-ups, which the bare session, used on the benchmark's own loop, does not pay).
``BENCH_ROUNDS`` / ``BENCH_CALLS`` scale the run (a stdio case makes a quarter of the
calls of an in-memory one a round).

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
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import MCPServer
from toolpalette import Executor, ToolHub, ToolRegistry, tool

from bench._summary import record

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "15"))
CALLS = int(os.environ.get("BENCH_CALLS", "200"))
GOAL = 1.1
ARGS = {"a": 1, "b": 2}
SERVER_SCRIPT = Path(__file__).with_name("mcp_add_server.py")
BARE = "SDK ClientSession.call_tool"
OURS = "toolpalette Executor.execute"
FASTMCP = "FastMCP Client.call_tool"
CPU_GOAL = 1.2
WALL_GOAL = 1.05
ON_POOL = "toolpalette's session, timed on the pool's loop (no hop, no pipeline)"
HOSTILE_SCRIPT = Path(__file__).with_name("mcp_hostile_server.py")
HOSTILE_ITEMS = 1500
"""Objects in each hostile result: a naive ``uniqueItems`` compares every pair."""
STALL_CALLS = int(os.environ.get("BENCH_STALL_CALLS", "40"))
"""Healthy calls measured in each phase of the stall case."""


def build_server() -> MCPServer:
    server = MCPServer("bench", log_level="WARNING")  # not INFO: no log line per call

    @server.tool()
    async def add(a: int, b: int) -> int:  # async: no server-side thread hop to measure
        """Add two integers."""
        return a + b

    return server


@dataclass
class Target:
    """One server, the tool called on it and how to start it (None: in memory)."""

    name: str
    tool: str
    arguments: dict[str, Any]
    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None

    @property
    def calls(self) -> int:
        return CALLS if self.command is None else max(1, CALLS // 4)


@dataclass
class Case:
    """One way of calling: ``call`` timed from the benchmark's loop, or ``batch(n)``
    giving the per-call times it measured itself (on the pool's loop)."""

    label: str
    call: Callable[[], Awaitable[Any]] | None
    calls: int
    batch: Callable[[int], Awaitable[list[float]]] | None = None

    async def times(self) -> list[float]:
        if self.batch is not None:
            return await self.batch(self.calls)
        assert self.call is not None
        return await _time(self.call, self.calls)


async def _time(call: Callable[[], Awaitable[Any]], n: int) -> list[float]:
    """Each call's own time in microseconds (per call, so that a stall of the machine
    shows as one slow call, not as a slower round), then this process's CPU time per
    call over the ``n`` calls (every thread's, the in-memory server's included)."""
    clock, cpu, times = time.perf_counter, time.process_time, []
    cpu_start = cpu()
    for _ in range(n):
        start = clock()
        await call()
        times.append((clock() - start) * 1e6)
    times.append((cpu() - cpu_start) / n * 1e6)
    return times


def _targets(work: Path) -> list[Target]:
    """Every server to measure; the real peers only where their variable names them."""
    targets = [
        Target("in-memory", "add", ARGS),
        Target("stdio add", "add", ARGS, sys.executable, [str(SERVER_SCRIPT)]),
    ]
    time_server = os.environ.get("TOOLPALETTE_MCP_TIME")
    if time_server:
        targets.append(
            Target(
                "stdio time",
                "get_current_time",
                {"timezone": "UTC"},
                time_server,
                ["--local-timezone", "UTC"],
            )
        )
    else:
        print("TOOLPALETTE_MCP_TIME is not set: mcp-server-time left out")
    git = os.environ.get("TOOLPALETTE_MCP_GIT")
    if git and shutil.which("git"):
        repo = _git_repo(work / "repo")
        targets.append(
            Target(
                "stdio git",
                "git_status",
                {"repo_path": str(repo)},
                git,
                ["--repository", str(repo)],
            )
        )
    else:
        print("TOOLPALETTE_MCP_GIT is not set (or no git): mcp-server-git left out")
    filesystem = os.environ.get("TOOLPALETTE_MCP_FILESYSTEM")
    if filesystem:
        root = work / "fs"
        root.mkdir()
        (root / "hello.txt").write_text("hello from disk\n")
        targets.append(
            Target(
                "stdio filesystem",
                "read_text_file",
                {"path": str(root / "hello.txt")},
                filesystem,
                [str(root)],
            )
        )
    else:
        print("TOOLPALETTE_MCP_FILESYSTEM is not set: the filesystem server left out")
    serve = shutil.which("toolpalette", path=str(Path(sys.executable).parent))
    if serve:
        files = work / "files"
        files.mkdir()
        (files / "a.txt").write_text("served text\n")
        targets.append(
            Target(
                "stdio toolpalette serve",
                "file_info",
                {"path": "a.txt"},
                serve,
                ["serve", "--select", "toolpalette-files"],
                {"TOOLPALETTE_FILES_ROOT": str(files)},
                str(work),
            )
        )
    else:
        print("the toolpalette command is not beside this interpreter: serve left out")
    return targets


def _git_repo(repo: Path) -> Path:
    repo.mkdir()
    run = ["git", "-C", str(repo), "-c", "user.name=b", "-c", "user.email=b@example.com"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "README.md").write_text("hello\n")
    subprocess.run([*run, "add", "README.md"], check=True)
    subprocess.run([*run, "commit", "-q", "-m", "first"], check=True)
    return repo


async def _cases(
    stack: contextlib.AsyncExitStack, targets: list[Target]
) -> tuple[list[Case], list[ToolHub]]:
    cases: list[Case] = []
    hubs: list[ToolHub] = []
    for target in targets:
        if target.command is None:
            bare_target: Any = build_server()
            servers: dict[str, Any] = {"bench": build_server()}
        else:
            env = {**os.environ, **target.env} if target.env else None
            bare_target = StdioServerParameters(
                command=target.command, args=target.args, env=env, cwd=target.cwd
            )
            servers = {
                "bench": {
                    "command": target.command,
                    "args": target.args,
                    "env": target.env,
                    **({"cwd": target.cwd} if target.cwd else {}),
                }
            }
        bare = await stack.enter_async_context(Client(bare_target))
        hub = ToolHub(autoload=False, config={}, mcp_servers=servers)
        hubs.append(hub)
        executor = Executor(hub.catalog())
        session, name, arguments = bare.session, target.tool, target.arguments

        async def bare_call(session: Any = session, name: str = name, a: Any = arguments) -> Any:
            result = await session.call_tool(name, a)
            assert not result.is_error, result
            return result

        async def toolpalette_call(
            ex: Executor = executor, name: str = name, a: Any = arguments
        ) -> Any:
            result = await ex.execute(name, a)
            assert not result.is_error, result
            return result

        calls: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
            (BARE, bare_call),
            (OURS, toolpalette_call),
        ]
        if target.command is not None:
            calls.append((FASTMCP, await _fastmcp_call(stack, target)))
        if target.command is None:
            wrapped = await stack.enter_async_context(Client(build_server()))

            async def client_call(client: Client = wrapped) -> Any:
                return await client.call_tool("add", ARGS)

            calls.insert(1, ("SDK Client.call_tool", client_call))
        for _, call in calls:
            await call()  # warm: sessions open, validators compiled
        cases += [Case(f"{target.name}: {what}", call, target.calls) for what, call in calls]
        cases.append(
            Case(f"{target.name}: {ON_POOL}", None, target.calls, _on_pool(hub, name, arguments))
        )
    cases += _parts(hubs[0])
    return cases, hubs


async def _fastmcp_call(
    stack: contextlib.AsyncExitStack, target: Target
) -> Callable[[], Awaitable[Any]]:
    """The peer: FastMCP's own ``Client`` over stdio to the same server, same tool."""
    from fastmcp import Client as FastMCPClient
    from fastmcp.client.transports import StdioTransport

    assert target.command is not None
    env = {**os.environ, **target.env} if target.env else None
    transport = StdioTransport(target.command, target.args, env=env, cwd=target.cwd)
    client = await stack.enter_async_context(FastMCPClient(transport))

    async def call() -> Any:
        return await client.call_tool(target.tool, target.arguments)

    return call


def _on_pool(hub: ToolHub, name: str, arguments: Any) -> Callable[[int], Awaitable[list[float]]]:
    """The same SDK call on toolpalette's own session, made and timed on the pool's loop:
    what a call costs there, without the hop from the caller's loop or the pipeline."""
    pool = hub.mcp().pool
    connection = hub.mcp().connection("bench")

    async def batch(n: int) -> list[float]:
        return await pool.run_async(_time(lambda: connection.call_tool(name, arguments), n))

    return batch


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
        Case("part: the pipeline alone (a local async tool)", pipeline, CALLS),
        Case("part: the hop to the pool's loop and back", hop, CALLS),
    ]


async def measure() -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    samples: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="tpbench-client-") as work:
        async with contextlib.AsyncExitStack() as stack:
            cases, hubs = await _cases(stack, _targets(Path(work)))
            try:
                for _ in range(ROUNDS):
                    for case in cases:
                        *times, cpu_per_call = await case.times()
                        samples.setdefault(case.label, []).extend(times)
                        cpu.setdefault(case.label, []).append(cpu_per_call)
            finally:
                for hub in hubs:
                    hub.close()
    return samples, cpu


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
    """Print the per-call medians and the ratios against the bare session call."""
    samples, cpu = asyncio.run(measure())
    medians = {label: statistics.median(values) for label, values in samples.items()}
    rows = []
    for label, median in medians.items():
        target = label.split(":")[0]
        floor = medians.get(f"{target}: {BARE}")
        added = f"{median - floor:+.1f}" if floor is not None else ""
        ratio = f"{median / floor:.2f}x" if floor is not None else ""
        p90 = statistics.quantiles(samples[label], n=10)[-1]
        cpu_per_call = statistics.median(cpu[label])
        cpu_floor = statistics.median(cpu[f"{target}: {BARE}"]) if floor is not None else None
        cpu_added = f"{cpu_per_call - cpu_floor:+.1f}" if cpu_floor is not None else ""
        rows.append(
            (label, f"{median:.1f}", f"{p90:.1f}", added, ratio, f"{cpu_per_call:.1f}", cpu_added)
        )
    print(
        f"{ROUNDS} rounds x {CALLS} calls per in-memory case ({max(1, CALLS // 4)} per stdio "
        "case), interleaved; medians (and 90th percentiles) of single calls in microseconds; "
        f"Python {sys.version.split()[0]}\n"
    )
    header = ("case", "median µs", "p90 µs", "over bare µs", "ratio", "CPU µs", "CPU over bare µs")
    print(_table(header, rows))
    print(
        "\nCPU µs: this process's CPU time per call (all its threads, the in-memory server's "
        "too; a stdio server's is its own process's), the median over rounds: what a call "
        "costs whatever the machine's load, where the wall time also holds the waits for "
        "a core of each thread wake-up."
    )
    print()
    targets = sorted({label.split(":")[0] for label in medians if label.endswith(OURS)})
    for target in targets:
        stdio = target.startswith("stdio")
        peer = f"{target}: {FASTMCP}"
        record(
            f"MCP client call, {target}" + (", wall" if stdio else ""),
            medians[f"{target}: {OURS}"],
            "bare `ClientSession.call_tool`",
            medians[f"{target}: {BARE}"],
            unit="µs",
            goal=f"<= {WALL_GOAL if stdio else GOAL:g}",
            peers={"FastMCP": medians[peer]} if peer in medians else None,
        )
        if stdio:
            # This process's CPU (time.process_time): the server's own is not counted.
            record(
                f"MCP client call, {target}, CPU of the calling process",
                statistics.median(cpu[f"{target}: {OURS}"]),
                "bare `ClientSession.call_tool`",
                statistics.median(cpu[f"{target}: {BARE}"]),
                unit="µs",
                goal=f"<= {CPU_GOAL:g}",
                peers={"FastMCP": statistics.median(cpu[peer])} if peer in cpu else None,
            )
    _stall_report()


if __name__ == "__main__":
    main(sys.argv[1:])
