"""Notes a tool writes and a resource reads, announced with `resource_updated`.

With ``NOTES_WATCH_FILE`` set (``serve --workers`` tests), the note is that file, and
each process that imports this module watches it and announces every change it sees.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import toolpalette
from toolpalette import ContentSelector, Thinker, ToolSelector

NOTES: dict[str, str] = {"today": "nothing yet", "monday": "rest"}
WATCHED = os.environ.get("NOTES_WATCH_FILE")


@toolpalette.resource("notes://today", mime_type="text/plain")
def today() -> str:
    """Today's note."""
    return Path(WATCHED).read_text() if WATCHED else NOTES["today"]


@toolpalette.resource("notes://day/{day}")
def day(day: str) -> str:
    """The note of a day."""
    return NOTES[day]


@toolpalette.tool
def write_note(text: str, day: str = "today") -> str:
    """Write the note of a day (today by default), and say that it changed."""
    if WATCHED and day == "today":
        Path(WATCHED).write_text(text)  # every worker's watcher announces it
        return "written"
    NOTES[day] = text
    toolpalette.resource_updated("notes://today" if day == "today" else f"notes://day/{day}")
    return "written"


class Notes(Thinker):
    """The note tool and both resources."""

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(write_note)

    @classmethod
    def declare_content(cls) -> ContentSelector:
        return ContentSelector().resource(today).resource(day)


def _watch(path: Path) -> None:
    seen = path.stat().st_mtime_ns if path.exists() else None
    while True:
        threading.Event().wait(0.05)
        now = path.stat().st_mtime_ns if path.exists() else None
        if now != seen:
            seen = now
            toolpalette.resource_updated("notes://today")


if WATCHED:
    threading.Thread(target=_watch, args=(Path(WATCHED),), daemon=True).start()
