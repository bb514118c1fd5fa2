"""The leak check: what a test started and left behind (threads, descriptors, processes).

It compares two snapshots of the process: live threads (a pool's idle workers excepted),
open descriptors and child processes, read from ``/proc`` (or ``/dev/fd``), and the
event loop's tasks.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from typing import Any, TypeVar

__all__ = ["LeakCheck", "LeakError", "leak_check"]

T = TypeVar("T")


class LeakError(AssertionError):
    """Something a test started was still there after it: ``leaks`` says what."""

    def __init__(self, leaks: list[str]) -> None:
        self.leaks = leaks
        """One line per thing left behind."""
        super().__init__("left behind:\n  " + "\n  ".join(leaks))


_POLL = 0.005


class LeakCheck:
    """Records what a test has open before it runs and fails it on anything left behind.

    Compared before and after: live threads, open file descriptors, child processes,
    the running event loop's tasks (``async with`` only), and the pending approvals of
    every thinker passed to :meth:`watch`. Threads, descriptors and processes that are
    still ending get until ``deadline`` seconds to go (polled, never a fixed sleep).

    Idle worker threads of toolpalette's pool are not leaks: the pool keeps them for the
    next sync call (they retire after a minute unused). A worker still running a tool
    is one: it is an abandoned call that has not ended.

    Descriptors and child processes are read from ``/proc`` (Linux) or ``/dev/fd``;
    where neither exists those two checks are skipped.

    Use it as ``with leak_check() as check:`` (or ``async with`` in a coroutine, which
    adds the task check); the pytest plugin's ``leak_check`` fixture wraps a whole test.
    """

    def __init__(self, *, deadline: float = 5.0) -> None:
        self.deadline = deadline
        """Seconds to wait for threads, descriptors and processes that are ending."""
        self._watched: list[Any] = []
        self._threads: set[threading.Thread] = set()
        self._fds: dict[int, str] | None = None
        self._children: set[int] | None = None
        self._tasks: set[asyncio.Task[Any]] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def watch(self, thinker: T) -> T:
        """Check ``thinker``'s pending approvals at the end too; returns it, to chain."""
        self._watched.append(thinker)
        return thinker

    # -- the two snapshots ----------------------------------------------------------

    def start(self) -> None:
        """Take the "before" snapshot (``__enter__`` calls this)."""
        # A pool's idle worker that a call takes up is not new, but is busy.
        self._threads = {t for t in threading.enumerate() if not _idle_pool_thread(t)}
        self._fds = _open_fds()
        self._children = _children()

    def leaks(self) -> list[str]:
        """What is left behind now, after waiting up to ``deadline`` for what is ending."""
        end = time.monotonic() + self.deadline
        found: list[str] = []
        while True:
            found = self._look()
            if not found or time.monotonic() >= end:
                return found
            for thread in self._new_threads():
                if not _idle_pool_thread(thread):
                    thread.join(min(_POLL * 10, max(0.0, end - time.monotonic())))
                    break
            else:
                time.sleep(_POLL)  # polling what has no handle to wait on (fds, processes)

    def check(self) -> None:
        """Raise :class:`LeakError` if anything is left behind."""
        found = self.leaks()
        if found:
            raise LeakError(found)

    def _new_threads(self) -> list[threading.Thread]:
        """Threads alive now that were not, or were idle in a pool, at the start."""
        return [t for t in threading.enumerate() if t not in self._threads and t.is_alive()]

    def _look(self) -> list[str]:
        found = [
            f"thread {t.name!r} (daemon={t.daemon}) still running"
            for t in self._new_threads()
            if not _idle_pool_thread(t)
        ]
        if self._fds is not None:
            now = _open_fds() or {}
            found.extend(
                f"file descriptor {fd} open ({target})"
                for fd, target in sorted(now.items())
                if self._fds.get(fd) != target
            )
        if self._children is not None:
            found.extend(
                f"child process {pid} still there" for pid in sorted(_children() - self._children)
            )
        if self._tasks is not None and self._loop is not None:
            current = asyncio.current_task(self._loop)
            found.extend(
                f"asyncio task {task.get_name()!r} still pending"
                for task in asyncio.all_tasks(self._loop)
                if task not in self._tasks and task is not current
            )
        for thinker in self._watched:
            pending = thinker.pending_approvals()
            if pending:
                found.append(f"{len(pending)} pending approval(s) of {type(thinker).__name__}")
        return found

    # -- context managers -----------------------------------------------------------

    def __enter__(self) -> LeakCheck:
        self.start()
        return self

    def __exit__(self, kind: object, error: object, tb: object) -> None:
        found = self.leaks()
        if found and kind is None:  # a failing test's own error says more
            raise LeakError(found)

    async def __aenter__(self) -> LeakCheck:
        self._loop = asyncio.get_running_loop()
        self._tasks = set(asyncio.all_tasks(self._loop))
        self.start()
        return self

    async def __aexit__(self, kind: object, error: object, tb: object) -> None:
        end = time.monotonic() + self.deadline
        found = self._look()
        while found and time.monotonic() < end:
            await asyncio.sleep(_POLL)  # let what is finishing finish, loop running
            found = self._look()
        if found and kind is None:
            raise LeakError(found)


def leak_check(*, deadline: float = 5.0) -> LeakCheck:
    """Build a :class:`LeakCheck`; ``with`` it around code that must leave nothing behind."""
    return LeakCheck(deadline=deadline)


def _idle_pool_thread(thread: threading.Thread) -> bool:
    """A pool's worker waiting for work: its innermost frame is the pool's own code.

    toolpalette's workers and the event loop's default executor keep idle threads for
    the next job; one running a tool (or anything else) is not idle.
    """
    pool_code = _POOL_CODE.get(thread.name.split("_")[0].split("-worker")[0])
    if pool_code is None or thread.ident is None:
        return False
    frame = sys._current_frames().get(thread.ident)
    # Waiting in the standard library's queue (the report thread's ``queue.Queue``)
    # counts as the pool's own code waiting; anything else in between is busy.
    while frame is not None and frame.f_globals.get("__name__") in _WAITING:
        frame = frame.f_back
    if frame is None:  # ended meanwhile
        return True
    module = str(frame.f_globals.get("__name__", ""))
    return module.startswith(pool_code)


_POOL_CODE = {
    "toolpalette": "toolpalette._run",
    "toolpalette-reports": "toolpalette._run.reports",
    "toolpalette-watchdog": "toolpalette._run.watchdog",
    "asyncio": "concurrent.futures",
}
_WAITING = frozenset({"queue", "threading"})


def _open_fds() -> dict[int, str] | None:
    for where in ("/proc/self/fd", "/dev/fd"):
        try:
            names = os.listdir(where)
        except OSError:
            continue
        fds: dict[int, str] = {}
        for name in names:
            try:
                fds[int(name)] = os.readlink(f"{where}/{name}")
            except (OSError, ValueError):
                continue  # the descriptor listing the directory itself, already closed
        return fds
    return None


def _children() -> set[int]:
    """Processes whose parent is this one (zombies included), from ``/proc``."""
    me = os.getpid()
    found: set[int] = set()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 1 and int(fields[1]) == me:
            found.add(int(entry))
    return found
