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

Then the HTTP server's own cost per request, without sockets or a client: each
server's ASGI application (stateless, SSE response mode, as ``serve --http`` and the
load runs serve it) is handed ready-made ``tools/call`` requests of ``aadd`` in both
eras (2026-07-28 with its envelope and headers; 2025-11-25 as a stateless server gets
them) and ``tools/list`` of the 1,000 tools, in turn with the anchor's. Goal: at most
0.67x ``MCPServer``'s time per call (the 1.5x throughput the load runs look for, with
the network and the client taken out).

Last, start-up: from spawning ``toolpalette serve`` (stdio, a one-tool thinker) to its
answer to ``initialize``, a plain pipe client, against a bare ``MCPServer`` script with
the same tool (goal: at most 1x) and a FastMCP stdio script as the peer.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
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


_MODERN = "2026-07-28"
_HANDSHAKE = "2025-11-25"
_ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": _MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _asgi_request(era: str, method: str, params: dict[str, Any]) -> tuple[list[Any], bytes]:
    """The headers and body of one request as a client of ``era`` sends it."""
    headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        (b"mcp-protocol-version", era.encode()),
    ]
    if era == _MODERN:
        headers.append((b"mcp-method", method.encode()))
        if "name" in params:
            headers.append((b"mcp-name", params["name"].encode()))
        params = {**params, "_meta": _ENVELOPE}
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return headers, json.dumps(body).encode()


async def _asgi_call(app: Any, headers: list[Any], body: bytes) -> bytes:
    """One request handed to ``app``; the response body (its status must be 200)."""
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": "/mcp", "raw_path": b"/mcp", "query_string": b"",
        "root_path": "", "headers": headers, "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }  # fmt: skip
    given = False
    disconnected = anyio.Event()
    out: list[bytes] = []
    status: list[int] = []

    async def receive() -> dict[str, Any]:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        await disconnected.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            status.append(message["status"])
        else:
            out.append(message.get("body", b""))

    await app(scope, receive, send)
    disconnected.set()
    if status != [200]:
        raise RuntimeError(f"HTTP {status}: {b''.join(out)[:200]!r}")
    return b"".join(out)


async def measure_asgi() -> dict[str, list[float]]:
    """Microseconds per request of each server's ASGI app, interleaved rounds."""
    import toolpalette.mcp
    from toolpalette import ToolHub

    from bench import serve_palette

    apps = {
        "toolpalette": toolpalette.mcp.asgi_app(
            ToolHub(), serve_palette.Bench, stateless=True, page_size=1000
        ),
        "MCPServer": serve_palette.anchor().streamable_http_app(
            stateless_http=True, host="127.0.0.1"
        ),
    }
    requests = {
        f"tools/call, {_MODERN}": _asgi_request(
            _MODERN, "tools/call", {"name": "aadd", "arguments": {"a": 1, "b": 2}}
        ),
        f"tools/call, {_HANDSHAKE}": _asgi_request(
            _HANDSHAKE, "tools/call", {"name": "aadd", "arguments": {"a": 1, "b": 2}}
        ),
        f"tools/list x1000, {_MODERN}": _asgi_request(_MODERN, "tools/list", {}),
    }
    samples: dict[str, list[float]] = {}
    async with contextlib.AsyncExitStack() as stack:
        for app in apps.values():
            await stack.enter_async_context(app.router.lifespan_context(app))
        cases = []
        for what, (headers, body) in requests.items():
            n = CALLS if what.startswith("tools/call") else LISTS
            for label, app in apps.items():
                answer = await _asgi_call(app, headers, body)
                assert b'"result"' in answer, (label, what)
                assert b'"isError":true' not in answer, (label, what)
                cases.append((f"{label}: {what}", app, headers, body, n))
        for label, app, headers, body, n in cases:  # warm-up
            samples[label] = []
            for _ in range(max(n // 4, 1)):
                await _asgi_call(app, headers, body)
        for _ in range(ROUNDS):
            for label, app, headers, body, n in cases:
                started = time.perf_counter()
                for _ in range(n):
                    await _asgi_call(app, headers, body)
                samples[label].append((time.perf_counter() - started) / n * 1e6)
    return samples


_TOOL = '''
async def aadd(a: int, b: int) -> int:
    """Add two integers."""
    return a + b
'''
START_SCRIPTS = {
    "start_thinker.py": "import toolpalette\nfrom toolpalette import Thinker, ToolSelector\n"
    + _TOOL.replace("async def", "@toolpalette.tool(read_only=True)\nasync def", 1)
    + "class One(Thinker):\n    @classmethod\n    def declare_compatible_tools(cls):\n"
    + "        return ToolSelector().tool(aadd)\n",
    "start_mcpserver.py": "from mcp.server.mcpserver import MCPServer\n"
    + 'server = MCPServer("anchor")\n'
    + _TOOL.replace("async def", "@server.tool()\nasync def", 1)
    + 'server.run("stdio")\n',
    "start_fastmcp.py": 'from fastmcp import FastMCP\nserver = FastMCP("peer")\n'
    + _TOOL.replace("async def", "@server.tool()\nasync def", 1)
    + 'server.run("stdio", show_banner=False)\n',
}
"""The start-up case's one-tool servers, written to a scratch folder."""
_INITIALIZE = (
    json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": _HANDSHAKE, "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "1"}},
    }).encode() + b"\n"
)  # fmt: skip


def _start_once(argv: list[str], cwd: str) -> float:
    """Seconds from spawning ``argv`` to its answer to ``initialize`` on stdout."""
    started = time.perf_counter()
    with subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd
    ) as proc:
        assert proc.stdin is not None
        assert proc.stdout is not None
        proc.stdin.write(_INITIALIZE)
        proc.stdin.flush()
        line = proc.stdout.readline()
        elapsed = time.perf_counter() - started
        proc.stdin.close()  # the server ends when its client closes stdin
        proc.wait(timeout=30)
    if b'"result"' not in line:
        raise RuntimeError(f"{argv}: no initialize result: {line[:200]!r}")
    return elapsed


def measure_start(runs: int) -> dict[str, float]:
    """Median milliseconds from spawn to the ``initialize`` answer, per server."""
    with tempfile.TemporaryDirectory(prefix="tpbench-start-") as tmp:
        for name, text in START_SCRIPTS.items():
            Path(tmp, name).write_text(text)
        serve = "import sys; from toolpalette._cli import main; sys.exit(main())"
        cases = {
            "toolpalette serve": [sys.executable, "-c", serve, "serve", "--thinker",
                                  "start_thinker:One"],
            "MCPServer": [sys.executable, "start_mcpserver.py"],
            "FastMCP": [sys.executable, "start_fastmcp.py"],
        }  # fmt: skip
        samples: dict[str, list[float]] = {label: [] for label in cases}
        for argv in cases.values():  # warm the .pyc files and the page cache
            _start_once(argv, tmp)
        for _ in range(runs):  # round-robin, so drift in load hits every case alike
            for label, argv in cases.items():
                samples[label].append(_start_once(argv, tmp) * 1000)
    return {label: statistics.median(values) for label, values in samples.items()}


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
    asgi = {k: statistics.median(v) for k, v in anyio.run(measure_asgi).items()}
    print("\nThe HTTP server's ASGI app, in-process (stateless, SSE mode); medians in µs:\n")
    print(_table(("case", "median µs"), [(k, f"{v:,.0f}") for k, v in asgi.items()]))
    for what in (
        f"tools/call, {_MODERN}",
        f"tools/call, {_HANDSHAKE}",
        f"tools/list x1000, {_MODERN}",
    ):
        ours, theirs = asgi[f"toolpalette: {what}"], asgi[f"MCPServer: {what}"]
        goal = 0.67 if what.startswith("tools/call") else None
        ratio = ours / theirs
        status = "" if goal is None else ("met" if ratio <= goal else "MISSED")
        rows.append((f"HTTP app {what}: toolpalette / MCPServer", f"{ratio:.2f}x",
                     "info" if goal is None else f"≤ {goal:g}x", status))  # fmt: skip
        record(
            f"MCP serve HTTP app {what}", ours, "the SDK's `MCPServer`", theirs,
            unit="µs", goal="" if goal is None else f"<= {goal:g}",
        )  # fmt: skip
    runs = max(ROUNDS, 5)
    start = measure_start(runs)
    print(f"\nSpawn to the `initialize` answer over stdio, median of {runs} processes (ms):\n")
    print(_table(("server", "median ms"), [(k, f"{v:,.1f}") for k, v in start.items()]))
    ratio = start["toolpalette serve"] / start["MCPServer"]
    rows.append(("serve start: toolpalette / MCPServer", f"{ratio:.2f}x", "≤ 1x",
                 "met" if ratio <= 1 else "MISSED"))  # fmt: skip
    record(
        "`serve` spawn to `initialize` answered (stdio)",
        start["toolpalette serve"],
        "a bare `MCPServer` script",
        start["MCPServer"],
        unit="ms",
        goal="<= 1.0",
        peers={"FastMCP": start["FastMCP"]},
    )
    print()
    print(_table(("target", "measured", "goal", "status"), rows))


if __name__ == "__main__":
    main(sys.argv[1:])
