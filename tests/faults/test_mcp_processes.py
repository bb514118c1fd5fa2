"""MCP server processes never outlive the host: their process groups are always ended.

Every stdio server runs in a session of its own, so its process group holds it and the
children it starts. Before, the group was killed only when the server did not exit on
end of input: a server that exited cleanly left its child (``sleep 600``) running.
And a host killed by SIGTERM ran no ``atexit`` handler, so a server that ignores the
end of its input outlived it. The hosts here are processes of their own, as a real
host would be.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from toolpalette import ToolHub
from toolpalette.testing import wait_until

pytest.importorskip("mcp", reason="the MCP client needs the mcp extra")
pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="process checks read /proc"
)

RAW = Path(__file__).parent / "servers" / "raw_server.py"
WAIT = 30.0
"""Seconds given to a process to start or to end (polled)."""


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def pid_in(path: Path) -> int:
    wait_until(lambda: path.exists() and path.read_text().strip() != "", timeout=WAIT)
    return int(path.read_text())


def raw(plan: dict[str, Any], folder: Path) -> dict[str, Any]:
    tools = [{"name": "ping", "description": "Ping.", "inputSchema": {"type": "object"}}]
    path = folder / "plan.json"
    path.write_text(json.dumps({"tools": tools, **plan}))
    return {"command": sys.executable, "args": [str(RAW), str(path)]}


def kill(*pids: int) -> None:
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_closing_ends_the_children_of_a_server_that_exits_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLPALETTE_CACHE_DIR", str(tmp_path / "cache"))
    server, child = tmp_path / "server.pid", tmp_path / "child.pid"
    hub = ToolHub(
        autoload=False,
        config={},
        mcp_servers={"clean": raw({"pid": str(server), "child": str(child)}, tmp_path)},
    )
    try:
        assert [p.name for p in hub.providers_for_server("clean")] == ["ping"]
        leader, sleeper = pid_in(server), pid_in(child)
        assert os.getpgid(leader) == leader != os.getpgid(0)  # a session of its own
        assert os.getpgid(sleeper) == leader
    finally:
        hub.close()
    try:
        wait_until(lambda: not alive(leader), timeout=WAIT)
        wait_until(lambda: not alive(sleeper), timeout=WAIT)
    finally:
        kill(leader, sleeper)


HOST = textwrap.dedent(
    """
    import json, signal, sys, time

    # Started with SIGINT ignored (a shell's background job, a CI runner), this host
    # would keep it ignored, as toolpalette rightly does: it takes Python's defaults,
    # as a host started from a terminal has them.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)

    from toolpalette import ToolHub

    own, marker, server = sys.argv[1] == "own", sys.argv[2], json.loads(sys.argv[3])
    if own:
        def handler(signum, frame):
            with open(marker, "w") as out:
                out.write(str(signum))
            sys.exit(3)
        signal.signal(signal.SIGTERM, handler)
    hub = ToolHub(autoload=False, config={}, mcp_servers={"stay": server})
    assert [p.name for p in hub.providers_for_server("stay")] == ["ping"]
    print("ready", flush=True)
    while True:
        time.sleep(1)
    """
)


IGNORING_SIGINT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)
"""Runs the command after it with SIGINT ignored, as a background job's shell leaves it."""


@pytest.mark.parametrize(
    ("signum", "handler"),
    [
        pytest.param(signal.SIGTERM, "default", id="SIGTERM"),
        pytest.param(signal.SIGINT, "default", id="SIGINT"),
        pytest.param(signal.SIGTERM, "own", id="SIGTERM-own-handler"),
        # As a background job or a CI runner starts it: SIGINT ignored from the start.
        pytest.param(signal.SIGINT, "ignored", id="SIGINT-launched-ignored"),
    ],
)
def test_a_signalled_host_ends_its_servers_and_keeps_its_own_handler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signum: int, handler: str
) -> None:
    server, child, marker = tmp_path / "server.pid", tmp_path / "child.pid", tmp_path / "mark"
    # The server ignores the end of its input, and SIGTERM: only its group's end stops it.
    plan = raw({"pid": str(server), "child": str(child), "stay": True}, tmp_path)
    script = tmp_path / "host.py"
    script.write_text(HOST)
    env = {**os.environ, "TOOLPALETTE_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, str(script), handler, str(marker), json.dumps(plan)]
    if handler == "ignored":  # exec keeps an ignored signal ignored, as a shell's `&` does
        command = [sys.executable, "-c", IGNORING_SIGINT, *command]
    host = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    leader = sleeper = 0
    try:
        assert host.stdout is not None
        assert host.stdout.readline().strip() == "ready"
        leader, sleeper = pid_in(server), pid_in(child)
        host.send_signal(signum)
        status = host.wait(WAIT)
        if handler == "own":
            assert status == 3  # the host's own handler ran, as it would without toolpalette
            assert marker.read_text() == str(int(signal.SIGTERM))
        elif signum == signal.SIGTERM:
            assert status == -signal.SIGTERM  # ended by the signal, as by default
        wait_until(lambda: not alive(leader), timeout=WAIT)
        wait_until(lambda: not alive(sleeper), timeout=WAIT)
    finally:
        if host.poll() is None:
            host.kill()
            host.wait(WAIT)
        if host.stdout is not None:
            host.stdout.close()
        kill(*(pid for pid in (leader, sleeper) if pid))
