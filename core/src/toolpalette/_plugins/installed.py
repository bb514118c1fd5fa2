"""What is installed, read in one pass: the packs' entry points and the listing cache key."""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final

__all__ = [
    "Distribution",
    "Installed",
    "entries_in",
    "fingerprint",
    "folder_of",
    "read",
    "snapshot",
]

_SUFFIXES: Final = (".dist-info", ".egg-info")
_EDITABLE: Final = re.compile(r'"editable"\s*:\s*true')
_CORE: Final = "toolpalette"
_READ: Final = os.O_RDONLY | getattr(os, "O_BINARY", 0)


@dataclass(frozen=True)
class Distribution:
    """One installed distribution, the first of its name on ``sys.path``."""

    name: str
    """Its normalized name (lower case, runs of ``-_.`` as one ``_``), from the folder."""
    folder: str
    """Its metadata folder (``*.dist-info`` or ``*.egg-info``)."""
    entry_points: str | None
    """The text of its ``entry_points.txt``, None when it has none."""

    def declares(self, group: str) -> bool:
        """Whether its entry point table has a ``group`` section (a cheap test, no parse)."""
        return self.entry_points is not None and f"[{group}]" in self.entry_points


@dataclass(frozen=True)
class Installed:
    """Every distribution on ``sys.path`` at one moment, each with its entry points."""

    distributions: tuple[Distribution, ...]
    """In ``sys.path`` order (sorted by folder name within one ``sys.path`` entry)."""
    core: str | None
    """The core's metadata folder, None when it is not installed as a distribution."""

    def declaring(self, group: str) -> list[Distribution]:
        """The distributions whose entry point table has a ``group`` section."""
        return [dist for dist in self.distributions if dist.declares(group)]


def _metadata_folders() -> Iterator[tuple[str, str] | None]:
    """``(normalized name, folder)`` of each metadata folder on ``sys.path``, in order.

    Yields None, and nothing after it, at an entry that is an archive or an egg (a file
    rather than a folder), whose distributions only ``importlib.metadata`` lists.
    """
    for entry in sys.path:
        path = entry or "."
        if path.endswith(".egg"):
            yield None
            return
        try:
            names = sorted(os.listdir(path))
        except NotADirectoryError:
            yield None
            return
        except OSError:
            continue
        for name in names:
            if name.endswith(_SUFFIXES):
                dist = _normalize(name.rpartition(".")[0].partition("-")[0])
                yield dist, os.path.join(path, name)


# Kept: >3x faster cold at 1,000 packs than importlib.metadata or its backport (bench/README.md).
def snapshot() -> Installed | None:
    """Every distribution on ``sys.path`` now, or None when an entry cannot be listed.

    None when an entry of ``sys.path`` is an archive or an egg (a file rather than a
    folder), whose distributions only ``importlib.metadata`` lists.
    """
    seen: set[str] = set()
    found: list[Distribution] = []
    core: str | None = None
    for each in _metadata_folders():
        if each is None:
            return None
        dist, folder = each
        if dist in seen:
            continue
        seen.add(dist)
        if dist == _CORE:
            core = folder
        found.append(Distribution(dist, folder, read(folder, "entry_points.txt")))
    return Installed(tuple(found), core)


def fingerprint(
    group: str, used: Callable[[str], bool], installed: Installed | None = None
) -> str | None:
    """The digest of the core and every distribution declaring entry points in ``group``.

    ``used(name)`` says whether the pack named ``name`` is used at all (not switched off
    or blocked); a distribution whose packs are all unused counts by its entry points
    alone, so its files (even editable ones) do not matter. ``installed`` is the
    snapshot to read (a new one by default). None when something that matters cannot
    be fingerprinted (see the module's notes).
    """
    if installed is None:
        installed = snapshot()
        if installed is None:
            return None
    digest = hashlib.sha256()
    if installed.core is None:
        digest.update(b"core\0?")
    else:  # an editable core has a RECORD too: its version is in the folder's name
        core_record = read(installed.core, "RECORD") or ""
        digest.update(b"core\0" + _bytes(os.path.basename(installed.core)) + _bytes(core_record))
    for dist in installed.declaring(group):
        if dist.folder == installed.core:
            continue  # counted above, with its whole RECORD
        entry_points = dist.entry_points or ""
        digest.update(b"\0" + _bytes(os.path.basename(dist.folder)) + b"\0" + _bytes(entry_points))
        if not any(used(name) for name, _ in entries_in(entry_points, group)):
            continue
        record = read(dist.folder, "RECORD")
        if record is None:
            return None
        if _exists(dist.folder, "direct_url.json") and _EDITABLE.search(
            read(dist.folder, "direct_url.json") or ""
        ):
            return None
        digest.update(hashlib.sha256(_bytes(record)).digest())
    return digest.hexdigest()


def entries_in(entry_points: str, group: str) -> list[tuple[str, str]]:
    """The ``(name, value)`` entries of ``group`` in an ``entry_points.txt`` (an INI file).

    Read as the standard library reads it: stripped lines, comments skipped, ``name =
    value`` split at the first ``=``; a line without one is skipped.
    """
    entries: list[tuple[str, str]] = []
    inside = False
    header = f"[{group}]"
    for line in entry_points.splitlines():
        text = line.strip()
        if not text or text.startswith(("#", ";")):
            continue
        if text.startswith("["):
            inside = text == header
        elif inside and "=" in text:
            name, _, value = text.partition("=")
            entries.append((name.strip(), value.strip()))
    return entries


def read(folder: str, name: str) -> str | None:
    """The text of file ``name`` in ``folder``, None when it cannot be read.

    Read with ``os.read`` rather than ``open()``: the metadata files are small and many
    (three per pack), and a text-mode file object costs several times the read itself.
    """
    try:
        fd = os.open(os.path.join(folder, name), _READ)
    except OSError:
        return None
    chunks: list[bytes] = []
    try:
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return b"".join(chunks).decode("utf-8", "surrogateescape")


def _exists(folder: str, name: str) -> bool:
    return os.access(os.path.join(folder, name), os.F_OK)


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def folder_of(name: str) -> str | None:
    """The metadata folder of distribution ``name``, the first on ``sys.path``, or None.

    None too when an entry of ``sys.path`` before it cannot be listed (an archive).
    """
    wanted = _normalize(name)
    for each in _metadata_folders():
        if each is None:
            return None
        if each[0] == wanted:
            return each[1]
    return None
