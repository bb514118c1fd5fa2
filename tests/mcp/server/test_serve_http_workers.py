"""``toolpalette serve --http`` as a real process: its start line, and several workers.

The server is started on 127.0.0.1 with ``--port 0``; the URL it prints on stderr at
start is the one the SDK's client connects to. With ``--workers 2`` and no
``--stateless`` it serves stateless all the same: a client of either protocol era,
on a fresh connection for every request, has its requests answered by both workers,
deferred tools found by ``search_tools`` and called at once included, and approvals
asked over the 2026-07-28 protocol, whose sealed state one worker makes and another
verifies (the workers share a key the command makes at start).
"""

from __future__ import annotations

import http.client
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from toolpalette.testing import wait_until

HERE = Path(__file__).parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
START = re.compile(r"^serving (http://127\.0\.0\.1:(\d+)/mcp) \((\w+), (\d+) workers?\)$")


class Served:
    """A ``toolpalette serve --http`` process: its URL, port and stderr lines so far."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.lines: list[str] = []
        self.url = ""
        self.port = 0
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line.rstrip("\n"))

    def started(self) -> re.Match[str] | None:
        return next((m for m in map(START.match, list(self.lines)) if m), None)


def answers(port: int) -> bool:
    """Whether a worker answers HTTP on ``port`` (any status: the app is up)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
    try:
        connection.request("GET", "/")
        connection.getresponse().read()
    except OSError:
        return False
    finally:
        connection.close()
    return True


def group_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


@contextmanager
def serving(*args: str) -> Iterator[Served]:
    """Start ``toolpalette serve --http --port 0 ARGS``; stop it and its workers after."""
    code = "import sys; from toolpalette._cli import main; sys.exit(main())"
    command = [sys.executable, "-c", code, "serve", *args, "--http", "--port", "0"]
    process = subprocess.Popen(
        command,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    served = Served(process)
    try:
        wait_until(
            lambda: served.started() or process.poll() is not None,
            timeout=60,
            message="the start line",
        )
        found = served.started()
        assert found is not None, "\n".join(served.lines)
        served.url, served.port = found.group(1), int(found.group(2))
        wait_until(lambda: answers(served.port), timeout=60, message="a worker answers")
        yield served
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=15)
        wait_until(lambda: group_gone(process.pid), timeout=15, message="no worker is left")
        served.reader.join(timeout=15)
        assert process.stderr is not None
        process.stderr.close()


def fresh_connections(url: str) -> Any:
    """A transport opening a new connection for every request: any worker may answer it."""
    limits = httpx2.Limits(max_keepalive_connections=0)
    return streamable_http_client(url, http_client=httpx2.AsyncClient(limits=limits))


@pytest.mark.parametrize("mode", ["default", "legacy"])
async def test_two_workers_serve_stateless_without_being_asked(mode: str):
    with serving("--thinker", "worker_fixture:Workers", "--workers", "2") as served:
        assert served.lines[0] == f"serving {served.url} (stateless, 2 workers)"
        assert served.lines[1].startswith("note: 2 workers serve stateless")
        assert served.lines[2].startswith("note: the 2 workers share a request-state key")
        options = {} if mode == "default" else {"mode": mode}
        pids: set[int] = set()
        async with Client(fresh_connections(served.url), **options) as client:
            tools = (await client.list_tools()).tools
            assert [t.name for t in tools] == ["worker_pid", "search_tools", "call_tool"]
            # Until both workers have answered one client's requests: a worker still
            # starting on a loaded machine answers none until it listens.
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:

                async def call() -> None:
                    result = await client.call_tool("worker_pid", {})
                    assert not result.is_error
                    pids.add(int(result.content[0].text))

                async with anyio.create_task_group() as group:
                    for _ in range(4):
                        group.start_soon(call)
                if len(pids) == 2:
                    break
    assert len(pids) == 2
    assert served.process.pid not in pids


async def until_both_answer(call: Any) -> set[int]:
    """Run ``call`` (returning a worker's pid), four at a time, until both have answered."""
    pids: set[int] = set()
    for _ in range(25):

        async def one() -> None:
            pids.add(await call())

        async with anyio.create_task_group() as group:
            for _ in range(4):
                group.start_soon(one)
        if len(pids) == 2:
            break
    return pids


async def test_two_workers_find_and_call_a_deferred_tool_for_a_default_client():
    with serving("--thinker", "worker_fixture:Workers", "--workers", "2") as served:
        async with Client(fresh_connections(served.url)) as client:
            assert client.protocol_version == "2026-07-28"
            found = await client.call_tool("search_tools", {"query": "deferred process id"})
            assert not found.is_error
            assert found.structured_content is not None
            assert found.structured_content["tools"][0]["name"] == "deferred_pid"

            async def by_name() -> int:
                result = await client.call_tool("deferred_pid", {})
                assert not result.is_error, result.content[0].text
                return int(result.content[0].text)

            async def wrapped() -> int:
                result = await client.call_tool("call_tool", {"name": "deferred_pid"})
                assert not result.is_error, result.content[0].text
                return int(result.content[0].text)

            assert len(await until_both_answer(by_name)) == 2
            assert len(await until_both_answer(wrapped)) == 2


async def test_two_workers_approve_through_the_multi_round_trip_request():
    asked: list[str] = []

    async def approve(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": True})

    async def decline(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="decline")

    with serving("--thinker", "worker_fixture:Workers", "--workers", "2") as served:
        async with Client(fresh_connections(served.url), elicitation_callback=approve) as client:
            # Each round is a fresh connection: the worker that asked and the one that
            # verifies the answer differ about half the time, and every answer holds.

            async def approved() -> int:
                result = await client.call_tool("approved_pid", {"note": "n"})
                assert not result.is_error, result.content[0].text
                return int(result.content[0].text)

            pids = await until_both_answer(approved)
        async with Client(fresh_connections(served.url), elicitation_callback=decline) as client:
            refused = await client.call_tool(
                "call_tool", {"name": "approved_pid", "arguments": {"note": "n"}}
            )
    assert len(pids) == 2
    assert asked
    assert all("approved_pid" in message for message in asked)
    assert refused.is_error
    assert refused.content[0].text == "Tool 'approved_pid' was not approved."


def test_a_state_key_file_is_read_and_a_short_key_refused(tmp_path: Path):
    good, short = tmp_path / "keys", tmp_path / "short"
    good.write_text("# the first seals\n" + "k" * 40 + "\n" + "j" * 32 + "\n", encoding="utf-8")
    short.write_text("too-short\n", encoding="utf-8")
    with serving(
        "--thinker", "worker_fixture:Workers", "--workers", "2", "--state-key-file", str(good)
    ) as served:
        assert not any("request-state key" in line for line in served.lines)
    code = "import sys; from toolpalette._cli import main; sys.exit(main())"
    command = [sys.executable, "-c", code, "serve", "--thinker", "worker_fixture:Workers"]
    for path in (short, tmp_path / "missing"):
        done = subprocess.run(
            [*command, "--http", "--port", "0", "--state-key-file", str(path)],
            capture_output=True,
            text=True,
            env=ENV,
            timeout=60,
        )
        assert done.returncode == 2
        assert done.stderr.startswith("error: the request-state keys cannot be used")
        assert "too-short" not in done.stderr


@pytest.mark.parametrize(
    ("args", "mode"),
    [([], "stateful, 1 worker"), (["--stateless"], "stateless, 1 worker")],
)
async def test_the_start_line_names_the_url_the_mode_and_the_workers(args: list[str], mode: str):
    with serving("--select", "toolpalette-files", *args) as served:
        assert served.lines[0] == f"serving {served.url} ({mode})"
        async with Client(served.url, mode="legacy") as client:
            assert "file_info" in {t.name for t in (await client.list_tools()).tools}
    assert not any(line.startswith("note:") for line in served.lines)


def test_a_port_in_use_is_an_error_on_stderr():
    with serving("--select", "toolpalette-files") as served:
        code = "import sys; from toolpalette._cli import main; sys.exit(main())"
        command = [sys.executable, "-c", code, "serve", "--select", "toolpalette-files"]
        busy = [*command, "--http", "--port", str(served.port)]
        done = subprocess.run(busy, capture_output=True, text=True, env=ENV, timeout=60)
    assert done.returncode == 1
    assert f"error: cannot listen on 127.0.0.1 port {served.port}" in done.stderr
    assert done.stdout == ""
