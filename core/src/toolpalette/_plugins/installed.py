"""What is installed, fingerprinted cheaply: the key of the listing cache.

Answering ``toolpalette list`` from the cache must cost less than importing the tools
would, so the key is computed without ``importlib.metadata`` (whose import alone costs
more than ``import toolpalette``): the folders on ``sys.path`` are listed and, for each
distribution, its ``entry_points.txt`` is read; the distributions that declare packs in
the group contribute their entry points and their whole ``RECORD`` (every installed
file with its hash, so any reinstall, upgrade or downgrade changes the key), and the
core contributes its version and ``RECORD``. As the import system does, only the first
distribution of a name on ``sys.path`` counts.

Anything this cannot fingerprint makes the listing uncacheable (None): a pack installed
in editable mode (its sources change without its ``RECORD`` changing), a distribution
without a ``RECORD``, or a ``sys.path`` entry that is an archive rather than a folder.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Callable, Iterator
from typing import Final

__all__ = ["fingerprint"]

_SUFFIXES: Final = (".dist-info", ".egg-info")
_EDITABLE: Final = re.compile(r'"editable"\s*:\s*true')


def fingerprint(group: str, used: Callable[[str], bool]) -> str | None:
    """The digest of the core and every distribution declaring entry points in ``group``.

    ``used(name)`` says whether the pack named ``name`` is used at all (not switched off
    or blocked); a distribution whose packs are all unused counts by its entry points
    alone, so its files (even editable ones) do not matter. None when something that
    matters cannot be fingerprinted (see the module's notes).
    """
    digest = hashlib.sha256()
    core_seen = False
    try:
        found = list(_distributions())
    except _Unlistable:
        return None
    for name, folder in found:
        if name == "toolpalette":
            core_seen = True
            core_record = _read(folder, "RECORD") or ""  # an editable core: its version
            digest.update(b"core\0" + _bytes(os.path.basename(folder)) + _bytes(core_record))
            continue
        entry_points = _read(folder, "entry_points.txt")
        if entry_points is None or f"[{group}]" not in entry_points:
            continue
        digest.update(b"\0" + _bytes(os.path.basename(folder)) + b"\0" + _bytes(entry_points))
        if not any(used(name) for name in _names_in(entry_points, group)):
            continue
        record = _read(folder, "RECORD")
        direct_url = _read(folder, "direct_url.json") or ""
        if record is None or _EDITABLE.search(direct_url):
            return None
        digest.update(hashlib.sha256(_bytes(record)).digest())
    if not core_seen:
        digest.update(b"core\0?")
    return digest.hexdigest()


def _distributions() -> Iterator[tuple[str, str]]:
    """``(normalized name, metadata folder)`` of each distribution, first on the path wins.

    Raises:
        _Unlistable: an entry of ``sys.path`` is an archive or an egg, whose
            distributions are not listed here.
    """
    seen: set[str] = set()
    for entry in sys.path:
        path = entry or "."
        if path.endswith(".egg"):
            raise _Unlistable(path)
        try:
            names = sorted(os.listdir(path))
        except NotADirectoryError:
            raise _Unlistable(path) from None
        except OSError:
            continue
        for name in names:
            if not name.endswith(_SUFFIXES):
                continue
            dist = _normalize(name.rpartition(".")[0].partition("-")[0])
            if dist in seen:
                continue
            seen.add(dist)
            yield dist, os.path.join(path, name)


class _Unlistable(Exception):
    """A ``sys.path`` entry (a zip, an egg) whose distributions are not listed here."""


def _names_in(entry_points: str, group: str) -> list[str]:
    """The entry point names of ``group`` in an ``entry_points.txt`` (an INI file)."""
    names: list[str] = []
    inside = False
    for line in entry_points.splitlines():
        text = line.strip()
        if text.startswith("["):
            inside = text == f"[{group}]"
        elif inside and "=" in text and not text.startswith(("#", ";")):
            names.append(text.partition("=")[0].strip())
    return names


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _read(folder: str, name: str) -> str | None:
    try:
        with open(os.path.join(folder, name), encoding="utf-8", errors="surrogateescape") as f:
            return f.read()
    except OSError:
        return None


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")
