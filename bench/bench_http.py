"""Server CPU per HTTP ``tools/call``: ``toolpalette serve --http`` against a bare ASGI floor.

Four servers, each a process of its own under the same uvicorn (one worker, on a
``TCP_NODELAY`` listener made as ``serve`` makes its own, on 127.0.0.1), serve one
trivial async tool, ``echo``:

- ``toolpalette serve --http --stateless --thinker bench.bench_http:Echo`` (it answers
  the 2026-07-28 era in JSON, the 2025-11-25 era in one SSE event);
- the SDK's ``MCPServer`` (streamable HTTP, stateless, JSON responses);
- FastMCP's HTTP app (``http_app``, stateless, JSON responses);
- the floor: a bare ASGI app that reads the body and answers a fixed JSON-RPC result
  (the request's id, and the text ``echo`` would answer), the anchor.

One httpx client per server (keep-alive) sends ``tools/call`` requests one after the
other, in the stateless 2026-07-28 era (the ``_meta`` envelope and the ``Mcp-Method`` /
``Mcp-Name`` headers, as the SDK's client sends them) and the 2025-11-25 era (the
version header, no handshake, as a stateless server takes them). The figure is the
server process's CPU time (its process CPU clock, every thread, nanoseconds) over a
batch, per request; rounds interleave the servers (the order reversed every other
round), medians. Goal: at most 1.5x the floor. Linux only (the process CPU clock of
another process). ``BENCH_ROUNDS`` / ``BENCH_CALLS`` scale the run.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import json
import os
import socket
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import toolpalette
from toolpalette import Thinker, ToolSelector

from bench._summary import record

ROUNDS = max(3, int(os.environ.get("BENCH_ROUNDS", "31")) // 6)
CALLS = max(50, int(os.environ.get("BENCH_CALLS", "200")))
MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
ERAS = (MODERN, HANDSHAKE)
TEXT = "hello"
RESULT = {"content": [{"type": "text", "text": TEXT}], "isError": False}
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "bench-http", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
SERVERS = ("toolpalette", "MCPServer", "FastMCP", "floor")


async def echo(text: str) -> str:
    """Answer the text given."""
    return text


class Echo(Thinker):
    """Offers ``echo`` alone (``serve --thinker bench.bench_http:Echo``)."""

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        selector = ToolSelector()
        selector.tool(toolpalette.tool(read_only=True)(echo))
        return selector


async def floor_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The floor: a bare ASGI app answering every POST with the fixed JSON-RPC result."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] != "http":
        return
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    request_id = json.loads(body).get("id") if body else None
    answer = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": RESULT}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(answer))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": answer})


def sdk_app() -> Any:
    """The SDK's ``MCPServer`` serving ``echo``: stateless, JSON responses."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("peer", log_level="WARNING")
    server.add_tool(echo, name="echo")
    return server.streamable_http_app(stateless_http=True, json_response=True, host="127.0.0.1")


def fastmcp_app() -> Any:
    """FastMCP's HTTP app serving ``echo``: stateless, JSON responses."""
    from fastmcp import FastMCP

    server = FastMCP("peer")
    server.tool(echo, name="echo")
    return server.http_app(path="/mcp", stateless_http=True, json_response=True)


APPS: dict[str, Callable[[], Any]] = {
    "MCPServer": sdk_app,
    "FastMCP": fastmcp_app,
    "floor": lambda: floor_app,
}


def serve(which: str) -> None:
    """Serve ``APPS[which]`` as ``toolpalette serve --http`` serves with one worker."""
    import uvicorn

    app = APPS[which]()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    print(f"serving {url} (stateless, 1 worker)", file=sys.stderr, flush=True)
    with sock, contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


def _command(which: str) -> list[str]:
    if which == "toolpalette":
        from bench.load.servers import serve_command

        return serve_command("--thinker", "bench.bench_http:Echo", "--stateless")
    code = f"from bench.bench_http import serve; serve({which!r})"
    return [sys.executable, "-c", code]


def _cpu_clock(pid: int) -> int:
    """The id of the CPU-time clock of process ``pid`` (all its threads, living or not)."""
    libc = ctypes.CDLL(None, use_errno=True)
    clock = ctypes.c_int()
    failed = libc.clock_getcpuclockid(pid, ctypes.byref(clock))
    if failed:
        raise OSError(failed, os.strerror(failed))
    return clock.value


def _request(era: str, ids: itertools.count[int]) -> tuple[dict[str, str], bytes]:
    params: dict[str, Any] = {"name": "echo", "arguments": {"text": TEXT}}
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": era,
    }
    if era == MODERN:
        headers["mcp-method"] = "tools/call"
        headers["mcp-name"] = "echo"
        params["_meta"] = ENVELOPE
    message = {"jsonrpc": "2.0", "id": next(ids), "method": "tools/call", "params": params}
    return headers, json.dumps(message, separators=(",", ":")).encode()


def _answer(text: str) -> dict[str, Any]:
    """The JSON-RPC message of a response: plain JSON, or the data of its SSE event."""
    if not text.startswith("{"):
        text = next(line[6:] for line in text.splitlines() if line.startswith("data: "))
    message: dict[str, Any] = json.loads(text)
    return message


class Peer:
    """One running server, its client, and its CPU clock."""

    def __init__(self, label: str, url: str, pid: int) -> None:
        import httpx

        self.label = label
        self.url = url
        self.clock = _cpu_clock(pid)
        self.client = httpx.Client(timeout=30)
        self.ids = itertools.count(1)

    def call(self, era: str) -> None:
        """One ``tools/call`` of ``echo``; raises unless it answers ``TEXT``."""
        headers, body = _request(era, self.ids)
        response = self.client.post(self.url, content=body, headers=headers)
        if response.status_code != 200:
            raise RuntimeError(f"{self.label}, {era}: HTTP {response.status_code}")
        result = _answer(response.text).get("result") or {}
        if result.get("isError") is not False or result["content"][0]["text"] != TEXT:
            raise RuntimeError(f"{self.label}, {era}: {response.text[:200]}")

    def batch(self, era: str, n: int) -> tuple[float, float]:
        """``n`` calls; the server's CPU and the wall time per call, in µs."""
        cpu = time.clock_gettime(self.clock)
        wall = time.perf_counter()
        for _ in range(n):
            self.call(era)
        wall = time.perf_counter() - wall
        cpu = time.clock_gettime(self.clock) - cpu
        return cpu / n * 1e6, wall / n * 1e6


def measure() -> dict[tuple[str, str], dict[str, list[float]]]:
    """Per (server, era): the server's CPU and wall µs per call, one figure per round."""
    from bench.load.servers import Server

    samples: dict[tuple[str, str], dict[str, list[float]]] = {}
    with contextlib.ExitStack() as stack:
        servers = []
        for label in SERVERS:
            server = Server(label, _command(label), {})
            stack.callback(server.stop)
            servers.append(server)
        peers = []
        for server in servers:
            server.wait_ready()
            peer = Peer(server.label, server.url, server.process.pid)
            stack.callback(peer.client.close)
            peers.append(peer)
        for peer in peers:  # warm-up, and a check that every server answers
            for era in ERAS:
                samples[peer.label, era] = {"cpu": [], "wall": []}
                for _ in range(CALLS // 2):
                    peer.call(era)
        for turn in range(ROUNDS):
            for era in ERAS:
                for peer in peers if turn % 2 == 0 else peers[::-1]:
                    cpu, wall = peer.batch(era, CALLS)
                    samples[peer.label, era]["cpu"].append(cpu)
                    samples[peer.label, era]["wall"].append(wall)
    return samples


def main(argv: list[str]) -> None:
    if not sys.platform.startswith("linux"):
        print("bench_http: reads another process's CPU clock, Linux only; skipped")
        return
    samples = measure()
    print(f"{ROUNDS} rounds of {CALLS} sequential calls per server and era; medians, µs:\n")
    print("| era | server | server CPU / call | best round | wall / call | CPU vs floor |")
    print("|---|---|---:|---:|---:|---:|")
    for era in ERAS:
        medians = {label: statistics.median(samples[label, era]["cpu"]) for label in SERVERS}
        for label in SERVERS:
            figures = samples[label, era]
            print(
                f"| {era} | {label} | {medians[label]:.1f} | {min(figures['cpu']):.1f} "
                f"| {statistics.median(figures['wall']):.1f} "
                f"| {medians[label] / medians['floor']:.2f}x |"
            )
        record(
            f"HTTP `tools/call` served ({era}, stateless), server CPU per request",
            medians["toolpalette"],
            "a bare ASGI app under the same uvicorn, a fixed JSON-RPC result",
            medians["floor"],
            unit="µs",
            goal="<= 1.5",
            peers={"MCPServer": medians["MCPServer"], "FastMCP": medians["FastMCP"]},
        )


if __name__ == "__main__":
    main(sys.argv[1:])
