"""Start and stop the HTTP servers the load and conformance runs talk to.

Each server is a process group of its own (the command, and uvicorn's workers), started
on 127.0.0.1 with ``--port 0``; its start line on stderr (``serving URL (MODE, N
workers)``) gives the URL. ``Server.stop`` ends the whole group, and waits for it.
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
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
START = re.compile(r"^serving (http://127\.0\.0\.1:(\d+)/mcp) \((\w+), (\d+) workers?\)$")


def serve_command(*args: str) -> list[str]:
    """``toolpalette serve ARGS --http --port 0``, with this interpreter."""
    code = "import sys; from toolpalette._cli import main; sys.exit(main())"
    return [sys.executable, "-c", code, "serve", *args, "--http", "--port", "0"]


def anchor_command(app: str, workers: int) -> list[str]:
    """The SDK's ``MCPServer`` serving ``app`` (see ``bench.load.anchor``)."""
    return [sys.executable, "-m", "bench.load.anchor", app, "--workers", str(workers)]


class Server:
    """One server process group, started at once; ``url`` once it answers."""

    def __init__(self, label: str, command: Sequence[str], env: dict[str, str]) -> None:
        self.label = label
        self.lines: list[str] = []
        environment = {**os.environ, **env}
        environment["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(ROOT), environment.get("PYTHONPATH", "")) if p
        )
        self.process = subprocess.Popen(
            list(command),
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            cwd=str(ROOT),
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.url = ""
        self.port = 0
        self.mode = ""

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line.rstrip("\n"))

    def wait_ready(self, timeout: float = 120) -> Server:
        """Wait for the start line and for a worker to answer HTTP.

        Raises:
            RuntimeError: the server exited, or did not answer in time.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = next((m for m in map(START.match, list(self.lines)) if m), None)
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.label} exited: " + "\n".join(self.lines[-20:]))
            if found is not None and not self.url:
                self.url, self.port, self.mode = found.group(1), int(found.group(2)), found[3]
            if self.url and _answers(self.port):
                return self
            time.sleep(0.1)
        raise RuntimeError(f"{self.label} did not answer within {timeout:g} s")

    def pids(self) -> list[int]:
        """The server's processes: the command and every worker."""
        import psutil  # the load runs' dependency; the conformance run needs none

        try:
            parent = psutil.Process(self.process.pid)
            return [parent.pid, *(c.pid for c in parent.children(recursive=True))]
        except psutil.NoSuchProcess:
            return []

    def workers(self) -> list[int]:
        """The uvicorn worker processes (the command itself with one worker)."""
        import psutil

        try:
            children = psutil.Process(self.process.pid).children(recursive=True)
            found = [c.pid for c in children if "spawn_main" in " ".join(c.cmdline())]
        except psutil.NoSuchProcess:
            return []
        return found or [self.process.pid]

    def stop(self) -> None:
        """End the process group and wait for every process of it."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=20)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                os.killpg(self.process.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            os.killpg(self.process.pid, signal.SIGKILL)
        self._reader.join(timeout=10)
        if self.process.stderr is not None:
            self.process.stderr.close()


def _answers(port: int) -> bool:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        connection.request("GET", "/")
        connection.getresponse().read()
    except OSError:
        return False
    finally:
        connection.close()
    return True
