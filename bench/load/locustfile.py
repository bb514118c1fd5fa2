"""The Locust users of the load runs: MCP JSON-RPC over streamable HTTP, one era each.

Run by ``python -m bench.load`` (``locust --headless -f bench/load/locustfile.py``), set
up through the environment:

- ``LOAD_CASE``: ``noop`` (``tools/call`` of ``aadd``), ``file_info`` (``tools/call`` of
  the files pack's ``file_info`` on ``sample.txt``), ``list`` (``tools/list`` of the
  1,000-tool palette, one page), or ``soak`` (``file_info`` and ``tools/list`` of the
  files pack, in turn: every listing as long as the user's first);
- ``LOAD_ERA``: ``2025-11-25`` (the handshake era: each user sends ``initialize`` and
  ``notifications/initialized`` first, then the protocol version header on every request)
  or ``2026-07-28`` (no handshake: every request carries the version, the client's info
  and capabilities in ``_meta``, and the ``Mcp-Method`` / ``Mcp-Name`` headers, as the
  SDK's client sends them); ``mixed`` gives every other user the other era;
- ``LOAD_WARMUP`` and ``LOAD_SECONDS``: the measured window starts after the warm-up;
- ``LOAD_PIDS``: the server's processes, whose CPU time is read at both ends of the window;
- ``LOAD_OUT``: where the window's figures go (JSON): every latency (ms, as Locust
  measured it, unrounded), the errors and a few of their texts, the window and the CPU.

Every user loops without pause (a closed loop: concurrency is the number of users). A
response is an error unless it is HTTP 200 with a JSON-RPC result of the expected shape:
a call's content, not ``isError``; a listing of the expected number of tools.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from typing import Any

import gevent
import psutil
from locust import FastHttpUser, constant, events, task

CASE = os.environ.get("LOAD_CASE", "noop")
ERA = os.environ.get("LOAD_ERA", "2026-07-28")
WARMUP = float(os.environ.get("LOAD_WARMUP", "2"))
SECONDS = float(os.environ.get("LOAD_SECONDS", "10"))
PIDS = [int(p) for p in os.environ.get("LOAD_PIDS", "").split(",") if p]
OUT = os.environ.get("LOAD_OUT", "")
MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
LISTED = 1000

CALLS: dict[str, tuple[str, dict[str, Any], str]] = {
    "noop": ("aadd", {"a": 1, "b": 2}, "3"),
    "file_info": ("file_info", {"path": "sample.txt"}, "sample.txt"),
}
CLIENT_INFO = {"name": "bench-load", "version": "1"}

_window: dict[str, float] = {}
_latencies: list[float] = []
_errors: list[str] = []
_eras = itertools.cycle([HANDSHAKE, MODERN])


def _cpu() -> float:
    """User and system CPU seconds of the server's processes so far."""
    total = 0.0
    for pid in PIDS:
        times = psutil.Process(pid).cpu_times()
        total += times.user + times.system
    return total


def _measure() -> None:
    gevent.sleep(WARMUP)
    _window["cpu_start"], _window["start"] = _cpu(), time.time()
    gevent.sleep(SECONDS)
    _window["cpu_end"], _window["end"] = _cpu(), time.time()


@events.test_start.add_listener
def _started(**_: Any) -> None:
    gevent.spawn(_measure)


@events.request.add_listener
def _request(
    response_time: float, exception: Exception | None, start_time: float, **_: Any
) -> None:
    start, end = _window.get("start"), _window.get("end")
    done = start_time + response_time / 1000
    if start is None or done < start or (end is not None and done > end):
        return
    _latencies.append(response_time)
    if exception is not None:
        _errors.append(str(exception)[:200])


@events.quitting.add_listener
def _write(**_: Any) -> None:
    if not OUT:
        return
    if "start" in _window and "end" not in _window:  # the timer was late: close it now
        _window["cpu_end"], _window["end"] = _cpu(), time.time()
    figures = {
        "latencies_ms": _latencies,
        "errors": len(_errors),
        "error_samples": sorted(set(_errors))[:5],
        **_window,
    }
    with open(OUT, "w", encoding="utf-8") as file:
        json.dump(figures, file)


def _payload(body: str) -> Any:
    """The JSON-RPC message of a response: plain JSON, or the data of an SSE event."""
    if body.startswith("{"):
        return body
    for line in body.splitlines():
        if line.startswith("data: "):
            return line[6:]
    return ""


class MCPUser(FastHttpUser):
    """One MCP client on one keep-alive connection, in one protocol era."""

    wait_time = constant(0)

    def on_start(self) -> None:
        self.era = next(_eras) if ERA == "mixed" else ERA
        self.ids = itertools.count(1)
        self.session: str | None = None
        self.turn = 0
        self.listed: int | None = None
        if self.era != MODERN:
            self._handshake()

    def _headers(self, method: str, name: str | None) -> dict[str, str]:
        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": self.era,
        }
        if self.era == MODERN:
            headers["mcp-method"] = method
            if name is not None:
                headers["mcp-name"] = name
        if self.session is not None:
            headers["mcp-session-id"] = self.session
        return headers

    def _message(self, method: str, params: dict[str, Any], *, notify: bool = False) -> str:
        if self.era == MODERN:
            params = {
                **params,
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            }
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            message["id"] = next(self.ids)
        return json.dumps(message, separators=(",", ":"))

    def _handshake(self) -> None:
        init = {
            "protocolVersion": self.era,
            "capabilities": {},
            "clientInfo": CLIENT_INFO,
        }
        headers = self._headers("initialize", None)
        del headers["mcp-protocol-version"]
        with self.client.post(
            "",
            data=self._message("initialize", init),
            headers=headers,
            name="initialize",
            catch_response=True,
        ) as response:
            if response.status_code != 200 or '"result"' not in (response.text or ""):
                response.failure(f"initialize: HTTP {response.status_code}")
                return
            self.session = response.headers.get("mcp-session-id")
        done = self._message("notifications/initialized", {}, notify=True)
        with self.client.post(
            "",
            data=done,
            headers=self._headers("notifications/initialized", None),
            name="initialized",
            catch_response=True,
        ) as response:
            if response.status_code != 202:
                response.failure(f"initialized: HTTP {response.status_code}")

    def _call(self, name: str, arguments: dict[str, Any], expected: str) -> None:
        body = self._message("tools/call", {"name": name, "arguments": arguments})
        with self.client.post(
            "",
            data=body,
            headers=self._headers("tools/call", name),
            name=f"call {name}",
            catch_response=True,
        ) as response:
            if response.status_code != 200:
                response.failure(f"HTTP {response.status_code}")
                return
            message = json.loads(_payload(response.text or "") or "{}")
            result = message.get("result") or {}
            content = result.get("content") or [{}]
            if result.get("isError") is not False or expected not in content[0].get("text", ""):
                response.failure(f"unexpected answer: {str(message)[:150]}")

    def _list(self, count: int | None) -> None:
        """List the tools: ``count`` of them, or (``None``) as many as the first time."""
        body = self._message("tools/list", {})
        with self.client.post(
            "",
            data=body,
            headers=self._headers("tools/list", None),
            name="tools/list",
            catch_response=True,
        ) as response:
            text = _payload(response.text or "")
            # Decoding 1,000 tools would cost the load generator more than the server:
            # one "inputSchema" key per tool, and no error, is checked instead.
            tools = text.count('"inputSchema":')
            if count is None and self.listed is None and tools:
                self.listed = tools
            if response.status_code != 200:
                response.failure(f"HTTP {response.status_code}")
            elif '"result":' not in text or tools != (count or self.listed):
                response.failure(f"{tools} tools in: {text[:150]}")

    @task
    def one(self) -> None:
        if CASE == "list":
            self._list(LISTED)
        elif CASE == "soak":
            self.turn += 1
            if self.turn % 2:
                self._call(*CALLS["file_info"])
            else:
                self._list(None)
        else:
            self._call(*CALLS[CASE])
