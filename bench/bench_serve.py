"""``toolpalette serve`` beside the mcp SDK's own ``MCPServer``, serving the same tools.

Two measurements, each through the SDK's own client, in one run:

- one ``tools/call`` round trip of a trivial async tool;
- one full ``tools/list`` of 1,000 tools (every page; toolpalette pages by 100, the
  ``MCPServer`` answers in one page);

in-memory (the client connected in-process, handshake era) and over stdio (each
server a subprocess). A ``ping`` round trip beside them is the floor the SDK's client
and transport set for any request: a call can be no faster than that. Interleaved
rounds, medians; ``BENCH_ROUNDS`` / ``BENCH_CALLS`` scale the run. Goal: at least 2x
faster per call, 5x per listing.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import sys
import time
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from bench._summary import record

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "15"))
CALLS = int(os.environ.get("BENCH_CALLS", "100"))
LISTS = max(CALLS // 20, 3)
ROOT = Path(__file__).resolve().parent.parent


async def _full_listing(client: Any) -> int:
    count, cursor = 0, None
    while True:
        page = await client.list_tools(cursor=cursor)
        count += len(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return count


@contextlib.asynccontextmanager
async def _clients() -> AsyncIterator[dict[str, Any]]:
    import toolpalette.mcp
    from mcp import Client, StdioServerParameters
    from toolpalette import ToolHub

    from bench import serve_palette

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    serve = [
        "-c",
        "import sys; from toolpalette._cli import main; sys.exit(main())",
        "serve",
        "--thinker",
        "bench.serve_palette:Bench",
    ]
    servers: dict[str, Any] = {
        "toolpalette in-memory": toolpalette.mcp.server(ToolHub(), serve_palette.Bench),
        "MCPServer in-memory": serve_palette.anchor(),
        "toolpalette stdio": StdioServerParameters(command=sys.executable, args=serve, env=env),
        "MCPServer stdio": StdioServerParameters(
            command=sys.executable, args=["-m", "bench.serve_palette"], env=env, cwd=str(ROOT)
        ),
    }
    async with contextlib.AsyncExitStack() as stack:
        clients = {}
        for label, server in servers.items():
            clients[label] = await stack.enter_async_context(Client(server, mode="legacy"))
            # toolpalette also lists call_tool, which reaches every tool of the palette.
            listed = 1001 if label.startswith("toolpalette") else 1000
            assert await _full_listing(clients[label]) == listed, label
        yield clients


async def _time(call: Callable[[], Awaitable[Any]], n: int) -> float:
    started = time.perf_counter()
    for _ in range(n):
        await call()
    return (time.perf_counter() - started) / n * 1e6


async def measure() -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {}
    async with _clients() as clients:
        cases: list[tuple[str, Callable[[], Awaitable[Any]], int]] = []
        for label, client in clients.items():

            def call(client: Any = client) -> Awaitable[Any]:
                return client.call_tool("aadd", {"a": 1, "b": 2})

            def listing(client: Any = client) -> Awaitable[Any]:
                return _full_listing(client)

            def ping(client: Any = client) -> Awaitable[Any]:
                return client.send_ping()

            cases.append((f"{label}: ping (the SDK's floor)", ping, CALLS))
            cases.append((f"{label}: tools/call", call, CALLS))
            cases.append((f"{label}: tools/list x1000", listing, LISTS))
        for label, call, n in cases:  # warm-up
            samples[label] = []
            await _time(call, max(n // 4, 1))
        for _ in range(ROUNDS):
            for label, call, n in cases:
                samples[label].append(await _time(call, n))
    return samples


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    """Print the medians and the targets."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        print("skipped: needs the mcp extra (pip install 'toolpalette[mcp]')")
        return
    with warnings.catch_warnings():
        # ping is deprecated for the 2026-07-28 era; here it only measures the round trip
        warnings.simplefilter("ignore")
        samples = anyio.run(measure)
    medians = {label: statistics.median(values) for label, values in samples.items()}
    print(
        f"{ROUNDS} rounds; {CALLS} calls or {LISTS} full listings per case per round; "
        "medians in microseconds.\n"
    )
    print(_table(("case", "median µs"), [(k, f"{v:,.0f}") for k, v in medians.items()]))
    rows = []
    for where in ("in-memory", "stdio"):
        for what, goal in (("tools/call", 2.0), ("tools/list x1000", 5.0)):
            ratio = medians[f"MCPServer {where}: {what}"] / medians[f"toolpalette {where}: {what}"]
            status = "met" if ratio >= goal else "MISSED"
            label = f"{what}, {where}: MCPServer / toolpalette"
            rows.append((label, f"{ratio:.2f}x", f"≥ {goal:g}x", status))
            record(
                f"MCP serve {what}, {where}",
                medians[f"toolpalette {where}: {what}"],
                "the SDK's `MCPServer`",
                medians[f"MCPServer {where}: {what}"],
                unit="µs",
                goal=f"<= {1 / goal:g}",
            )
        # What each server adds to a call beyond the SDK's own round trip (its ping).
        over = {
            server: medians[f"{server} {where}: tools/call"]
            - medians[f"{server} {where}: ping (the SDK's floor)"]
            for server in ("MCPServer", "toolpalette")
        }
        shown = f"{over['MCPServer']:,.0f} / {over['toolpalette']:,.0f} µs"
        rows.append(
            (f"tools/call over the ping, {where}: MCPServer / toolpalette", shown, "info", "")
        )
    print()
    print(_table(("target", "measured", "goal", "status"), rows))


if __name__ == "__main__":
    main(sys.argv[1:])
