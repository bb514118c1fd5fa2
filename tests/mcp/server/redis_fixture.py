"""A real ``redis-server`` for the Redis task store's tests, on 127.0.0.1 and a free port.

``python -m nox`` finds or installs one and says where in ``REDIS_SERVER`` (or why not,
in ``TOOLPALETTE_TEST_NO_REDIS``); run by hand, PATH is searched.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from toolpalette.testing import wait_until

BINARIES = ("redis-server", "valkey-server")


def redis_binary() -> str:
    """The server's command; the test skips, saying exactly why, when there is none."""
    given = os.environ.get("REDIS_SERVER")
    if given:
        found = shutil.which(given)
        if found is None:
            pytest.skip(f"REDIS_SERVER={given} is not an executable: the Redis store is untested")
        return found
    found = next(filter(None, map(shutil.which, BINARIES)), None)
    if found is None:
        why = os.environ.get("TOOLPALETTE_TEST_NO_REDIS") or (
            "no redis-server or valkey-server on PATH, nor REDIS_SERVER "
            "(`python -m nox` installs Debian's when it runs as root)"
        )
        pytest.skip(f"the Redis store is untested: {why}")
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _listens(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
    except OSError:
        return False
    return True


def _started(binary: str, folder: str) -> tuple[subprocess.Popen[bytes], int] | None:
    """A server listening on a free port, or None when that port was taken meanwhile."""
    port = _free_port()
    options = ["--bind", "127.0.0.1", "--protected-mode", "yes", "--save", "", "--dir", folder]
    process = subprocess.Popen(
        [binary, "--port", str(port), *options, "--appendonly", "no"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(
            lambda: process.poll() is not None or _listens(port),
            timeout=20,
            message="redis-server listens",
        )
    except BaseException:
        _stop(process)
        raise
    if process.poll() is not None:
        return None
    return process, port


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


@contextmanager
def running_redis() -> Iterator[str]:
    """A ``redis-server`` of its own (no persistence, loopback only); its URL.

    Stopped, and waited for, after: no process is left behind. A port taken between
    choosing it and the server binding it is tried again, on another.
    """
    binary = redis_binary()
    with tempfile.TemporaryDirectory(prefix="tpredis-") as folder:
        for _ in range(3):
            started = _started(binary, folder)
            if started is not None:
                break
        else:
            raise AssertionError("redis-server would not start on a free port three times")
        process, port = started
        try:
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            _stop(process)
