"""Searching a directory tree by file name (glob) and by text (substring).

The walk never follows a symlinked directory; a symlinked file is searched only when it
leads inside the workspace. Files are visited in sorted order, so results are stable.
"""

from __future__ import annotations

import fnmatch
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Final

from toolpalette import ToolError

from toolpalette_files._impl import SNIFF, is_binary, read_at
from toolpalette_files._models import SearchMatch, SearchResult
from toolpalette_files._workspace import Resolved, Workspace

__all__ = ["MAX_FILE_BYTES", "MAX_FILES", "Query", "search"]

MAX_FILE_BYTES: Final = 2 * 1024 * 1024
"""Files larger than this are matched by name but their text is not searched."""
MAX_FILES: Final = 20_000
"""A search stops (truncated) after looking at this many files."""
_LINE: Final = 300


@dataclass(frozen=True)
class Query:
    """What to look for."""

    pattern: str | None
    contains: str | None
    ignore_case: bool
    limit: int
    abort: threading.Event = field(default_factory=threading.Event)

    def name_matches(self, rel: str) -> bool:
        """Whether a path (relative to the search directory) matches the glob."""
        if self.pattern is None:
            return True
        subject = rel if "/" in self.pattern else rel.rsplit("/", 1)[-1]
        return fnmatch.fnmatchcase(subject, self.pattern)


@dataclass
class _Tally:
    matches: list[SearchMatch] = field(default_factory=list)
    scanned: int = 0
    skipped: int = 0
    truncated: bool = False


def search(ws: Workspace, top: Resolved, query: Query) -> SearchResult:
    """Search the tree under ``top``."""
    if query.pattern is None and not query.contains:
        raise ToolError(
            "Give a glob pattern, a text to look for, or both.", code="invalid_search", status=400
        )
    if not os.path.isdir(top.real):
        raise ToolError(f"{top.shown!r} is not a directory.", code="not_directory", status=400)
    tally = _Tally()
    for real, rel in _files(top.real):
        if query.abort.is_set() or tally.scanned >= MAX_FILES:
            tally.truncated = True
            break
        tally.scanned += 1
        if query.name_matches(rel):
            _visit(ws, real, query, tally)
        if len(tally.matches) > query.limit:
            tally.truncated = True
            break
    return SearchResult(
        matches=tally.matches[: query.limit],
        truncated=tally.truncated,
        files_scanned=tally.scanned,
        files_skipped=tally.skipped,
    )


def _files(top: str) -> Iterator[tuple[str, str]]:
    for folder, dirs, files in os.walk(top, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            real = os.path.join(folder, name)
            yield real, os.path.relpath(real, top).replace(os.sep, "/")


def _visit(ws: Workspace, real: str, query: Query, tally: _Tally) -> None:
    shown = ws.show(real)
    if not query.contains:
        tally.matches.append(SearchMatch(path=shown))
        return
    text = _text_of(ws, shown)
    if text is None:
        tally.skipped += 1
        return
    needle = query.contains.casefold() if query.ignore_case else query.contains
    for number, line in enumerate(text.splitlines(), start=1):
        haystack = line.casefold() if query.ignore_case else line
        if needle in haystack:
            tally.matches.append(SearchMatch(path=shown, line=number, text=line[:_LINE]))
            if len(tally.matches) > query.limit:
                return


def _text_of(ws: Workspace, shown: str) -> str | None:
    """The file's text, or None when it is binary, too large, or leads outside."""
    try:
        target = ws.resolve(shown)
        if not os.path.isfile(target.real) or os.path.getsize(target.real) > MAX_FILE_BYTES:
            return None
        fd = ws.open_file(target, os.O_RDONLY)
    except (ToolError, OSError):
        return None
    try:
        data = read_at(fd, 0, MAX_FILE_BYTES + 1)
    finally:
        os.close(fd)
    if is_binary(data[:SNIFF]) or len(data) > MAX_FILE_BYTES:
        return None
    return data.decode("utf-8", errors="replace")
