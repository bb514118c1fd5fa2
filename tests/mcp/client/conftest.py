"""What the MCP client's tests share: the real servers, process ids, polling.

The real servers (``mcp-server-time``, ``mcp-server-git`` from PyPI,
``@modelcontextprotocol/server-filesystem`` and ``server-everything`` from npm) are
installed by the nox test sessions into an environment of their own, and found through
environment variables; a test whose server is absent skips, saying so.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip(
    "mcp", reason="the MCP client needs the mcp extra: pip install toolpalette[mcp]"
)

from toolpalette import ToolHub

PEERS = Path(__file__).parent / "peers"
SLOW_SERVER = PEERS / "slow_server.py"
PROGRESS_SERVER = PEERS / "progress_server.py"
TASK_SERVER = PEERS / "task_server.py"
NOTES_SERVER = PEERS / "notes_server.py"


def peer_module(path: Path) -> ModuleType:
    """A server script of ``peers`` imported afresh, for its in-process server object."""
    spec = importlib.util.spec_from_file_location(f"peer_{path.stem}", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def peer(variable: str) -> str:
    """The executable of a real MCP server, or skip saying how to get it."""
    path = os.environ.get(variable)
    if not path:
        pytest.skip(f"{variable} is not set: run the tests through `python -m nox -s tests`")
    return path


def children() -> dict[int, str]:
    """This process's child processes: pid to command line (Linux /proc)."""
    found: dict[int, str] = {}
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == me:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                found[int(entry.name)] = cmdline.strip()
        except (OSError, ValueError, IndexError):
            continue
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


PROCESS_WAIT = 15.0
"""Seconds to wait for a server process to start or end (``wait_until``'s deadline)."""


def server_pids(marker: str) -> list[int]:
    """The child processes whose command line contains ``marker``."""
    return sorted(pid for pid, cmd in children().items() if marker in cmd and alive(pid))


pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="process checks read /proc"
)


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    """A git repository with one committed file and one untracked."""
    repo = tmp_path / "repo"
    repo.mkdir()
    run = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "README.md").write_text("hello\n")
    subprocess.run([*run, "add", "README.md"], check=True)
    subprocess.run([*run, "commit", "-q", "-m", "first"], check=True)
    (repo / "notes.txt").write_text("draft\n")
    return repo


@pytest.fixture
def make_hub() -> Iterator[Callable[..., ToolHub]]:
    """Build hubs without installed packs; every one is closed after the test."""
    hubs: list[ToolHub] = []

    def make(**options: object) -> ToolHub:
        options.setdefault("autoload", False)
        options.setdefault("config", {})
        hub = ToolHub(**options)  # type: ignore[arg-type]
        hubs.append(hub)
        return hub

    yield make
    for hub in hubs:
        hub.close()
