"""What an HTTP MCP server sends is bounded as it arrives, before any of it is parsed.

Before: the SDK's streamable HTTP client read a JSON answer whole (``aread``) before
anything looked at its size: a tool answering 200 MB took the host's memory to 2.5 GB
before the call was refused, and a gigabyte ended the host. The stdio cap on a message
did not apply; an SSE stream could run forever; an answer trickled a byte at a time
held its call until the timeout. Now each message, stream and wait has a bound.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from toolpalette import Executor, ToolContext, ToolErrorReport, ToolHub
from toolpalette.testing import await_until, run_cli

pytest.importorskip("mcp", reason="the MCP client needs the mcp extra")

SERVER = Path(__file__).parent / "servers" / "http_server.py"
MIB = 1024 * 1024
GIB = 1024 * MIB
CAP = 4 * MIB


def tool(name: str) -> dict[str, Any]:
    return {"name": name, "description": f"The {name} tool.", "inputSchema": {"type": "object"}}


CALLS: dict[str, dict[str, Any]] = {
    "ping": {"do": "text", "text": "pong"},
    "gigabyte": {"do": "json", "bytes": GIB},
    "declared": {"do": "json", "bytes": GIB, "length": True},
    "long_event": {"do": "event", "bytes": 64 * MIB},
    "flood": {"do": "flood", "bytes": 8 * MIB},
    "trickle": {"do": "trickle", "every": 0.05},
    "gzip": {"do": "gzip"},
}
PLAN: dict[str, Any] = {"tools": [tool(name) for name in CALLS], "calls": CALLS}


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    """Start hostile servers: ``serve(plan)`` gives the URL; all are ended after the test."""
    started: list[subprocess.Popen[str]] = []

    def start(plan: dict[str, Any]) -> str:
        path = tmp_path / f"plan-{len(started)}.json"
        path.write_text(json.dumps(plan))
        process = subprocess.Popen(
            [sys.executable, str(SERVER), str(path)], stdout=subprocess.PIPE, text=True
        )
        started.append(process)
        assert process.stdout is not None
        port = int(process.stdout.readline())
        return f"http://127.0.0.1:{port}/mcp"

    yield start
    for process in started:
        process.kill()
        process.wait()
        assert process.stdout is not None
        process.stdout.close()


@pytest.fixture
def hub_of(serve: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("TOOLPALETTE_CACHE_DIR", str(tmp_path / "cache"))
    hubs: list[ToolHub] = []

    def make(plan: dict[str, Any], **options: Any) -> ToolHub:
        table = {"url": serve(plan), "timeout": 120, **options}
        hub = ToolHub(autoload=False, config={}, mcp_servers={"hostile": table})
        hubs.append(hub)
        return hub

    yield make
    for hub in hubs:
        hub.close()


async def run(hub: ToolHub, name: str) -> tuple[Any, list[ToolErrorReport]]:
    reports: list[ToolErrorReport] = []
    registry = await asyncio.to_thread(hub.catalog)
    executor = Executor(
        registry,
        output_cap=64 * MIB,
        timeout=120,
        on_tool_error=reports.append,
        context=ToolContext(),
    )
    return await executor.execute(name, {}), reports


async def causes(reports: list[ToolErrorReport]) -> str:
    """Every message along each report's chain of causes (once a report arrived)."""
    await await_until(lambda: reports, timeout=30)
    found = []
    for report in reports:
        error: BaseException | None = report.error
        while error is not None:
            found.append(str(error))
            found.append(str(getattr(getattr(error, "error", None), "message", "")))
            error = error.__cause__
    return "\n".join(found)


async def test_a_json_answer_over_the_cap_is_refused_and_the_connection_goes_on(
    hub_of: Any,
) -> None:
    hub = hub_of(PLAN)
    for name in ("gigabyte", "declared"):
        cut, _ = await run(hub, name)
        assert (cut.status, cut.code) == (413, "output_too_large"), cut
        assert f"{CAP} bytes" in cut.text
    after, _ = await run(hub, "ping")
    assert after.text == "pong", after


async def test_an_event_over_the_cap_is_refused_before_its_end(hub_of: Any) -> None:
    hub = hub_of(PLAN)
    cut, _ = await run(hub, "long_event")
    assert (cut.status, cut.code) == (413, "output_too_large"), cut
    assert f"{CAP} bytes" in cut.text


async def test_the_cap_on_a_message_is_set_per_server(hub_of: Any) -> None:
    calls = {"mid": {"do": "json", "bytes": 2 * MIB}, "ping": CALLS["ping"]}
    narrow = hub_of({"tools": [tool("mid")], "calls": calls}, max_message=MIB)
    cut, _ = await run(narrow, "mid")
    assert (cut.status, cut.code) == (413, "output_too_large"), cut
    assert f"{MIB} bytes" in cut.text


async def test_a_stream_over_its_total_bound_is_ended_with_a_clear_error(hub_of: Any) -> None:
    hub = hub_of(PLAN, max_stream=2 * MIB)
    cut, reports = await run(hub, "flood")
    assert (cut.status, cut.code) == (502, "server_bound"), cut
    assert f"a stream over the {2 * MIB}-byte bound on one" in await causes(reports)


async def test_a_trickled_answer_is_ended_at_the_idle_bound_not_the_timeout(
    hub_of: Any,
) -> None:
    hub = hub_of(PLAN, stream_idle=1)
    cut, reports = await run(hub, "trickle")
    assert (cut.status, cut.code) == (502, "server_bound"), cut  # not 504 at 120 s
    assert "no whole message within 1 seconds" in await causes(reports)


async def test_a_compressed_answer_not_asked_for_is_refused(hub_of: Any) -> None:
    hub = hub_of(PLAN)
    cut, reports = await run(hub, "gzip")
    assert (cut.status, cut.code) == (502, "server_bound"), cut
    assert "an answer compressed as 'gzip', which was not asked for" in await causes(reports)


def test_a_listing_page_over_the_cap_is_a_check_problem(
    hub_of: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    hub = hub_of({"list_bytes": GIB})
    assert hub.providers_for_server("hostile") == []
    (problem,) = hub.problems()
    assert problem.kind == "server"
    assert f"over the {CAP}-byte bound on a message" in problem.reason
    assert run_cli(["check"], hub=hub) == 1
    assert f"over the {CAP}-byte bound on a message" in capsys.readouterr().out


MEASURE = textwrap.dedent(
    """
    import asyncio, json, sys
    from toolpalette import Executor, ToolHub

    def status(field):
        for line in open("/proc/self/status"):
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024

    async def main():
        table = {"url": sys.argv[1], "timeout": 300}
        with ToolHub(autoload=False, config={}, mcp_servers={"h": table}) as hub:
            registry = await asyncio.to_thread(hub.catalog)
            executor = Executor(registry, output_cap=2**31, timeout=300)
            warm = await executor.execute("ping", {})
            with open("/proc/self/clear_refs", "w") as refs:
                refs.write("5")  # the peak starts again from here
            before = status("VmRSS")
            result = await executor.execute(sys.argv[2], {})
            peak = status("VmHWM")
        print(json.dumps({"warm": warm.text, "status": result.status, "before": before,
                          "peak": peak}))

    asyncio.run(main())
    """
)


def peak_during_call(url: str, name: str, cache: Path, script: str = MEASURE) -> dict[str, Any]:
    """A fresh host's memory around one call: its RSS before, its peak during."""
    done = subprocess.run(
        [sys.executable, "-c", script, url, name],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "TOOLPALETTE_CACHE_DIR": str(cache)},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    figures: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return figures


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("name", ["gigabyte", "long_event"])
def test_a_gigabyte_answer_keeps_the_hosts_memory_within_a_few_times_the_cap(
    serve: Any, tmp_path: Path, name: str
) -> None:
    plan = {**PLAN, "calls": {**CALLS, "long_event": {"do": "event", "bytes": GIB}}}
    figures = peak_during_call(serve(plan), name, tmp_path / "cache")
    assert figures["warm"] == "pong"
    assert figures["status"] == 413
    grown = figures["peak"] - figures["before"]
    print(f"{name}: peak {grown / MIB:.1f} MiB over the RSS before the call")
    assert grown < 8 * CAP, figures


async def test_many_events_within_the_bounds_pass_whole(hub_of: Any) -> None:
    hub = hub_of(PLAN)  # 8 MiB of notifications, in chunks of 16 events, then the answer
    done, _ = await run(hub, "flood")
    assert done.text == "done", done


SERVE_START = re.compile(r"^serving (http://127\.0\.0\.1:\d+/mcp) ")
FIXTURES = Path(__file__).parents[1] / "mcp" / "server"


@pytest.mark.parametrize("workers", ["1", "2"])
async def test_a_served_palette_answers_through_the_bounds(
    workers: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real ``toolpalette serve --http`` (the SDK's server; stateful, or stateless)."""
    monkeypatch.setenv("TOOLPALETTE_CACHE_DIR", str(tmp_path / "cache"))
    path = os.pathsep.join([str(FIXTURES), os.environ.get("PYTHONPATH", "")])
    code = "import sys; from toolpalette._cli import main; sys.exit(main())"
    args = ["serve", "--thinker", "worker_fixture:Workers", "--workers", workers]
    process = subprocess.Popen(
        [sys.executable, "-c", code, *args, "--http", "--port", "0"],
        env={**os.environ, "PYTHONPATH": path},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stderr is not None
        started = SERVE_START.match(await asyncio.to_thread(process.stderr.readline))
        assert started is not None
        table = {"url": started.group(1), "timeout": 60, "max_message": 64 * 1024}
        with ToolHub(autoload=False, config={}, mcp_servers={"served": table}) as hub:
            pid, _ = await run(hub, "worker_pid")
            assert pid.status == 200, pid
            assert int(pid.text) != os.getpid()
            assert hub.problems() == []
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        await asyncio.to_thread(process.wait, 30)
        assert process.stderr is not None
        process.stderr.close()


WATCH = MEASURE.replace(
    "result = await executor.execute(sys.argv[2], {})",
    "gets = __import__('pathlib').Path(sys.argv[2])\n"
    "        await __import__('toolpalette.testing').testing.await_until(\n"
    "            lambda: gets.exists() and len(gets.read_text().split()) >= 3, timeout=120\n"
    "        )\n"
    "        result = await executor.execute('ping', {})",
)
"""The host of :data:`MEASURE`, which waits for three GET streams instead of calling."""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_gigabyte_event_on_the_servers_own_stream_is_cut_and_the_session_goes_on(
    serve: Any, tmp_path: Path
) -> None:
    gets = tmp_path / "gets.log"
    plan = {**PLAN, "get_event": GIB, "get_log": str(gets)}
    figures = peak_during_call(serve(plan), str(gets), tmp_path / "cache", WATCH)
    assert figures["warm"] == "pong"
    assert figures["status"] == 200  # a call after the stream was cut, then opened again
    grown = figures["peak"] - figures["before"]
    print(f"GET stream: peak {grown / MIB:.1f} MiB over three gigabyte events")
    assert grown < 8 * CAP, figures
