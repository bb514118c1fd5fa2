"""The loop-stall watchdog: names the async tool that holds an event loop's thread."""

from __future__ import annotations

import faulthandler
import linecache
import logging
import re
import tempfile
import threading
import time
import weakref
from typing import Final

from toolpalette._run.workers import PoolThread

__all__ = ["INTERVAL", "STALL_AFTER", "UNNAMED", "StepBoard", "board", "ensure_started", "local"]

logger = logging.getLogger("toolpalette.executor")

STALL_AFTER: Final = 0.1
"""Seconds one step of an async tool may hold its thread before it is logged."""
INTERVAL: Final = 0.05
"""Seconds between two looks of the watchdog."""
UNNAMED: Final = "(an awaited policy or approver)"
"""What a step that runs no tool of the registry (an approver's awaitable) is called."""


class StepBoard:
    """What one thread's async tool step is: written by that thread, read by the watchdog.

    ``name`` is the tool whose step runs on the thread now (the innermost, when a tool's
    step calls another tool), None between steps; ``steps`` counts the steps begun
    there, so a look can tell a step that still runs from a later one. A step costs two
    writes: the running module saves ``name``, sets it and the count, and restores it.
    """

    __slots__ = ("__weakref__", "ident", "name", "steps")

    def __init__(self, ident: int) -> None:
        self.ident = ident
        self.name: str | None = None
        self.steps = 0


local = threading.local()
"""Holds the thread's board as ``local.board`` (read directly on the hot path)."""
_boards: weakref.WeakSet[StepBoard] = weakref.WeakSet()  # gone with their thread's locals
_lock = threading.Lock()
_started = False


def board() -> StepBoard:
    """This thread's board (made on the thread's first async tool step)."""
    try:
        found: StepBoard = local.board
    except AttributeError:
        found = local.board = StepBoard(threading.get_ident())
        with _lock:
            _boards.add(found)
    return found


def ensure_started() -> None:
    """Start the watchdog thread, once per process (cheap after the first call)."""
    global _started
    if _started:
        return
    with _lock:
        if not _started:
            PoolThread(_watch, "toolpalette-watchdog").start()
            _started = True


def _watch(me: PoolThread) -> None:
    seen: dict[StepBoard, tuple[int, float, bool]] = {}
    while True:
        me.idle = True
        time.sleep(INTERVAL)
        me.idle = False
        try:
            _look(seen)
        except Exception:  # pragma: no cover - the watchdog must outlive any surprise
            logger.exception("the loop-stall watchdog failed a look; it keeps watching")


def _look(seen: dict[StepBoard, tuple[int, float, bool]]) -> None:
    """One look at every board: remember new steps, report one held past STALL_AFTER."""
    now = time.monotonic()
    with _lock:
        boards = list(_boards)
    for gone in seen.keys() - set(boards):
        del seen[gone]
    for each in boards:
        steps, name = each.steps, each.name
        if name is None:
            seen.pop(each, None)
            continue
        last = seen.get(each)
        if last is None or last[0] != steps:
            seen[each] = (steps, now, False)
        elif not last[2] and now - last[1] >= STALL_AFTER:
            seen[each] = (steps, last[1], True)
            _report(name, each.ident, now - last[1])


def _report(name: str, ident: int, held: float) -> None:
    logger.warning(
        "tool %s has held its event loop's thread for %.2f s (blocking code in an async "
        "tool?); every coroutine on that loop waits. Where it is:\n%s",
        name if name == UNNAMED else repr(name),
        held,
        _stack_of(ident),
    )


_THREAD: Final = re.compile(r"^(?:Current thread|Thread) (0x[0-9a-f]+)", re.MULTILINE)
_FRAME: Final = re.compile(r'^  File "(?P<file>.*)", line (?P<line>\d+) in (?P<func>.*)$')


def _stack_of(ident: int) -> str:
    """Thread ``ident``'s stack, innermost last, as faulthandler sees it, with its lines."""
    with tempfile.TemporaryFile() as dump:
        faulthandler.dump_traceback(dump, all_threads=True)
        dump.seek(0)
        text = dump.read().decode("utf-8", "replace")
    headers = list(_THREAD.finditer(text))
    for index, header in enumerate(headers):
        if int(header[1], 16) == ident:
            end = headers[index + 1].start() if index + 1 < len(headers) else len(text)
            return "".join(reversed(_frames(text[header.end() : end])))
    return "  (its stack could not be read)\n"


def _frames(section: str) -> list[str]:
    """Each frame of one thread's section, as ``traceback`` prints one."""
    out = []
    for line in section.splitlines():
        found = _FRAME.match(line)
        if found is None:
            continue
        file, number = found["file"], int(found["line"])
        source = linecache.getline(file, number).strip()
        where = f'  File "{file}", line {number}, in {found["func"]}\n'
        out.append(where + (f"    {source}\n" if source else ""))
    return out
