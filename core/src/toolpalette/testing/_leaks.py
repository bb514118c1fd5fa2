"""The leak check: what a test started and left behind (threads, descriptors, processes)."""

from __future__ import annotations

import asyncio
import os
import re
import threading
import time
from typing import Any, Final, TypeVar

from toolpalette._run.workers import PoolThread

__all__ = ["LeakCheck", "LeakError", "leak_check"]

T = TypeVar("T")

_POLL: Final = 0.005  # seconds between two looks at what has no handle to wait on
_LOOP_EXECUTOR: Final = re.compile(r"asyncio_\d+")
"""How an event loop's default executor names its threads."""


class LeakError(AssertionError):
    """Something a test started was still there after it: ``leaks`` says what."""

    def __init__(self, leaks: list[str]) -> None:
        self.leaks = leaks
        """One line per thing left behind."""
        super().__init__("left behind:\n  " + "\n  ".join(leaks))


class LeakCheck:
    """Records what a test has open before it runs and fails it on anything left behind.

    Compared before and after: live threads, open file descriptors, child processes, the
    running event loop's tasks (``async with`` only), and the pending approvals of every
    thinker passed to [`watch()`][toolpalette.testing.LeakCheck.watch]. Threads,
    descriptors and processes that are still ending get until ``deadline`` seconds to go
    (polled, never a fixed sleep).

    Idle worker threads of toolpalette's pool are not leaks: the pool keeps them for the
    next sync call (they retire after a minute unused). A worker still running a tool
    is one: it is an abandoned call that has not ended. The same holds for the failure
    report thread (one stuck in a reporter is a leak) and the loop-stall watchdog. Each
    of these threads marks itself idle while it waits for work and busy while it works;
    the check reads that mark, never the thread's frames.

    Threads of an event loop's default executor (``asyncio.to_thread``,
    ``loop.run_in_executor(None, ...)``, named ``asyncio_N``) belong to their loop, not
    to the test, and are never counted, idle or busy: nothing public says which they
    are. The loop keeps them for its next job and ends them when it shuts its default
    executor down (``asyncio.run`` and a loop's ``close()`` do); a loop the test opened
    and left open shows as its own descriptors left open. Blocking work a test leaves running
    there is therefore not seen: run what may hang through toolpalette's pipeline, whose
    workers are checked, or await it.

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
        self._threads = {t for t in threading.enumerate() if not _kept(t)}
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
                thread.join(min(_POLL * 10, max(0.0, end - time.monotonic())))
                break
            else:
                time.sleep(_POLL)  # polling what has no handle to wait on (fds, processes)

    def check(self) -> None:
        """Raise [`LeakError`][toolpalette.testing.LeakError] if anything is left behind."""
        found = self.leaks()
        if found:
            raise LeakError(found)

    def _new_threads(self) -> list[threading.Thread]:
        """Threads at work now that were not, or were idle in a pool, at the start."""
        return [
            t
            for t in threading.enumerate()
            if t not in self._threads and t.is_alive() and not _kept(t)
        ]

    def _look(self) -> list[str]:
        found = [
            f"thread {t.name!r} (daemon={t.daemon}) still running" for t in self._new_threads()
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
    """Build a `LeakCheck`; ``with`` it around code that must leave nothing behind."""
    return LeakCheck(deadline=deadline)


def _kept(thread: threading.Thread) -> bool:
    """Whether ``thread`` is one a pool or a loop keeps for later work (see LeakCheck).

    A toolpalette pool thread says so itself while it waits; an event loop's default
    executor's threads are the loop's, whatever they do.
    """
    if isinstance(thread, PoolThread):
        return thread.idle
    return _LOOP_EXECUTOR.fullmatch(thread.name) is not None


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
