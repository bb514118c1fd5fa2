"""What a task's create and poll add over a direct call, with the SQLite and Redis stores.

``python -m bench.bench_tasks [--calls N] [--redis URL]``: an in-process server (the
SDK's in-memory client, 2026-07-28) calls one quick task-supporting tool directly, and as
a task (``immediate=0``: created at once, then ``tasks/get`` until completed), and prints
the median of each and the ratio to the direct call, from the same run. Without
``--redis``, a redis-server of its own on 127.0.0.1 (``bench.load.redis_server``), or
the Redis row is skipped, saying why.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import mcp_types as types
import toolpalette
from mcp import Client
from mcp.client.extension import advertise
from pydantic import ConfigDict
from toolpalette import Thinker, ToolHub, ToolSelector
from toolpalette.mcp import SqliteTaskStore, TaskSettings, TaskStore, server, task_store

from bench.load.redis_server import redis_binary, running_redis

EXTENSION = "io.modelcontextprotocol/tasks"


@toolpalette.tool(read_only=True, task_support="optional")
def quick(n: int) -> int:
    """Return ``n``."""
    return n


class Quick(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(quick)


class _Request(types.Request[dict[str, Any], str]):
    method: str  # type: ignore[assignment]
    params: dict[str, Any]  # type: ignore[assignment]


class _Any(types.Result):
    model_config = ConfigDict(extra="allow")


async def _send(client: Client, method: str, params: dict[str, Any]) -> dict[str, Any]:
    found = await client.session.send_request(_Request(method=method, params=params), _Any)
    return found.model_dump(by_alias=True, exclude_none=True)


async def _measure(store: TaskStore | None, calls: int) -> list[float]:
    hub = ToolHub(autoload=False)
    settings = TaskSettings(store, immediate=0, poll_ms=1) if store else TaskSettings()
    palette = server(hub, Quick, tasks=settings)
    times = []
    async with Client(palette, extensions=[advertise(EXTENSION)] if store else []) as client:
        for i in range(calls + 5):
            started = time.perf_counter()
            if store is None:
                await client.call_tool("quick", {"n": i})
            else:
                made = await _send(client, "tools/call", {"name": "quick", "arguments": {"n": i}})
                while (await _send(client, "tasks/get", {"taskId": made["taskId"]}))[
                    "status"
                ] != "completed":
                    await asyncio.sleep(0)
            if i >= 5:
                times.append(time.perf_counter() - started)
    return times


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bench/bench_tasks.py")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--redis", default=None, help="redis://HOST:PORT/DB (else skipped)")
    args = parser.parse_args(argv)
    direct = statistics.median(await _measure(None, args.calls))
    print(f"direct call: {direct * 1000:.2f} ms (median of {args.calls})")
    with tempfile.TemporaryDirectory() as folder, contextlib.ExitStack() as stack:
        stores: dict[str, TaskStore] = {"sqlite": SqliteTaskStore(Path(folder) / "t.db")}
        url = args.redis
        if url is None:
            binary, why = redis_binary()
            if binary is None:
                print(f"task, redis: skipped ({why})")
            else:
                url = stack.enter_context(running_redis(binary))
        if url:
            stores["redis"] = task_store(url)
        for label, store in stores.items():
            median = statistics.median(await _measure(store, args.calls))
            print(f"task, {label}: {median * 1000:.2f} ms, {median / direct:.1f}x the direct call")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
