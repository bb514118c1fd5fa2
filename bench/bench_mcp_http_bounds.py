"""The host's memory against an HTTP MCP server whose answer is a gigabyte.

A hand-written streamable HTTP server on 127.0.0.1 (``tests/faults/servers/http_server.py``)
answers a tool call with 1 GiB, generated as it is sent: as one JSON body, and as one
SSE event. A fresh host process (a ``ToolHub`` with that server configured) calls the
tool once; its peak resident memory during the call (``VmHWM`` after resetting it
through ``/proc/self/clear_refs``) is compared with its resident memory before, and the
growth with the bound on one message (4 MiB), the anchor: goal at most 2x. For
reference, the SDK's bare client (``streamable_http_client``, which reads a JSON body
whole) answering a 32 MiB body, against its size. Linux only (it reads ``/proc``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

from bench._summary import record

SERVER = Path(__file__).resolve().parents[1] / "tests" / "faults" / "servers" / "http_server.py"
MIB = 1024 * 1024
GIB = 1024 * MIB
CAP = 4 * MIB
SDK_BYTES = 32 * MIB
CALLS = {
    "ping": {"do": "text", "text": "pong"},
    "gigabyte": {"do": "json", "bytes": GIB},
    "gigabyte_event": {"do": "event", "bytes": GIB},
    "sized": {"do": "json", "bytes": SDK_BYTES},
}

_MEMORY = """
def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024

def reset():
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")
    return status("VmRSS")
"""

HOST = (
    "import asyncio, json, sys\nfrom toolpalette import Executor, ToolHub\n"
    + _MEMORY
    + textwrap.dedent(
        """
    async def main():
        table = {"url": sys.argv[1], "timeout": 300}
        with ToolHub(autoload=False, config={}, mcp_servers={"h": table}) as hub:
            registry = await asyncio.to_thread(hub.catalog)
            executor = Executor(registry, output_cap=2**31, timeout=300)
            await executor.execute("ping", {})
            before = reset()
            result = await executor.execute(sys.argv[2], {})
            peak = status("VmHWM")
        print(json.dumps({"status": result.status, "grown": peak - before}))

    asyncio.run(main())
    """
    )
)

SDK = (
    "import json, sys\nimport anyio\nfrom mcp import Client\n"
    "from mcp.client.streamable_http import streamable_http_client\n"
    + _MEMORY
    + textwrap.dedent(
        """
    async def main():
        async with Client(streamable_http_client(sys.argv[1])) as client:
            await client.call_tool("ping", {})
            before = reset()
            try:  # the body is read whole, then found not to end its JSON
                await client.call_tool(sys.argv[2], {})
                answer = "answered"
            except Exception as exc:
                answer = type(exc).__name__
            peak = status("VmHWM")
        print(json.dumps({"status": answer, "grown": peak - before}))

    anyio.run(main)
    """
    )
)


def _measure(script: str, url: str, name: str, cache: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", script, url, name],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "TOOLPALETTE_CACHE_DIR": cache},
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    figures: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return figures


def main(argv: list[str]) -> None:
    if not sys.platform.startswith("linux"):
        print("bench_mcp_http_bounds: reads /proc, Linux only; skipped")
        return
    with tempfile.TemporaryDirectory(prefix="tpbench-http-") as folder:
        plan = Path(folder) / "plan.json"
        tools = [
            {"name": name, "description": f"The {name} tool.", "inputSchema": {"type": "object"}}
            for name in CALLS
        ]
        plan.write_text(json.dumps({"tools": tools, "calls": CALLS}))
        server = subprocess.Popen(
            [sys.executable, str(SERVER), str(plan)], stdout=subprocess.PIPE, text=True
        )
        try:
            assert server.stdout is not None
            url = f"http://127.0.0.1:{int(server.stdout.readline())}/mcp"
            cache = str(Path(folder) / "cache")
            ours = {
                name: _measure(HOST, url, name, cache) for name in ("gigabyte", "gigabyte_event")
            }
            bare = _measure(SDK, url, "sized", cache)
        finally:
            server.kill()
            server.wait()
            assert server.stdout is not None
            server.stdout.close()
    print("| answer | host | status | peak memory over the RSS before the call |")
    print("|---|---|---|---|")
    for name, label in (("gigabyte", "1 GiB JSON body"), ("gigabyte_event", "1 GiB SSE event")):
        figures = ours[name]
        print(f"| {label} | toolpalette | {figures['status']} | {figures['grown'] / MIB:.1f} MiB |")
        record(
            f"HTTP MCP answer of 1 GiB ({label.split(' ', 2)[2]}): the host's peak memory",
            figures["grown"] / MIB,
            "the bound on one message",
            CAP / MIB,
            unit="MiB",
            goal="<= 2",
        )
    grown = bare["grown"] / MIB
    print(f"| 32 MiB JSON body | SDK's bare client | {bare['status']} | {grown:.1f} MiB |")
    record(
        "the SDK's bare HTTP client, a 32 MiB JSON answer: its peak memory",
        bare["grown"] / MIB,
        "the answer's size",
        SDK_BYTES / MIB,
        unit="MiB",
        goal="",
    )


if __name__ == "__main__":
    main(sys.argv[1:])
