"""A ``redis-server`` of the run's own on 127.0.0.1, for the runs that serve a Redis task store.

``REDIS_SERVER`` (what ``python -m nox`` sets) or the first ``redis-server`` or
``valkey-server`` on PATH; without one, `redis_binary` says why.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

BINARIES = ("redis-server", "valkey-server")
PERSIST_NOTHING = ("--save", "", "--appendonly", "no", "--dir")


def redis_binary() -> tuple[str | None, str]:
    """The server's command, or None and why there is none."""
    given = os.environ.get("REDIS_SERVER")
    if given:
        found = shutil.which(given)
        return (found, "") if found else (None, f"REDIS_SERVER={given} is not an executable")
    found = next(filter(None, map(shutil.which, BINARIES)), None)
    if found is None:
        why = os.environ.get("TOOLPALETTE_TEST_NO_REDIS") or (
            "no redis-server or valkey-server on PATH, nor REDIS_SERVER "
            "(`python -m nox` installs Debian's when it runs as root)"
        )
        return None, why
    return found, ""


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


@contextmanager
def running_redis(binary: str) -> Iterator[str]:
    """``binary`` serving on 127.0.0.1 and a free port, nothing persisted; its URL.

    Raises:
        RuntimeError: it would not start (three ports tried) within 20 s each.
    """
    with tempfile.TemporaryDirectory(prefix="tpredis-") as folder:
        for _ in range(3):
            port = _free_port()
            process = subprocess.Popen(
                [binary, "--port", str(port), "--bind", "127.0.0.1", *PERSIST_NOTHING, folder],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            deadline = time.monotonic() + 20
            while process.poll() is None and not _listens(port):
                if time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            if process.poll() is None and _listens(port):
                break
            _stop(process)
        else:
            raise RuntimeError("redis-server would not start on 127.0.0.1")
        try:
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)
